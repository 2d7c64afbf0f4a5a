package stats

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

type bootstrapGolden struct {
	Exact []struct {
		Name, Stat string
		Alpha      float64
		Xs, Reps   []float64
		Theta      float64
		Jack       []float64
		Z0, Accel  float64
		BCa        [2]float64
		Percentile [2]float64
	}
	MonteCarlo []struct {
		Name, Stat, Method string
		Alpha              float64
		B, Seeds           int
		Xs                 []float64
		Lo, Hi             float64
		LoSD               float64 `json:"lo_sd"`
		HiSD               float64 `json:"hi_sd"`
	} `json:"monte_carlo"`
}

func meanOf(xs []float64) func(idx []int) float64 {
	return func(idx []int) float64 {
		var s float64
		for _, i := range idx {
			s += xs[i]
		}
		return s / float64(len(idx))
	}
}

// medianOf is numpy.median of the indexed values (the average of the two
// middle values for an even count).
func medianOf(xs []float64) func(idx []int) float64 {
	var buf []float64
	return func(idx []int) float64 {
		buf = buf[:0]
		for _, i := range idx {
			buf = append(buf, xs[i])
		}
		slices.Sort(buf)
		m := len(buf) / 2
		if len(buf)%2 == 1 {
			return buf[m]
		}
		return (buf[m-1] + buf[m]) / 2
	}
}

// TestBCaPiecesMatchScipy checks the deterministic parts of the bootstrap
// exactly against scipy's own BCa code on stored replicates
// (testdata/bootstrap.py): the jackknife values, the bias correction z0, the
// acceleration, and the BCa and percentile endpoints.
func TestBCaPiecesMatchScipy(t *testing.T) {
	var g bootstrapGolden
	loadGolden(t, "testdata/bootstrap.json", &g)
	if len(g.Exact) < 8 {
		t.Fatalf("only %d exact vectors", len(g.Exact))
	}
	for _, v := range g.Exact {
		name := v.Name + " " + v.Stat
		var jack []float64
		switch v.Stat {
		case "mean":
			jack = JackknifeMean(v.Xs)
			if generic := Jackknife(len(v.Xs), meanOf(v.Xs)); !closeAll(generic, jack, 1e-12) {
				t.Errorf("%s: Jackknife(mean) and JackknifeMean disagree", name)
			}
		case "median":
			jack = Jackknife(len(v.Xs), medianOf(v.Xs))
		default:
			t.Fatalf("unknown statistic %q", v.Stat)
		}
		if !closeAll(jack, v.Jack, 1e-12) {
			t.Errorf("%s: jackknife values differ from scipy's", name)
		}
		if z0 := BCaBias(v.Reps, v.Theta); !close9(z0, v.Z0) {
			t.Errorf("%s: z0 = %.15g, scipy %.15g", name, z0, v.Z0)
		}
		// The median's acceleration is zero up to rounding (±1e-15), so the
		// comparison is absolute.
		if a := BCaAcceleration(jack); math.Abs(a-v.Accel) > 1e-12 {
			t.Errorf("%s: acceleration = %.15g, scipy %.15g", name, a, v.Accel)
		}
		if got := BCaCI(v.Reps, v.Theta, jack, v.Alpha); !close9(got.Lo, v.BCa[0]) || !close9(got.Hi, v.BCa[1]) {
			t.Errorf("%s alpha %g: BCa = %v, scipy %v", name, v.Alpha, got, v.BCa)
		}
		if got := PercentileCI(v.Reps, v.Alpha); !close9(got.Lo, v.Percentile[0]) || !close9(got.Hi, v.Percentile[1]) {
			t.Errorf("%s alpha %g: percentile = %v, numpy %v", name, v.Alpha, got, v.Percentile)
		}
	}
}

func closeAll(got, want []float64, tol float64) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if math.Abs(got[i]-want[i]) > tol*math.Max(1, math.Abs(want[i])) {
			return false
		}
	}
	return true
}

