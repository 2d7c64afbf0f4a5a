package cli

import (
	"context"
	"encoding/json"
	"encoding/xml"
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

// gateFake is one target of a run written straight into the store.
type gateFake struct {
	name    string
	pass    []bool
	loud    func(i int) bool    // a failure is loud (default silent)
	cost    func(i int) float64 // default 0.001
	latency func(i int) float64 // default 200 + i%50 ms
	model   string              // default "m-1"
	raw     func(i int) string  // default "out-<i>"
	errKind func(i int) string  // the call's error kind (default "": no error)
}

// gateRun describes a run written straight into the store: n cases
// c1…cn (tags from tags), the given targets, one epoch, the primary scorer
// "correct", and config as the stored resolved spec.
type gateRun struct {
	started time.Time
	dataset string
	caseIDs []string
	tags    func(i int) map[string]string
	config  string
	targets []gateFake
}

func gateIDs(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("c%d", i+1)
	}
	return out
}

// firstK returns n verdicts of which the first k pass.
func firstK(n, k int) []bool {
	out := make([]bool, n)
	for i := range k {
		out[i] = true
	}
	return out
}

var gateClock = time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)

// writeGateRun stores the run and returns its ID. Runs written later start
// later, so latest is the last one written.
func writeGateRun(t *testing.T, db string, r gateRun) string {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if r.started.IsZero() {
		gateClock = gateClock.Add(time.Minute)
		r.started = gateClock
	}
	if r.dataset == "" {
		r.dataset = "sha256:dataset-1"
	}
	run := &record.Run{ID: record.NewRunID(r.started), Spec: "gate-test", SpecHash: "sha256:spec", DatasetHash: r.dataset,
		PromptHash: "sha256:prompt", ScorersHash: "sha256:scorers", AssayVersion: "test", Cases: len(r.caseIDs), Epochs: 1,
		Status: record.StatusComplete, Started: r.started, Ended: r.started.Add(time.Second), Config: []byte(r.config)}
	for _, tg := range r.targets {
		run.Targets = append(run.Targets, tg.name)
	}
	if err := st.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	var cases []record.Case
	for i, id := range r.caseIDs {
		c := record.Case{RunID: run.ID, ID: id, Line: i + 1, Expected: []byte(`"x"`)}
		if r.tags != nil {
			c.Tags = r.tags(i)
		}
		cases = append(cases, c)
	}
	if err := st.PutCases(ctx, cases); err != nil {
		t.Fatal(err)
	}
	var results []record.Result
	var scores []record.Score
	for _, tg := range r.targets {
		for i, id := range r.caseIDs {
			res := record.Result{RunID: run.ID, CaseID: id, Target: tg.name, Epoch: 1, Raw: fmt.Sprintf("out-%d", i),
				CostUSD: 0.001, LatencyMS: 200 + float64(i%50), Model: "m-1", Fingerprint: "fp_1", CreatedAt: r.started}
			if tg.raw != nil {
				res.Raw = tg.raw(i)
			}
			if tg.cost != nil {
				res.CostUSD = tg.cost(i)
			}
			if tg.latency != nil {
				res.LatencyMS = tg.latency(i)
			}
			if tg.model != "" {
				res.Model = tg.model
			}
			if tg.errKind != nil {
				if res.ErrorKind = tg.errKind(i); res.ErrorKind != "" {
					res.Raw, res.Model, res.Fingerprint = "", "", ""
				}
			}
			pass := tg.pass[i]
			sc := record.Score{RunID: run.ID, Scoring: 1, CaseID: id, Target: tg.name, Epoch: 1, Scorer: "correct", Primary: true, Pass: pass, Shape: "pass"}
			if pass {
				sc.Value = 1
			} else if res.ErrorKind != "" {
				// As the scorers record a failed call: a loud failure of
				// the error's kind.
				sc.Shape, sc.Kind = "loud", res.ErrorKind
			} else if tg.loud != nil && tg.loud(i) {
				sc.Shape, sc.Kind = "loud", "timeout"
			} else {
				sc.Shape, sc.Kind = "silent", "wrong"
			}
			results = append(results, res)
			scores = append(scores, sc)
		}
	}
	if err := st.PutResults(ctx, results, scores); err != nil {
		t.Fatal(err)
	}
	return run.ID
}

