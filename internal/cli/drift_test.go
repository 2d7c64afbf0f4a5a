package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/mock"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store/sqlite"
)

// driftJSON is the part of `assay drift --format json` the tests read.
type driftJSON struct {
	Drifted []string
	Targets []struct {
		Target  string
		Verdict string
		Reasons []string
		Notes   []string
		Paired  int
		Flips   struct {
			N          int
			PassToFail int `json:"pass_to_fail"`
			FailToPass int `json:"fail_to_pass"`
			Flipped    int
			Rate       float64
			CI         [2]float64
			PValue     float64 `json:"p_value"`
			Direction  string
		}
		Identical struct {
			N, Identical, Errored int
			Rate                  float64
			CI                    [2]float64
		}
		Temperature struct {
			Before, After *float64
			Zero          bool
		}
		Fingerprints struct {
			Before, After []struct {
				Model, Fingerprint string
				Results            int
			}
			Changed bool
		}
		FromCache struct{ Before, After int } `json:"from_cache"`
		Excluded  struct {
			Pairs         int
			Before, After map[string]int
		}
		Health struct {
			Before, After struct{ Calls, Failed int }
		}
		FlippedCases []struct{ Case, Direction string } `json:"flipped_cases"`
		Calibration  *struct {
			Pairs, Identical, FlipN, Flipped int
			IdenticalTest                    struct {
				Z      float64
				PValue float64 `json:"p_value"`
			} `json:"identical_test"`
		}
	}
	CannotJudge []string `json:"cannot_judge"`
	Warnings    []string
}

func runDriftJSON(t *testing.T, args ...string) (driftJSON, invocation) {
	t.Helper()
	inv := runCLI(t, cliEnv{}, append([]string{"drift", "--format", "json"}, args...)...)
	var d driftJSON
	if inv.code != ExitOK && inv.code != ExitFailed {
		t.Fatalf("drift exit %d: %s", inv.code, inv.stderr)
	}
	if err := json.Unmarshal([]byte(inv.stdout), &d); err != nil {
		t.Fatalf("drift --format json: %v\n%s", err, inv.stdout)
	}
	return d, inv
}

// echoTarget is one openai target on a mock, at a temperature.
func echoTarget(url string, temperature string) string {
	return fmt.Sprintf(`  - {name: oa, provider: openai, model: m, base_url: %s/v1, params: {temperature: %s}}`, url, temperature)
}

// Two runs of the same spec against a deterministic model, both calling it
// (--no-cache): every output is identical and no verdict flips, so the
// target is stable and drift exits 0. A run served from the response cache
// is also "identical", and drift says a drift check must not use it.
func TestDriftIdenticalRerunsAreStable(t *testing.T) {
	t.Parallel()
	_, url := startMock(t, mock.Options{})
	dir := t.TempDir()
	db := filepath.Join(dir, "assay.db")
	spec := echoTask(t, dir, 30, echoTarget(url, "0"))
	a := runJSON(t, cliEnv{}, "run", spec, "--db", db, "--no-cache")
	b := runJSON(t, cliEnv{}, "run", spec, "--db", db, "--no-cache")

	d, inv := runDriftJSON(t, a.RunID, b.RunID, "--db", db)
	if inv.code != ExitOK || len(d.Drifted) != 0 || len(d.Targets) != 1 {
		t.Fatalf("exit %d, drifted %v; want 0 and none\n%s", inv.code, d.Drifted, inv.stdout)
	}
	tg := d.Targets[0]
	if tg.Verdict != "stable" || tg.Paired != 30 || tg.Flips.Flipped != 0 || tg.Identical.Identical != 30 || !tg.Temperature.Zero {
		t.Errorf("target %+v: want stable, 30 paired, no flips, 30 identical, at temperature 0", tg)
	}
	if tg.Fingerprints.Changed || len(tg.Fingerprints.Before) != 1 || tg.Fingerprints.Before[0].Fingerprint != "fp_mock" {
		t.Errorf("fingerprints %+v: want fp_mock in both runs, unchanged", tg.Fingerprints)
	}
	if tg.FromCache.Before+tg.FromCache.After != 0 || strings.Contains(strings.Join(tg.Notes, " "), "cache") {
		t.Errorf("--no-cache runs reported as cached: %+v %v", tg.FromCache, tg.Notes)
	}

	runJSON(t, cliEnv{}, "run", spec, "--db", db) // fills the response cache
	c := runJSON(t, cliEnv{}, "run", spec, "--db", db)
	d, inv = runDriftJSON(t, a.RunID, c.RunID, "--db", db)
	if inv.code != ExitOK || d.Targets[0].FromCache.After != 30 {
		t.Fatalf("cached re-run: exit %d, from cache %+v; want 0 and 30 cached after", inv.code, d.Targets[0].FromCache)
	}
	text := runCLI(t, cliEnv{}, "drift", a.RunID, c.RunID, "--db", db)
	if !strings.Contains(text.stdout, "30 of 30 results after") || !strings.Contains(text.stdout, "--no-cache") || !strings.Contains(text.stdout, "identical by construction") {
		t.Errorf("a drift check on cached results must say to re-run with --no-cache:\n%s", text.stdout)
	}
}

