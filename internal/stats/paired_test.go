package stats

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"testing"

	"github.com/assay-eval/assay/internal/longtest"

	"github.com/assay-eval/assay/internal/shareddata"
)

func checkBinaryGolden(t *testing.T, name string, got Paired, want binaryGolden) {
	t.Helper()
	if got.AOnly != want.AOnly || got.BOnly != want.BOnly {
		t.Errorf("%s: discordant %d/%d, want %d/%d", name, got.AOnly, got.BOnly, want.AOnly, want.BOnly)
	}
	if !goldenAbs(got.Delta, want.Delta, 1e-12) || !goldenAbs(got.SE, want.SE, 1e-12) {
		t.Errorf("%s: delta %.15g se %.15g, statsmodels %.15g %.15g", name, got.Delta, got.SE, want.Delta, want.SE)
	}
	if !goldenAbs(got.Wald.Lo, want.Wald[0], 1e-9) || !goldenAbs(got.Wald.Hi, want.Wald[1], 1e-9) {
		t.Errorf("%s: Wald %v, statsmodels zconfint_mean %v", name, got.Wald, want.Wald)
	}
	if !goldenAbs(got.CI.Lo, want.Newcombe[0], 1e-9) || !goldenAbs(got.CI.Hi, want.Newcombe[1], 1e-9) {
		t.Errorf("%s: Newcombe CI %v, reference %v", name, got.CI, want.Newcombe)
	}
	if !goldenRel(got.PValue, want.PExact, 1e-9) || !goldenRel(got.MidP, want.PMidP, 1e-9) {
		t.Errorf("%s: p %.17g mid-p %.17g, reference %.17g %.17g", name, got.PValue, got.MidP, want.PExact, want.PMidP)
	}
	if got.CIMethod != "newcombe" || got.Test != "mcnemar_exact" {
		t.Errorf("%s: method %q test %q", name, got.CIMethod, got.Test)
	}
}

// pairedExact is PairedBinary under the exact test (PairedBinaryExact).
func pairedExact(a, b []bool, alpha float64) (Paired, error) {
	return PairedBinaryExact(tally(a, b), alpha)
}

func TestPairedBinaryExactMatchesReference(t *testing.T) {
	g := loadPairedGolden(t)
	for i, v := range g.Binary {
		got, err := pairedExact(boolsFromBits(v.A), boolsFromBits(v.B), v.Alpha)
		if err != nil {
			t.Fatalf("vector %d: %v", i, err)
		}
		if got.N != len(v.A) {
			t.Errorf("vector %d: N = %d, want %d", i, got.N, len(v.A))
		}
		checkBinaryGolden(t, fmt.Sprintf("vector %d (n=%d)", i, len(v.A)), got, v)
	}
}

