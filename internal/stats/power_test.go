package stats

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/assay-eval/assay/internal/longtest"

	"gonum.org/v1/gonum/stat/distuv"
)

func TestMcNemarSampleSizeMatchesReference(t *testing.T) {
	g := loadPairedGolden(t)
	for _, v := range g.McNemarN {
		got, err := McNemarSampleSize(v.PDisc, v.Delta, v.Alpha, v.Power)
		if err != nil {
			t.Fatalf("%+v: %v", v, err)
		}
		if got != v.N {
			t.Errorf("McNemarSampleSize(%v, %v, %v, %v) = %d, Connor reference %d (%.6f)", v.PDisc, v.Delta, v.Alpha, v.Power, got, v.N, v.NReal)
		}
		if real := connorN(v.PDisc, math.Abs(v.Delta), v.Alpha, v.Power); !goldenRel(real, v.NReal, 1e-9) {
			t.Errorf("Connor n(%v, %v) = %.12g, reference %.12g", v.PDisc, v.Delta, real, v.NReal)
		}
	}
}

// TestMcNemarSampleSizePublished: Connor (1987) p. 209, as reproduced by
// the common power calculators: p01 = 0.45, p10 = 0.05 (discordance 0.5,
// difference 0.4), two-sided alpha 0.05, power 0.8 → 23 pairs.
func TestMcNemarSampleSizePublished(t *testing.T) {
	if n, err := McNemarSampleSize(0.5, -0.4, 0.05, 0.8); err != nil || n != 23 {
		t.Errorf("Connor's example: %d, %v; published 23", n, err)
	}
}

func TestMinDetectableDifferenceMatchesReference(t *testing.T) {
	g := loadPairedGolden(t)
	for _, v := range g.MDD {
		got, err := MinDetectableDifference(v.N, v.PDisc, v.Alpha, v.Power)
		if err != nil {
			t.Fatalf("%+v: %v", v, err)
		}
		if !goldenAbs(got, v.MDD, 1e-9) {
			t.Errorf("MinDetectableDifference(%d, %v, %v, %v) = %.12g, brentq reference %.12g", v.N, v.PDisc, v.Alpha, v.Power, got, v.MDD)
		}
		// Round trip: the sample size for that difference is n.
		if n, err := McNemarSampleSize(v.PDisc, got*(1+1e-12), v.Alpha, v.Power); err != nil || n != v.N {
			t.Errorf("sample size at the MDD of %d cases = %d, %v", v.N, n, err)
		}
	}
}

// TestMinDetectableDifferenceRoundTrip over a grid: the MDD of n cases is
// the difference whose sample size is n, and it shrinks as n grows.
func TestMinDetectableDifferenceRoundTrip(t *testing.T) {
	for _, pd := range []float64{0.02, 0.1, 0.3, 0.8} {
		prev := math.Inf(1)
		for _, n := range []int{50, 100, 400, 1319, 10000, 100000} {
			d, err := MinDetectableDifference(n, pd, 0.05, 0.8)
			if err != nil {
				continue // too few cases for this discordance
			}
			if d >= prev {
				t.Errorf("pDisc %v: MDD %v at n=%d not below %v", pd, d, n, prev)
			}
			prev = d
			if real := connorN(pd, d, 0.05, 0.8); math.Abs(real-float64(n)) > 1e-6*float64(n) {
				t.Errorf("pDisc %v n %d: Connor n at the MDD is %v", pd, n, real)
			}
		}
	}
}

func TestTwoProportionSampleSizeMatchesStatsmodels(t *testing.T) {
	g := loadPairedGolden(t)
	for _, v := range g.TwoProp {
		real, err := twoProportionN(v.P1, v.P2, v.Alpha, v.Power)
		if err != nil {
			t.Fatal(err)
		}
		if !goldenRel(real, v.NReal, 1e-6) {
			t.Errorf("n(%v, %v, %v, %v) = %.10g, statsmodels %.10g", v.P1, v.P2, v.Alpha, v.Power, real, v.NReal)
		}
		got, err := TwoProportionSampleSize(v.P1, v.P2, v.Alpha, v.Power)
		if err != nil || got != v.N {
			t.Errorf("TwoProportionSampleSize(%v, %v, %v, %v) = %d, %v; statsmodels %d", v.P1, v.P2, v.Alpha, v.Power, got, err, v.N)
		}
		swapped, _ := TwoProportionSampleSize(v.P2, v.P1, v.Alpha, v.Power)
		if swapped != got {
			t.Errorf("order of rates matters: %d vs %d", swapped, got)
		}
	}
}

