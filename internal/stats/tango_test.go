package stats

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// TestTangoZAtZeroIsMcNemarScore: at d0 = 0 Tango's statistic is the
// McNemar score statistic (b − c)/√(b + c), whatever the concordant cells.
func TestTangoZAtZeroIsMcNemarScore(t *testing.T) {
	for _, tab := range []PairTable{{10, 7, 2, 30}, {0, 1, 9, 0}, {500, 40, 41, 419}, {3, 0, 5, 1}} {
		want := float64(tab.AOnly-tab.BOnly) / math.Sqrt(float64(tab.AOnly+tab.BOnly))
		if got := TangoZ(tab, 0); math.Abs(got-want) > 1e-12 {
			t.Errorf("TangoZ(%+v, 0) = %v, want (b−c)/√(b+c) = %v", tab, got, want)
		}
		wantP := 2 * distuv.UnitNormal.Survival(math.Abs(want))
		if got := McNemarScoreP(tab.AOnly, tab.BOnly); math.Abs(got-wantP) > 1e-12 {
			t.Errorf("McNemarScoreP(%d, %d) = %v, want %v", tab.AOnly, tab.BOnly, got, wantP)
		}
	}
	if got := TangoZ(PairTable{Both: 4, Neither: 6}, 0); got != 0 {
		t.Errorf("no discordance: TangoZ = %v, want 0", got)
	}
	if got := McNemarScoreP(0, 0); got != 1 {
		t.Errorf("McNemarScoreP(0, 0) = %v, want 1", got)
	}
}

// TestTangoIntervalNoDiscordance: with b = c = 0 the statistic is
// −√(n·d0/(1 − d0)) for d0 > 0, so the bounds solve n·d/(1 − d) = z²:
// ±z²/(n + z²).
func TestTangoIntervalNoDiscordance(t *testing.T) {
	z := distuv.UnitNormal.Quantile(0.975)
	for _, n := range []int{1, 20, 2000} {
		iv := TangoInterval(PairTable{Both: n}, 0.05)
		want := z * z / (float64(n) + z*z)
		if math.Abs(iv.Hi-want) > 1e-12 || math.Abs(iv.Lo+want) > 1e-12 {
			t.Errorf("n=%d: %v, want ±%v", n, iv, want)
		}
	}
}

// TestTangoIntervalInvertsTheTest: the bounds are where the statistic
// crosses ±z, and the boundaries ±1 are reached only by tables that sit
// there.
func TestTangoIntervalInvertsTheTest(t *testing.T) {
	z := distuv.UnitNormal.Quantile(0.975)
	for _, tab := range []PairTable{{10, 7, 2, 30}, {0, 1, 9, 0}, {500, 40, 41, 419}, {0, 12, 0, 0}, {0, 0, 5, 0}, {0, 3, 4, 0}} {
		iv := TangoInterval(tab, 0.05)
		est := float64(tab.AOnly-tab.BOnly) / float64(tab.N())
		if !(iv.Lo <= est && est <= iv.Hi && iv.Lo < iv.Hi) {
			t.Fatalf("%+v: %v does not hold %v", tab, iv, est)
		}
		if tab.AOnly == tab.N() {
			if iv.Hi != 1 {
				t.Errorf("%+v: every case favours A, Hi = %v, want 1", tab, iv.Hi)
			}
		} else if got := TangoZ(tab, iv.Hi); math.Abs(got+z) > 1e-6 {
			t.Errorf("%+v: T(Hi=%v) = %v, want −z", tab, iv.Hi, got)
		}
		if tab.BOnly == tab.N() {
			if iv.Lo != -1 {
				t.Errorf("%+v: every case favours B, Lo = %v, want −1", tab, iv.Lo)
			}
		} else if got := TangoZ(tab, iv.Lo); math.Abs(got-z) > 1e-6 {
			t.Errorf("%+v: T(Lo=%v) = %v, want z", tab, iv.Lo, got)
		}
	}
}