type gateJSON struct {
	Verdict      string
	Failed       int
	Inconclusive int
	Passed       int
	Cases        int
	Warnings     []string
	Targets      []struct {
		Name               string
		Verdict            string
		Missing            bool
		FingerprintChanged bool `json:"fingerprint_changed"`
		IdenticalOutputs   int  `json:"identical_outputs"`
		Checks             []struct {
			Rule, Verdict, Reason, Test string
			N                           int
			Baseline, Candidate, Delta  *float64
			CI                          [2]*float64
			PValue                      *float64 `json:"p_value"`
			Threshold                   *float64
		}
	}
}

func gateJSONOf(t *testing.T, inv invocation) gateJSON {
	t.Helper()
	var g gateJSON
	if err := json.Unmarshal([]byte(inv.stdout), &g); err != nil {
		t.Fatalf("gate --format json (exit %d): %v\n%s\n%s", inv.code, err, inv.stdout, inv.stderr)
	}
	return g
}

// The acceptance: a run gated against itself passes; a candidate
// that loses 10 points on 1,000 cases fails with exit 3 and names the rule;
// one point lost on 100 cases is inconclusive and passes, unless --strict.
func TestGateAcceptance(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "assay.db")
	e := cliEnv{}
	base := writeGateRun(t, db, gateRun{caseIDs: gateIDs(1000), targets: []gateFake{{name: "gpt", pass: firstK(1000, 800)}}})
	cand := writeGateRun(t, db, gateRun{caseIDs: gateIDs(1000), targets: []gateFake{{name: "gpt", pass: firstK(1000, 700)}}})

	inv := runCLI(t, e, "gate", base, "--baseline", base, "--db", db)
	if inv.code != ExitOK || !strings.HasPrefix(inv.stdout, "assay gate: PASS (0 failed, 0 inconclusive, 1 passed)") ||
		!strings.Contains(inv.stdout, "outputs identical to the baseline: 1,000 of 1,000") {
		t.Errorf("self gate: exit %d\n%s%s", inv.code, inv.stdout, inv.stderr)
	}

	inv = runCLI(t, e, "gate", "latest", "--baseline", base, "--db", db)
	if inv.code != ExitFailed {
		t.Fatalf("10 points lost: exit %d, want 3\n%s%s", inv.code, inv.stdout, inv.stderr)
	}
	// Tango's one-sided 95% bounds of the change are [−11.7, −8.5] pts
	// (internal/gate/testdata/reference.py, tango_ci(0, 100, 1000, 0.1)).
	for _, want := range []string{"assay gate: FAIL", "FAIL         primary max_drop=5%", "correct 80.0% → 70.0% (−10.0 pts",
		"a drop of at least 8.5 pts (one-sided 95% bound), more than the 4.0 pts allowed (5% of 80.0%)", "Holm over the run's one check"} {
		if !strings.Contains(inv.stdout, want) {
			t.Errorf("10 points lost: the report lacks %q:\n%s", want, inv.stdout)
		}
	}
	if !strings.Contains(inv.stderr, `gate failed: primary max_drop=5% on target "gpt"`) {
		t.Errorf("stderr does not name the failed rule: %s", inv.stderr)
	}
	g := gateJSONOf(t, runCLI(t, e, "gate", cand, "--baseline", base, "--db", db, "--format", "json"))
	c := g.Targets[0].Checks[0]
	if g.Verdict != "fail" || c.Verdict != "fail" || c.N != 1000 || *c.Delta != -0.1 || c.Test != "mcnemar_score" || *c.PValue > 1e-20 || *c.Threshold != 0.04 {
		t.Errorf("json: %+v", g)
	}

	// One point on 100 cases, where 5% of a 15% rate allows 0.75 points.
	b100 := writeGateRun(t, db, gateRun{caseIDs: gateIDs(100), targets: []gateFake{{name: "gpt", pass: firstK(100, 15)}}})
	c100 := writeGateRun(t, db, gateRun{caseIDs: gateIDs(100), targets: []gateFake{{name: "gpt", pass: firstK(100, 14)}}})
	inv = runCLI(t, e, "gate", c100, "--baseline", b100, "--db", db)
	if inv.code != ExitOK || !strings.Contains(inv.stdout, "INCONCLUSIVE primary max_drop=5%") ||
		!strings.Contains(inv.stdout, "so the data cannot tell whether it is within the 0.8 pts allowed") || !strings.Contains(inv.stdout, "(--strict would fail it)") {
		t.Errorf("1 point on 100 cases: exit %d, want 0 with an inconclusive check\n%s%s", inv.code, inv.stdout, inv.stderr)
	}
	inv = runCLI(t, e, "gate", c100, "--baseline", b100, "--db", db, "--strict")
	if inv.code != ExitFailed || !strings.Contains(inv.stdout, "--strict fails it") {
		t.Errorf("1 point on 100 cases, --strict: exit %d, want 3\n%s%s", inv.code, inv.stdout, inv.stderr)
	}
	// The same point at 80%, 4 points allowed: one discordant case of 100
	// cannot show the drop within 4 points (one-sided p = 0.063), so it is
	// inconclusive and --strict fails it; 10 of 1,000 can (p = 6.5e-7),
	// and --strict passes it.
	b80 := writeGateRun(t, db, gateRun{caseIDs: gateIDs(100), targets: []gateFake{{name: "gpt", pass: firstK(100, 80)}}})
	c79 := writeGateRun(t, db, gateRun{caseIDs: gateIDs(100), targets: []gateFake{{name: "gpt", pass: firstK(100, 79)}}})
	if inv = runCLI(t, e, "gate", c79, "--baseline", b80, "--db", db); inv.code != ExitOK || !strings.Contains(inv.stdout, "INCONCLUSIVE primary max_drop=5%") {
		t.Errorf("1 point of 80%% on 100 cases: exit %d\n%s", inv.code, inv.stdout)
	}
	if inv = runCLI(t, e, "gate", c79, "--baseline", b80, "--db", db, "--strict"); inv.code != ExitFailed {
		t.Errorf("1 point of 80%% on 100 cases, --strict: exit %d, want 3\n%s", inv.code, inv.stdout)
	}
	b800 := writeGateRun(t, db, gateRun{caseIDs: gateIDs(1000), targets: []gateFake{{name: "gpt", pass: firstK(1000, 800)}}})
	c790 := writeGateRun(t, db, gateRun{caseIDs: gateIDs(1000), targets: []gateFake{{name: "gpt", pass: firstK(1000, 790)}}})
	if inv = runCLI(t, e, "gate", c790, "--baseline", b800, "--db", db, "--strict"); inv.code != ExitOK || !strings.Contains(inv.stdout, "PASS         primary max_drop=5%") {
		t.Errorf("1 point of 80%% on 1,000 cases, --strict: exit %d\n%s", inv.code, inv.stdout)
	}
	// A tighter rule on the command line makes that same point inconclusive.
	if inv = runCLI(t, e, "gate", c79, "--baseline", b80, "--db", db, "--rule", "primary max_drop=0.5pt"); inv.code != ExitOK || !strings.Contains(inv.stdout, "INCONCLUSIVE primary max_drop=0.5pt") {
		t.Errorf("--rule max_drop=0.5pt: exit %d\n%s", inv.code, inv.stdout)
	}
}