// The model now answers with a trailing space on 9 of 30 cases: no verdict
// flips (McNemar p = 1), but only 21/30 outputs are identical (Wilson 95%
// upper bound 0.833, below 0.95). Hosted APIs are not deterministic at
// temperature 0, so uncalibrated that decides nothing: stable, exit 0, with
// a note that the signal is uncalibrated. Calibrated by a second run of
// the baseline's configuration (30/30 identical), the canary's 21/30 is
// below the model's own self-agreement: one-sided pooled z test
// (statsmodels proportions_ztest([21, 30], [30, 30], alternative="smaller"))
// z = −3.254, p = 0.000569 < 0.05/3: drifted, exit 3. At temperature 0.7
// the uncalibrated rate decides nothing either.
func TestDriftChangedOutputsAtTemperatureZero(t *testing.T) {
	t.Parallel()
	var rules []mock.Rule
	for i := 11; i <= 19; i++ {
		w := fmt.Sprintf("word-%d", i)
		rules = append(rules, mock.Rule{Match: w, Reply: w + " "})
	}
	_, before := startMock(t, mock.Options{})
	_, after := startMock(t, mock.Options{Rules: rules})
	for _, tc := range []struct {
		temperature string
		calibrate   bool
		code        int
		verdict     string
	}{{"0", false, ExitOK, "stable"}, {"0", true, ExitFailed, "drifted"}, {"0.7", false, ExitOK, "stable"}} {
		t.Run(fmt.Sprintf("temperature %s calibrated %v", tc.temperature, tc.calibrate), func(t *testing.T) {
			dir := t.TempDir()
			db := filepath.Join(dir, "assay.db")
			a := runJSON(t, cliEnv{}, "run", echoTask(t, dir, 30, echoTarget(before, tc.temperature)), "--db", db, "--no-cache")
			b := runJSON(t, cliEnv{}, "run", echoTask(t, dir, 30, echoTarget(after, tc.temperature)), "--db", db, "--no-cache")
			args := []string{a.RunID, b.RunID, "--db", db}
			if tc.calibrate {
				c := runJSON(t, cliEnv{}, "run", echoTask(t, dir, 30, echoTarget(before, tc.temperature)), "--db", db, "--no-cache")
				args = append(args, "--calibrate", c.RunID)
			}
			d, inv := runDriftJSON(t, args...)
			if inv.code != tc.code || len(d.Targets) != 1 {
				t.Fatalf("exit %d, want %d\n%s", inv.code, tc.code, inv.stdout)
			}
			tg := d.Targets[0]
			if tg.Verdict != tc.verdict || tg.Identical.Identical != 21 || tg.Identical.N != 30 || tg.Flips.Flipped != 0 || tg.Flips.PValue != 1 {
				t.Errorf("%+v: want %s, 21/30 identical, no flips, p = 1", tg, tc.verdict)
			}
			// statsmodels proportion_confint(21, 30, method="wilson")
			if math.Abs(tg.Identical.CI[1]-0.833352517317562) > 1e-6 || math.Abs(tg.Identical.CI[0]-0.5212421254128503) > 1e-6 {
				t.Errorf("identical CI %v, want [0.521242, 0.833353]", tg.Identical.CI)
			}
			text := runCLI(t, cliEnv{}, append([]string{"drift"}, args...)...)
			notes := strings.Join(tg.Notes, "\n")
			switch {
			case tc.calibrate:
				c := tg.Calibration
				if c == nil || c.Pairs != 30 || c.Identical != 30 || math.Abs(c.IdenticalTest.Z+3.253956867279843) > 1e-9 ||
					math.Abs(c.IdenticalTest.PValue-0.0005690477923374636) > 1e-12 {
					t.Fatalf("calibration %+v: want 30/30 identical, z −3.25396, p 0.000569048", c)
				}
				if len(tg.Reasons) != 1 || !strings.Contains(tg.Reasons[0], "21 of 30 outputs are identical") || !strings.Contains(tg.Reasons[0], "self-agreement of 30 of 30") ||
					!strings.Contains(text.stderr, "oa drifted") || !strings.Contains(text.stdout, "calibration (run "+args[5]+")") {
					t.Errorf("reasons %q, stderr %q: want one reason naming 21 of 30 identical against 30 of 30\n%s", tg.Reasons, text.stderr, text.stdout)
				}
			case tc.temperature == "0":
				if len(tg.Reasons) != 0 || !strings.Contains(notes, "uncalibrated: at temperature 0 only 21 of 30 outputs are identical") || !strings.Contains(text.stdout, "decides nothing alone") {
					t.Errorf("reasons %q notes %q: want no reason, a note that the identical-output rate is uncalibrated\n%s", tg.Reasons, notes, text.stdout)
				}
			default:
				if !strings.Contains(text.stdout, "identical outputs are expected to be rare above 0") {
					t.Errorf("at temperature 0.7 the report must say identical outputs are not expected:\n%s", text.stdout)
				}
			}
		})
	}
}