// TestNewcombePublished checks the interval printed by the authors'
// package for Cavo et al. (2012) (contingencytables tests, chapter 8):
// estimate −0.0621, 95% CI −0.1186 to −0.0046; their Wald interval (with n
// in the variance, ours has n−1) is −0.1184 to −0.0058.
func TestNewcombePublished(t *testing.T) {
	p, err := PairedBinaryExact(PairTable{Both: 59, AOnly: 6, BOnly: 16, Neither: 80}, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	round4 := func(x float64) float64 { return math.Round(x*1e4) / 1e4 }
	if round4(p.Delta) != -0.0621 || round4(p.CI.Lo) != -0.1186 || round4(p.CI.Hi) != -0.0046 {
		t.Errorf("Cavo: delta %.4f CI [%.4f, %.4f], published -0.0621 [-0.1186, -0.0046]", p.Delta, p.CI.Lo, p.CI.Hi)
	}
	if math.Abs(p.PValue-0.052479) > 5e-7 {
		t.Errorf("Cavo: McNemar exact %.6f, published 0.052479", p.PValue)
	}
}

// TestPairedGSM8K compares the four recorded GSM8K configurations pairwise,
// reading is_correct from the shared data, against the statsmodels
// computation on the same file stored in testdata/paired.json.
func TestPairedGSM8K(t *testing.T) {
	g := loadPairedGolden(t)
	path := shareddata.Path(t, "gsm8k/example_model_solutions.jsonl")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cols := map[string][]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var rec map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("line %d: %v", len(cols[g.GSM8K.Configs[0]])+1, err)
		}
		for _, c := range g.GSM8K.Configs {
			var sol struct {
				IsCorrect *bool `json:"is_correct"`
			}
			if err := json.Unmarshal(rec[c], &sol); err != nil || sol.IsCorrect == nil {
				t.Fatalf("line %d: %s has no is_correct (%v)", len(cols[c])+1, c, err)
			}
			cols[c] = append(cols[c], *sol.IsCorrect)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for _, c := range g.GSM8K.Configs {
		passed := 0
		for _, ok := range cols[c] {
			if ok {
				passed++
			}
		}
		if len(cols[c]) != g.GSM8K.N || passed != g.GSM8K.Passed[c] {
			t.Fatalf("%s: %d/%d correct, reference %d/%d", c, passed, len(cols[c]), g.GSM8K.Passed[c], g.GSM8K.N)
		}
	}
	var ps []float64
	for _, want := range g.GSM8K.Pairs {
		got, err := pairedExact(cols[want.A], cols[want.B], g.GSM8K.Alpha)
		if err != nil {
			t.Fatal(err)
		}
		checkBinaryGolden(t, want.A+" vs "+want.B, got, want.binaryGolden)
		ps = append(ps, got.PValue)
	}
	holm, bh := Holm(ps), BenjaminiHochberg(ps)
	for i, want := range g.GSM8K.Pairs {
		if !goldenRel(holm[i], want.Holm, 1e-9) || !goldenRel(bh[i], want.BH, 1e-9) {
			t.Errorf("%s vs %s: Holm %.17g BH %.17g, statsmodels %.17g %.17g", want.A, want.B, holm[i], bh[i], want.Holm, want.BH)
		}
	}
	// Every pair differs by more than the 2-point margin except none: the
	// verdicts follow the sign of the difference.
	for i, want := range g.GSM8K.Pairs {
		p, _ := pairedExact(cols[want.A], cols[want.B], g.GSM8K.Alpha)
		v := Verdict(p.Delta, p.CI, holm[i], g.GSM8K.Alpha, DefaultEquivalenceMargin)
		wantV := VerdictBBetter
		if want.Delta > 0 {
			wantV = VerdictABetter
		}
		if v != wantV {
			t.Errorf("%s vs %s: verdict %s, want %s (delta %.4f CI %v p_adj %.3g)", want.A, want.B, v, wantV, p.Delta, p.CI, holm[i])
		}
	}
}

func TestPairedMeansMatchesReference(t *testing.T) {
	g := loadPairedGolden(t)
	for i, v := range g.Means {
		got, err := PairedMeans(v.A, v.B, v.Alpha)
		if err != nil {
			t.Fatal(err)
		}
		if !goldenAbs(got.Delta, v.Delta, 1e-12) || !goldenAbs(got.SE, v.SE, 1e-12) {
			t.Errorf("vector %d (n=%d): delta %.15g se %.15g, statsmodels %.15g %.15g", i, len(v.A), got.Delta, got.SE, v.Delta, v.SE)
		}
		if !goldenAbs(got.CI.Lo, v.TCI[0], 1e-9) || !goldenAbs(got.CI.Hi, v.TCI[1], 1e-9) {
			t.Errorf("vector %d (n=%d): t CI %v, statsmodels tconfint_mean %v", i, len(v.A), got.CI, v.TCI)
		}
		if !goldenRel(got.PValue, v.P, 1e-6) {
			t.Errorf("vector %d (n=%d): p %.12g, scipy ttest_rel %.12g", i, len(v.A), got.PValue, v.P)
		}
		if got.CIMethod != "t" || got.Test != "paired_t" || !math.IsNaN(got.MidP) {
			t.Errorf("vector %d: method %q test %q mid-p %v", i, got.CIMethod, got.Test, got.MidP)
		}
	}
}

func TestPairedInputErrors(t *testing.T) {
	if _, err := PairedBinary(nil, nil, 0.05); !errors.Is(err, ErrNoPairs) {
		t.Errorf("empty PairedBinary: %v, want ErrNoPairs", err)
	}
	if _, err := PairedMeans([]float64{}, []float64{}, 0.05); !errors.Is(err, ErrNoPairs) {
		t.Errorf("empty PairedMeans: %v, want ErrNoPairs", err)
	}
	if _, err := PairedBootstrap(rand.New(rand.NewPCG(1, 1)), nil, nil, 10); !errors.Is(err, ErrNoPairs) {
		t.Errorf("empty PairedBootstrap: %v, want ErrNoPairs", err)
	}
	p, err := PairedBinaryTable(PairTable{}, 0.05)
	if !errors.Is(err, ErrNoPairs) || !math.IsNaN(p.Delta) || !math.IsNaN(p.CI.Lo) {
		t.Errorf("empty table: %+v, %v; want NaN fields and ErrNoPairs", p, err)
	}
	for name, err := range map[string]error{
		"length":        errorOnly(PairedBinary([]bool{true}, []bool{true, false}, 0.05)),
		"means length":  errorOnly(PairedMeans([]float64{1}, []float64{1, 2}, 0.05)),
		"NaN score":     errorOnly(PairedMeans([]float64{1, math.NaN()}, []float64{1, 2}, 0.05)),
		"Inf score":     errorOnly(PairedMeans([]float64{1, 2}, []float64{math.Inf(1), 2}, 0.05)),
		"alpha 0":       errorOnly(PairedBinary([]bool{true}, []bool{false}, 0)),
		"alpha 1":       errorOnly(PairedMeans([]float64{1}, []float64{0}, 1)),
		"alpha NaN":     errorOnly(PairedBinaryTable(PairTable{Both: 3}, math.NaN())),
		"negative":      errorOnly(PairedBinaryTable(PairTable{Both: 3, AOnly: -1}, 0.05)),
		"overflow":      errorOnly(PairedBinaryTable(PairTable{Both: math.MaxInt, Neither: math.MaxInt}, 0.05)),
		"boot reps":     errorOnly(PairedBootstrap(rand.New(rand.NewPCG(1, 1)), []float64{1}, []float64{0}, 0)),
		"boot nil rng":  errorOnly(PairedBootstrap(nil, []float64{1}, []float64{0}, 10)),
		"boot length":   errorOnly(PairedBootstrap(rand.New(rand.NewPCG(1, 1)), []float64{1}, []float64{0, 1}, 10)),
		"boot NaN data": errorOnly(PairedBootstrap(rand.New(rand.NewPCG(1, 1)), []float64{math.NaN()}, []float64{0}, 10)),
	} {
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	// One case: a difference but no standard error.
	one, err := PairedBinary([]bool{true}, []bool{false}, 0.05)
	if err != nil || one.Delta != 1 || !math.IsNaN(one.SE) || !math.IsNaN(one.Wald.Lo) || math.IsNaN(one.CI.Lo) {
		t.Errorf("one case: %+v, %v", one, err)
	}
	oneM, err := PairedMeans([]float64{0.7}, []float64{0.2}, 0.05)
	if err != nil || math.Abs(oneM.Delta-0.5) > 1e-15 || !math.IsNaN(oneM.SE) || !math.IsNaN(oneM.PValue) {
		t.Errorf("one scored case: %+v, %v", oneM, err)
	}
}

func errorOnly[T any](_ T, err error) error { return err }

// TestPairedBinaryNoDiscordance: two targets that agree on every case. The
// Wald interval collapses to [0, 0] whatever n is; Tango's interval stays
// honest, ±z²/(n + z²): wide on 20 cases (inconclusive), narrow on 2,000
// (equivalent within 2 points).
func TestPairedBinaryNoDiscordance(t *testing.T) {
	small, _ := PairedBinaryTable(PairTable{Both: 12, Neither: 8}, 0.05)
	if small.Wald != (Interval{0, 0}) {
		t.Errorf("Wald with no discordance = %v, want [0, 0]", small.Wald)
	}
	if small.CI.Hi < 0.05 || small.CI.Lo > -0.05 {
		t.Errorf("Tango on 20 agreeing cases = %v: too narrow to be honest", small.CI)
	}
	if v := Verdict(small.Delta, small.CI, small.PValue, 0.05, DefaultEquivalenceMargin); v != VerdictInconclusive {
		t.Errorf("20 agreeing cases: verdict %s, want inconclusive", v)
	}
	large, _ := PairedBinaryTable(PairTable{Both: 1500, Neither: 500}, 0.05)
	if v := Verdict(large.Delta, large.CI, large.PValue, 0.05, DefaultEquivalenceMargin); v != VerdictEquivalent {
		t.Errorf("2000 agreeing cases: CI %v verdict %s, want equivalent", large.CI, v)
	}
}

// TestNewcombeCoverage simulates paired pass/fail data and checks that the
// 95% Newcombe interval covers the true difference close to 95% of the time
// across discordance levels, including few discordant cases, where the Wald
// interval falls well short.
func TestNewcombeCoverage(t *testing.T) {
	longtest.Skip(t)
	rng := rand.New(rand.NewPCG(7, 11))
	const reps = 4000
	settings := []struct {
		n             int
		p11, p10, p01 float64
	}{
		{40, 0.6, 0.10, 0.03},
		{100, 0.5, 0.05, 0.02},
		{200, 0.7, 0.08, 0.04},
		{500, 0.4, 0.02, 0.01},
		{1000, 0.8, 0.06, 0.05},
	}
	var waldShort bool
	for _, s := range settings {
		truth := s.p10 - s.p01
		coverN, coverW := 0, 0
		for range reps {
			var tab PairTable
			for range s.n {
				u := rng.Float64()
				switch {
				case u < s.p11:
					tab.Both++
				case u < s.p11+s.p10:
					tab.AOnly++
				case u < s.p11+s.p10+s.p01:
					tab.BOnly++
				default:
					tab.Neither++
				}
			}
			p, err := PairedBinaryExact(tab, 0.05)
			if err != nil {
				t.Fatal(err)
			}
			if p.CI.Lo <= truth && truth <= p.CI.Hi {
				coverN++
			}
			if p.Wald.Lo <= truth && truth <= p.Wald.Hi {
				coverW++
			}
		}
		cn, cw := float64(coverN)/reps, float64(coverW)/reps
		t.Logf("n=%d p10=%.2f p01=%.2f: Newcombe %.3f, Wald %.3f", s.n, s.p10, s.p01, cn, cw)
		if cn < 0.93 || cn > 0.975 {
			t.Errorf("n=%d p10=%.2f p01=%.2f: Newcombe coverage %.3f, want 0.93–0.975", s.n, s.p10, s.p01, cn)
		}
		if cw < 0.93 {
			waldShort = true
		}
	}
	if !waldShort {
		t.Log("Wald covered ≥ 93% in every setting")
	}
}

func TestPairedBootstrapDistribution(t *testing.T) {
	// Scores whose pairs are strongly correlated: resampling cases keeps
	// each pair together, so the spread of the replicates is that of the
	// differences, much smaller than resampling each target on its own
	// would give.
	src := rand.New(rand.NewPCG(3, 5))
	const n, reps = 500, 10000
	a, b := make([]float64, n), make([]float64, n)
	for i := range a {
		base := src.Float64()
		a[i] = base + 0.02 + 0.05*src.NormFloat64()
		b[i] = base + 0.05*src.NormFloat64()
	}
	got, err := PairedBootstrap(rand.New(rand.NewPCG(1, 2)), a, b, reps)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != reps {
		t.Fatalf("%d replicates, want %d", len(got), reps)
	}
	var delta, ss, ssA, ssB, meanA, meanB float64
	for i := range a {
		delta += a[i] - b[i]
		meanA += a[i]
		meanB += b[i]
	}
	delta, meanA, meanB = delta/n, meanA/n, meanB/n
	for i := range a {
		dev := a[i] - b[i] - delta
		ss += dev * dev
		ssA += (a[i] - meanA) * (a[i] - meanA)
		ssB += (b[i] - meanB) * (b[i] - meanB)
	}
	// The bootstrap distribution of a mean has variance var_n(d)/n.
	wantSD := math.Sqrt(ss / n / n)
	unpairedSD := math.Sqrt(ssA/n/n + ssB/n/n)
	var m, v float64
	for _, r := range got {
		m += r
	}
	m /= reps
	for _, r := range got {
		v += (r - m) * (r - m)
	}
	sd := math.Sqrt(v / (reps - 1))
	if math.Abs(sd/wantSD-1) > 0.03 {
		t.Errorf("bootstrap SD %.6g, paired analytic %.6g (unpaired would be %.6g)", sd, wantSD, unpairedSD)
	}
	if math.Abs(m-delta) > 4*wantSD/math.Sqrt(reps) {
		t.Errorf("bootstrap mean %.6g, observed difference %.6g", m, delta)
	}
	// The 95% percentile and BCa intervals are close to delta ± 1.96·SD
	// (the differences are symmetric) and exclude 0 here, as the paired t
	// interval does.
	d, _ := PairedDifferences(a, b)
	pt, _ := PairedMeans(a, b, 0.05)
	for name, ci := range map[string]Interval{
		"percentile": PercentileCI(got, 0.05),
		"BCa":        BCaCI(got, delta, JackknifeMean(d), 0.05),
	} {
		if math.Abs(ci.Lo-pt.CI.Lo) > 0.2*1.96*wantSD || math.Abs(ci.Hi-pt.CI.Hi) > 0.2*1.96*wantSD || ci.Lo <= 0 {
			t.Errorf("%s interval %v, paired t %v", name, ci, pt.CI)
		}
	}
}

// TestPairedBootstrapReproducible: the same seed gives the same replicates
// whatever the number of cores; each replicate is a mean of n of the
// differences, so within their range.
func TestPairedBootstrapReproducible(t *testing.T) {
	a := []float64{0.1, 0.9, 0.4, 0.4, 1, 0, 0.3, 0.75, 0.5}
	b := []float64{0.2, 0.7, 0.4, 0.1, 1, 0.5, 0.3, 0.25, 0.5}
	const reps = 5000 // several chunks
	first, err := PairedBootstrap(rand.New(rand.NewPCG(42, 43)), a, b, reps)
	if err != nil {
		t.Fatal(err)
	}
	prev := runtime.GOMAXPROCS(1)
	again, _ := PairedBootstrap(rand.New(rand.NewPCG(42, 43)), a, b, reps)
	runtime.GOMAXPROCS(prev)
	if !slices.Equal(first, again) {
		t.Error("replicates differ between runs with the same seed (1 core vs all)")
	}
	other, _ := PairedBootstrap(rand.New(rand.NewPCG(1, 1)), a, b, reps)
	if slices.Equal(first, other) {
		t.Error("different seeds gave identical replicates")
	}
	for _, r := range first {
		if r < -0.5-1e-12 || r > 0.5+1e-12 {
			t.Fatalf("replicate %v outside the range of the differences [-0.5, 0.5]", r)
		}
	}
}

// BenchmarkPairedBootstrap100k: 10,000 resamples of a 100,000-case
// comparison per op (the budget is 2 s).
func BenchmarkPairedBootstrap100k(b *testing.B) {
	src := rand.New(rand.NewPCG(1, 2))
	const n, reps = 100000, 10000
	x, y := make([]float64, n), make([]float64, n)
	for i := range x {
		x[i], y[i] = src.Float64(), src.Float64()
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for b.Loop() {
		if _, err := PairedBootstrap(rng, x, y, reps); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzPairedBinaryTable: any counts and alpha give either an error or a
// comparison whose numbers are in range: no panic, rates and p-values in
// [0, 1], the CI inside [−1, 1] and containing Delta, mid-p ≤ exact p; the
// score test's interval excludes 0 exactly when its p < alpha.
func FuzzPairedBinaryTable(f *testing.F) {
	f.Add(59, 6, 16, 80, 0.05)
	f.Add(0, 0, 0, 0, 0.05)
	f.Add(0, 1, 0, 0, 0.5)
	f.Add(1000000, 2500, 2600, 3, 0.01)
	f.Add(-1, 2, 3, 4, 0.05)
	f.Fuzz(func(t *testing.T, both, aOnly, bOnly, neither int, alpha float64) {
		const limit = 1 << 40 // keep the tail sums quick
		if both > limit || aOnly > limit || bOnly > limit || neither > limit {
			return
		}
		tab := PairTable{both, aOnly, bOnly, neither}
		p, err := PairedBinaryExact(tab, alpha)
		if err != nil {
			return
		}
		in01 := func(x float64) bool { return x >= 0 && x <= 1 }
		if !in01(p.MeanA) || !in01(p.MeanB) || !in01(p.PValue) || !in01(p.MidP) || p.MidP > p.PValue {
			t.Fatalf("out of range: %+v", p)
		}
		s, err := PairedBinaryTable(tab, alpha)
		if err != nil {
			t.Fatalf("exact accepted %+v, score: %v", tab, err)
		}
		// A point only when alpha is so near 1 that z is below rounding.
		if !in01(s.PValue) || !(s.CI.Lo >= -1 && s.CI.Lo <= s.Delta && s.Delta <= s.CI.Hi && s.CI.Hi <= 1) || (alpha <= 0.5 && s.CI.Lo == s.CI.Hi) {
			t.Fatalf("score: p %v CI %v delta %v", s.PValue, s.CI, s.Delta)
		}
		if excl := s.CI.Lo > 0 || s.CI.Hi < 0; excl != (s.PValue < alpha) {
			t.Fatalf("score: p %v at alpha %v but CI %v", s.PValue, alpha, s.CI)
		}
		if !(p.CI.Lo >= -1 && p.CI.Lo <= p.Delta+1e-12 && p.Delta <= p.CI.Hi+1e-12 && p.CI.Hi <= 1) {
			t.Fatalf("CI %v does not hold delta %v inside [-1, 1]", p.CI, p.Delta)
		}
		if p.N > 1 && !(p.SE >= 0) {
			t.Fatalf("SE %v", p.SE)
		}
	})
}

// Per-case rates that all agree give the score interval of as many
// agreeing pass/fail cases, never a point: 90 cases → Tango's ±0.0409356
// (testdata/tango.py tango_ci(0, 0, 90, 0.05)); a constant lead of one
// whole case each is b = 90, c = 0.
func TestConstantDifference(t *testing.T) {
	a, b := make([]float64, 90), make([]float64, 90)
	for i := range a {
		a[i], b[i] = 0.5, 0.5
	}
	p, err := ConstantDifference(a, b, 0.05)
	if err != nil || p.Delta != 0 || math.Abs(p.CI.Lo+0.0409356) > 1e-6 || math.Abs(p.CI.Hi-0.0409356) > 1e-6 || p.PValue != 1 {
		t.Errorf("agreeing: %+v %v; want Δ 0, ±0.0409356, p 1", p, err)
	}
	for i := range a {
		a[i], b[i] = 1, 0
	}
	if p, err = ConstantDifference(a, b, 0.05); err != nil || p.Delta != 1 || !(p.CI.Lo > 0.9) || p.CI.Hi != 1 || !(p.PValue < 1e-6) {
		t.Errorf("A always ahead: %+v %v", p, err)
	}
	if _, err := ConstantDifference([]float64{2}, []float64{0}, 0.05); err == nil {
		t.Error("a value outside [0, 1] was taken")
	}
}
