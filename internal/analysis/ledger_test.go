package analysis

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/longtest"

	"github.com/assay-eval/assay/internal/stats"
)

// ledgerGolden is testdata/ledger_noise.json, made by ledger_noise.py from
// scipy, numpy and statsmodels.
type ledgerGolden struct {
	ExpectedMax []struct {
		N int     `json:"n"`
		E float64 `json:"e"`
	} `json:"expected_max"`
	Noise []struct {
		Name         string    `json:"name"`
		Verdicts     [][]int   `json:"verdicts"`
		EpochRates   []float64 `json:"epoch_rates"`
		BetweenRunSD float64   `json:"between_run_sd"`
		WithinVar    float64   `json:"within_case_variance"`
		TotalVar     float64   `json:"total_variance"`
		WithinShare  float64   `json:"within_case_share"`
	} `json:"noise"`
	Ledger []struct {
		Name         string    `json:"name"`
		Epochs       int       `json:"epochs"`
		Chosen       int       `json:"chosen"`
		Verdicts     [][][]int `json:"verdicts"`
		Rates        []float64 `json:"rates"`
		SEs          []float64 `json:"ses"`
		Deltas       []float64 `json:"deltas"`
		PValues      []float64 `json:"p_values"`
		PAdjusted    []float64 `json:"p_adjusted"`
		Sigma        float64   `json:"sigma"`
		ExpectedMaxZ float64   `json:"expected_max_z"`
		Inflation    float64   `json:"inflation"`
		DeflatedRate float64   `json:"deflated_rate"`
	} `json:"ledger"`
}

func loadLedgerGolden(t *testing.T) ledgerGolden {
	t.Helper()
	b, err := os.ReadFile("testdata/ledger_noise.json")
	if err != nil {
		t.Fatal(err)
	}
	var g ledgerGolden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	return g
}

func near(got, want, tol float64) bool {
	return math.Abs(got-want) <= tol*math.Max(1, math.Abs(want))
}

// E[max of N standard normals] matches scipy's quadrature (E[max of 10] ≈
// 1.5388, the figure the best-of-10 inflation uses).
func TestExpectedMaxNormal(t *testing.T) {
	g := loadLedgerGolden(t)
	if len(g.ExpectedMax) < 10 {
		t.Fatalf("only %d reference values", len(g.ExpectedMax))
	}
	for _, c := range g.ExpectedMax {
		if got := stats.ExpectedMaxNormal(c.N); !near(got, c.E, 1e-9) {
			t.Errorf("E[max of %d] = %.12f, scipy %.12f", c.N, got, c.E)
		}
	}
	if got := stats.ExpectedMaxNormal(10); math.Abs(got-1.5388) > 5e-5 {
		t.Errorf("E[max of 10] = %v, want ≈ 1.5388", got)
	}
}

// ledgerVariants builds variants from pass/fail verdicts per variant, case
// and epoch, on one case index.
func ledgerVariants(epochs int, passes [][][]bool) ([]ledgerVariant, *caseIndex) {
	ci := newCaseIndex()
	vs := make([]ledgerVariant, len(passes))
	for v, cases := range passes {
		vs[v] = ledgerVariant{LedgerVariant: LedgerVariant{Run: "run" + strconv.Itoa(v+1), Target: "t"}, pass: newVerdicts(epochs)}
		for i, eps := range cases {
			idx := ci.add("c"+strconv.Itoa(i), nil)
			for e, p := range eps {
				vs[v].pass.set(idx, e+1, p)
			}
		}
	}
	return vs, ci
}