// The model now answers "changed" on those 9 cases: 6 of them passed
// before (12, 15 and 18 expect "other"), so 6 verdicts flip pass→fail,
// McNemar exact p = 2·0.5⁶ = 0.03125 < 0.05, direction worse.
func TestDriftFlipsAreTested(t *testing.T) {
	t.Parallel()
	var rules []mock.Rule
	for i := 11; i <= 19; i++ {
		rules = append(rules, mock.Rule{Match: fmt.Sprintf("word-%d", i), Reply: "changed"})
	}
	_, before := startMock(t, mock.Options{})
	_, after := startMock(t, mock.Options{Rules: rules})
	dir := t.TempDir()
	db := filepath.Join(dir, "assay.db")
	a := runJSON(t, cliEnv{}, "run", echoTask(t, dir, 30, echoTarget(before, "0")), "--db", db, "--no-cache")
	b := runJSON(t, cliEnv{}, "run", echoTask(t, dir, 30, echoTarget(after, "0")), "--db", db, "--no-cache")
	d, inv := runDriftJSON(t, a.RunID, b.RunID, "--db", db)
	if inv.code != ExitFailed {
		t.Fatalf("exit %d, want 3\n%s", inv.code, inv.stdout)
	}
	f := d.Targets[0].Flips
	if f.PassToFail != 6 || f.FailToPass != 0 || f.N != 30 || f.PValue != 0.03125 || f.Direction != "worse" {
		t.Errorf("flips %+v: want 6 pass→fail of 30, p 0.03125, worse", f)
	}
	// The 21/30 identical outputs are uncalibrated: McNemar alone decides.
	if len(d.Targets[0].Reasons) != 1 || !strings.Contains(d.Targets[0].Reasons[0], "flipped 6 times pass→fail") {
		t.Errorf("reasons %q: want McNemar's alone", d.Targets[0].Reasons)
	}
	if fc := d.Targets[0].FlippedCases; len(fc) != 6 || fc[0].Direction != "pass_to_fail" {
		t.Errorf("flipped cases %+v: want the 6 pass→fail listed", fc)
	}
}

// fakeResult is one stored result of a hand-made run.
type fakeResult struct {
	caseID    string
	raw       string
	pass      bool
	model, fp string
	errKind   string
	fromCache bool
}

// putFakeRun stores a complete run of one target ("canary") at temperature
// 0 with the given results, scored by a primary scorer "correct".
func putFakeRun(t *testing.T, db, id string, started time.Time, rs []fakeResult) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cfg := `{"name":"canary","targets":[{"name":"canary","provider":"openai","model":"m","params":{"temperature":0}}],"scorers":[{"name":"correct","type":"equals","primary":true}]}`
	run := &record.Run{ID: id, Spec: "canary", SpecHash: "sha256:spec", DatasetHash: "sha256:data", PromptHash: "sha256:prompt",
		ScorersHash: "sha256:scorers", Targets: []string{"canary"}, Cases: len(rs), Epochs: 1, Status: record.StatusComplete,
		Started: started, Ended: started.Add(time.Minute), Config: []byte(cfg)}
	if err := st.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	var cases []record.Case
	var results []record.Result
	var scores []record.Score
	for i, r := range rs {
		cases = append(cases, record.Case{RunID: id, ID: r.caseID, Line: i + 1, Expected: []byte(`"x"`)})
		res := record.Result{RunID: id, CaseID: r.caseID, Target: "canary", Epoch: 1, Raw: r.raw, Model: r.model,
			Fingerprint: r.fp, ErrorKind: r.errKind, FromCache: r.fromCache, Attempts: 1, CreatedAt: started}
		if r.errKind != "" {
			res.Raw, res.Error = "", "the call failed"
		}
		results = append(results, res)
		sc := record.Score{RunID: id, Scoring: 1, CaseID: r.caseID, Target: "canary", Epoch: 1, Scorer: "correct",
			Primary: true, Pass: r.pass, Value: b01(r.pass), Shape: "pass"}
		if !r.pass {
			sc.Shape, sc.Kind = "silent", "wrong"
		}
		if r.errKind != "" {
			// As the scorer grades a failed call: loud, of its error kind.
			sc.Pass, sc.Value, sc.Shape, sc.Kind = false, 0, "loud", r.errKind
		}
		scores = append(scores, sc)
	}
	if err := st.PutCases(ctx, cases); err != nil {
		t.Fatal(err)
	}
	if err := st.PutResults(ctx, results, scores); err != nil {
		t.Fatal(err)
	}
}

