package gate

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/assay-eval/assay/internal/runview"
	"github.com/assay-eval/assay/internal/spec"
	"github.com/assay-eval/assay/internal/stats"
)

// The decision at a limit. Every check has a quantity q (the change Δ =
// candidate − baseline for a worsening rule, the candidate's value for a
// floor or ceiling) and an edge e: −L for a rate that may drop by L, +L for
// a cost, latency or loud rate that may rise by L, the floor or ceiling
// itself. "Beyond the limit" is q < e when higher is better, q > e when
// lower is. A check
//
//   - fails when the one-sided test of H0 "within the limit" rejects at
//     alpha after Holm over every check of the gate run (rules × targets):
//     the data show the limit is crossed, and the chance that a run with no
//     limit truly crossed fails anywhere is at most alpha;
//   - passes when the one-sided test of H0 "beyond the limit" rejects at
//     alpha: the data show it is within the limit;
//   - is inconclusive otherwise: it passes, unless Options.Strict, which
//     then makes every check a non-inferiority test at level alpha.

// ClusterTag is the case tag that groups related cases (several questions
// about one document, turns of one conversation): when cases carry it, the
// gate's comparisons are cluster-robust (CR1 standard errors, t on G−1
// degrees of freedom; the p95 bootstrap resamples clusters).
const ClusterTag = "cluster"

// MinClusters is the number of clusters below which cluster-robust
// intervals are approximate, and the gate warns.
const MinClusters = stats.FewClusters

// oneSided are the one-sided tests of a check's quantity against a value.
type oneSided interface {
	// PValueBelow is the p-value of H0: q ≥ d0 against q < d0.
	PValueBelow(d0 float64) float64
	// PValueAbove is the p-value of H0: q ≤ d0 against q > d0.
	PValueAbove(d0 float64) float64
}

// edge is where the check's limit lies on its quantity, and whether higher
// is better (beyond the limit is then below the edge).
func edge(out *Check, c spec.GateCheck) (float64, bool) {
	hb := c.HigherIsBetter()
	e := float64(out.Threshold)
	if c.Bound == nil && hb {
		e = -e
	}
	return e, hb
}

// setLimit records the one-sided bounds and the p-values of the two
// one-sided tests at the limit.
func setLimit(out *Check, c spec.GateCheck, t oneSided, bounds stats.Interval) {
	out.Bounds = [2]Num{Num(bounds.Lo), Num(bounds.Hi)}
	e, hb := edge(out, c)
	if math.IsNaN(e) {
		return
	}
	below, above := t.PValueBelow(e), t.PValueAbove(e)
	if hb {
		out.PFail, out.PPass = Num(below), Num(above)
	} else {
		out.PFail, out.PPass = Num(above), Num(below)
	}
}

// pairedTests are a paired comparison's one-sided tests; a t-based one
// with no spread at all (every case differs by the same amount) knows its
// quantity exactly.
func pairedTests(p stats.Paired) oneSided {
	if (p.Test == stats.TestPairedT || p.Test == stats.TestClusterT) && p.SE == 0 {
		return exactValue(p.Delta)
	}
	return p
}

// exactValue is a quantity measured without spread.
type exactValue float64

func (x exactValue) PValueBelow(d0 float64) float64 { return b2f(!(float64(x) < d0)) }
func (x exactValue) PValueAbove(d0 float64) float64 { return b2f(!(float64(x) > d0)) }

// proportionScore is the score test of a rate p observed on n cases (the
// test Wilson's interval inverts): z = (p − p0)/√(p0(1−p0)/n).
type proportionScore struct {
	p float64
	n int
}

func (s proportionScore) z(p0 float64) float64 {
	return (s.p - p0) / math.Sqrt(p0*(1-p0)/float64(s.n))
}

func (s proportionScore) PValueBelow(p0 float64) float64 {
	switch {
	case s.n == 0 || math.IsNaN(s.p):
		return math.NaN()
	case p0 <= 0: // a rate is never below 0
		return 1
	case p0 >= 1: // one failure shows the rate is below 1
		return b2f(s.p >= 1)
	}
	return distuv.UnitNormal.CDF(s.z(p0))
}

func (s proportionScore) PValueAbove(p0 float64) float64 {
	switch {
	case s.n == 0 || math.IsNaN(s.p):
		return math.NaN()
	case p0 >= 1:
		return 1
	case p0 <= 0:
		return b2f(s.p <= 0)
	}
	return distuv.UnitNormal.Survival(s.z(p0))
}

