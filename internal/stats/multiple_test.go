package stats

import (
	"math"
	"testing"
)

func TestHolmAndBHMatchStatsmodels(t *testing.T) {
	g := loadPairedGolden(t)
	check := func(name string, f func([]float64) []float64, fam []struct{ P, Adj []float64 }) {
		for _, v := range fam {
			in := append([]float64(nil), v.P...)
			got := f(in)
			for i := range v.P {
				if in[i] != v.P[i] {
					t.Fatalf("%s modified its input", name)
				}
				if math.Abs(got[i]-v.Adj[i]) > 1e-12 {
					t.Errorf("%s(%v)[%d] = %.17g, statsmodels %.17g", name, v.P, i, got[i], v.Adj[i])
				}
			}
		}
	}
	check("Holm", Holm, g.Holm)
	check("BenjaminiHochberg", BenjaminiHochberg, g.BH)
}

func TestMultiplicityEdges(t *testing.T) {
	for name, f := range map[string]func([]float64) []float64{"Holm": Holm, "BH": BenjaminiHochberg} {
		if got := f(nil); len(got) != 0 {
			t.Errorf("%s(nil) = %v, want empty", name, got)
		}
		// A comparison that could not be tested stays NaN but still counts
		// in the family: the others are adjusted as if it had p = 1.
		got := f([]float64{0.01, math.NaN(), 0.02})
		want := f([]float64{0.01, 1, 0.02})
		if !math.IsNaN(got[1]) || got[0] != want[0] || got[2] != want[2] {
			t.Errorf("%s with NaN = %v, want [%v NaN %v]", name, got, want[0], want[2])
		}
		// Out-of-range inputs are clamped.
		got = f([]float64{-0.1, 1.5})
		want = f([]float64{0, 1})
		if got[0] != want[0] || got[1] != want[1] {
			t.Errorf("%s clamping: %v, want %v", name, got, want)
		}
	}
	// Holm with a family of one is the p-value itself; with m equal
	// p-values each is multiplied by m... but capped at 1.
	if got := Holm([]float64{0.3, 0.3, 0.3, 0.3}); got[0] != 1 || got[3] != 1 {
		t.Errorf("Holm of four 0.3s = %v, want all 1", got)
	}
	if got := Holm([]float64{0.01, 0.01}); got[0] != 0.02 || got[1] != 0.02 {
		t.Errorf("Holm of tied 0.01s = %v, want 0.02 each", got)
	}
}

// TestAdjustedNeverBelowRaw: adjustment never makes a p-value smaller, and
// Holm (FWER) is never more lenient than BH (FDR).
func TestAdjustedNeverBelowRaw(t *testing.T) {
	ps := []float64{0.001, 0.2, 0.04, 0.03, 0.5, 0.0004, 0.049, 0.9, 0.011, 0.01}
	h, bh := Holm(ps), BenjaminiHochberg(ps)
	for i, p := range ps {
		if h[i] < p || bh[i] < p || h[i] < bh[i] || h[i] > 1 || bh[i] > 1 {
			t.Errorf("p=%v: Holm %v, BH %v", p, h[i], bh[i])
		}
	}
}