// A baseline file is all CI needs: exported from one store, it gates a run
// in a fresh store that has never seen the baseline run, with the same
// numbers as gating against the stored run.
func TestGateBaselineFileWithoutDatabase(t *testing.T) {
	t.Parallel()
	e := cliEnv{}
	oldDir := t.TempDir()
	oldDB := filepath.Join(oldDir, "assay.db")
	cost := func(k float64) func(int) float64 {
		return func(i int) float64 { return k * (0.001 + float64(i%5)*0.0002) }
	}
	lat := func(k float64) func(int) float64 {
		return func(i int) float64 { return k * (300 + float64(i%40)*10.25) }
	}
	baseRun := gateRun{caseIDs: gateIDs(400), tags: func(i int) map[string]string { return map[string]string{"tier": fmt.Sprint(i % 3)} },
		targets: []gateFake{
			{name: "a", pass: firstK(400, 320), cost: cost(1), latency: lat(1), loud: func(i int) bool { return i%2 == 0 }},
			{name: "b", pass: firstK(400, 300), cost: cost(2), latency: lat(1)},
		}}
	base := writeGateRun(t, oldDB, baseRun)
	file := filepath.Join(t.TempDir(), "evals", "baseline.json")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	inv := runCLI(t, e, "baseline", "export", base, "-o", file, "--db", oldDB)
	if inv.code != 0 || !strings.Contains(inv.stderr, "wrote "+file+": run "+base+", 400 cases × 2 targets × 1 epoch") {
		t.Fatalf("export: exit %d\n%s", inv.code, inv.stderr)
	}

	// The candidate: target a lost 12 points and costs 30% more; b is as before.
	candRun := baseRun
	candRun.targets = []gateFake{
		{name: "a", pass: firstK(400, 272), cost: cost(1.3), latency: lat(1.02), loud: func(i int) bool { return i%2 == 0 }},
		{name: "b", pass: firstK(400, 300), cost: cost(2), latency: lat(1)},
	}
	rules := []string{"--rule", "primary max_drop=5%", "--rule", "correct[tier=1] max_drop=2pt", "--rule", "cost_per_case max_rise=10%",
		"--rule", "latency_p95 max_rise=20% max=2s", "--rule", "loud_rate max_rise=5pt", "--rule", "loud_rate max_rise=1pt"}
	// Gated against the stored run (the old store holds both).
	cand := writeGateRun(t, oldDB, candRun)
	withRun := gateJSONOf(t, runCLI(t, e, append([]string{"gate", cand, "--baseline", base, "--db", oldDB, "--format", "json"}, rules...)...))

	// A fresh clone: a new store with only the candidate, and the old store gone.
	if err := os.RemoveAll(oldDir); err != nil {
		t.Fatal(err)
	}
	newDB := filepath.Join(t.TempDir(), "assay.db")
	writeGateRun(t, newDB, candRun)
	inv = runCLI(t, e, append([]string{"gate", "latest", "--baseline", file, "--db", newDB, "--format", "json"}, rules...)...)
	if inv.code != ExitFailed {
		t.Fatalf("gate with the file: exit %d\n%s%s", inv.code, inv.stdout, inv.stderr)
	}
	withFile := gateJSONOf(t, inv)
	if len(withFile.Targets) != 2 || len(withRun.Targets) != 2 {
		t.Fatalf("targets: %d with the file, %d with the run", len(withFile.Targets), len(withRun.Targets))
	}
	verdicts := map[string]string{}
	for ti, tf := range withFile.Targets {
		tr := withRun.Targets[ti]
		for ci, cf := range tf.Checks {
			cr := tr.Checks[ci]
			verdicts[tf.Name+" "+cf.Rule] = cf.Verdict
			same := cf.Verdict == cr.Verdict && cf.N == cr.N && closeTo(cf.Delta, cr.Delta, 1e-12) && closeTo(cf.PValue, cr.PValue, 1e-12) &&
				closeTo(cf.CI[0], cr.CI[0], 1e-12) && closeTo(cf.CI[1], cr.CI[1], 1e-12) && closeTo(cf.Baseline, cr.Baseline, 1e-12)
			if !same {
				t.Errorf("%s %s: with the file %+v, with the run %+v", tf.Name, cf.Rule, cf, cr)
			}
		}
	}
	for rule, want := range map[string]string{
		"a primary max_drop=5%":          "fail",
		"a correct[tier=1] max_drop=2pt": "fail",
		"a cost_per_case max_rise=10%":   "fail",
		"a latency_p95 max_rise=20%":     "pass",
		"a latency_p95 max=2s":           "pass",
		// The loud rate rose 6 points on a (24 cases of 400 newly loud):
		// beyond a 1-point limit (one-sided bounds [4.3, 8.3] pts), but not
		// shown beyond 5 (one-sided p = 0.18); b's did not move, shown
		// within 1 point (p = 0.022). Tango's bounds from
		// internal/gate/testdata/reference.py.
		"a loud_rate max_rise=5pt":       "inconclusive",
		"a loud_rate max_rise=1pt":       "fail",
		"b loud_rate max_rise=1pt":       "pass",
		"b primary max_drop=5%":          "pass",
		"b cost_per_case max_rise=10%":   "pass",
		"b correct[tier=1] max_drop=2pt": "pass",
	} {
		if verdicts[rule] != want {
			t.Errorf("%s: %s, want %s", rule, verdicts[rule], want)
		}
	}
	// The new store holds only the candidate.
	st, err := sqlite.Open(context.Background(), newDB)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := st.ListRuns(context.Background(), 10)
	st.Close()
	if err != nil || len(runs) != 1 {
		t.Errorf("the fresh store holds %d runs (%v)", len(runs), err)
	}
}