func b01(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// A vendor swapped the model behind the name: same outputs, same verdicts,
// but the reported fingerprint changed. Drifted (exit 3), unless
// --ignore-fingerprints. The fingerprint is provider text and is escaped.
func TestDriftFingerprintChangeIsFlagged(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "assay.db")
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	mk := func(fp string) []fakeResult {
		var rs []fakeResult
		for i := 1; i <= 20; i++ {
			rs = append(rs, fakeResult{caseID: fmt.Sprintf("c%d", i), raw: fmt.Sprintf("answer %d", i), pass: i%4 != 0, model: "m-2025", fp: fp})
		}
		return rs
	}
	putFakeRun(t, db, "before", t0, mk("fp_1"))
	putFakeRun(t, db, "after", t0.Add(time.Hour), mk("fp_2\x1b]0;pwned\x07"))

	d, inv := runDriftJSON(t, "before", "after", "--db", db)
	if inv.code != ExitFailed {
		t.Fatalf("exit %d, want 3 (fingerprint changed)\n%s", inv.code, inv.stdout)
	}
	tg := d.Targets[0]
	if !tg.Fingerprints.Changed || tg.Verdict != "drifted" || tg.Identical.Identical != 20 || tg.Flips.Flipped != 0 {
		t.Errorf("%+v: want drifted by fingerprint alone (20 identical, no flips)", tg)
	}
	if len(tg.Reasons) != 1 || !strings.Contains(tg.Reasons[0], "fp_1") {
		t.Errorf("reasons %q: want one naming the fingerprints", tg.Reasons)
	}
	text := runCLI(t, cliEnv{}, "drift", "before", "after", "--db", db)
	if text.code != ExitFailed || strings.ContainsAny(text.stdout, "\x1b\x07") || !strings.Contains(text.stdout, `fp_2\x1b]0;pwned\x07`) {
		t.Errorf("text: exit %d; the fingerprint must show escaped, never raw:\n%q", text.code, text.stdout)
	}
	ign := runCLI(t, cliEnv{}, "drift", "before", "after", "--db", db, "--ignore-fingerprints")
	if ign.code != ExitOK || !strings.Contains(ign.stdout, "not counted: fingerprints ignored") {
		t.Errorf("--ignore-fingerprints: exit %d, want 0 with a note\n%s", ign.code, ign.stdout)
	}
}

