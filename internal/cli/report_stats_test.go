package cli

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/mock"
)

type reportComparison struct {
	A, B      string
	N         int
	Delta     float64
	CI        [2]float64
	Test      string
	CIMethod  string   `json:"ci_method"`
	PValue    float64  `json:"p_value"`
	PAdjusted float64  `json:"p_adjusted"`
	MidP      *float64 `json:"mid_p"`
	AOnly     int      `json:"a_only"`
	BOnly     int      `json:"b_only"`
	Verdict   string
	Slices    map[string]map[string]reportComparison
}

// checkAgreement asserts that a comparison's verdict follows from its
// interval and adjusted p-value — better exactly when the interval lies on
// that side of 0 and the adjusted p is below alpha, unless the interval
// lies within the equivalence margin — and, for the score test, that the
// interval excludes 0 exactly when the raw p is below alpha.
func checkAgreement(t *testing.T, where string, c reportComparison) {
	t.Helper()
	const alpha, margin = 0.05, 0.02
	equivalent := c.CI[0] > -margin && c.CI[1] < margin
	aBetter := !equivalent && c.CI[0] > 0 && c.PAdjusted < alpha
	bBetter := !equivalent && c.CI[1] < 0 && c.PAdjusted < alpha
	if (c.Verdict == "a_better") != aBetter || (c.Verdict == "b_better") != bBetter {
		t.Errorf("%s: verdict %s beside interval [%+.4f, %+.4f] and adjusted p %.4g", where, c.Verdict, c.CI[0], c.CI[1], c.PAdjusted)
	}
	if c.PAdjusted < c.PValue {
		t.Errorf("%s: adjusted p %v below the raw %v", where, c.PAdjusted, c.PValue)
	}
	if c.Test == "mcnemar_score" {
		if c.CIMethod != "tango" {
			t.Errorf("%s: the score test beside a %q interval, want tango", where, c.CIMethod)
		}
		if excludes := c.CI[0] > 0 || c.CI[1] < 0; excludes != (c.PValue < alpha) {
			t.Errorf("%s: interval [%+.4f, %+.4f] and p %.4g disagree", where, c.CI[0], c.CI[1], c.PValue)
		}
	}
}