// TestPairedBinaryScoreAgreesWithInterval: the default pass/fail comparison
// is the score test with Tango's interval, and its interval excludes 0
// exactly when p < alpha — over every table of up to 40 cases, where exact
// McNemar and Newcombe disagree.
func TestPairedBinaryScoreAgreesWithInterval(t *testing.T) {
	disagreeExact := 0
	for n := 1; n <= 40; n++ {
		for b := 0; b <= n; b++ {
			for c := 0; b+c <= n; c++ {
				tab := PairTable{Both: n - b - c, AOnly: b, BOnly: c}
				p, err := PairedBinaryTable(tab, 0.05)
				if err != nil {
					t.Fatal(err)
				}
				if p.Test != TestMcNemarScore || p.CIMethod != "tango" || p.DF != 0 {
					t.Fatalf("test %q ci %q df %v", p.Test, p.CIMethod, p.DF)
				}
				if excl := p.CI.Lo > 0 || p.CI.Hi < 0; excl != (p.PValue < 0.05) {
					t.Errorf("%+v: p %v, CI %v", tab, p.PValue, p.CI)
				}
				e, _ := PairedBinaryExact(tab, 0.05)
				if excl := e.CI.Lo > 0 || e.CI.Hi < 0; excl != (e.PValue < 0.05) {
					disagreeExact++
				}
			}
		}
	}
	if disagreeExact == 0 {
		t.Error("exact McNemar and Newcombe never disagree up to n = 40: the score test would not be needed")
	}
}

func TestPairedBinaryWithNames(t *testing.T) {
	tab := PairTable{Both: 59, AOnly: 6, BOnly: 16, Neither: 80}
	e, err := PairedBinaryWith(tab, 0.05, TestMcNemarExact)
	if err != nil || e.Test != TestMcNemarExact || e.CIMethod != "newcombe" || e.PValue != McNemarExact(6, 16) {
		t.Errorf("exact: %+v %v", e, err)
	}
	s, err := PairedBinaryWith(tab, 0.05, TestMcNemarScore)
	if err != nil || s.Test != TestMcNemarScore || s.PValue != McNemarScoreP(6, 16) {
		t.Errorf("score: %+v %v", s, err)
	}
	if _, err := PairedBinaryWith(tab, 0.05, "chi2"); err == nil {
		t.Error("unknown test name accepted")
	}
}

// TestPValueBelowAbove: one-sided p-values of each kind of comparison
// against values derived by hand.
func TestPValueBelowAbove(t *testing.T) {
	tab := PairTable{Both: 50, AOnly: 4, BOnly: 14, Neither: 32}
	p, _ := PairedBinaryTable(tab, 0.05)
	// At d0 = 0: the one-sided halves of the two-sided score p.
	if got := p.PValueBelow(0); math.Abs(got-p.PValue/2) > 1e-12 {
		t.Errorf("PValueBelow(0) = %v, want p/2 = %v", got, p.PValue/2)
	}
	if got := p.PValueAbove(0) + p.PValueBelow(0); math.Abs(got-1) > 1e-12 {
		t.Errorf("PValueAbove(0) + PValueBelow(0) = %v", got)
	}
	for _, d0 := range []float64{-0.3, -0.04, 0.02, 0.5} {
		want := distuv.UnitNormal.CDF(TangoZ(tab, d0))
		if got := p.PValueBelow(d0); math.Abs(got-want) > 1e-12 {
			t.Errorf("PValueBelow(%v) = %v, want Φ(T) = %v", d0, got, want)
		}
	}
	if got := p.PValueBelow(-1); got != 1 {
		t.Errorf("PValueBelow(−1) = %v, want 1 (Δ ≥ −1 always holds)", got)
	}
	if got := p.PValueAbove(1); got != 1 {
		t.Errorf("PValueAbove(1) = %v, want 1", got)
	}
	// Paired t: t = (Delta − d0)/SE on n − 1 df.
	a := []float64{0.9, 0.8, 0.7, 0.75, 0.6, 0.95}
	b := []float64{0.5, 0.85, 0.6, 0.7, 0.4, 0.9}
	m, _ := PairedMeans(a, b, 0.05)
	if m.DF != 5 {
		t.Errorf("paired t DF = %v, want 5", m.DF)
	}
	td := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: 5}
	if got, want := m.PValueAbove(0.02), td.Survival((m.Delta-0.02)/m.SE); math.Abs(got-want) > 1e-12 {
		t.Errorf("paired t PValueAbove(0.02) = %v, want %v", got, want)
	}
	if got, want := m.PValueBelow(0.3), td.CDF((m.Delta-0.3)/m.SE); math.Abs(got-want) > 1e-12 {
		t.Errorf("paired t PValueBelow(0.3) = %v, want %v", got, want)
	}
	if got := m.PValueAbove(0) * 2; math.Abs(got-m.PValue) > 1e-12 {
		t.Errorf("paired t: 2·PValueAbove(0) = %v, two-sided %v", got, m.PValue)
	}
}