// closeTo compares two optional numbers to a relative tolerance.
func closeTo(a, b *float64, tol float64) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return math.Abs(*a-*b) <= tol*math.Max(math.Abs(*a), math.Abs(*b))
}

// gsm8kOne replays one recorded GSM8K configuration under the target name
// "model" (so two runs are the same target, before and after).
func gsm8kOne(t *testing.T, data, config string) string {
	t.Helper()
	solutions := filepath.Join(data, "gsm8k", "example_model_solutions.jsonl")
	path := filepath.Join(t.TempDir(), "gsm8k.yaml")
	writeFile(t, path, fmt.Sprintf(`name: gsm8k-gate
dataset:
  path: %q
  id: line
  expected: ground_truth
  expected_extract: 'A:\s*(.+)$'
  tags:
    tier: 'string(size(case.ground_truth.split("<<")) - 1)'
prompt:
  user: "Q: {{.question}}"
targets:
  - {name: model, provider: replay, replay: {path: %q, join: question, output: %s.solution}}
output:
  extract: 'A:\s*(.+)$'
scorers:
  - name: correct
    type: equals
    normalize: [trim, no_commas]
    primary: true
`, solutions, solutions, config))
	return path
}

// Recorded GSM8K: the 175B verifier as the baseline and the 6B verifier
// under the same target name as the candidate fail the default gate (from
// the baseline file, in a store without the baseline run); replaying the
// 175B outputs again passes with every output identical.
func TestGateGSM8K(t *testing.T) {
	t.Parallel()
	data := sharedData(t)
	e := cliEnv{}
	dir := t.TempDir()
	baseDB, candDB := filepath.Join(dir, "base.db"), filepath.Join(dir, "cand.db")
	baseline := filepath.Join(dir, "baseline.json")
	runJSON(t, e, "run", gsm8kOne(t, data, "175b_verification"), "--db", baseDB)
	if inv := runCLI(t, e, "baseline", "export", "latest", "--db", baseDB, "-o", baseline); inv.code != 0 {
		t.Fatalf("export: %s", inv.stderr)
	}
	cand := runJSON(t, e, "run", gsm8kOne(t, data, "6b_verification"), "--db", candDB)

	inv := runCLI(t, e, "gate", cand.RunID, "--baseline", baseline, "--db", candDB, "--format", "json")
	if inv.code != ExitFailed {
		t.Fatalf("6B against 175B: exit %d, want 3\n%s%s", inv.code, inv.stdout, inv.stderr)
	}
	g := gateJSONOf(t, inv)
	c := g.Targets[0].Checks[0]
	// Rates from the authors' is_correct: 175B verification 742/1319, 6B
	// verification 515/1319.
	if c.Rule != "primary max_drop=5%" || c.N != 1319 || !closeTo(c.Baseline, ptr(742.0/1319), 1e-9) || !closeTo(c.Candidate, ptr(515.0/1319), 1e-9) || c.Verdict != "fail" {
		t.Errorf("check %+v", c)
	}
	if g.Targets[0].IdenticalOutputs != 0 {
		t.Errorf("%d identical outputs between two different models", g.Targets[0].IdenticalOutputs)
	}

	same := runJSON(t, e, "run", gsm8kOne(t, data, "175b_verification"), "--db", candDB)
	inv = runCLI(t, e, "gate", same.RunID, "--baseline", baseline, "--db", candDB)
	if inv.code != ExitOK || !strings.Contains(inv.stdout, "outputs identical to the baseline: 1,319 of 1,319") ||
		!strings.Contains(inv.stdout, "correct 56.3% → 56.3% (±0.0 pts") {
		t.Errorf("175B against itself: exit %d\n%s%s", inv.code, inv.stdout, inv.stderr)
	}
}

