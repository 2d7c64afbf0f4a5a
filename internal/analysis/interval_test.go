package analysis

import (
	"math"
	"strconv"
	"testing"
)

// Epochs are averaged per case before the standard error is taken; the
// within-case variance is reported. Values computed by hand:
// case means [1, .5, 0, .5] → mean .5, sd √(.5/3), se = sd/2 = 0.204124;
// within-case variances (n−1) [0, .5, 0, .5] → mean 0.25.
func TestPrimaryIntervalEpochs(t *testing.T) {
	ci, vs := fixture(2, [][]bool{{true, true}, {true, false}, {false, false}, {false, true}}, nil)
	r := Rate{Passed: 4, N: 8, Rate: 0.5, CIMethod: "wilson"}
	es := primaryInterval(&r, vs, ci, 0.05)
	if es == nil || es.Cases != 4 || math.Abs(es.WithinVar-0.25) > 1e-9 {
		t.Fatalf("epoch stats %+v, want 4 cases and within-case variance 0.25", es)
	}
	if r.CIMethod != "epoch_mean_se" || math.Abs(r.SE-0.204124) > 1e-6 || r.Rate != 0.5 {
		t.Errorf("rate %+v, want epoch_mean_se with se 0.204124", r)
	}
	// 95% normal interval: .5 ± 1.959964 × 0.204124 = .5 ± 0.400076.
	if math.Abs(r.CI[0]-0.099924) > 1e-4 || math.Abs(r.CI[1]-0.900076) > 1e-4 {
		t.Errorf("ci %v, want [0.0999, 0.9001]", r.CI)
	}
}

// Cases sharing a cluster tag are not independent: with clusters {1,2} and
// {3,4} passing [1,1,0,0], the cluster-robust variance is
// G/(G−1) · Σ(cluster residual sums)² / n² = 2 · (1² + 1²) / 16 = 0.25, so
// se = 0.5 — twice the naive 0.2887 that treats the four as independent.
func TestPrimaryIntervalClustered(t *testing.T) {
	ci, vs := fixture(1, [][]bool{{true}, {true}, {false}, {false}}, []string{"a", "a", "b", "b"})
	r := Rate{Passed: 2, N: 4, Rate: 0.5, CIMethod: "wilson"}
	if es := primaryInterval(&r, vs, ci, 0.05); es != nil {
		t.Errorf("one epoch reported epoch stats %+v", es)
	}
	if r.CIMethod != "clustered_se" || math.Abs(r.SE-0.5) > 1e-9 {
		t.Errorf("rate %+v, want clustered_se with se 0.5", r)
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

// With several epochs, per-case means are continuous: the comparison's
// interval is the paired bootstrap's and contains the observed difference;
// with many cases it is close to the t interval (both estimate the same
// sampling distribution).
func TestPairDenseEpochsUsesPairedBootstrap(t *testing.T) {
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
	c, ok := pairDense(va, vb, ci, 0.05, 0.02)
	if !ok {
		t.Fatal("no comparison")
	}
	if c.Test != "paired_bootstrap" || c.N != n {
		t.Fatalf("test %s over %d cases, want paired_bootstrap over %d", c.Test, c.N, n)
	}
	if !(c.CI[0] < c.Delta && c.Delta < c.CI[1]) {
		t.Errorf("interval %v does not contain the difference %v", c.CI, c.Delta)
	}
	// The t interval: delta ± 1.966 se (df 399).
	if lo := c.Delta - 1.966*c.SE; math.Abs(c.CI[0]-lo) > 0.01 {
		t.Errorf("bootstrap lower bound %v far from the t interval's %v", c.CI[0], lo)
	}
	again, _ := pairDense(va, vb, ci, 0.05, 0.02)
	if again.CI != c.CI {
		t.Errorf("the same data gave intervals %v and %v: the report must be repeatable", c.CI, again.CI)
	}
}