// TestMcNemarSampleSizeAchievesPower simulates paired pass/fail data at the
// computed sample size and checks that the McNemar test (asymptotic, the
// test Connor's formula is built on) rejects at about the promised power,
// and that the exact test is not far below it.
func TestMcNemarSampleSizeAchievesPower(t *testing.T) {
	longtest.Skip(t)
	rng := rand.New(rand.NewPCG(2024, 6))
	const trials = 3000
	for _, s := range []struct{ pDisc, delta, power float64 }{
		{0.2, 0.1, 0.9}, {0.1, 0.04, 0.8}, {0.3, -0.08, 0.8}, {0.5, 0.2, 0.8},
	} {
		n, err := McNemarSampleSize(s.pDisc, s.delta, 0.05, s.power)
		if err != nil {
			t.Fatal(err)
		}
		p10, p01 := (s.pDisc+s.delta)/2, (s.pDisc-s.delta)/2
		z := distuv.UnitNormal.Quantile(0.975)
		rejAsym, rejExact := 0, 0
		for range trials {
			b, c := 0, 0
			for range n {
				u := rng.Float64()
				if u < p10 {
					b++
				} else if u < p10+p01 {
					c++
				}
			}
			if b+c > 0 && math.Abs(float64(b-c))/math.Sqrt(float64(b+c)) > z {
				rejAsym++
			}
			if McNemarExact(b, c) < 0.05 {
				rejExact++
			}
		}
		pa, pe := float64(rejAsym)/trials, float64(rejExact)/trials
		t.Logf("pDisc %v delta %v n %d: power asymptotic %.3f, exact %.3f (target %v)", s.pDisc, s.delta, n, pa, pe, s.power)
		if math.Abs(pa-s.power) > 0.035 {
			t.Errorf("pDisc %v delta %v n %d: achieved power %.3f, promised %v", s.pDisc, s.delta, n, pa, s.power)
		}
		if pe < s.power-0.07 {
			t.Errorf("pDisc %v delta %v n %d: exact test power %.3f far below %v", s.pDisc, s.delta, n, pe, s.power)
		}
		if pw, err := McNemarPower(n, s.pDisc, s.delta, 0.05); err != nil || pw < s.power || pw > s.power+0.02 {
			t.Errorf("McNemarPower at the computed n = %v, %v; want just above %v", pw, err, s.power)
		}
	}
}

func TestPowerInputErrors(t *testing.T) {
	for name, err := range map[string]error{
		"zero delta":        errorOnly(McNemarSampleSize(0.2, 0, 0.05, 0.8)),
		"delta > pDisc":     errorOnly(McNemarSampleSize(0.1, 0.2, 0.05, 0.8)),
		"pDisc 0":           errorOnly(McNemarSampleSize(0, 0.1, 0.05, 0.8)),
		"pDisc > 1":         errorOnly(McNemarSampleSize(1.2, 0.1, 0.05, 0.8)),
		"alpha 0":           errorOnly(McNemarSampleSize(0.2, 0.1, 0, 0.8)),
		"power 1":           errorOnly(McNemarSampleSize(0.2, 0.1, 0.05, 1)),
		"NaN power":         errorOnly(McNemarSampleSize(0.2, 0.1, 0.05, math.NaN())),
		"tiny delta":        errorOnly(McNemarSampleSize(0.5, 1e-12, 0.05, 0.8)),
		"mdd n 0":           errorOnly(MinDetectableDifference(0, 0.2, 0.05, 0.8)),
		"mdd too few":       errorOnly(MinDetectableDifference(5, 0.05, 0.05, 0.8)),
		"mdd pDisc 0":       errorOnly(MinDetectableDifference(100, 0, 0.05, 0.8)),
		"two equal rates":   errorOnly(TwoProportionSampleSize(0.5, 0.5, 0.05, 0.8)),
		"rate above 1":      errorOnly(TwoProportionSampleSize(1.5, 0.5, 0.05, 0.8)),
		"power below alpha": errorOnly(TwoProportionSampleSize(0.4, 0.5, 0.05, 0.04)),
		"power n 0":         errorOnly(McNemarPower(0, 0.2, 0.1, 0.05)),
		"power delta>pDisc": errorOnly(McNemarPower(100, 0.1, 0.2, 0.05)),
	} {
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
