package stats

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// FewClusters is the number of clusters below which cluster-robust
// inference is approximate (the t on G−1 keeps the level, but intervals are
// wide and CR1 itself is noisy): reports warn when G < FewClusters.
const FewClusters = 30

// ClusteredPaired compares targets A and B on the same cases when the cases
// fall into clusters that may be correlated (several questions about one
// passage, one user's conversations): a[i] and b[i] are case i's values
// (pass 1 or fail 0, or a score; epochs already averaged per case) and
// clusters[i] its cluster ("" for a case that is its own cluster). Delta
// is the mean of the per-case differences a[i] − b[i], SE its CR1
// cluster-robust standard error (ClusteredMeanSE on the differences), and
// CI and the two-sided PValue come from Student's t with G − 1 degrees of
// freedom over G clusters: statsmodels' OLS of the differences on a
// constant, fit(cov_type="cluster", use_t=True). Test is TestClusterT,
// CIMethod "cr1_t", DF = G − 1, Clusters = G, MidP NaN; Wald is
// Delta ± z·SE. A case-level test treats the cases of one cluster as
// independent evidence and, when the difference between the targets varies
// by cluster, declares winners far more often than its level (the
// simulations in clustered_test.go); this one keeps its level down to about
// 10 clusters, though with fewer than ~30 the interval is wide and
// approximate.
//
// Returns ErrNoPairs for empty input and an error for slices of different
// lengths, non-finite values or alpha outside (0, 1). With fewer than two
// clusters SE, CI, Wald and PValue are NaN. When every cluster's
// differences sum to the same share of the total the SE is 0; the interval
// is then the point Delta and the p-value 1 if Delta is 0, else 0.
func ClusteredPaired(a, b []float64, clusters []string, alpha float64) (Paired, error) {
	if err := checkComparisonAlpha(alpha); err != nil {
		return nanPaired(), err
	}
	if err := checkPairedScores(a, b); err != nil {
		return nanPaired(), err
	}
	if len(clusters) != len(a) {
		return nanPaired(), fmt.Errorf("stats: clustered comparison needs one cluster per case: %d cases, %d clusters", len(a), len(clusters))
	}
	n := len(a)
	nf := float64(n)
	d := make([]float64, n)
	var sumA, sumB compensatedSum
	p := Paired{N: n, CIMethod: "cr1_t", Test: TestClusterT, MidP: math.NaN()}
	for i := range a {
		d[i] = a[i] - b[i]
		sumA.add(a[i])
		sumB.add(b[i])
		switch {
		case a[i] > b[i]:
			p.AOnly++
		case b[i] > a[i]:
			p.BOnly++
		}
	}
	p.MeanA, p.MeanB = sumA.value()/nf, sumB.value()/nf
	var g int
	p.Delta, p.SE, g = clusteredMeanSE(d, clusters)
	p.Clusters = g
	p.DF = float64(g - 1)
	if g < 2 || math.IsNaN(p.SE) {
		p.SE, p.PValue = math.NaN(), math.NaN()
		p.CI = nanInterval()
		p.Wald = p.CI
		return p, nil
	}
	dist := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: p.DF}
	tq := dist.Quantile(1 - alpha/2)
	z := distuv.UnitNormal.Quantile(1 - alpha/2)
	p.CI = Interval{p.Delta - tq*p.SE, p.Delta + tq*p.SE}
	p.Wald = Interval{p.Delta - z*p.SE, p.Delta + z*p.SE}
	switch {
	case p.SE > 0:
		p.PValue = math.Min(1, 2*dist.Survival(math.Abs(p.Delta)/p.SE))
	case p.Delta == 0:
		p.PValue = 1
	default:
		p.PValue = 0
	}
	return p, nil
}

