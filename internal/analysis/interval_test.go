package analysis

import (
	"math"
	"testing"
)

// Epochs are averaged per case before the standard error is taken; the
// within-case variance is reported. Values computed by hand:
// case means [1, .5, 0, .5] → mean .5, sd √(.5/3), se = sd/2 = 0.204124;
// within-case variances (n−1) [0, .5, 0, .5] → mean 0.25.
func TestPrimaryIntervalEpochs(t *testing.T) {
	pass := map[CaseKey]bool{
		{"1", 1}: true, {"1", 2}: true,
		{"2", 1}: true, {"2", 2}: false,
		{"3", 1}: false, {"3", 2}: false,
		{"4", 1}: false, {"4", 2}: true,
	}
	r := Rate{Passed: 4, N: 8, Rate: 0.5, CIMethod: "wilson"}
	es := primaryInterval(&r, pass, nil, 0.05)
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
	pass := map[CaseKey]bool{{"1", 1}: true, {"2", 1}: true, {"3", 1}: false, {"4", 1}: false}
	tags := map[string]map[string]string{"1": {"cluster": "a"}, "2": {"cluster": "a"}, "3": {"cluster": "b"}, "4": {"cluster": "b"}}
	r := Rate{Passed: 2, N: 4, Rate: 0.5, CIMethod: "wilson"}
	if es := primaryInterval(&r, pass, tags, 0.05); es != nil {
		t.Errorf("one epoch reported epoch stats %+v", es)
	}
	if r.CIMethod != "clustered_se" || math.Abs(r.SE-0.5) > 1e-9 {
		t.Errorf("rate %+v, want clustered_se with se 0.5", r)
	}
}

// Independent cases with one epoch keep the Wilson interval.
func TestPrimaryIntervalPlain(t *testing.T) {
	pass := map[CaseKey]bool{{"1", 1}: true, {"2", 1}: false}
	r := Rate{Passed: 1, N: 2, Rate: 0.5, CIMethod: "wilson", CI: [2]float64{0.1, 0.9}}
	if es := primaryInterval(&r, pass, nil, 0.05); es != nil || r.CIMethod != "wilson" || r.CI != [2]float64{0.1, 0.9} {
		t.Errorf("plain cases changed: %+v %+v", r, es)
	}
}
