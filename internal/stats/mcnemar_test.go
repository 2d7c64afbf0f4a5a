package stats

import (
	"math"
	"testing"
)

// TestMcNemarMatchesReference checks the exact and mid-p p-values against
// exact rational sums (and statsmodels' mcnemar(exact=True), which agrees
// with them to 1e-12 in the script), including b+c = 5,000 and 121,000,
// p-values down to 1e-45, and underflow to 0.
func TestMcNemarMatchesReference(t *testing.T) {
	g := loadPairedGolden(t)
	for _, m := range g.McNemar {
		if got := McNemarExact(m.B, m.C); !goldenRel(got, m.Exact, 1e-9) {
			t.Errorf("McNemarExact(%d, %d) = %.17g, exact %.17g (statsmodels %.17g)", m.B, m.C, got, m.Exact, m.Statsmodels)
		}
		if got := McNemarMidP(m.B, m.C); !goldenRel(got, m.MidP, 1e-9) {
			t.Errorf("McNemarMidP(%d, %d) = %.17g, exact %.17g", m.B, m.C, got, m.MidP)
		}
	}
}

// TestMcNemarPublished checks values printed in the literature.
func TestMcNemarPublished(t *testing.T) {
	cases := []struct {
		name        string
		b, c        int
		exact, midp float64
		tol         float64
	}{
		// Fagerland, Lydersen & Laake (2013), Bentur et al. data: exact
		// conditional 0.070, mid-p 0.039 (= 18/256 and 10/256).
		{"bentur", 1, 7, 0.070, 0.039, 5e-4},
		// contingencytables (Fagerland et al.) tests, Cavo et al. (2012):
		// exact conditional P = 0.052479, mid-P = 0.034690.
		{"cavo", 6, 16, 0.052479, 0.034690, 5e-7},
	}
	for _, c := range cases {
		if got := McNemarExact(c.b, c.c); math.Abs(got-c.exact) > c.tol {
			t.Errorf("%s: McNemarExact(%d, %d) = %.6f, published %.6f", c.name, c.b, c.c, got, c.exact)
		}
		if got := McNemarMidP(c.b, c.c); math.Abs(got-c.midp) > c.tol {
			t.Errorf("%s: McNemarMidP(%d, %d) = %.6f, published %.6f", c.name, c.b, c.c, got, c.midp)
		}
	}
}

func TestMcNemarEdges(t *testing.T) {
	if got := McNemarExact(0, 0); got != 1 {
		t.Errorf("no discordant cases: p = %v, want 1", got)
	}
	if got := McNemarMidP(0, 0); got != 1 {
		t.Errorf("no discordant cases: mid-p = %v, want 1", got)
	}
	if got := McNemarExact(2500, 2500); got != 1 {
		t.Errorf("even split of 5000: p = %v, want 1", got)
	}
	for _, bc := range [][2]int{{-1, 3}, {3, -1}, {math.MaxInt, 1}, {1, math.MaxInt}, {1 << 53, 1}} {
		if got := McNemarExact(bc[0], bc[1]); !math.IsNaN(got) {
			t.Errorf("McNemarExact(%d, %d) = %v, want NaN", bc[0], bc[1], got)
		}
		if got := McNemarMidP(bc[0], bc[1]); !math.IsNaN(got) {
			t.Errorf("McNemarMidP(%d, %d) = %v, want NaN", bc[0], bc[1], got)
		}
	}
	// 0 vs 1074 discordant: 2·2^-1074 is still representable; 0 vs 1100 is
	// not and must underflow to 0, not overflow to NaN or Inf.
	if got := McNemarExact(0, 1074); got != math.Ldexp(1, -1073) {
		t.Errorf("McNemarExact(0, 1074) = %v, want 2^-1073", got)
	}
	if got := McNemarExact(0, 1100); got != 0 {
		t.Errorf("McNemarExact(0, 1100) = %v, want 0", got)
	}
}

// TestMcNemarProperties: symmetric in b and c, the mid-p never exceeds the
// exact p, both lie in [0, 1], and more lopsided splits of the same number
// of discordant cases give smaller p-values.
func TestMcNemarProperties(t *testing.T) {
	for n := 0; n <= 300; n += 7 {
		prev := math.Inf(1)
		for k := n / 2; k >= 0; k-- {
			e, m := McNemarExact(k, n-k), McNemarMidP(k, n-k)
			if e != McNemarExact(n-k, k) || m != McNemarMidP(n-k, k) {
				t.Fatalf("not symmetric at (%d, %d)", k, n-k)
			}
			if !(e >= 0 && e <= 1 && m >= 0 && m <= e) {
				t.Fatalf("(%d, %d): exact %v, mid-p %v", k, n-k, e, m)
			}
			if e > prev {
				t.Fatalf("p rose from %v to %v as the split became more lopsided at (%d, %d)", prev, e, k, n-k)
			}
			prev = e
		}
	}
}

// TestMcNemarMidPLevel: under the null (a fair coin for each discordant
// case) the exact test rejects at most alpha of the time for every number
// of discordant cases, and on average the mid-p test comes closer to alpha,
// which is why Fagerland et al. recommend it.
func TestMcNemarMidPLevel(t *testing.T) {
	const alpha = 0.05
	var meanExact, meanMid float64
	for n := 5; n <= 100; n++ {
		var sizeExact, sizeMid float64
		for k := 0; k <= n; k++ {
			pk := halfBinomialPMF(k, n)
			if McNemarExact(k, n-k) < alpha {
				sizeExact += pk
			}
			if McNemarMidP(k, n-k) < alpha {
				sizeMid += pk
			}
		}
		if sizeExact > alpha {
			t.Errorf("n=%d: exact test size %v exceeds alpha %v", n, sizeExact, alpha)
		}
		meanExact += sizeExact / 96
		meanMid += sizeMid / 96
	}
	if !(math.Abs(meanMid-alpha) < math.Abs(meanExact-alpha)) {
		t.Errorf("mean size: mid-p %v is not closer to %v than exact %v", meanMid, alpha, meanExact)
	}
	t.Logf("mean size over 5..100 discordant cases: exact %.4f, mid-p %.4f", meanExact, meanMid)
}

func TestHalfBinomialPMFSumsToOne(t *testing.T) {
	for _, n := range []int{1, 2, 15, 16, 17, 100, 5000} {
		s := 0.0
		for x := 0; x <= n; x++ {
			s += halfBinomialPMF(x, n)
		}
		if math.Abs(s-1) > 1e-13 {
			t.Errorf("n=%d: pmf sums to %.17g", n, s)
		}
	}
}