// TestBootstrapCIMatchesScipy runs our whole bootstrap (resampling and
// intervals, B = 20,000) on the data sets scipy.stats.bootstrap was run on
// with ten seeds. Both are random, so they can only agree up to Monte Carlo
// error: our endpoint minus the mean of scipy's ten has standard deviation
// sd·√(1 + 1/10), where sd is the spread of scipy's endpoints across seeds
// (same B as ours). We allow four of those. Discrete data (pass/fail,
// medians) puts every run's endpoint on the same lattice point, sd = 0,
// and then we must hit it too.
func TestBootstrapCIMatchesScipy(t *testing.T) {
	var g bootstrapGolden
	loadGolden(t, "testdata/bootstrap.json", &g)
	if len(g.MonteCarlo) < 8 {
		t.Fatalf("only %d Monte Carlo vectors", len(g.MonteCarlo))
	}
	for i, v := range g.MonteCarlo {
		rng := rand.New(rand.NewPCG(42, uint64(i)))
		var reps, jack []float64
		var theta float64
		switch v.Stat {
		case "mean":
			reps = BootstrapMean(rng, v.Xs, v.B)
			jack = JackknifeMean(v.Xs)
			theta, _ = MeanSE(v.Xs)
		case "median":
			med := medianOf(v.Xs)
			reps = Bootstrap(rng, len(v.Xs), v.B, med)
			jack = Jackknife(len(v.Xs), med)
			all := make([]int, len(v.Xs))
			for j := range all {
				all[j] = j
			}
			theta = med(all)
		}
		var got Interval
		switch v.Method {
		case "bca":
			got = BCaCI(reps, theta, jack, v.Alpha)
		case "percentile":
			got = PercentileCI(reps, v.Alpha)
		default:
			t.Fatalf("unknown method %q", v.Method)
		}
		inflate := math.Sqrt(1 + 1/float64(v.Seeds))
		tolLo := 4*v.LoSD*inflate + 1e-9
		tolHi := 4*v.HiSD*inflate + 1e-9
		if math.Abs(got.Lo-v.Lo) > tolLo || math.Abs(got.Hi-v.Hi) > tolHi {
			t.Errorf("%s %s %s: [%.6g, %.6g], scipy mean [%.6g, %.6g] ± [%.2g, %.2g]",
				v.Name, v.Stat, v.Method, got.Lo, got.Hi, v.Lo, v.Hi, tolLo, tolHi)
		}
	}
}

// TestBootstrapMeanIsBootstrap: the fast path draws exactly the resamples
// the general one does, so for the same seed they agree to rounding.
func TestBootstrapMeanIsBootstrap(t *testing.T) {
	for _, n := range []int{1, 2, 7, 100, 1001} {
		src := rand.New(rand.NewPCG(5, uint64(n)))
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = 1000 + src.NormFloat64()
		}
		fast := BootstrapMean(rand.New(rand.NewPCG(9, 9)), xs, 200)
		slow := Bootstrap(rand.New(rand.NewPCG(9, 9)), n, 200, meanOf(xs))
		if !closeAll(fast, slow, 1e-12) {
			t.Errorf("n=%d: BootstrapMean and Bootstrap(mean) disagree: %v vs %v", n, fast[:3], slow[:3])
		}
		again := BootstrapMean(rand.New(rand.NewPCG(9, 9)), xs, 200)
		if !slices.Equal(fast, again) {
			t.Errorf("n=%d: same seed, different replicates", n)
		}
		if other := BootstrapMean(rand.New(rand.NewPCG(9, 10)), xs, 200); n > 1 && slices.Equal(fast, other) {
			t.Errorf("n=%d: different seeds, same replicates", n)
		}
	}
}

// TestBootstrapMeanSpread: the replicates of a mean centre on the sample
// mean and spread as the ideal bootstrap says, sqrt(Σ(x-x̄)²)/n. With
// B = 20,000 the relative Monte Carlo error of the spread is 1/√(2B) = 0.5%;
// we allow 3%.
func TestBootstrapMeanSpread(t *testing.T) {
	src := rand.New(rand.NewPCG(11, 12))
	xs := make([]float64, 500)
	for i := range xs {
		xs[i] = src.ExpFloat64()
	}
	mean, se := MeanSE(xs)
	n := float64(len(xs))
	ideal := se * math.Sqrt((n-1)/n)
	reps := BootstrapMean(rand.New(rand.NewPCG(13, 14)), xs, 20_000)
	rm, rse := MeanSE(reps)
	sd := rse * math.Sqrt(float64(len(reps)))
	if math.Abs(sd-ideal) > 0.03*ideal {
		t.Errorf("bootstrap SD %g, ideal %g", sd, ideal)
	}
	if math.Abs(rm-mean) > 4*ideal/math.Sqrt(float64(len(reps))) {
		t.Errorf("replicates centre on %g, sample mean %g", rm, mean)
	}
}

