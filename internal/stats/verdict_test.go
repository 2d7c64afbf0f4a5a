package stats

import (
	"math"
	"testing"
)

func TestVerdict(t *testing.T) {
	nan := math.NaN()
	const alpha, margin = 0.05, DefaultEquivalenceMargin
	cases := []struct {
		name   string
		delta  float64
		ci     Interval
		pAdj   float64
		alpha  float64
		margin float64
		want   string
	}{
		{"clear win for A", 0.085, Interval{0.028, 0.142}, 0.0098, alpha, margin, VerdictABetter},
		{"clear win for B", -0.085, Interval{-0.142, -0.028}, 0.0098, alpha, margin, VerdictBBetter},
		{"CI straddles 0 and the margin", 0.01, Interval{-0.03, 0.05}, 0.4, alpha, margin, VerdictInconclusive},
		{"tie inside the margin", 0.001, Interval{-0.012, 0.014}, 0.9, alpha, margin, VerdictEquivalent},
		// Statistically detectable but smaller than the margin: not a win.
		{"detectable but negligible, A ahead", 0.01, Interval{0.004, 0.016}, 0.001, alpha, margin, VerdictEquivalent},
		{"detectable but negligible, B ahead", -0.01, Interval{-0.016, -0.004}, 0.001, alpha, margin, VerdictEquivalent},
		// Above 0 and reaching past the margin: a win, however small its low end.
		{"detectable, reaching past the margin", 0.015, Interval{0.001, 0.029}, 0.03, alpha, margin, VerdictABetter},
		// The CI excludes 0 but the adjustment for all pairs removed the evidence.
		{"CI excludes 0, adjusted p too large", 0.05, Interval{0.004, 0.096}, 0.12, alpha, margin, VerdictInconclusive},
		// The test and the interval disagree (e.g. exact test vs score CI).
		{"small p, CI touches 0", 0.05, Interval{0, 0.1}, 0.01, alpha, margin, VerdictInconclusive},
		{"adjusted p exactly alpha", 0.05, Interval{0.01, 0.09}, 0.05, alpha, margin, VerdictInconclusive},
		// The margin is exclusive: a CI reaching it is not inside.
		{"CI reaches the margin", 0, Interval{-0.02, 0.01}, 0.9, alpha, margin, VerdictInconclusive},
		{"margin 0 disables equivalence", 0, Interval{-0.001, 0.001}, 0.9, alpha, 0, VerdictInconclusive},
		{"margin 0, significant", 0.01, Interval{0.004, 0.016}, 0.001, alpha, 0, VerdictABetter},
		{"wider configured margin", 0.03, Interval{0.01, 0.045}, 0.001, alpha, 0.05, VerdictEquivalent},
		{"NaN margin disables equivalence", 0, Interval{-0.001, 0.001}, 0.9, alpha, nan, VerdictInconclusive},
		{"NaN p-value", 0.1, Interval{0.05, 0.15}, nan, alpha, margin, VerdictInconclusive},
		{"NaN CI", 0.1, Interval{nan, nan}, 0.001, alpha, margin, VerdictInconclusive},
		{"NaN delta", nan, Interval{0.05, 0.15}, 0.001, alpha, margin, VerdictInconclusive},
		{"inverted CI", 0, Interval{0.01, -0.01}, 0.9, alpha, margin, VerdictInconclusive},
		{"alpha out of range", 0.1, Interval{0.05, 0.15}, 0.001, 0, margin, VerdictInconclusive},
		{"infinite CI", 0.1, Interval{math.Inf(-1), math.Inf(1)}, 0.5, alpha, margin, VerdictInconclusive},
	}
	for _, c := range cases {
		if got := Verdict(c.delta, c.ci, c.pAdj, c.alpha, c.margin); got != c.want {
			t.Errorf("%s: Verdict(%v, %v, %v, %v, %v) = %s, want %s", c.name, c.delta, c.ci, c.pAdj, c.alpha, c.margin, got, c.want)
		}
	}
}

// TestVerdictSymmetric: swapping A and B swaps a_better and b_better and
// leaves the other verdicts alone.
func TestVerdictSymmetric(t *testing.T) {
	swap := map[string]string{
		VerdictABetter: VerdictBBetter, VerdictBBetter: VerdictABetter,
		VerdictEquivalent: VerdictEquivalent, VerdictInconclusive: VerdictInconclusive,
	}
	for _, lo := range []float64{-0.1, -0.03, -0.019, -0.005, 0, 0.003, 0.018, 0.025} {
		for _, w := range []float64{0, 0.005, 0.01, 0.03, 0.2} {
			for _, p := range []float64{0.001, 0.049, 0.2} {
				ci := Interval{lo, lo + w}
				mid := lo + w/2
				ab := Verdict(mid, ci, p, 0.05, 0.02)
				ba := Verdict(-mid, Interval{-ci.Hi, -ci.Lo}, p, 0.05, 0.02)
				if swap[ab] != ba {
					t.Errorf("CI %v p %v: A vs B %s, B vs A %s", ci, p, ab, ba)
				}
			}
		}
	}
}