// TestClusteredPairedSingletons: with every case its own cluster CR1 is the
// ordinary paired SE and G − 1 = n − 1, so the comparison is the paired
// t-test.
func TestClusteredPairedSingletons(t *testing.T) {
	a := []float64{1, 0, 1, 1, 0, 1, 1, 1, 0, 1}
	b := []float64{0, 0, 1, 0, 0, 1, 1, 0, 1, 0}
	cl := make([]string, len(a))
	c, err := ClusteredPaired(a, b, cl, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := PairedMeans(a, b, 0.05)
	if c.Test != TestClusterT || c.CIMethod != "cr1_t" || c.Clusters != 10 || c.DF != 9 {
		t.Errorf("test %q ci %q clusters %d df %v", c.Test, c.CIMethod, c.Clusters, c.DF)
	}
	if math.Abs(c.SE-m.SE) > 1e-15 || math.Abs(c.CI.Lo-m.CI.Lo) > 1e-15 || math.Abs(c.PValue-m.PValue) > 1e-12 {
		t.Errorf("clustered %+v, paired t %+v", c, m)
	}
	// One cluster: nothing to estimate the SE from.
	one, err := ClusteredPaired(a, b, []string{"x", "x", "x", "x", "x", "x", "x", "x", "x", "x"}, 0.05)
	if err != nil || !math.IsNaN(one.SE) || !math.IsNaN(one.PValue) || !math.IsNaN(one.CI.Lo) || !math.IsNaN(one.PValueBelow(0)) {
		t.Errorf("one cluster: %+v %v", one, err)
	}
	for name, err := range map[string]error{
		"empty":    errorOnly(ClusteredPaired(nil, nil, nil, 0.05)),
		"clusters": errorOnly(ClusteredPaired(a, b, cl[:3], 0.05)),
		"alpha":    errorOnly(ClusteredPaired(a, b, cl, 1)),
		"NaN":      errorOnly(ClusteredPaired([]float64{math.NaN()}, []float64{1}, []string{""}, 0.05)),
	} {
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestEpochRateAllPassed: a target that passed every epoch of every case
// gets an interval whose lower bound is below 100%: Wilson on the n cases
// with the t(n−1) quantile, n/(n + t²).
func TestEpochRateAllPassed(t *testing.T) {
	tq := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: 19}.Quantile(0.975)
	means := []float64{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}
	ci, method := EpochRateCI(means, 5, 0.05)
	want := 20 / (20 + tq*tq)
	if method != EpochRateMethod || ci.Hi != 1 || math.Abs(ci.Lo-want) > 1e-12 {
		t.Errorf("all passed: %v %q, want [%v, 1]", ci, method, want)
	}
	// One epoch: Wilson on the cases exactly.
	ci1, _ := EpochRateCI([]float64{1, 0, 1, 1, 0, 1, 1, 1}, 1, 0.05)
	if w := Wilson(6, 8, 0.05); math.Abs(ci1.Lo-w.Lo) > 1e-12 || math.Abs(ci1.Hi-w.Hi) > 1e-12 {
		t.Errorf("one epoch: %v, Wilson %v", ci1, w)
	}
	if ci, m := EpochRateCI([]float64{0.5, 1.5}, 2, 0.05); !math.IsNaN(ci.Lo) || m != "" {
		t.Errorf("case mean 1.5 accepted: %v %q", ci, m)
	}
}

// TestNonInferiorityPowerAtTheLimit: at a true change exactly at the limit
// the fail decision fires with probability alpha (the test's level), and
// more often the further past it.
func TestNonInferiorityPowerAtTheLimit(t *testing.T) {
	at, err := NonInferiorityPower(400, 0.2, -0.04, 0.04, 0.05)
	if err != nil || math.Abs(at-0.05) > 1e-9 {
		t.Errorf("power at the limit = %v (%v), want alpha 0.05", at, err)
	}
	far, _ := NonInferiorityPower(400, 0.2, -0.08, 0.04, 0.05)
	if !(far > 0.5) {
		t.Errorf("power at 2× the limit on 400 cases = %v", far)
	}
	if _, err := NonInferiorityPower(400, 0.2, -0.3, 0.04, 0.05); err == nil {
		t.Error("|delta| > pDisc accepted")
	}
}

// TestTangoPublished checks Tango's interval and the McNemar score test on
// Cavo et al. (2012), the worked example of Fagerland, Lydersen & Laake,
// "Statistical Analysis of Contingency Tables" (2017), chapter 8, as their R
// package contingencytables prints it (tests/testthat/test-ch8.R): Tango
// asymptotic score CI −0.0621 (−0.1240 to −0.0054); McNemar asymptotic test
// P = 0.033006, Z = −2.132 (their table is B-first: n12 = 6, n21 = 16).
func TestTangoPublished(t *testing.T) {
	p, err := PairedBinaryTable(PairTable{Both: 59, AOnly: 6, BOnly: 16, Neither: 80}, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	round4 := func(x float64) float64 { return math.Round(x*1e4) / 1e4 }
	if round4(p.Delta) != -0.0621 || round4(p.CI.Lo) != -0.1240 || round4(p.CI.Hi) != -0.0054 {
		t.Errorf("Cavo: delta %.4f Tango CI [%.4f, %.4f], published -0.0621 [-0.1240, -0.0054]", p.Delta, p.CI.Lo, p.CI.Hi)
	}
	if math.Abs(p.PValue-0.033006) > 5e-7 || math.Round(TangoZ(PairTable{59, 6, 16, 80}, 0)*1000)/1000 != -2.132 {
		t.Errorf("Cavo: score p %.6f z %.3f, published 0.033006, -2.132", p.PValue, TangoZ(PairTable{59, 6, 16, 80}, 0))
	}
}

// TestTangoZDecreasing: the interval is the acceptance region of the test
// only if T falls as d0 rises; checked on a fine grid for every table of up
// to 25 cases.
func TestTangoZDecreasing(t *testing.T) {
	for n := 1; n <= 25; n++ {
		for b := 0; b <= n; b++ {
			for c := 0; b+c <= n; c++ {
				tab := PairTable{Both: n - b - c, AOnly: b, BOnly: c}
				prev := math.Inf(1)
				for i := 0; i <= 400; i++ {
					d0 := -1 + float64(i)/200
					z := TangoZ(tab, d0)
					if z > prev {
						t.Fatalf("%+v: T(%v) = %v rises above T just before, %v", tab, d0, z, prev)
					}
					prev = z
				}
			}
		}
	}
}

// FuzzRateIntervals: any case means, cluster labels and epochs give
// EpochRateCI and ClusteredMeanCI intervals inside [0, 1] that hold the
// rate and are never a point, and a ClusteredPaired interval that holds
// its Delta — or NaN where documented.
func FuzzRateIntervals(f *testing.F) {
	f.Add([]byte{255, 255, 255, 255}, []byte{0, 0, 1, 1}, 3)
	f.Add([]byte{0, 0, 0}, []byte{1, 2, 3}, 1)
	f.Add([]byte{10, 200, 30, 128, 77}, []byte{0, 1, 0, 1, 2}, 5)
	f.Fuzz(func(t *testing.T, raw, labels []byte, epochs int) {
		if len(raw) == 0 || len(raw) > 500 || epochs < 1 || epochs > 50 {
			return
		}
		means := make([]float64, len(raw))
		other := make([]float64, len(raw))
		cl := make([]string, len(raw))
		for i, r := range raw {
			// Multiples of 1/epochs, as epoch pass fractions are.
			means[i] = math.Round(float64(r)/255*float64(epochs)) / float64(epochs)
			other[i] = 1 - means[i]
			if i < len(labels) {
				cl[i] = string(rune('a' + labels[i]%8))
			}
		}
		var sum float64
		for _, m := range means {
			sum += m
		}
		rate := sum / float64(len(means))
		ci, method := EpochRateCI(means, epochs, 0.05)
		if method != EpochRateMethod || !(ci.Lo >= 0 && ci.Lo < ci.Hi && ci.Hi <= 1 && ci.Lo <= rate+1e-12 && rate <= ci.Hi+1e-12) {
			t.Fatalf("EpochRateCI(%v, %d) = %v %q, rate %v", means, epochs, ci, method, rate)
		}
		_, _, cci, df := ClusteredMeanCI(means, cl, 0.05)
		if df >= 1 && !(cci.Lo >= 0 && cci.Lo < cci.Hi && cci.Hi <= 1 && cci.Lo <= rate+1e-12 && rate <= cci.Hi+1e-12) {
			t.Fatalf("ClusteredMeanCI(%v, %v) = %v (df %d), rate %v", means, cl, cci, df, rate)
		}
		p, err := ClusteredPaired(means, other, cl, 0.05)
		if err != nil {
			t.Fatal(err)
		}
		if p.Clusters >= 2 && !(p.CI.Lo <= p.Delta+1e-12 && p.Delta <= p.CI.Hi+1e-12 && p.PValue >= 0 && p.PValue <= 1) {
			t.Fatalf("ClusteredPaired: %+v", p)
		}
	})
}