// The flip-rate and identical-rate intervals, McNemar's p and the verdict
// match statsmodels/scipy (testdata/drift_reference.py) on hand-made runs.
func TestDriftNumbersMatchReference(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("testdata", "drift_reference.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ref []struct {
		N           int
		PassToFail  int        `json:"pass_to_fail"`
		FailToPass  int        `json:"fail_to_pass"`
		Identical   int        `json:"identical"`
		FlipCI      [2]float64 `json:"flip_ci"`
		PValue      float64    `json:"p_value"`
		IdenticalCI [2]float64 `json:"identical_ci"`
		Verdict     string
	}
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	if len(ref) < 5 {
		t.Fatalf("%d reference scenarios", len(ref))
	}
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, r := range ref {
		t.Run(fmt.Sprintf("n%d_%d_%d_%d", r.N, r.PassToFail, r.FailToPass, r.Identical), func(t *testing.T) {
			if r.N-r.Identical < r.PassToFail+r.FailToPass {
				t.Fatal("a flipped case must have changed its output")
			}
			var before, after []fakeResult
			for i := range r.N {
				id := fmt.Sprintf("c%04d", i)
				pb, pa := i%3 != 0, i%3 != 0 // concordant pairs: mixed passes and fails
				switch {
				case i < r.PassToFail:
					pb, pa = true, false
				case i < r.PassToFail+r.FailToPass:
					pb, pa = false, true
				}
				rawA := "out " + id
				if i < r.N-r.Identical {
					rawA += " v2"
				}
				before = append(before, fakeResult{caseID: id, raw: "out " + id, pass: pb, model: "m", fp: "fp"})
				after = append(after, fakeResult{caseID: id, raw: rawA, pass: pa, model: "m", fp: "fp"})
			}
			db := filepath.Join(t.TempDir(), "assay.db")
			putFakeRun(t, db, "a", t0, before)
			putFakeRun(t, db, "b", t0.Add(time.Hour), after)
			d, inv := runDriftJSON(t, "a", "b", "--db", db)
			tg := d.Targets[0]
			wantCode := ExitOK
			if r.Verdict == "drifted" {
				wantCode = ExitFailed
			}
			if inv.code != wantCode || tg.Verdict != r.Verdict {
				t.Errorf("exit %d verdict %s; reference %s", inv.code, tg.Verdict, r.Verdict)
			}
			f, id := tg.Flips, tg.Identical
			if f.N != r.N || f.PassToFail != r.PassToFail || f.FailToPass != r.FailToPass || id.N != r.N || id.Identical != r.Identical {
				t.Fatalf("counts: flips %+v identical %+v", f, id)
			}
			near := func(what string, got, want float64) {
				if math.Abs(got-want) > 1e-6 {
					t.Errorf("%s = %.9g, reference %.9g", what, got, want)
				}
			}
			near("flip CI lo", f.CI[0], r.FlipCI[0])
			near("flip CI hi", f.CI[1], r.FlipCI[1])
			near("identical CI lo", id.CI[0], r.IdenticalCI[0])
			near("identical CI hi", id.CI[1], r.IdenticalCI[1])
			if math.Abs(f.PValue-r.PValue) > 1e-9*r.PValue {
				t.Errorf("McNemar p = %.12g, reference %.12g", f.PValue, r.PValue)
			}
		})
	}
}

// Failed calls count as not identical, and a target both runs ran but
// which shares no result is reported, never called stable on no data.
func TestDriftErrorsAndEdges(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "assay.db")
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	var before, after []fakeResult
	for i := 1; i <= 40; i++ {
		id := fmt.Sprintf("c%d", i)
		before = append(before, fakeResult{caseID: id, raw: "same", pass: true, model: "m", fp: "fp"})
		r := fakeResult{caseID: id, raw: "same", pass: true, model: "m", fp: "fp"}
		if i <= 2 {
			r = fakeResult{caseID: id, errKind: "timeout", model: "m"} // loud failures: no fingerprint reported
		}
		after = append(after, r)
	}
	putFakeRun(t, db, "a", t0, before)
	putFakeRun(t, db, "b", t0.Add(time.Hour), after)
	d, inv := runDriftJSON(t, "a", "b", "--db", db)
	tg := d.Targets[0]
	// The two timeouts are not behaviour: left out of the flips and the
	// identical outputs (38/38 identical, no flip, p = 1), counted apart.
	if inv.code != ExitOK || tg.Identical.Errored != 2 || tg.Identical.N != 38 || tg.Identical.Identical != 38 || tg.Fingerprints.Changed ||
		tg.Flips.N != 38 || tg.Flips.PValue != 1 || tg.Excluded.Pairs != 2 || tg.Excluded.After["timeout"] != 2 || len(tg.Excluded.Before) != 0 ||
		tg.Health.After.Calls != 40 || tg.Health.After.Failed != 2 {
		t.Errorf("exit %d %+v: want stable, 2 pairs left out (timeout, after), 38 identical of 38, fingerprint unchanged (errors report none), p 1", inv.code, tg)
	}

	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"drift", "a", "b", "--db", db, "--target", "nope"}, ExitErr, `target "nope" is not in both runs`},
		{[]string{"drift", "a", "--db", db}, ExitUsage, "accepts 2 arg"},
		{[]string{"drift", "a", "b", "--db", db, "--alpha", "0"}, ExitUsage, "--alpha must be in (0, 1)"},
		{[]string{"drift", "a", "b", "--db", db, "--identical-threshold", "1.5"}, ExitUsage, "--identical-threshold must be in (0, 1]"},
		{[]string{"drift", "a", "b", "--db", db, "--format", "html"}, ExitUsage, "formats are text, json, markdown"},
		{[]string{"drift", "a", "zzz", "--db", db}, ExitErr, "not found"},
	} {
		inv := runCLI(t, cliEnv{}, c.args...)
		if inv.code != c.code || !strings.Contains(inv.stderr, c.msg) {
			t.Errorf("%v: exit %d %q; want %d and %q", c.args, inv.code, inv.stderr, c.code, c.msg)
		}
	}
	md := runCLI(t, cliEnv{}, "drift", "a", "b", "--db", db, "--format", "markdown")
	if md.code != ExitOK || !strings.Contains(md.stdout, "| canary | stable | 40 |") {
		t.Errorf("markdown: exit %d\n%s", md.code, md.stdout)
	}
}