// The ledger's numbers — each variant's rate and SE, the paired p-values
// against the reference, Holm over the N−1 comparisons, σ, E[max of N], the
// inflation and the deflated rate — match statsmodels, scipy and numpy.
func TestBuildLedgerMatchesReference(t *testing.T) {
	g := loadLedgerGolden(t)
	for _, c := range g.Ledger {
		t.Run(c.Name, func(t *testing.T) {
			passes := make([][][]bool, len(c.Verdicts))
			for v, cases := range c.Verdicts {
				passes[v] = make([][]bool, len(cases))
				for i, eps := range cases {
					for _, x := range eps {
						passes[v][i] = append(passes[v][i], x == 1)
					}
				}
			}
			vs, ci := ledgerVariants(c.Epochs, passes)
			l := buildLedger(vs, ci, c.Chosen, 0, 0.05, 0.02, stats.TestMcNemarExact)
			if l.Variants != len(c.Verdicts) || l.Family != len(c.Verdicts)-1 || len(l.Tried) != l.Variants {
				t.Fatalf("N %d, family %d, %d tried; want %d, %d", l.Variants, l.Family, len(l.Tried), len(c.Verdicts), len(c.Verdicts)-1)
			}
			for i, v := range l.Tried {
				if !near(v.Rate, c.Rates[i], 1e-6) || !near(v.SE, c.SEs[i], 1e-6) {
					t.Errorf("variant %d: rate %v se %v, want %v %v", i, v.Rate, v.SE, c.Rates[i], c.SEs[i])
				}
				if i == 0 {
					if !v.Reference || v.VsReference != nil {
						t.Errorf("variant 0 is the reference: %+v", v)
					}
					continue
				}
				cmp := v.VsReference
				if cmp == nil {
					t.Fatalf("variant %d has no comparison", i)
				}
				if !near(cmp.Delta, c.Deltas[i-1], 1e-6) || !near(cmp.PValue, c.PValues[i-1], 1e-9) || !near(cmp.PAdjusted, c.PAdjusted[i-1], 1e-9) {
					t.Errorf("variant %d vs reference: Δ %v p %v adj %v; want %v %v %v", i, cmp.Delta, cmp.PValue, cmp.PAdjusted,
						c.Deltas[i-1], c.PValues[i-1], c.PAdjusted[i-1])
				}
				want := stats.Verdict(cmp.Delta, stats.Interval{Lo: cmp.CI[0], Hi: cmp.CI[1]}, c.PAdjusted[i-1], 0.05, 0.02)
				if cmp.Verdict != want {
					t.Errorf("variant %d verdict %s, want %s (on the Holm-adjusted p)", i, cmp.Verdict, want)
				}
			}
			if !near(l.Sigma, c.Sigma, 1e-5) || !near(l.ExpectedMaxZ, c.ExpectedMaxZ, 1e-6) ||
				!near(l.Inflation, c.Inflation, 1e-5) || !near(l.DeflatedRate, c.DeflatedRate, 1e-5) {
				t.Errorf("σ %v E %v inflation %v deflated %v; want %v %v %v %v", l.Sigma, l.ExpectedMaxZ, l.Inflation, l.DeflatedRate,
					c.Sigma, c.ExpectedMaxZ, c.Inflation, c.DeflatedRate)
			}
			if !l.Tried[c.Chosen].Chosen || l.Chosen.Target != l.Tried[c.Chosen].Target || l.Chosen.Run != l.Tried[c.Chosen].Run {
				t.Errorf("chosen %+v", l.Chosen)
			}
			if l.Survives != (l.Verdict == stats.VerdictABetter) || l.Verdict != l.Chosen.VsReference.Verdict {
				t.Errorf("survives %v with verdict %s (comparison says %s)", l.Survives, l.Verdict, l.Chosen.VsReference.Verdict)
			}
		})
	}
}

// The must-show: pick the best of 10 identical variants (n binary cases at
// the same true rate) and compare it with the reference (the first). Taken
// alone, its lead is "significant" far more often than 5%; with the
// ledger's Holm correction over the 9 comparisons, at most 5% (within
// binomial tolerance).
func TestLedgerBestOfIdenticalVariantsIsNoWin(t *testing.T) {
	longtest.Skip(t)
	const (
		experiments = 2000
		variants    = 10
		cases       = 200
		rate        = 0.6
	)
	rng := rand.New(rand.NewPCG(2024, 6))
	uncorrected, corrected, smallP := 0, 0, 0
	for range experiments {
		passes := make([][][]bool, variants)
		for v := range passes {
			passes[v] = make([][]bool, cases)
			for i := range passes[v] {
				passes[v][i] = []bool{rng.Float64() < rate}
			}
		}
		vs, ci := ledgerVariants(1, passes)
		best := 0
		for v := range vs {
			r, _ := ledgerRate(vs[v].pass)
			if b, _ := ledgerRate(vs[best].pass); r > b {
				best = v
			}
		}
		l := buildLedger(vs, ci, best, 0, 0.05, 0.02, stats.TestMcNemarScore)
		if l.UncorrectedVerdict == stats.VerdictABetter {
			uncorrected++
		}
		if c := l.Chosen.VsReference; c != nil && c.Delta > 0 && c.PValue < 0.05 {
			smallP++
		}
		if l.Survives {
			corrected++
		}
	}
	fu, fc, fp := float64(uncorrected)/experiments, float64(corrected)/experiments, float64(smallP)/experiments
	t.Logf("best of %d identical variants (%d cases at %.0f%%), %d experiments: significant win %.1f%% uncorrected (p < 0.05 alone: %.1f%%), %.1f%% with the ledger's Holm correction",
		variants, cases, 100*rate, experiments, 100*fu, 100*fp, 100*fc)
	// Binomial tolerance: 5% plus three standard errors of a rate estimated
	// from this many experiments.
	tol := 0.05 + 3*math.Sqrt(0.05*0.95/experiments)
	if fc > tol {
		t.Errorf("with the correction the best of %d identical variants wins %.1f%% of the time, above %.1f%%", variants, 100*fc, 100*tol)
	}
	if fu < 0.10 {
		t.Errorf("uncorrected, the best of %d identical variants wins only %.1f%% of the time: the simulation does not show the inflation it is about", variants, 100*fu)
	}
}