// scoreInterval is Wilson's interval for a rate p observed on n cases (p
// need not be a whole count over n).
func scoreInterval(p float64, n int, alpha float64) stats.Interval {
	if n == 0 || !(alpha > 0 && alpha < 1) {
		return stats.Interval{Lo: math.NaN(), Hi: math.NaN()}
	}
	z := distuv.UnitNormal.Quantile(1 - alpha/2)
	nf := float64(n)
	den := 1 + z*z/nf
	centre := (p + z*z/(2*nf)) / den
	half := z * math.Sqrt(p*(1-p)/nf+z*z/(4*nf*nf)) / den
	return stats.Interval{Lo: max(0, centre-half), Hi: min(1, centre+half)}
}

// bootstrapTest reads one-sided p-values from bootstrap replicates: the
// share of them on the far side of d0 (with the usual +1 so that none is
// ever 0).
type bootstrapTest struct{ sorted []float64 }

func newBootstrapTest(reps []float64) bootstrapTest {
	s := slices.Clone(reps)
	slices.Sort(s)
	return bootstrapTest{s}
}

func (b bootstrapTest) share(k int) float64 {
	return float64(k+1) / float64(len(b.sorted)+1)
}

// PValueBelow: the replicates at or above d0.
func (b bootstrapTest) PValueBelow(d0 float64) float64 {
	i, _ := slices.BinarySearch(b.sorted, d0) // first ≥ d0
	return b.share(len(b.sorted) - i)
}

// PValueAbove: the replicates at or below d0.
func (b bootstrapTest) PValueAbove(d0 float64) float64 {
	i := len(b.sorted)
	for i > 0 && b.sorted[i-1] > d0 {
		i--
	}
	return b.share(i)
}

// decide gives every check its verdict and reason: the fail decisions are
// adjusted (Holm) over every check of the run that could be tested.
func decide(res *Result, o Options) {
	type at struct{ t, c int }
	var fam []at
	var ps []float64
	for i := range res.Targets {
		for j := range res.Targets[i].Checks {
			c := &res.Targets[i].Checks[j]
			if c.Verdict == "" && !math.IsNaN(float64(c.PFail)) {
				fam = append(fam, at{i, j})
				ps = append(ps, float64(c.PFail))
			}
		}
	}
	for k, adj := range stats.Holm(ps) {
		res.Targets[fam[k].t].Checks[fam[k].c].PFailAdjusted = Num(adj)
	}
	res.Family, res.FalseFailRate = len(fam), o.Alpha
	for i := range res.Targets {
		tr := &res.Targets[i]
		if tr.Missing {
			continue
		}
		tr.Verdict = Pass
		for j := range tr.Checks {
			c := &tr.Checks[j]
			if c.Verdict == "" {
				c.Verdict = verdictAt(*c, o)
			}
			c.Reason = reason(*c, c.rule, o, res.Family)
			if c.Verdict == Fail {
				tr.Verdict = Fail
			}
		}
	}
}

// verdictAt decides a check from its one-sided tests.
func verdictAt(c Check, o Options) string {
	switch {
	case float64(c.PFailAdjusted) < o.Alpha:
		return Fail
	case float64(c.PPass) < o.Alpha:
		return Pass
	case o.Strict && c.N > 0:
		return Fail
	}
	return Inconclusive
}

// clusterOf gives a pair's cluster: its candidate case's cluster tag, else
// the baseline case's; a case with neither is a cluster of its own. Nil
// when no case carries the tag.
func clusterOf(base, cand *runview.View) func(p [2]int) string {
	has := func(s *runview.View) bool {
		for i := range s.Cases {
			if _, ok := s.Tag(i, ClusterTag); ok {
				return true
			}
		}
		return false
	}
	if !has(cand) && !has(base) {
		return nil
	}
	return func(p [2]int) string {
		if v, ok := cand.Tag(p[1], ClusterTag); ok {
			return "cluster " + v
		}
		if v, ok := base.Tag(p[0], ClusterTag); ok {
			return "cluster " + v
		}
		return "case " + cand.Cases[p[1]].ID
	}
}

// clusterWarning counts the clusters of the paired cases and warns when
// cluster-robust intervals rest on too few of them.
func clusterWarning(res *Result, base, cand *runview.View, pairs [][2]int) {
	of := clusterOf(base, cand)
	if of == nil {
		return
	}
	seen := map[string]bool{}
	for _, p := range pairs {
		seen[of(p)] = true
	}
	res.Clusters = len(seen)
	if len(seen) < MinClusters {
		res.Warnings = append(res.Warnings, fmt.Sprintf("the cases carry a %s tag: comparisons are cluster-robust (t on %d − 1 degrees of freedom), but with fewer than %d clusters their intervals are approximate; more clusters, not more cases per cluster, make them tighter",
			ClusterTag, len(seen), MinClusters))
	}
}
