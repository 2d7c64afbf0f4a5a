package stats

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// MeanSE returns the mean of xs and its standard error, the sample standard
// deviation (n-1 denominator) over sqrt(n). Sums are compensated, and the
// variance uses the corrected two-pass formula, so scores far from zero
// (latencies in nanoseconds, say) lose no precision.
//
// With no values both results are NaN; with one value the mean is that value
// and the standard error is NaN (a single score says nothing about spread).
// A NaN anywhere in xs makes both results NaN (filter missing scores
// first); an infinite value makes the standard error NaN.
func MeanSE(xs []float64) (mean, se float64) {
	mean, v := meanVar(xs)
	return mean, math.Sqrt(v / float64(len(xs)))
}

// meanVar returns the mean and the unbiased sample variance (n-1
// denominator) of xs: NaN for both with no values, NaN variance with one.
func meanVar(xs []float64) (mean, variance float64) {
	n := len(xs)
	if n == 0 {
		return math.NaN(), math.NaN()
	}
	mean = compensatedMean(xs)
	if n == 1 {
		return mean, math.NaN()
	}
	var dev, dev2 compensatedSum
	for _, x := range xs {
		d := x - mean
		dev.add(d)
		dev2.add(d * d)
	}
	// The corrected two-pass formula: subtracting (Σd)²/n removes the
	// first-order error of a rounded mean.
	ss := dev2.value() - dev.value()*dev.value()/float64(n)
	if ss < 0 {
		ss = 0
	}
	return mean, ss / float64(n-1)
}

// ClusteredMeanSE returns the mean of xs and its cluster-robust standard
// error when the scores are grouped into clusters that may be correlated
// (several questions about one passage; Miller 2024, "Adding Error Bars to
// Evals", "clustered standard errors"). clusters[i] is the cluster of xs[i]; the empty string means
// "no cluster": that score is its own cluster.
//
// The variance is the CR1 sandwich estimator, the one statsmodels uses for
// OLS(y, ones).fit(cov_type="cluster") by default and Stata for
// vce(cluster):
//
//	Var = G/(G-1) · Σ_g (Σ_{i∈g} (x_i - mean))² / n²
//
// over G clusters. With every score in its own cluster it equals MeanSE's
// squared standard error exactly. Miller's equation differs only in the
// small-sample factor (he applies n/(n-1) to the diagonal terms and none to
// the cross terms); the two agree to O(1/G). Inference from few clusters is
// shaky whatever the factor: with under ~30 clusters, treat the interval as
// approximate.
//
// With no values, or len(clusters) != len(xs), both results are NaN. With
// fewer than two clusters the standard error is NaN (it cannot be
// estimated). A NaN in xs makes both results NaN.
func ClusteredMeanSE(xs []float64, clusters []string) (mean, se float64) {
	mean, se, _ = clusteredMeanSE(xs, clusters)
	return mean, se
}

// clusteredMeanSE is ClusteredMeanSE that also returns the number of
// clusters G (0 when the input is empty or mismatched).
func clusteredMeanSE(xs []float64, clusters []string) (mean, se float64, groups int) {
	n := len(xs)
	if n == 0 || len(clusters) != n {
		return math.NaN(), math.NaN(), 0
	}
	mean = compensatedMean(xs)
	// Cluster sums of residuals in order of first appearance, so the result
	// does not depend on map iteration order.
	index := make(map[string]int)
	var sums []compensatedSum
	var sizes []int
	var total compensatedSum
	for i, x := range xs {
		c := clusters[i]
		g, ok := index[c]
		if c == "" || !ok {
			g = len(sums)
			sums = append(sums, compensatedSum{})
			sizes = append(sizes, 0)
			if c != "" {
				index[c] = g
			}
		}
		e := x - mean
		sums[g].add(e)
		sizes[g]++
		total.add(e)
	}
	groups = len(sums)
	if groups < 2 {
		return mean, math.NaN(), groups
	}
	// The residuals around the rounded mean sum to n·δ rather than 0; taking
	// n_g·δ off each cluster sum removes that first-order error (the same
	// correction as the two-pass variance in meanVar).
	delta := total.value() / float64(n)
	var meat compensatedSum
	for g, s := range sums {
		v := s.value() - float64(sizes[g])*delta
		meat.add(v * v)
	}
	g := float64(groups)
	nf := float64(n)
	return mean, math.Sqrt(g / (g - 1) * meat.value() / (nf * nf)), groups
}

// EpochMeans reduces repeated samples of the same cases (epochs) to one
// score per case, as Miller 2024 recommends for resampled
// answers: average
// each case's epochs first, then take the standard error across cases with
// MeanSE or ClusteredMeanSE on caseMeans. scores[i] holds case i's epoch
// scores; caseMeans[i] is their mean (NaN for a case with no scores).
//
// withinVar is the within-case (conditional) variance: the unbiased sample
// variance of each case's epochs (n-1 denominator), averaged over the cases
// that have at least two epochs. It measures how much of the noise comes from
// sampling the model rather than from the choice of cases; it is NaN when no
// case has two epochs. A NaN score makes its case mean and withinVar NaN.
func EpochMeans(scores [][]float64) (caseMeans []float64, withinVar float64) {
	caseMeans = make([]float64, len(scores))
	var within compensatedSum
	cases := 0
	for i, s := range scores {
		if len(s) == 0 {
			caseMeans[i] = math.NaN()
			continue
		}
		m, v := meanVar(s)
		caseMeans[i] = m
		if len(s) >= 2 {
			within.add(v)
			cases++
		}
	}
	if cases == 0 {
		return caseMeans, math.NaN()
	}
	return caseMeans, within.value() / float64(cases)
}

// NormalCI returns the normal-approximation interval mean ± z·se with z the
// 1-alpha/2 standard normal quantile. It returns a NaN interval when alpha is
// outside (0, 1) or se is negative; NaN inputs give a NaN interval.
func NormalCI(mean, se, alpha float64) Interval {
	if !validAlpha(alpha) || !(se >= 0) || math.IsNaN(mean) {
		return nanInterval()
	}
	z := distuv.UnitNormal.Quantile(1 - alpha/2)
	return Interval{mean - z*se, mean + z*se}
}

// compensatedSum is a Kahan–Babuška–Neumaier running sum (as in prometheus
// util/kahansum): the rounding error of each addition is carried in c, so the
// error of the total does not grow with the number of terms.
type compensatedSum struct {
	sum, c float64
}

func (s *compensatedSum) add(x float64) {
	t := s.sum + x
	switch {
	case math.IsInf(t, 0):
		// Compensation is meaningless once the sum overflows; keep ±Inf
		// (or NaN for Inf-Inf) rather than turning it into NaN via c.
		s.c = 0
	case math.Abs(s.sum) >= math.Abs(x):
		s.c += (s.sum - t) + x
	default:
		s.c += (x - t) + s.sum
	}
	s.sum = t
}

func (s *compensatedSum) value() float64 {
	return s.sum + s.c
}

// compensatedMean is the mean of xs (len(xs) > 0) by compensated summation.
func compensatedMean(xs []float64) float64 {
	var s compensatedSum
	for _, x := range xs {
		s.add(x)
	}
	return s.value() / float64(len(xs))
}