func ptr(x float64) *float64 { return &x }

// Runs on different datasets are refused, naming both versions and the
// cases added and removed, unless --shared-cases.
func TestGateDatasetVersions(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "assay.db")
	e := cliEnv{}
	base := writeGateRun(t, db, gateRun{dataset: "sha256:aaaa1111", caseIDs: gateIDs(30), targets: []gateFake{{name: "gpt", pass: firstK(30, 20)}}})
	ids := append(gateIDs(28), "new-a", "new-b", "new-c")
	cand := writeGateRun(t, db, gateRun{dataset: "sha256:bbbb2222", caseIDs: ids, targets: []gateFake{{name: "gpt", pass: firstK(31, 20)}}})
	inv := runCLI(t, e, "gate", cand, "--baseline", base, "--db", db)
	if inv.code != ExitErr {
		t.Fatalf("different datasets: exit %d, want 1\n%s%s", inv.code, inv.stdout, inv.stderr)
	}
	for _, want := range []string{"sha256:aaaa1111", "sha256:bbbb2222", `3 cases added ("new-a", "new-b", "new-c")`, `2 removed ("c29", "c30")`, "--shared-cases", "the 28 cases both have"} {
		if !strings.Contains(inv.stderr, want) {
			t.Errorf("refusal lacks %q: %s", want, inv.stderr)
		}
	}
	inv = runCLI(t, e, "gate", cand, "--baseline", base, "--db", db, "--shared-cases")
	if inv.code != ExitOK || !strings.Contains(inv.stdout, "28 cases compared") || !strings.Contains(inv.stdout, "compared only the 28 cases both have (3 added, 2 removed") {
		t.Errorf("--shared-cases: exit %d\n%s%s", inv.code, inv.stdout, inv.stderr)
	}
}