// The README Quickstart's report (the bundled example): every comparison,
// overall and per slice, has a verdict that agrees with its interval and
// adjusted p-value, and the score test's interval excludes 0 exactly when
// its p is below 0.05 (the exact test beside Newcombe's interval used to
// show [+2.3, +48.0] with p = 0.065, "inconclusive"). The text report
// names the test; --test exact switches to exact McNemar and says so.
func TestQuickstartVerdictsAgreeWithIntervals(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	db := filepath.Join(t.TempDir(), "assay.db")
	e := cliEnv{}
	if inv := runCLI(t, e, "run", filepath.Join(root, "examples", "quickstart", "assay.yaml"), "--db", db); inv.code != 0 {
		t.Fatalf("run: %s", inv.stderr)
	}
	for _, tc := range []struct {
		flags          []string
		test, ci, name string
	}{
		{nil, "mcnemar_score", "tango", "McNemar score test with Tango's score interval"},
		{[]string{"--test", "exact"}, "mcnemar_exact", "newcombe", "exact McNemar test with Newcombe's interval"},
	} {
		inv := runCLI(t, e, append([]string{"report", "latest", "--db", db, "--format", "json"}, tc.flags...)...)
		if inv.code != 0 {
			t.Fatalf("report %v: %s", tc.flags, inv.stderr)
		}
		var rep struct{ Comparisons []reportComparison }
		if err := json.Unmarshal([]byte(inv.stdout), &rep); err != nil {
			t.Fatal(err)
		}
		if len(rep.Comparisons) != 1 {
			t.Fatalf("%d comparisons, want model-a vs model-b", len(rep.Comparisons))
		}
		slices := 0
		for _, c := range rep.Comparisons {
			if c.Test != tc.test || c.CIMethod != tc.ci {
				t.Errorf("%v: test %s (%s), want %s (%s)", tc.flags, c.Test, c.CIMethod, tc.test, tc.ci)
			}
			checkAgreement(t, fmt.Sprintf("%v %s vs %s", tc.flags, c.A, c.B), c)
			// McNemar's mid-p is shown beside either test: with 9 and 2
			// discordant cases, 2·(P(X ≤ 2) − P(X = 2)/2) for X ~ Bin(11, ½)
			// = 2·(67 − 27.5)/2048 = 79/2048 (scipy: 2*binom.cdf(2,11,.5) -
			// binom.pmf(2,11,.5) = 0.0385742).
			if c.AOnly != 9 || c.BOnly != 2 || c.MidP == nil || math.Abs(*c.MidP-79.0/2048) > 1e-12 {
				t.Errorf("%v: discordant %d/%d, mid-p %v; want 9/2 and 79/2048 = 0.0385742", tc.flags, c.AOnly, c.BOnly, c.MidP)
			}
			for k, byValue := range c.Slices {
				for v, s := range byValue {
					slices++
					checkAgreement(t, fmt.Sprintf("%v %s vs %s, %s %s", tc.flags, c.A, c.B, k, v), s)
				}
			}
		}
		if slices < 4 {
			t.Errorf("%v: %d slice comparisons checked, want every bucket and tier", tc.flags, slices)
		}
		text := runCLI(t, e, append([]string{"report", "latest", "--db", db}, tc.flags...)...)
		if text.code != 0 || !strings.Contains(text.stdout, tc.name) {
			t.Errorf("%v: the text report does not name the %s:\n%s", tc.flags, tc.name, text.stdout)
		}
	}
	// --ci cp: Clopper–Pearson for a rate of one verdict per case;
	// statsmodels proportion_confint(24, 26, method="beta") =
	// [0.748697, 0.990545] for model-a, and the text names it.
	inv := runCLI(t, e, "report", "latest", "--db", db, "--format", "json", "--ci", "cp")
	var cp struct {
		Targets []struct {
			Name    string
			Primary struct {
				Passed, N int
				CI        [2]float64
				CIMethod  string `json:"ci_method"`
			}
		}
	}
	if err := json.Unmarshal([]byte(inv.stdout), &cp); err != nil || inv.code != 0 {
		t.Fatalf("report --ci cp: %v %s", err, inv.stderr)
	}
	if p := cp.Targets[0].Primary; cp.Targets[0].Name != "model-a" || p.Passed != 24 || p.CIMethod != "clopper_pearson" ||
		math.Abs(p.CI[0]-0.748697) > 1e-4 || math.Abs(p.CI[1]-0.990545) > 1e-4 {
		t.Errorf("--ci cp: %s %+v, want 24/26 with Clopper–Pearson [0.7487, 0.9905]", cp.Targets[0].Name, p)
	}
	if text := runCLI(t, e, "report", "latest", "--db", db, "--ci", "cp"); !strings.Contains(text.stdout, "passed/n with Clopper–Pearson 95% intervals") {
		t.Errorf("--ci cp: the text report does not name Clopper–Pearson:\n%s", text.stdout)
	}
	for _, bad := range [][]string{{"--test", "midp"}, {"--ci", "wald"}} {
		inv := runCLI(t, e, append([]string{"report", "latest", "--db", db}, bad...)...)
		if inv.code != ExitUsage || !strings.Contains(inv.stderr, bad[0]) {
			t.Errorf("%v: exit %d, stderr %s; want a usage error naming the flag", bad, inv.code, inv.stderr)
		}
	}
}

// A target that passed every epoch of every case: `assay report --format
// json` gives its rate an interval whose lower bound is below 100%, no
// higher than Wilson's on its 30 cases alone (statsmodels
// proportion_confint(30, 30, method="wilson") = [0.886487, 1]).
func TestReportAllEpochsPassIsNotCertain(t *testing.T) {
	t.Parallel()
	_, url := startMock(t, mock.Options{})
	dir := t.TempDir()
	spec := echoTask(t, dir, 30, fmt.Sprintf(`  - {name: oa, provider: openai, model: m, base_url: %s/v1}`, url))
	var cases strings.Builder
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&cases, `{"id":"c%d","say":"word-%d","expected":"word-%d"}`+"\n", i, i, i)
	}
	writeFile(t, filepath.Join(dir, "cases.jsonl"), cases.String())
	db := filepath.Join(dir, "assay.db")
	if inv := runCLI(t, cliEnv{}, "run", spec, "--db", db, "--epochs", "3", "--no-cache"); inv.code != 0 {
		t.Fatalf("run: %s", inv.stderr)
	}
	inv := runCLI(t, cliEnv{}, "report", "latest", "--db", db, "--format", "json")
	if inv.code != 0 {
		t.Fatalf("report: %s", inv.stderr)
	}
	var rep struct {
		Targets []struct {
			Primary struct {
				Passed, N int
				Rate      float64
				CI        [2]float64
				CIMethod  string `json:"ci_method"`
			}
		}
	}
	if err := json.Unmarshal([]byte(inv.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	p := rep.Targets[0].Primary
	if p.Passed != 90 || p.N != 90 || p.Rate != 1 {
		t.Fatalf("primary %+v, want 90 of 90 passed", p)
	}
	if !(p.CI[0] < 1) || p.CI[0] > 0.886487+1e-4 || p.CI[1] != 1 || p.CIMethod != "wilson_deff" {
		t.Errorf("primary interval %v (%s), want a lower bound below 100%% (at most 0.8865) from wilson_deff", p.CI, p.CIMethod)
	}
}
