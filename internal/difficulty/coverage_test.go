package difficulty

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/assay-eval/assay/internal/stats"
)

// TestReweightedCoverage: simulated benchmarks drawn from known per-tier
// pass rates — the re-weighted interval covers the workload's true rate
// Σ W_h p_h at about its nominal 95%, and two targets that are alike in
// every tier are declared different at about the 5% level or less.
func TestReweightedCoverage(t *testing.T) {
	const sims = 2000
	rng := rand.New(rand.NewPCG(17, 3))
	perTier := map[int]int{1: 60, 2: 50, 3: 30, 4: 20}
	pX := map[int]float64{1: 0.9, 2: 0.7, 3: 0.5, 4: 0.3}
	workShare := map[int]float64{1: 0.1, 2: 0.2, 3: 0.3, 4: 0.4}
	truth := 0.0
	for k, w := range workShare {
		truth += w * pX[k]
	}
	// The workload: 10 cases per share point.
	work := &Set{Name: "work"}
	for tier := 1; tier <= 4; tier++ {
		for j := range int(workShare[tier] * 100) {
			work.Cases = append(work.Cases, fmt.Sprintf("w%d-%d", tier, j))
			work.Values = append(work.Values, float64(tier))
		}
	}
	covered, falseWins := 0, 0
	for range sims {
		bench := &Set{Name: "bench"}
		x := TargetResults{Name: "x"}
		same := TargetResults{Name: "x2"}
		for tier := 1; tier <= 4; tier++ {
			for j := range perTier[tier] {
				bench.Cases = append(bench.Cases, fmt.Sprintf("b%d-%d", tier, j))
				bench.Values = append(bench.Values, float64(tier))
				for _, tr := range []*TargetResults{&x, &same} {
					r := int32(0)
					if rng.Float64() < pX[tier] {
						r = 1
					}
					tr.Right = append(tr.Right, r)
					tr.Trials = append(tr.Trials, 1)
				}
			}
		}
		bench.Targets = []TargetResults{x, same}
		m, err := Compare(bench, work, MismatchOptions{Replicates: 1})
		if err != nil {
			t.Fatal(err)
		}
		if ci := m.Scores[0].Reweighted.CI; ci.Lo <= truth && truth <= ci.Hi {
			covered++
		}
		if v := m.Pairs[0].Reweighted.Verdict; v == stats.VerdictABetter || v == stats.VerdictBBetter {
			falseWins++
		}
	}
	cov := float64(covered) / sims
	fw := float64(falseWins) / sims
	t.Logf("coverage %.3f, false wins %.3f over %d simulations", cov, fw, sims)
	// Binomial SD of a 95% coverage over 2,000 runs is 0.005.
	if cov < 0.93 || cov > 0.97 {
		t.Errorf("re-weighted 95%% interval covers the truth in %.3f of runs", cov)
	}
	if fw > 0.065 {
		t.Errorf("false winners in %.3f of runs at alpha 0.05", fw)
	}
}