// A target whose model fingerprint changed is flagged in every format.
func TestGateFlagsFingerprintChange(t *testing.T) {
	t.Parallel()
	_, url := startMock(t, mock.Options{})
	dir := t.TempDir()
	db := filepath.Join(dir, "assay.db")
	target := func(model string) string {
		return fmt.Sprintf(`  - {name: oa, provider: openai, model: %s, base_url: %s/v1}`, model, url)
	}
	a := runJSON(t, cliEnv{}, "run", echoTask(t, dir, 12, target("model-2026-01")), "--db", db)
	b := runJSON(t, cliEnv{}, "run", echoTask(t, dir, 12, target("model-2026-06")), "--db", db)
	const drift = "target \"oa\": the model fingerprint changed since the baseline (model-2026-01 (fp_mock) → model-2026-06 (fp_mock))"
	for _, format := range []string{"text", "markdown", "json", "junit"} {
		inv := runCLI(t, cliEnv{}, "gate", b.RunID, "--baseline", a.RunID, "--db", db, "--format", format)
		if inv.code != ExitOK {
			t.Errorf("%s: exit %d\n%s", format, inv.code, inv.stderr)
			continue
		}
		want := drift
		switch format {
		case "markdown":
			want = strings.NewReplacer("(", `\(`, ")", `\)`, "_", `\_`).Replace(drift)
		case "json":
			g := gateJSONOf(t, inv)
			if !g.Targets[0].FingerprintChanged {
				t.Errorf("json: fingerprint_changed is false")
			}
			want = strings.ReplaceAll(drift, `"`, `\"`)
		case "junit":
			want = strings.ReplaceAll(drift, `"`, "&#34;")
		}
		if !strings.Contains(inv.stdout, want) {
			t.Errorf("%s output does not flag the fingerprint change %q:\n%s", format, want, inv.stdout)
		}
	}
	// The same model again: no flag.
	c := runJSON(t, cliEnv{}, "run", echoTask(t, dir, 12, target("model-2026-06")), "--db", db)
	if inv := runCLI(t, cliEnv{}, "gate", c.RunID, "--baseline", b.RunID, "--db", db); strings.Contains(inv.stdout, "fingerprint changed") {
		t.Errorf("same model flagged:\n%s", inv.stdout)
	}
}

