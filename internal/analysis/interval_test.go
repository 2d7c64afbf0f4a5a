package analysis

import (
	"math"
	"strconv"
	"testing"

	"github.com/assay-eval/assay/internal/stats"
)

// Epochs are averaged per case before the standard error is taken; the
// within-case variance is reported. Values computed by hand:
// case means [1, .5, 0, .5] → mean .5, sd √(.5/3), se = sd/2 = 0.204124;
// within-case variances (n−1) [0, .5, 0, .5] → mean 0.25. The interval is
// stats.EpochRateCI's on those case means (its values are checked against
// statsmodels in internal/stats).
func TestPrimaryIntervalEpochs(t *testing.T) {
	ci, vs := fixture(2, [][]bool{{true, true}, {true, false}, {false, false}, {false, true}}, nil)
	r := Rate{Passed: 4, N: 8, Rate: 0.5, CIMethod: "wilson"}
	es := primaryInterval(&r, vs, ci, 0.05)
	if es == nil || es.Cases != 4 || math.Abs(es.WithinVar-0.25) > 1e-9 {
		t.Fatalf("epoch stats %+v, want 4 cases and within-case variance 0.25", es)
	}
	if r.CIMethod != stats.EpochRateMethod || math.Abs(r.SE-0.204124) > 1e-6 || r.Rate != 0.5 {
		t.Errorf("rate %+v, want %s with se 0.204124", r, stats.EpochRateMethod)
	}
	want, _ := stats.EpochRateCI([]float64{1, .5, 0, .5}, 2, 0.05)
	if math.Abs(r.CI[0]-want.Lo) > 1e-4 || math.Abs(r.CI[1]-want.Hi) > 1e-4 {
		t.Errorf("ci %v, want %v", r.CI, want)
	}
}

// A target that passed every epoch of every case has no variance, and the
// mean ± z·SE interval was [100, 100]: certainty from 30 cases. Now the
// lower bound is below 100%, and no higher than Wilson's on the 30 cases
// alone (statsmodels proportion_confint(30, 30, method="wilson") =
// [0.886487, 1]): the epochs of a case that always agree add nothing.
func TestPrimaryIntervalAllEpochsPass(t *testing.T) {
	passes := make([][]bool, 30)
	for i := range passes {
		passes[i] = []bool{true, true, true, true, true}
	}
	ci, vs := fixture(5, passes, nil)
	r := Rate{Passed: 150, N: 150, Rate: 1, CIMethod: "wilson"}
	primaryInterval(&r, vs, ci, 0.05)
	if r.Rate != 1 || r.CI[1] != 1 || !(r.CI[0] < 1) || r.CI[0] > 0.886487+1e-4 {
		t.Errorf("rate %+v, want 100%% with a lower bound below 100%% and at most Wilson's on 30 cases (0.8865)", r)
	}
}

// Cases sharing a cluster tag are not independent: with clusters {1,2} and
// {3,4} passing [1,1,0,0], the cluster-robust variance is
// G/(G−1) · Σ(cluster residual sums)² / n² = 2 · (1² + 1²) / 16 = 0.25, so
// se = 0.5 — twice the naive 0.2887 that treats the four as independent.
// The interval is Wilson's score interval with t(0.975, G − 1 = 1) =
// 12.706205 in place of z, on n_eff = p(1−p)/se² = 1 case: center .5,
// half-width q/(1+q²)·√(.25 + q²/4) = 0.498458, so [0.001542, 0.998458],
// shown rounded outwards as [0.0015, 0.9985].
func TestPrimaryIntervalClustered(t *testing.T) {
	ci, vs := fixture(1, [][]bool{{true}, {true}, {false}, {false}}, []string{"a", "a", "b", "b"})
	r := Rate{Passed: 2, N: 4, Rate: 0.5, CIMethod: "wilson"}
	if es := primaryInterval(&r, vs, ci, 0.05); es != nil {
		t.Errorf("one epoch reported epoch stats %+v", es)
	}
	if r.CIMethod != "cr1_t" || math.Abs(r.SE-0.5) > 1e-9 || r.CI != [2]float64{0.0015, 0.9985} {
		t.Errorf("rate %+v, want cr1_t with se 0.5 and interval [0.0015, 0.9985]", r)
	}
}

// Independent cases with one epoch keep the Wilson interval.
func TestPrimaryIntervalPlain(t *testing.T) {
	ci, vs := fixture(1, [][]bool{{true}, {false}}, nil)
	r := Rate{Passed: 1, N: 2, Rate: 0.5, CIMethod: "wilson", CI: [2]float64{0.1, 0.9}}
	if es := primaryInterval(&r, vs, ci, 0.05); es != nil || r.CIMethod != "wilson" || r.CI != [2]float64{0.1, 0.9} {
		t.Errorf("plain cases changed: %+v %+v", r, es)
	}
}

// fixture builds a case index of len(passes) cases (IDs "1", "2", …, with
// the given cluster tags when non-nil) and one target's verdicts.
func fixture(epochs int, passes [][]bool, clusters []string) (*caseIndex, *verdicts) {
	ci := newCaseIndex()
	vs := newVerdicts(epochs)
	for i, ps := range passes {
		var tags map[string]string
		if clusters != nil {
			tags = map[string]string{"cluster": clusters[i]}
		}
		idx := ci.add(strconv.Itoa(i+1), tags)
		for e, p := range ps {
			vs.set(idx, e+1, p)
		}
	}
	return ci, vs
}

// With several epochs, per-case means are continuous: the comparison is
// the paired t-test with its own t interval on n − 1 degrees of freedom
// (not a percentile bootstrap, which undercovers), so the interval and the
// p-value agree: delta ± t(0.975, 399) · se, t(0.975, 399) = 1.965927
// (scipy.stats.t.ppf).
func TestPairDenseEpochsUsesPairedT(t *testing.T) {
	const n = 400
	pa, pb := make([][]bool, n), make([][]bool, n)
	for i := range n {
		// A passes both epochs of 3 cases in 4; B passes one epoch of every
		// other case and both epochs of 1 in 4.
		pa[i] = []bool{i%4 != 0, i%4 != 0}
		pb[i] = []bool{i%2 == 0, i%4 == 1}
	}
	ci, va := fixture(2, pa, nil)
	_, vb := fixture(2, pb, nil)
	c, ok := pairDense(va, vb, ci, pairing{alpha: 0.05, margin: 0.02})
	if !ok {
		t.Fatal("no comparison")
	}
	if c.Test != "paired_t" || c.CIMethod != "t" || c.DF != n-1 || c.N != n {
		t.Fatalf("test %s (%s, df %v) over %d cases, want paired_t with a t interval on %d df over %d", c.Test, c.CIMethod, c.DF, c.N, n-1, n)
	}
	if lo, hi := c.Delta-1.965927*c.SE, c.Delta+1.965927*c.SE; math.Abs(c.CI[0]-lo) > 1e-5 || math.Abs(c.CI[1]-hi) > 1e-5 {
		t.Errorf("interval %v, want the t interval [%v, %v]", c.CI, lo, hi)
	}
	if (c.PValue < 0.05) != (c.CI[0] > 0 || c.CI[1] < 0) {
		t.Errorf("p %v and interval %v disagree", c.PValue, c.CI)
	}
}
