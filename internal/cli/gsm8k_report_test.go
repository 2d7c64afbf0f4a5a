package cli

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The decision report on the four recorded GSM8K configurations matches an
// independent computation: pass rates and Wilson intervals (statsmodels),
// paired differences, the McNemar score test with Tango's interval and Holm
// (internal/analysis/testdata/comparisons.py, from statsmodels and scipy),
// and under --test exact Newcombe intervals and McNemar exact p-values
// (internal/stats/testdata/paired.py), and the per-tier table counted here
// from the data (tier = number of "<<" calculator steps in the solution).
// The switch from exact McNemar to the score test changes no verdict: five
// pairs stay b_better and one a_better.
func TestGSM8KReportMatchesReference(t *testing.T) {
	t.Parallel()
	data := sharedData(t)
	db, _ := gsm8kRun(t)
	e := cliEnv{}
	type report struct {
		Targets []struct {
			Name    string
			Primary struct {
				Passed, N int
				CI        [2]float64
			}
			Slices map[string]map[string]struct{ Passed, N int }
		}
		Comparisons []struct {
			A, B      string
			N         int
			Delta, SE float64
			CI        [2]float64
			Test      string
			CIMethod  string  `json:"ci_method"`
			PValue    float64 `json:"p_value"`
			PAdjusted float64 `json:"p_adjusted"`
			Verdict   string
			AOnly     int `json:"a_only"`
			BOnly     int `json:"b_only"`
		}
	}
	reportOf := func(flags ...string) report {
		inv := runCLI(t, e, append([]string{"report", "--db", db, "--format", "json"}, flags...)...)
		if inv.code != 0 {
			t.Fatalf("report %v: %s", flags, inv.stderr)
		}
		var rep report
		if err := json.Unmarshal([]byte(inv.stdout), &rep); err != nil {
			t.Fatal(err)
		}
		return rep
	}
	rep := reportOf()
	exact := reportOf("--test", "exact")

	root := repoRoot(t)
	rel := func(got, want float64) bool {
		return math.Abs(got-want) <= 1e-6*math.Max(math.Abs(want), 1e-300)
	}
	verdictOf := func(delta float64) string {
		if delta < 0 {
			return "b_better"
		}
		return "a_better"
	}

	// The default: McNemar score test, Tango's interval.
	var score struct {
		GSM8K []struct {
			A, B      string
			AOnly     int `json:"a_only"`
			BOnly     int `json:"b_only"`
			Delta     float64
			CI        [2]float64
			P         float64
			PAdjusted float64 `json:"p_adjusted"`
			Verdict   string
		} `json:"gsm8k"`
	}
	b, err := os.ReadFile(filepath.Join(root, "internal", "analysis", "testdata", "comparisons.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &score); err != nil {
		t.Fatal(err)
	}
	if len(rep.Comparisons) != 6 || len(score.GSM8K) != 6 {
		t.Fatalf("%d comparisons in the report, %d in the reference; want 6", len(rep.Comparisons), len(score.GSM8K))
	}
	for _, g := range score.GSM8K {
		found := false
		for _, c := range rep.Comparisons {
			if c.A != g.A || c.B != g.B {
				continue
			}
			found = true
			if c.N != 1319 || c.AOnly != g.AOnly || c.BOnly != g.BOnly || c.Test != "mcnemar_score" || c.CIMethod != "tango" {
				t.Errorf("%s vs %s: n %d, discordant %d/%d (%s, %s); reference 1319, %d/%d", g.A, g.B, c.N, c.AOnly, c.BOnly, c.Test, c.CIMethod, g.AOnly, g.BOnly)
			}
			if math.Abs(c.Delta-g.Delta) > 1e-6 || math.Abs(c.CI[0]-g.CI[0]) > 1e-6 || math.Abs(c.CI[1]-g.CI[1]) > 1e-6 {
				t.Errorf("%s vs %s: delta %v ci %v; reference %v %v", g.A, g.B, c.Delta, c.CI, g.Delta, g.CI)
			}
			if !rel(c.PValue, g.P) || !rel(c.PAdjusted, g.PAdjusted) {
				t.Errorf("%s vs %s: p %g (adjusted %g); reference %g (Holm %g)", g.A, g.B, c.PValue, c.PAdjusted, g.P, g.PAdjusted)
			}
			if c.Verdict != g.Verdict || c.Verdict != verdictOf(g.Delta) {
				t.Errorf("%s vs %s: verdict %s, reference %s", g.A, g.B, c.Verdict, g.Verdict)
			}
		}
		if !found {
			t.Errorf("no comparison of %s and %s", g.A, g.B)
		}
	}

	// --test exact: exact McNemar, Newcombe's interval.
	var golden struct {
		GSM8K struct {
			Pairs []struct {
				A, B      string
				Delta, SE float64
				Newcombe  [2]float64
				AOnly     int     `json:"a_only"`
				BOnly     int     `json:"b_only"`
				PExact    float64 `json:"p_exact"`
				Holm      float64
			}
		} `json:"gsm8k"`
	}
	b, err = os.ReadFile(filepath.Join(root, "internal", "stats", "testdata", "paired.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &golden); err != nil {
		t.Fatal(err)
	}
	if len(exact.Comparisons) != 6 || len(golden.GSM8K.Pairs) != 6 {
		t.Fatalf("%d comparisons in the report, %d in the reference; want 6", len(exact.Comparisons), len(golden.GSM8K.Pairs))
	}
	for _, g := range golden.GSM8K.Pairs {
		found := false
		for _, c := range exact.Comparisons {
			if c.A != g.A || c.B != g.B {
				continue
			}
			found = true
			if c.N != 1319 || c.AOnly != g.AOnly || c.BOnly != g.BOnly || c.Test != "mcnemar_exact" || c.CIMethod != "newcombe" {
				t.Errorf("%s vs %s: n %d, discordant %d/%d (%s); reference 1319, %d/%d", g.A, g.B, c.N, c.AOnly, c.BOnly, c.Test, g.AOnly, g.BOnly)
			}
			if math.Abs(c.Delta-g.Delta) > 1e-6 || math.Abs(c.SE-g.SE) > 1e-6 ||
				math.Abs(c.CI[0]-g.Newcombe[0]) > 1e-6 || math.Abs(c.CI[1]-g.Newcombe[1]) > 1e-6 {
				t.Errorf("%s vs %s: delta %v se %v ci %v; reference %v %v %v", g.A, g.B, c.Delta, c.SE, c.CI, g.Delta, g.SE, g.Newcombe)
			}
			if !rel(c.PValue, g.PExact) || !rel(c.PAdjusted, g.Holm) {
				t.Errorf("%s vs %s: p %g (adjusted %g); reference %g (Holm %g)", g.A, g.B, c.PValue, c.PAdjusted, g.PExact, g.Holm)
			}
			if c.Verdict != verdictOf(g.Delta) {
				t.Errorf("%s vs %s: verdict %s, want %s", g.A, g.B, c.Verdict, verdictOf(g.Delta))
			}
		}
		if !found {
			t.Errorf("no comparison of %s and %s", g.A, g.B)
		}
	}

	// Wilson intervals from statsmodels for every target.
	var wilson []struct {
		K, N          int
		Alpha, Lo, Hi float64
	}
	b, err = os.ReadFile(filepath.Join(root, "internal", "stats", "testdata", "wilson.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &wilson); err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, tg := range rep.Targets {
		for _, w := range wilson {
			if w.K == tg.Primary.Passed && w.N == tg.Primary.N && w.Alpha == 0.05 {
				checked++
				if math.Abs(tg.Primary.CI[0]-w.Lo) > 1e-4 || math.Abs(tg.Primary.CI[1]-w.Hi) > 1e-4 {
					t.Errorf("%s: interval %v, statsmodels [%v, %v]", tg.Name, tg.Primary.CI, w.Lo, w.Hi)
				}
			}
		}
	}
	if checked != 4 {
		t.Errorf("checked %d intervals against statsmodels, want all 4", checked)
	}

	// The per-tier table, counted here from the data.
	type cnt struct{ passed, n int }
	tiers := map[string]map[string]*cnt{}
	f, err := os.Open(filepath.Join(data, "gsm8k", "example_model_solutions.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var rec map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		var gt string
		_ = json.Unmarshal(rec["ground_truth"], &gt)
		tier := strconv.Itoa(strings.Count(gt, "<<"))
		for _, c := range gsm8kConfigs {
			var v struct {
				IsCorrect bool `json:"is_correct"`
			}
			_ = json.Unmarshal(rec[c], &v)
			if tiers[c] == nil {
				tiers[c] = map[string]*cnt{}
			}
			if tiers[c][tier] == nil {
				tiers[c][tier] = &cnt{}
			}
			tiers[c][tier].n++
			if v.IsCorrect {
				tiers[c][tier].passed++
			}
		}
	}
	for _, tg := range rep.Targets {
		want := tiers[tg.Name]
		got := tg.Slices["tier"]
		if len(got) != len(want) {
			t.Errorf("%s: %d tiers, want %d", tg.Name, len(got), len(want))
		}
		for tier, w := range want {
			if g, ok := got[tier]; !ok || g.Passed != w.passed || g.N != w.n {
				t.Errorf("%s tier %s: %+v, want %d/%d", tg.Name, tier, got[tier], w.passed, w.n)
			}
		}
	}
}