// Rules come from the spec's gate: section (stored with the run), and
// --rule flags replace them; a bad rule in a spec stops validate and run
// before any model is called.
func TestGateRulesFromSpec(t *testing.T) {
	t.Parallel()
	srv, url := startMock(t, mock.Options{})
	dir := t.TempDir()
	db := filepath.Join(dir, "assay.db")
	spec := echoTask(t, dir, 30, fmt.Sprintf(`  - {name: oa, provider: openai, model: m, base_url: %s/v1}`, url))
	// echoTask passes 2 cases in 3: a floor of 90% fails. The run against
	// itself changed nothing, but 30 cases cannot show a change within 2
	// points (at alpha 0.01 the one-sided bounds are ±15.3 pts): that rule
	// is inconclusive.
	writeFile(t, spec, readFileT(t, spec)+"gate:\n  alpha: 0.01\n  rules:\n    - {metric: correct, min: 90%}\n    - {metric: primary, max_drop: 2pt}\n")
	run := runJSON(t, cliEnv{}, "run", spec, "--db", db)
	inv := runCLI(t, cliEnv{}, "gate", run.RunID, "--baseline", run.RunID, "--db", db)
	if inv.code != ExitFailed || !strings.Contains(inv.stdout, "FAIL         correct min=90%") || !strings.Contains(inv.stdout, "INCONCLUSIVE primary max_drop=2pt") ||
		!strings.Contains(inv.stdout, "alpha 0.01") || !strings.Contains(inv.stdout, "one-sided 99% bound") {
		t.Errorf("spec rules: exit %d\n%s%s", inv.code, inv.stdout, inv.stderr)
	}
	inv = runCLI(t, cliEnv{}, "gate", run.RunID, "--baseline", run.RunID, "--db", db, "--rule", "primary max_drop=5%")
	if inv.code != ExitOK || strings.Contains(inv.stdout, "min=90%") || !strings.Contains(inv.stdout, "alpha 0.01") {
		t.Errorf("--rule replaces the spec's rules (and keeps its alpha): exit %d\n%s", inv.code, inv.stdout)
	}

	before := srv.Stats().Requests
	writeFile(t, spec, readFileT(t, spec)+"    - {metric: corect, max_drop: 0.05}\n")
	for _, cmd := range []string{"validate", "run"} {
		inv := runCLI(t, cliEnv{}, cmd, spec, "--db", db)
		if inv.code != ExitInvalid || !strings.Contains(inv.stderr, `gate.rules[2].metric "corect" is neither a scorer of the spec nor a gate metric (did you mean "correct"?`) {
			t.Errorf("%s with a bad gate rule: exit %d\n%s", cmd, inv.code, inv.stderr)
		}
	}
	if srv.Stats().Requests != before {
		t.Errorf("a model was called for a spec with a bad gate rule")
	}
}