// Recorded GSM8K: the same target name replaying the 175B verifier's
// solutions, then the 6B verifier's, is a model swapped under its name.
// Drift reports it (exit 3), and the flips are exactly the questions whose
// is_correct differs between the two recorded configurations, counted here
// from the data file.
func TestDriftGSM8KSwappedModel(t *testing.T) {
	t.Parallel()
	data := sharedData(t)
	solutions := filepath.Join(data, "gsm8k", "example_model_solutions.jsonl")
	db, a, b := gsm8kCanaryRuns(t)

	// Independently: how many questions flip, and which way.
	f, err := os.Open(solutions)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	worse, better, n := 0, 0, 0
	for sc.Scan() {
		var rec map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		correct := func(config string) bool {
			var v struct {
				IsCorrect *bool `json:"is_correct"`
			}
			if err := json.Unmarshal(rec[config], &v); err != nil || v.IsCorrect == nil {
				t.Fatalf("line %d: %s has no is_correct", n+1, config)
			}
			return *v.IsCorrect
		}
		n++
		x, y := correct("175b_verification"), correct("6b_verification")
		switch {
		case x && !y:
			worse++
		case !x && y:
			better++
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n != 1319 || worse+better == 0 {
		t.Fatalf("read %d questions, %d+%d flips", n, worse, better)
	}

	d, inv := runDriftJSON(t, a.RunID, b.RunID, "--db", db)
	if inv.code != ExitFailed || len(d.Targets) != 1 || d.Targets[0].Verdict != "drifted" {
		t.Fatalf("exit %d: want 3, canary drifted\n%s", inv.code, inv.stdout)
	}
	fl := d.Targets[0].Flips
	if fl.Flipped != worse+better || fl.PassToFail != worse || fl.FailToPass != better || fl.N != 1319 || fl.Direction != "worse" {
		t.Errorf("flips %+v; the data says %d pass→fail and %d fail→pass of 1319", fl, worse, better)
	}
	t.Logf("GSM8K 175b→6b verification: %d pass→fail, %d fail→pass, p = %.3g", worse, better, fl.PValue)

	// diff lists the same flips, each with both recorded solutions.
	inv = runCLI(t, cliEnv{}, "diff", a.RunID, b.RunID, "--db", db, "--format", "json", "--limit", "3")
	var dj diffJSONOut
	if err := json.Unmarshal([]byte(inv.stdout), &dj); err != nil || len(dj.Flips) != 1 {
		t.Fatalf("diff: %v\n%s", err, inv.stdout)
	}
	df := dj.Flips[0]
	if df.PassToFail != worse || df.FailToPass != better || len(df.Cases) != 3 || df.Unlisted != worse+better-3 ||
		!strings.Contains(df.Cases[0].Before, "A: ") || !strings.Contains(df.Cases[0].After, "A: ") {
		t.Errorf("diff flips %+v; want %d pass→fail, %d fail→pass, 3 listed with both solutions", df, worse, better)
	}
}

// Results pair by case and epoch: two 2-epoch runs pair 60 results; a
// 1-epoch run against a 2-epoch one pairs epoch 1 only.
func TestDriftPairsByEpoch(t *testing.T) {
	t.Parallel()
	_, url := startMock(t, mock.Options{})
	dir := t.TempDir()
	db := filepath.Join(dir, "assay.db")
	spec := echoTask(t, dir, 30, echoTarget(url, "0"))
	one := runJSON(t, cliEnv{}, "run", spec, "--db", db, "--no-cache")
	a := runJSON(t, cliEnv{}, "run", spec, "--db", db, "--no-cache", "--epochs", "2")
	b := runJSON(t, cliEnv{}, "run", spec, "--db", db, "--no-cache", "--epochs", "2")
	for _, c := range []struct {
		a, b   string
		paired int
	}{{a.RunID, b.RunID, 60}, {one.RunID, b.RunID, 30}, {b.RunID, one.RunID, 30}} {
		d, inv := runDriftJSON(t, c.a, c.b, "--db", db)
		tg := d.Targets[0]
		if inv.code != ExitOK || tg.Paired != c.paired || tg.Identical.Identical != c.paired || tg.Flips.N != c.paired {
			t.Errorf("%s vs %s: exit %d, %+v; want %d pairs, all identical", c.a, c.b, inv.code, tg, c.paired)
		}
	}
}

// The provider was down for the canary (a bad key: auth on every call):
// 152 failed calls are not a changed model. drift says it cannot judge,
// naming the count, the run and the error kind, and exits 1, never 3 —
// though every verdict "flipped" to a loud failure and no model was
// reported. A side with fewer pairs than --min-pairs cannot be judged
// either; a few failed calls are left out and the rest is judged.
func TestDriftCannotJudgeFailedSide(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "assay.db")
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	var good, down, flaky []fakeResult
	for i := 1; i <= 152; i++ {
		id := fmt.Sprintf("c%d", i)
		good = append(good, fakeResult{caseID: id, raw: "answer " + id, pass: i%5 != 0, model: "m", fp: "fp"})
		down = append(down, fakeResult{caseID: id, errKind: "auth"})
		r := good[i-1]
		if i > 100 {
			r = fakeResult{caseID: id, errKind: "rate_limit"}
		}
		flaky = append(flaky, r)
	}
	putFakeRun(t, db, "good", t0, good)
	putFakeRun(t, db, "down", t0.Add(time.Hour), down)
	putFakeRun(t, db, "flaky", t0.Add(2*time.Hour), flaky)

	inv := runCLI(t, cliEnv{}, "drift", "good", "down", "--db", db, "--format", "json")
	var d driftJSON
	if err := json.Unmarshal([]byte(inv.stdout), &d); err != nil {
		t.Fatalf("the report is written before exiting 1: %v\n%s", err, inv.stdout)
	}
	want := "cannot judge: 152 of 152 calls of canary in run down failed: auth"
	if inv.code != ExitErr || !strings.Contains(inv.stderr, want) {
		t.Fatalf("exit %d, stderr %q; want 1 and %q", inv.code, inv.stderr, want)
	}
	tg := d.Targets[0]
	if tg.Verdict != "cannot_judge" || len(d.Drifted) != 0 || tg.Flips.N != 0 || tg.Excluded.Pairs != 152 || tg.Excluded.After["auth"] != 152 ||
		len(d.CannotJudge) != 1 || d.CannotJudge[0] != want {
		t.Errorf("%+v, cannot judge %q: want cannot_judge, nothing compared, 152 pairs left out (auth)", tg, d.CannotJudge)
	}
	text := runCLI(t, cliEnv{}, "drift", "good", "down", "--db", db)
	md := runCLI(t, cliEnv{}, "drift", "good", "down", "--db", db, "--format", "markdown")
	for _, o := range []invocation{text, md} {
		if o.code != ExitErr || !strings.Contains(o.stdout, want) || !strings.Contains(o.stdout, "CANNOT JUDGE") || strings.Contains(o.stdout, "DRIFT:") {
			t.Errorf("exit %d: want 1 and the cause in the report, no drift verdict\n%s", o.code, o.stdout)
		}
	}
	// Baseline and canary swapped: the failed side is the baseline.
	if back := runCLI(t, cliEnv{}, "drift", "down", "good", "--db", db); back.code != ExitErr || !strings.Contains(back.stderr, "152 of 152 calls of canary in run down failed: auth") {
		t.Errorf("failed baseline: exit %d %q", back.code, back.stderr)
	}

	// 52 of 152 rate-limited: a third, under the half; 100 pairs judged.
	d, inv = runDriftJSON(t, "good", "flaky", "--db", db)
	if inv.code != ExitOK || d.Targets[0].Verdict != "stable" || d.Targets[0].Flips.N != 100 || d.Targets[0].Excluded.After["rate_limit"] != 52 {
		t.Errorf("flaky: exit %d %+v; want stable on 100 pairs, 52 left out (rate_limit)", inv.code, d.Targets[0])
	}
	// Stricter limits make the same run unjudgeable.
	if o := runCLI(t, cliEnv{}, "drift", "good", "flaky", "--db", db, "--max-error-rate", "0.3"); o.code != ExitErr || !strings.Contains(o.stderr, "52 of 152 calls of canary in run flaky failed: rate_limit") {
		t.Errorf("--max-error-rate 0.3: exit %d %q", o.code, o.stderr)
	}
	if o := runCLI(t, cliEnv{}, "drift", "good", "flaky", "--db", db, "--min-pairs", "101"); o.code != ExitErr || !strings.Contains(o.stderr, "only 100 pairs of canary have an output on both sides (52 left out because a call failed), fewer than --min-pairs 101") {
		t.Errorf("--min-pairs 101: exit %d %q", o.code, o.stderr)
	}
	// A calibration is a second run, not the baseline itself.
	if o := runCLI(t, cliEnv{}, "drift", "good", "flaky", "--db", db, "--calibrate", "good"); o.code != ExitErr || !strings.Contains(o.stderr, "the calibration run good is the baseline's own run") {
		t.Errorf("--calibrate the baseline: exit %d %q", o.code, o.stderr)
	}
	// compare leaves the failed calls out the same way, and cannot judge
	// the side whose calls all failed.
	if o := runCLI(t, cliEnv{}, "compare", "good", "down", "--db", db); o.code != ExitErr || !strings.Contains(o.stderr, want) {
		t.Errorf("compare good down: exit %d %q; want 1 and %q", o.code, o.stderr, want)
	}
	cmp := runCLI(t, cliEnv{}, "compare", "good", "flaky", "--db", db, "--format", "json")
	var rc struct {
		Comparisons []struct{ N int }
		Excluded    []struct {
			Pairs int
			After map[string]int
		}
	}
	if err := json.Unmarshal([]byte(cmp.stdout), &rc); err != nil || cmp.code != ExitOK || len(rc.Comparisons) != 1 || rc.Comparisons[0].N != 100 ||
		len(rc.Excluded) != 1 || rc.Excluded[0].Pairs != 52 || rc.Excluded[0].After["rate_limit"] != 52 {
		t.Errorf("compare good flaky: exit %d %v %+v; want 100 paired, 52 left out (rate_limit)\n%s", cmp.code, err, rc, cmp.stderr)
	}
	for _, c := range []struct{ flag, msg string }{{"--max-error-rate=1", "--max-error-rate must be in (0, 1)"}, {"--min-pairs=0", "--min-pairs must be 1 or more"}} {
		if o := runCLI(t, cliEnv{}, "drift", "good", "flaky", "--db", db, c.flag); o.code != ExitUsage || !strings.Contains(o.stderr, c.msg) {
			t.Errorf("%s: exit %d %q", c.flag, o.code, o.stderr)
		}
	}
}

// A bad key trips the circuit breaker after a few calls: the canary run
// holds 3 results, all auth failures, of the 152 cases. drift refuses the
// partial side (exit 1, never 3) and names the cause first.
func TestDriftStoppedRunNamesTheCause(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "assay.db")
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	var good, stopped []fakeResult
	for i := 1; i <= 152; i++ {
		id := fmt.Sprintf("c%d", i)
		good = append(good, fakeResult{caseID: id, raw: "answer " + id, pass: true, model: "m", fp: "fp"})
		if i <= 3 {
			stopped = append(stopped, fakeResult{caseID: id, errKind: "auth"})
		}
	}
	putFakeRun(t, db, "good", t0, good)
	putFakeRun(t, db, "stopped", t0.Add(time.Hour), stopped)
	inv := runCLI(t, cliEnv{}, "drift", "good", "stopped", "--db", db)
	if inv.code != ExitErr || !strings.Contains(inv.stderr, "drift: cannot judge: 3 of 3 calls of canary in run stopped failed: auth; and the second side (run stopped) covers 3 of the 152 cases") {
		t.Errorf("exit %d %q; want 1 naming the 3 auth failures first", inv.code, inv.stderr)
	}
}

