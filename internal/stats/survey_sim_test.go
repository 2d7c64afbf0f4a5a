package stats

import (
	"math/rand/v2"
	"testing"

	"github.com/assay-eval/assay/internal/longtest"
)

// drawStratum draws n units without replacement from a stratum of size
// units of which pass pass, sequentially (each draw from what is left).
func drawStratum(rng *rand.Rand, size, pass, n int) []float64 {
	ys := make([]float64, n)
	for i := range n {
		if rng.IntN(size-i) < pass {
			ys[i] = 1
			pass--
		}
	}
	return ys
}

// TestWeightedMeanCoverage measures how often WeightedMean's 95% interval
// covers the true pass rate of a finite stratified population, sampling
// 50 traces per stratum (or the whole of a smaller one) without
// replacement, as `assay sample --per model=50` does, with rates near 0,
// near 1 and in the middle, and strata of very unequal sizes.
func TestWeightedMeanCoverage(t *testing.T) {
	longtest.Skip(t)
	type stratum struct{ size, pass int }
	const reps, per = 4000, 50
	for _, c := range []struct {
		name   string
		strata []stratum
	}{
		{"middle", []stratum{{20000, 10000}, {3000, 900}, {400, 280}}},
		{"near zero", []stratum{{20000, 200}, {3000, 60}, {400, 20}}},
		{"rare", []stratum{{20000, 100}, {3000, 9}, {400, 0}}},
		{"near one", []stratum{{20000, 19800}, {3000, 2910}, {400, 400}}},
		{"equal sizes", []stratum{{5000, 4000}, {5000, 4500}, {5000, 4900}}},
		{"small strata", []stratum{{120, 80}, {75, 15}, {60, 54}}},
	} {
		rng := rand.New(rand.NewPCG(7, uint64(len(c.name))))
		total, pass := 0, 0
		for _, s := range c.strata {
			total += s.size
			pass += s.pass
		}
		truth := float64(pass) / float64(total)
		covered, below, above := 0, 0, 0
		var width float64
		for range reps {
			var obs []Observation
			for i, s := range c.strata {
				n := min(per, s.size)
				for _, y := range drawStratum(rng, s.size, s.pass, n) {
					obs = append(obs, Observation{Stratum: string(rune('a' + i)), Weight: float64(s.size) / float64(n), Y: y})
				}
			}
			e, err := WeightedMean(obs, 0.05)
			if err != nil {
				t.Fatal(err)
			}
			width += e.CI.Hi - e.CI.Lo
			switch {
			case truth < e.CI.Lo:
				below++
			case truth > e.CI.Hi:
				above++
			default:
				covered++
			}
		}
		cov := float64(covered) / reps
		t.Logf("%-12s rate %.4f: coverage %.3f (truth below %d, above %d), mean width %.4f", c.name, truth, cov, above, below, width/reps)
		if cov < 0.93 {
			t.Errorf("%s: coverage %.3f below 0.93 for a 95%% interval", c.name, cov)
		}
	}
}