func TestGateUsageErrors(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "assay.db")
	run := writeGateRun(t, db, gateRun{caseIDs: gateIDs(20), tags: func(i int) map[string]string { return map[string]string{"tier": fmt.Sprint(i % 2)} },
		targets: []gateFake{{name: "gpt", pass: firstK(20, 10)}}})
	bad := filepath.Join(t.TempDir(), "bad.json")
	writeFile(t, bad, `{"assay_baseline": 1, "run": {"id": "x", "epochs": 1}, "scorers": ["correct"], "primary": "correct", "epochs": 1, "cases": {"id": []}, "targets": []}`)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"gate", run}, ExitUsage, "--baseline is required"},
		{[]string{"gate", run, "--baseline", run, "--rule", "primary max_drop"}, ExitUsage, "a rule is METRIC[TAG=VALUE] SETTING=VALUE"},
		{[]string{"gate", run, "--baseline", run, "--rule", "corect max_drop=5%"}, ExitUsage, `did you mean "correct"?`},
		{[]string{"gate", run, "--baseline", run, "--rule", "primary[tier=hard] max_drop=5%"}, ExitUsage, `no case of the candidate run has tier="hard" (values seen: 0, 1)`},
		{[]string{"gate", run, "--baseline", run, "--format", "html"}, ExitUsage, "formats are text, markdown, json, junit"},
		{[]string{"gate", run, "--baseline", run, "--alpha", "0.9"}, ExitUsage, "--alpha must be above 0 and at most 0.5"},
		{[]string{"gate", run, "--baseline", run, "--targets", "gpt,claude"}, ExitUsage, `--targets: "claude" is in neither run`},
		{[]string{"gate", run, "--baseline", "no-such-thing"}, ExitErr, "--baseline no-such-thing: no such file, and no run with that ID in " + db},
		{[]string{"gate", run, "--baseline", bad}, ExitErr, bad + ": cases.id: must list at least one case"},
		{[]string{"baseline", "export", "nope"}, ExitErr, "baseline export"},
		{[]string{"baseline"}, ExitUsage, "assay baseline export RUN -o baseline.json"},
	} {
		inv := runCLI(t, cliEnv{}, append(tc.args, "--db", db)...)
		if inv.code != tc.code || !strings.Contains(inv.stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, inv.code, inv.stderr, tc.code, tc.want)
		}
	}
}

// --format junit -o writes parseable JUnit while the text report goes to
// stdout; --summary writes the Markdown summary (replacing what the file
// held); a baseline target missing from the candidate fails unless
// --targets narrows the gate.
func TestGateOutputsAndMissingTarget(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "assay.db")
	base := writeGateRun(t, db, gateRun{caseIDs: gateIDs(50), targets: []gateFake{{name: "a", pass: firstK(50, 40)}, {name: "b", pass: firstK(50, 40)}}})
	cand := writeGateRun(t, db, gateRun{caseIDs: gateIDs(50), targets: []gateFake{{name: "a", pass: firstK(50, 40)}}})
	junit, summary := filepath.Join(dir, "gate.xml"), filepath.Join(dir, "summary.md")
	writeFile(t, summary, "stale content\n")
	inv := runCLI(t, cliEnv{}, "gate", cand, "--baseline", base, "--db", db, "--format", "junit", "-o", junit, "--summary", summary)
	if inv.code != ExitFailed || !strings.Contains(inv.stdout, "target b: FAIL") || !strings.Contains(inv.stdout, "target b is in the baseline but not in the candidate run") {
		t.Fatalf("missing target: exit %d\n%s%s", inv.code, inv.stdout, inv.stderr)
	}
	var doc struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Name string `xml:"name,attr"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal([]byte(readFileT(t, junit)), &doc); err != nil || doc.Tests != 2 || doc.Failures != 1 || len(doc.Suites) != 2 || doc.Suites[1].Name != "gate: b" {
		t.Errorf("junit: %+v %v\n%s", doc, err, readFileT(t, junit))
	}
	md := readFileT(t, summary)
	if !strings.HasPrefix(md, "### ❌ assay gate: fail") || strings.Contains(md, "stale") || !strings.Contains(md, "| b | target measured | ❌ **fail** |") {
		t.Errorf("summary:\n%s", md)
	}
	inv = runCLI(t, cliEnv{}, "gate", cand, "--baseline", base, "--db", db, "--targets", "a", "--format", "markdown")
	if inv.code != ExitOK || !strings.HasPrefix(inv.stdout, "### ✅ assay gate: pass") {
		t.Errorf("--targets a: exit %d\n%s%s", inv.code, inv.stdout, inv.stderr)
	}
}