// TestIndexSourceUniform: every index is equally likely (chi-square over
// 700,000 draws from 7 values, odd so the unpaired last draw is used too;
// the 0.999 quantile of chi-square with 6 df is 22.46), and indices stay in
// range on the path for n ≥ 2³².
func TestIndexSourceUniform(t *testing.T) {
	src := newIndexSource(rand.New(rand.NewPCG(1, 1)), 7)
	idx := make([]int, 7)
	counts := make([]float64, 7)
	const rounds = 100_000
	for range rounds {
		src.fill(idx)
		for _, i := range idx {
			counts[i]++
		}
	}
	var chi2 float64
	for _, c := range counts {
		chi2 += (c - rounds) * (c - rounds) / rounds
	}
	if chi2 > 22.46 {
		t.Errorf("index counts %v: chi-square %g > 22.46", counts, chi2)
	}

	big := newIndexSource(rand.New(rand.NewPCG(1, 1)), 1<<33)
	idx = make([]int, 1000)
	big.fill(idx)
	high := 0
	for _, i := range idx {
		if i < 0 || i >= 1<<33 {
			t.Fatalf("index %d out of range", i)
		}
		if i >= 1<<32 {
			high++
		}
	}
	if high < 400 || high > 600 {
		t.Errorf("%d of 1000 indices in the upper half of [0, 2³³)", high)
	}
}

func TestBootstrapEdgeCases(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	if got := BootstrapMean(rng, nil, 100); got != nil {
		t.Errorf("BootstrapMean(empty) = %v, want nil", got)
	}
	if got := BootstrapMean(rng, []float64{1}, 0); got != nil {
		t.Errorf("BootstrapMean(B=0) = %v, want nil", got)
	}
	if got := Bootstrap(rng, 0, 10, meanOf(nil)); got != nil {
		t.Errorf("Bootstrap(n=0) = %v, want nil", got)
	}
	for _, bad := range [][]float64{{1, math.NaN()}, {1, math.Inf(-1)}} {
		for _, r := range BootstrapMean(rng, bad, 5) {
			if !math.IsNaN(r) {
				t.Errorf("BootstrapMean(%v) replicate %g, want NaN", bad, r)
			}
		}
	}
	if got := Jackknife(1, meanOf([]float64{1})); got != nil {
		t.Errorf("Jackknife(1) = %v, want nil", got)
	}
	if got := JackknifeMean([]float64{1}); got != nil {
		t.Errorf("JackknifeMean(one) = %v, want nil", got)
	}

	isNaN := func(iv Interval) bool { return math.IsNaN(iv.Lo) && math.IsNaN(iv.Hi) }
	if got := PercentileCI(nil, 0.05); !isNaN(got) {
		t.Errorf("PercentileCI(empty) = %v", got)
	}
	if got := PercentileCI([]float64{1, math.NaN()}, 0.05); !isNaN(got) {
		t.Errorf("PercentileCI(NaN) = %v", got)
	}
	if got := PercentileCI([]float64{1, 2}, 1.5); !isNaN(got) {
		t.Errorf("PercentileCI(alpha 1.5) = %v", got)
	}
	if got := PercentileCI([]float64{3}, 0.05); got != (Interval{3, 3}) {
		t.Errorf("PercentileCI(one) = %v", got)
	}
	reps := []float64{5, 1, 4, 2, 3}
	if got := PercentileCI(reps, 0.5); got != (Interval{2, 4}) {
		t.Errorf("PercentileCI(1..5, 0.5) = %v, want [2, 4]", got)
	}
	if !slices.Equal(reps, []float64{5, 1, 4, 2, 3}) {
		t.Errorf("PercentileCI reordered its input: %v", reps)
	}

	// Constant data: scipy's BCa is undefined (0/0 acceleration), ours too.
	xs := []float64{1, 1, 1, 1}
	if got := BCaCI(BootstrapMean(rng, xs, 100), 1, JackknifeMean(xs), 0.05); !isNaN(got) {
		t.Errorf("BCaCI(constant) = %v, want NaN", got)
	}
	// Every replicate above theta: z0 = -Inf, no interval.
	if z0 := BCaBias([]float64{2, 3}, 1); !math.IsInf(z0, -1) {
		t.Errorf("BCaBias(all above) = %g, want -Inf", z0)
	}
	if got := BCaCI([]float64{2, 3}, 1, []float64{0.9, 1.1, 1.3}, 0.05); !isNaN(got) {
		t.Errorf("BCaCI(all above) = %v, want NaN", got)
	}
	if z0 := BCaBias([]float64{1, 1}, 1); z0 != 0 {
		t.Errorf("BCaBias(all tied) = %g, want 0 (ties count half)", z0)
	}
	if got := BCaCI(nil, 1, []float64{1, 2}, 0.05); !isNaN(got) {
		t.Errorf("BCaCI(no replicates) = %v", got)
	}
	if a := BCaAcceleration([]float64{1}); !math.IsNaN(a) {
		t.Errorf("BCaAcceleration(one) = %g", a)
	}
}