// With one variant there is nothing to correct; with the chosen variant as
// the reference there is no lead; a chosen variant below the reference is
// said not to lead.
func TestLedgerSummaries(t *testing.T) {
	mk := func(rates ...float64) ([]ledgerVariant, *caseIndex) {
		passes := make([][][]bool, len(rates))
		for v, r := range rates {
			for i := range 100 {
				passes[v] = append(passes[v], []bool{float64(i) < r*100})
			}
		}
		return ledgerVariants(1, passes)
	}
	vs, ci := mk(0.7)
	l := buildLedger(vs, ci, 0, 0, 0.05, 0.02, stats.TestMcNemarExact)
	if l.Variants != 1 || l.Family != 0 || l.ExpectedMaxZ != 0 || l.DeflatedRate != 0.7 || l.Survives ||
		!strings.Contains(l.Summary, "Only one variant") {
		t.Errorf("one variant: %+v", l)
	}
	vs, ci = mk(0.7, 0.6, 0.5)
	l = buildLedger(vs, ci, 0, 0, 0.05, 0.02, stats.TestMcNemarExact)
	if l.Survives || !strings.Contains(l.Summary, "is the reference itself") || !strings.Contains(l.Summary, "3 variants") {
		t.Errorf("chosen = reference: %s", l.Summary)
	}
	l = buildLedger(vs, ci, 2, 0, 0.05, 0.02, stats.TestMcNemarExact)
	if l.Survives || !strings.Contains(l.Summary, "does not lead the reference") {
		t.Errorf("chosen below the reference: %s", l.Summary)
	}
	if len(l.Notes) != 1 || !strings.Contains(l.Notes[0], "t@run1 scored higher (70.0%)") {
		t.Errorf("notes %q: want the better earlier variant named", l.Notes)
	}
	// A large lead (nested passes: every case the reference passes, the
	// chosen one passes too) survives.
	vs, ci = mk(0.4, 0.45, 0.8)
	l = buildLedger(vs, ci, 2, 0, 0.05, 0.02, stats.TestMcNemarExact)
	if !l.Survives || l.Verdict != stats.VerdictABetter || !strings.Contains(l.Summary, "survives the correction for 3 variants") {
		t.Errorf("a 40-point lead: %+v", l)
	}
}

func TestParseVariantRef(t *testing.T) {
	good := map[string]VariantRef{
		"20260101-120000-abcdef":            {Run: "20260101-120000-abcdef"},
		"20260101":                          {Run: "20260101"},
		"20260101-120000-abcdef:gpt-4o":     {Run: "20260101-120000-abcdef", Target: "gpt-4o"},
		"r1:name:with:colons":               {Run: "r1", Target: "name:with:colons"},
		"r1:claude 3.5 (sonnet)":            {Run: "r1", Target: "claude 3.5 (sonnet)"},
		"abc_def.1:модель":                  {Run: "abc_def.1", Target: "модель"},
		"20260101-120000-abcdef:target@run": {Run: "20260101-120000-abcdef", Target: "target@run"},
	}
	for in, want := range good {
		got, err := ParseVariantRef(in)
		if err != nil || got != want {
			t.Errorf("ParseVariantRef(%q) = %+v, %v; want %+v", in, got, err, want)
		}
		if got.String() != in {
			t.Errorf("%q round-trips as %q", in, got.String())
		}
	}
	bad := map[string]string{
		"":                        "reference is empty",
		"   ":                     "reference is empty",
		":target":                 "names no run before ':'",
		"run:":                    "names no target after ':'",
		"run id":                  `has the character ' '`,
		"run/../x":                `has the character '/'`,
		"r1:a\x1b[2Jb":            "control character at byte 4",
		"r1:\xff":                 "not valid UTF-8",
		strings.Repeat("a", 2000): "at most 1024",
	}
	for in, want := range bad {
		_, err := ParseVariantRef(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseVariantRef(%q) error %v, want one saying %q", in, err, want)
			continue
		}
		if !strings.Contains(err.Error(), "RUN or RUN:TARGET") {
			t.Errorf("ParseVariantRef(%q) error %q does not say what is valid", in, err)
		}
	}
}

func FuzzParseVariantRef(f *testing.F) {
	for _, s := range []string{"", "r", "r:t", ":", "r:", ":t", "20260101-120000-abcdef:gpt-4o", "a b", "r:\x00", "r:a:b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseVariantRef(s)
		if err != nil {
			if r != (VariantRef{}) {
				t.Errorf("error %v with a value %+v", err, r)
			}
			return
		}
		if r.Run == "" || strings.ContainsAny(r.Run, ": \t\n") {
			t.Errorf("%q parsed to run %q", s, r.Run)
		}
		if r.String() != s {
			t.Errorf("%q round-trips as %q", s, r.String())
		}
		if again, err := ParseVariantRef(r.String()); err != nil || again != r {
			t.Errorf("re-parsing %q gave %+v, %v", r.String(), again, err)
		}
	})
}
