package analysis

import (
	"math"
	"testing"
)

// Every case differs by the same amount (turns 3 against 2): the paired t
// has no variance, so the sign test decides — p = 2·½ⁿ, scipy's
// binomtest(n, n, 0.5).pvalue: 0.0078125 at n = 8, 0.125 at n = 4 — with
// the interval Δ itself when it rejects and from 0 to Δ when it does not.
func TestConstantDifferenceUsesTheSignTest(t *testing.T) {
	for _, c := range []struct {
		n      int
		p      float64
		lo, hi float64
	}{
		{8, 0.0078125, 1, 1},
		{4, 0.125, 0, 1},
	} {
		a, b := make([]float64, c.n), make([]float64, c.n)
		for i := range a {
			a[i], b[i] = 3, 2
		}
		mc, ok := compareMeasure(a, b, nil, 0.05)
		if !ok {
			t.Fatalf("n=%d: no comparison", c.n)
		}
		if mc.Test != "sign" || math.Abs(mc.PValue-c.p) > 1e-12 || mc.CI != [2]float64{c.lo, c.hi} || mc.Delta != 1 {
			t.Errorf("n=%d: %+v; want the sign test, p %g, CI [%g, %g], Δ 1", c.n, mc, c.p, c.lo, c.hi)
		}
		// B above A by the same amount: the interval spans 0 to −1.
		mc, _ = compareMeasure(b, a, nil, 0.05)
		if c.n == 4 && mc.CI != [2]float64{-1, 0} {
			t.Errorf("n=4, A below B: CI %v, want [-1, 0]", mc.CI)
		}
	}
	// Differences that vary keep the paired t.
	mc, _ := compareMeasure([]float64{3, 4, 3, 5}, []float64{2, 2, 2, 2}, nil, 0.05)
	if mc.Test == "sign" || mc.SE == 0 {
		t.Errorf("varying differences: %+v; want the paired t", mc)
	}
}