// BenchmarkBootstrap100k is the budget: 10,000 resamples of the mean
// of 100,000 scores must take well under 2 s.
func BenchmarkBootstrap100k(b *testing.B) {
	data := rand.New(rand.NewPCG(1, 2))
	xs := make([]float64, 100_000)
	for i := range xs {
		if data.Float64() < 0.7 {
			xs[i] = 1
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		reps := BootstrapMean(rand.New(rand.NewPCG(3, 4)), xs, 10_000)
		if len(reps) != 10_000 {
			b.Fatal(len(reps))
		}
	}
}

// FuzzBootstrapIntervals: arbitrary replicates and jackknife values (any
// floats, including NaN, ±Inf and ties) never panic, and a non-NaN interval
// is ordered and made of replicate values' range.
func FuzzBootstrapIntervals(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, 0.05, 0.3)
	f.Add([]byte{}, 0.1, 0.0)
	f.Fuzz(func(t *testing.T, raw []byte, alpha, theta float64) {
		var vals []float64
		for len(raw) >= 8 {
			vals = append(vals, math.Float64frombits(binary.LittleEndian.Uint64(raw)))
			raw = raw[8:]
		}
		half := len(vals) / 2
		reps, jack := vals[:half], vals[half:]
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, r := range reps {
			lo, hi = math.Min(lo, r), math.Max(hi, r)
		}
		for name, iv := range map[string]Interval{
			"percentile": PercentileCI(reps, alpha),
			"bca":        BCaCI(reps, theta, jack, alpha),
		} {
			if math.IsNaN(iv.Lo) || math.IsNaN(iv.Hi) {
				continue
			}
			if !(lo <= iv.Lo && iv.Lo <= iv.Hi && iv.Hi <= hi) {
				t.Errorf("%s(%v, alpha %g) = %v outside the replicates' range [%g, %g]", name, reps, alpha, iv, lo, hi)
			}
		}
		m, _ := MeanSE(vals)
		_, _ = ClusteredMeanSE(vals, make([]string, len(vals)))
		if len(vals) > 0 && len(vals) < 64 {
			for _, r := range BootstrapMean(rand.New(rand.NewPCG(1, 2)), vals, 3) {
				if !math.IsNaN(m) && !math.IsInf(m, 0) && math.IsNaN(r) {
					t.Errorf("BootstrapMean(%v) gave NaN with finite mean %g", vals, m)
				}
			}
		}
	})
}

// ExampleBCaCI is the whole pipeline for a mean (for a paired comparison,
// pass the per-case differences): replicates, jackknife values, interval.
func ExampleBCaCI() {
	scores := []float64{0.9, 0.2, 1, 1, 0.75, 0, 1, 0.5, 1, 0.8}
	theta, _ := MeanSE(scores)
	rng := rand.New(rand.NewPCG(1, 2)) // fixed seed: the same report every time
	reps := BootstrapMean(rng, scores, 10_000)
	iv := BCaCI(reps, theta, JackknifeMean(scores), 0.05)
	if math.IsNaN(iv.Lo) {
		iv = PercentileCI(reps, 0.05) // BCa undefined, e.g. constant scores
	}
	fmt.Printf("mean %.3f, 95%% BCa interval [%.2f, %.2f]\n", theta, iv.Lo, iv.Hi)
}