// ClusteredMeanCI is the mean of xs whose values fall into clusters
// (clusters[i] for xs[i]; "" is a cluster of its own), its CR1
// cluster-robust standard error (ClusteredMeanSE) and a 1 − alpha interval
// on Student's t with df = G − 1 degrees of freedom over G clusters.
//
// When every value lies in [0, 1] (pass rates, scores on that scale) the
// interval is Wilson's score interval with the t quantile in place of z and
// the effective sample size n_eff = mean·(1 − mean)/se² (n over the design
// effect; at most n for pass/fail values): it stays inside [0, 1], keeps its
// coverage near 0 and 1 where mean ± t·se does not, and is never a point.
// With no spread to estimate (se = 0, as when every case passed, or below a
// billionth of the binomial SE, which is rounding) n_eff is G: the clusters
// are all the evidence there is. For values near the middle of
// the scale it is mean ± t·se to within O(1/n_eff). Other values get
// mean ± t·se.
//
// NaN mean and se as ClusteredMeanSE; a NaN interval with fewer than two
// clusters or alpha outside (0, 1); df is G − 1 (0 when there are no
// values).
func ClusteredMeanCI(xs []float64, clusters []string, alpha float64) (mean, se float64, ci Interval, df int) {
	mean, se, g := clusteredMeanSE(xs, clusters)
	df = max(0, g-1)
	if g < 2 || !validAlpha(alpha) || math.IsNaN(mean) || math.IsNaN(se) || math.IsInf(mean, 0) {
		return mean, se, nanInterval(), df
	}
	tq := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(df)}.Quantile(1 - alpha/2)
	unit, binary := true, true
	for _, x := range xs {
		if !(x >= 0 && x <= 1) {
			unit = false
			break
		}
		if x != 0 && x != 1 {
			binary = false
		}
	}
	if !unit {
		return mean, se, Interval{mean - tq*se, mean + tq*se}, df
	}
	v := mean * (1 - mean)
	neff := float64(g)
	// A standard error below a billionth of the binomial one is rounding
	// of a zero (cluster sums that cancel exactly): no spread either.
	if se > 1e-9*math.Sqrt(v/float64(len(xs))) && v > 0 {
		neff = v / (se * se)
		if binary {
			neff = math.Min(neff, float64(len(xs)))
		}
	}
	return mean, se, wilsonEffective(mean, neff, tq), df
}

// wilsonEffective is Wilson's score interval for a proportion p estimated
// with the precision of neff independent trials, at critical value q.
func wilsonEffective(p, neff, q float64) Interval {
	q2 := q * q
	denom := 1 + q2/neff
	center := (p + q2/(2*neff)) / denom
	half := q / denom * math.Sqrt(math.Max(0, p*(1-p)/neff+q2/(4*neff*neff)))
	return Interval{math.Max(0, center-half), math.Min(1, center+half)}
}

// EpochRateMethod names the interval EpochRateCI returns.
const EpochRateMethod = "wilson_deff"

// EpochRateCI is the 1 − alpha interval for a pass rate measured on n cases
// run K = epochs times each, from the per-case pass fractions caseMeans[i]
// in [0, 1]. It is Wilson's score interval on the effective sample size
// n_eff = n·K/deff, where the design effect deff = K·s²/(p̂·(1 − p̂)) is
// the variance of the case means s² (n − 1 denominator) against that of n·K
// independent trials, bounded in [1, K]: 1 when the epochs of a case are as
// different as independent draws, K when they always agree (the cases are
// then all the evidence). The critical value is Student's t on n − 1
// degrees of freedom (the design effect is estimated from n cases); with
// one epoch it is z and the interval is Wilson's exactly. When every epoch
// of every case passed (or failed), deff is K and the interval is Wilson's
// on the n cases: its lower bound is n/(n + t²), below 100%. Unlike the
// mean of the case means ± z·SE (87.6% at n = 30, p = 0.05) it keeps
// nominal coverage near 0 and 1 and is never a point: 94.5–96.6% averaged
// around p = 0.05, 0.5 and 0.9 at n = 30, 100 and 500 with K = 3
// (TestEpochAndClusteredRateCoverage).
//
// method is EpochRateMethod. A NaN interval (and method "") for no cases,
// epochs < 1, alpha outside (0, 1) or a case mean outside [0, 1] or NaN.
func EpochRateCI(caseMeans []float64, epochs int, alpha float64) (ci Interval, method string) {
	n := len(caseMeans)
	if n == 0 || epochs < 1 || !validAlpha(alpha) {
		return nanInterval(), ""
	}
	for _, m := range caseMeans {
		if !(m >= 0 && m <= 1) {
			return nanInterval(), ""
		}
	}
	k := float64(epochs)
	p, s2 := meanVar(caseMeans)
	p = math.Min(1, math.Max(0, p))
	deff := k
	if v := p * (1 - p); v > 0 && n > 1 {
		deff = math.Min(k, math.Max(1, k*s2/v))
	}
	neff := float64(n) * k / deff
	q := distuv.UnitNormal.Quantile(1 - alpha/2)
	if epochs > 1 && n > 1 {
		q = distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}.Quantile(1 - alpha/2)
	}
	return wilsonEffective(p, neff, q), EpochRateMethod
}