// End to end through `assay run` against the mock: the canary run's key
// is wrong (auth, HTTP 401, on every call it makes). However run ends (the
// run-health exit, the circuit breaker), drift against the good run exits
// 1 naming the auth failures, never 3.
func TestDriftBadKeyRunEndToEnd(t *testing.T) {
	t.Parallel()
	const key = "sk-test-good-key-0123456789"
	_, url := startMock(t, mock.Options{APIKey: key})
	dir := t.TempDir()
	db := filepath.Join(dir, "assay.db")
	spec := echoTask(t, dir, 30, fmt.Sprintf(`  - {name: oa, provider: openai, model: m, base_url: %s/v1, api_key_env: CANARY_KEY, params: {temperature: 0}}`, url))
	good := runJSON(t, cliEnv{env: map[string]string{"CANARY_KEY": key}}, "run", spec, "--db", db, "--no-cache")
	bad := runCLI(t, cliEnv{env: map[string]string{"CANARY_KEY": "sk-test-wrong-key-9876543210"}}, "run", spec, "--db", db, "--no-cache")
	if bad.code == ExitOK {
		t.Logf("the run with a wrong key exited 0 (run health not enforced here)")
	}
	inv := runCLI(t, cliEnv{}, "drift", good.RunID, "latest", "--db", db)
	if inv.code != ExitErr || !strings.Contains(inv.stderr, "cannot judge: ") || !strings.Contains(inv.stderr, "calls of oa in run ") || !strings.Contains(inv.stderr, "failed: auth") {
		t.Errorf("drift against the bad-key run: exit %d %q; want 1 naming the auth failures", inv.code, inv.stderr)
	}
	t.Logf("run exit %d; drift: %s", bad.code, inv.stderr)
}
