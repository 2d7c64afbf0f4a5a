package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/mock"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store/sqlite"
)

// Tests of `assay drift BASELINE_FILE RUN`: the before side read from a
// file written by `assay baseline export`, so a canary job keeps no
// database between runs.

// driftDoc runs drift --format json and returns the whole document as
// generic JSON.
func driftDoc(t *testing.T, args ...string) (map[string]any, invocation) {
	t.Helper()
	inv := runCLI(t, cliEnv{}, append([]string{"drift", "--format", "json"}, args...)...)
	if inv.code != ExitOK && inv.code != ExitFailed {
		t.Fatalf("drift %v: exit %d: %s", args, inv.code, inv.stderr)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(inv.stdout), &doc); err != nil {
		t.Fatalf("drift --format json: %v\n%s", err, inv.stdout)
	}
	return doc, inv
}

// exportBaseline writes run's baseline file into dir and returns its path.
func exportBaseline(t *testing.T, db, run, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "canary-baseline.json")
	if inv := runCLI(t, cliEnv{}, "baseline", "export", run, "-o", path, "--db", db); inv.code != ExitOK {
		t.Fatalf("baseline export %s: exit %d: %s", run, inv.code, inv.stderr)
	}
	return path
}

// fileWarning is the warning only a baseline file on a side gives (it
// holds no expected values).
const fileWarning = "a baseline file holds the cases' IDs and tags but not their expected values"

// configuredDifferently matches the warning of a target configured
// differently; from a file it cannot name the fields, only say so.
var configuredDifferently = regexp.MustCompile(`^(target .* is configured differently in the two runs) \(.*?\): `)

// sameDrift checks that drift from the baseline file equals drift from the
// run it was exported from: the same exit code, and the same JSON document
// but for the before side's description (a file has no status or end
// time, and names the file), the file-only warning, and the fields named
// in a warning of a target configured differently.
func sameDrift(t *testing.T, db, file string, runArgs, fileArgs []string) map[string]any {
	t.Helper()
	fromRun, ir := driftDoc(t, append(runArgs, "--db", db)...)
	fromFile, iff := driftDoc(t, append(fileArgs, "--db", db)...)
	if ir.code != iff.code {
		t.Errorf("exit %d from the run, %d from the file", ir.code, iff.code)
	}
	if fromFile["before_file"] != file || fromRun["before_file"] != nil {
		t.Errorf("before_file %v from the file, %v from the run; want %s and none", fromFile["before_file"], fromRun["before_file"], file)
	}
	bf, br := fromFile["before"].(map[string]any), fromRun["before"].(map[string]any)
	for _, k := range []string{"id", "spec", "spec_hash", "dataset_hash", "prompt_hash", "scorers_hash", "epochs", "started"} {
		if !reflect.DeepEqual(bf[k], br[k]) {
			t.Errorf("before.%s: %v from the file, %v from the run", k, bf[k], br[k])
		}
	}
	for _, d := range []map[string]any{fromRun, fromFile} {
		delete(d, "before")
		delete(d, "before_file")
		if ws, ok := d["warnings"].([]any); ok {
			var keep []any
			for _, w := range ws {
				if !strings.HasPrefix(w.(string), fileWarning) {
					keep = append(keep, configuredDifferently.ReplaceAllString(w.(string), "$1 (…): "))
				}
			}
			d["warnings"] = keep
			if keep == nil {
				delete(d, "warnings")
			}
		}
	}
	if !reflect.DeepEqual(fromRun, fromFile) {
		a, _ := json.MarshalIndent(fromRun, "", "  ")
		b, _ := json.MarshalIndent(fromFile, "", "  ")
		t.Errorf("drift from the file differs from drift from the run:\n--- run\n%s\n--- file\n%s", a, b)
	}
	return fromFile
}

// driftTargets decodes a generic drift document into the typed form the
// other drift tests read.
func driftTargets(t *testing.T, doc map[string]any) driftJSON {
	t.Helper()
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	var d driftJSON
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// At temperature 0 the model now answers 9 of 30 cases differently, 6 of
// them flipping pass→fail (the scenario of TestDriftFlipsAreTested); and a
// rerun of an unchanged model. From the baseline file or from the run,
// drift gives the same verdicts and numbers, and the same exit code.
func TestDriftFromBaselineFileEqualsFromRun(t *testing.T) {
	t.Parallel()
	var rules []mock.Rule
	for i := 11; i <= 19; i++ {
		rules = append(rules, mock.Rule{Match: fmt.Sprintf("word-%d", i), Reply: "changed"})
	}
	_, same := startMock(t, mock.Options{})
	_, changed := startMock(t, mock.Options{Rules: rules})
	dir := t.TempDir()
	db := filepath.Join(dir, "assay.db")
	a := runJSON(t, cliEnv{}, "run", echoTask(t, dir, 30, echoTarget(same, "0")), "--db", db, "--no-cache")
	b := runJSON(t, cliEnv{}, "run", echoTask(t, dir, 30, echoTarget(changed, "0")), "--db", db, "--no-cache")
	c := runJSON(t, cliEnv{}, "run", echoTask(t, dir, 30, echoTarget(same, "0")), "--db", db, "--no-cache")
	file := exportBaseline(t, db, a.RunID, dir)

	d := driftTargets(t, sameDrift(t, db, file, []string{a.RunID, b.RunID}, []string{file, b.RunID}))
	if len(d.Targets) != 1 || d.Targets[0].Verdict != "drifted" || d.Targets[0].Flips.PassToFail != 6 ||
		d.Targets[0].Flips.PValue != 0.03125 || d.Targets[0].Identical.Identical != 21 || !d.Targets[0].Temperature.Zero {
		t.Errorf("changed outputs from the file: %+v; want drifted, 6 pass→fail (p 0.03125), 21/30 identical, at temperature 0", d.Targets)
	}
	d = driftTargets(t, sameDrift(t, db, file, []string{a.RunID, c.RunID}, []string{file, c.RunID}))
	if len(d.Targets) != 1 || d.Targets[0].Verdict != "stable" || d.Targets[0].Identical.Identical != 30 || d.Targets[0].Flips.Flipped != 0 {
		t.Errorf("unchanged model from the file: %+v; want stable, 30/30 identical", d.Targets)
	}
	for _, f := range []string{"markdown", "text"} {
		inv := runCLI(t, cliEnv{}, "drift", file, c.RunID, "--db", db, "--format", f)
		if inv.code != ExitOK || !strings.Contains(inv.stdout, "baseline file "+file) || !strings.Contains(inv.stdout, "no drift: 1 target checked") {
			t.Errorf("%s: exit %d; want 0, naming the baseline file\n%s", f, inv.code, inv.stdout)
		}
	}
	// The other flags work from a file as from a run.
	sameDrift(t, db, file, []string{a.RunID, b.RunID, "--alpha", "0.01", "--identical-threshold", "0.6", "--target", "oa"},
		[]string{file, b.RunID, "--alpha", "0.01", "--identical-threshold", "0.6", "--target", "oa"})
}

// canaryCase, canaryResult and canaryRun make a stored run by hand, with
// everything drift reads: several targets and epochs, failed calls,
// unscored results, cached results, fingerprints, temperatures.
type canaryCase struct {
	id, expected string // expected: JSON ("x" when empty)
	tags         map[string]string
}

type canaryResult struct {
	target, caseID string
	epoch          int
	raw            string
	pass           int // -1 unscored, 0 failed, 1 passed
	fp             string
	errKind        string
	cached         bool
}

type canaryRun struct {
	id, dataset, prompt, scorers string
	started                      time.Time
	status                       string
	epochs                       int
	temps                        map[string]string // target → temperature ("" unset)
	targets                      []string
	cases                        []canaryCase
	results                      []canaryResult
}

func putCanaryRun(t *testing.T, db string, r canaryRun) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var ts []string
	for _, n := range r.targets {
		params := ""
		if temp := r.temps[n]; temp != "" {
			params = fmt.Sprintf(`,"params":{"temperature":%s}`, temp)
		}
		ts = append(ts, fmt.Sprintf(`{"name":%q,"provider":"openai","model":"m"%s}`, n, params))
	}
	cfg := `{"name":"canary","targets":[` + strings.Join(ts, ",") + `],"scorers":[{"name":"correct","type":"equals","primary":true}]}`
	run := &record.Run{ID: r.id, Spec: "canary", SpecHash: "sha256:spec", DatasetHash: r.dataset, PromptHash: r.prompt,
		ScorersHash: r.scorers, Targets: r.targets, Cases: len(r.cases), Epochs: r.epochs, Status: r.status,
		Started: r.started, Ended: r.started.Add(time.Minute), Config: []byte(cfg)}
	if err := st.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	var cases []record.Case
	for i, c := range r.cases {
		exp := c.expected
		if exp == "" {
			exp = `"x"`
		}
		cases = append(cases, record.Case{RunID: r.id, ID: c.id, Line: i + 1, Expected: []byte(exp), Tags: c.tags})
	}
	if err := st.PutCases(ctx, cases); err != nil {
		t.Fatal(err)
	}
	var results []record.Result
	var scores []record.Score
	for _, x := range r.results {
		res := record.Result{RunID: r.id, CaseID: x.caseID, Target: x.target, Epoch: x.epoch, Raw: x.raw, Model: "m-" + x.target,
			Fingerprint: x.fp, FromCache: x.cached, Attempts: 1, CreatedAt: r.started, LatencyMS: 10, CostUSD: 0.001}
		if x.errKind != "" {
			res.Raw, res.Error, res.ErrorKind, res.Model, res.Fingerprint = "", "the call failed", x.errKind, "", ""
		}
		results = append(results, res)
		if x.pass < 0 {
			continue
		}
		sc := record.Score{RunID: r.id, Scoring: 1, CaseID: x.caseID, Target: x.target, Epoch: x.epoch, Scorer: "correct",
			Primary: true, Pass: x.pass == 1, Value: float64(x.pass), Shape: "pass"}
		switch {
		case x.errKind != "":
			sc.Shape, sc.Kind = "loud", x.errKind
		case x.pass == 0:
			sc.Shape, sc.Kind = "silent", "wrong"
		}
		scores = append(scores, sc)
	}
	if err := st.PutResults(ctx, results, scores); err != nil {
		t.Fatal(err)
	}
}

// canaryResults gives every target a result per case and epoch (output
// "out <case> <target>", passing unless the case index is a multiple of
// 4), then lets mut change each.
func canaryResults(targets []string, cases []canaryCase, epochs int, mut func(r *canaryResult, i int)) []canaryResult {
	var rs []canaryResult
	for _, tg := range targets {
		for i, c := range cases {
			for e := 1; e <= epochs; e++ {
				r := canaryResult{target: tg, caseID: c.id, epoch: e, raw: "out " + c.id + " " + tg, pass: b2int(i%4 != 0), fp: "fp1"}
				if mut != nil {
					mut(&r, i)
				}
				rs = append(rs, r)
			}
		}
	}
	return rs
}

func canaryCases(n, from int) []canaryCase {
	var cs []canaryCase
	for i := from; i < from+n; i++ {
		cs = append(cs, canaryCase{id: fmt.Sprintf("c%02d", i), tags: map[string]string{"tier": fmt.Sprint(i % 3)}})
	}
	return cs
}

func b2int(b bool) int {
	if b {
		return 1
	}
	return 0
}

// On hand-made runs with everything drift reads — targets at temperature
// 0, 0.7 and unset, two epochs, failed calls (counted as not identical),
// unscored results, cached results after, a changed fingerprint, a target
// in one run only, a one-epoch incomplete run with another prompt and
// scorers, another dataset version — drift from the before run's baseline
// file equals drift from the run.
func TestDriftFromBaselineFileEqualsFromRunEverywhere(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "assay.db")
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	temps := map[string]string{"a": "0", "b": "0.7", "c": "", "d": "0"}
	r1 := canaryRun{id: "r1", dataset: "sha256:d1", prompt: "sha256:p1", scorers: "sha256:s1", started: t0,
		status: record.StatusComplete, epochs: 2, temps: temps, targets: []string{"a", "b", "c"}, cases: canaryCases(40, 0)}
	r1.results = canaryResults(r1.targets, r1.cases, 2, func(r *canaryResult, i int) {
		if r.target == "a" && i == 3 {
			r.errKind, r.pass = "timeout", 0
		}
	})
	putCanaryRun(t, db, r1)

	r2 := r1
	r2.id, r2.started, r2.targets = "r2", t0.Add(time.Hour), []string{"a", "b", "c", "d"}
	r2.results = canaryResults(r2.targets, r2.cases, 2, func(r *canaryResult, i int) {
		switch r.target {
		case "a":
			if i >= 10 && i < 20 {
				r.raw += " v2"
				if i%2 == 0 {
					r.pass = 1 - r.pass
				}
			}
			switch i {
			case 3, 7:
				r.errKind, r.pass = "server_error", 0
			case 8:
				r.pass = -1
			}
		case "b":
			r.cached = i%3 == 0
		case "c":
			r.fp = "fp2"
		}
	})
	putCanaryRun(t, db, r2)

	r3 := r1
	r3.id, r3.started, r3.epochs, r3.status = "r3", t0.Add(2*time.Hour), 1, record.StatusInterrupted
	r3.prompt, r3.scorers = "sha256:p2", "sha256:s2"
	r3.results = canaryResults(r3.targets, r3.cases, 1, nil)
	putCanaryRun(t, db, r3)

	r4 := r1
	r4.id, r4.started, r4.dataset, r4.cases = "r4", t0.Add(3*time.Hour), "sha256:d2", canaryCases(40, 3)
	r4.results = canaryResults(r4.targets, r4.cases, 2, func(r *canaryResult, i int) { r.fp = "fpX" })
	putCanaryRun(t, db, r4)

	file := exportBaseline(t, db, "r1", dir)
	for _, c := range [][]string{
		{"r2"}, {"r2", "--ignore-fingerprints"}, {"r2", "--target", "a"}, {"r2", "--alpha", "0.2", "--identical-threshold", "0.5"},
		{"r3", "--allow-partial"}, {"r1"}, {"r4", "--shared-cases"},
	} {
		t.Run(strings.Join(c, " "), func(t *testing.T) {
			doc := sameDrift(t, db, file, append([]string{"r1"}, c...), append([]string{file}, c...))
			d := driftTargets(t, doc)
			switch c[0] {
			case "r2":
				for _, tg := range d.Targets {
					if tg.Target == "a" && (tg.Identical.Errored != 4 || tg.Flips.N != 74) {
						t.Errorf("a: %d errored pairs, %d scored pairs; want 4 (cases 3 and 7, two epochs each) and 74 (80, less case 8 unscored and the 4 with a failed call)", tg.Identical.Errored, tg.Flips.N)
					}
					if tg.Target == "b" && tg.FromCache.After != 28 {
						t.Errorf("b: %d cached after, want 28", tg.FromCache.After)
					}
				}
			case "r4":
				if !strings.Contains(strings.Join(d.Warnings, "\n"), "only the 37 cases both measured are paired") {
					t.Errorf("warnings %q", d.Warnings)
				}
			}
		})
	}
	// Another dataset version is refused the same way from a file.
	fromRun := runCLI(t, cliEnv{}, "drift", "r1", "r4", "--db", db)
	fromFile := runCLI(t, cliEnv{}, "drift", file, "r4", "--db", db)
	if fromFile.code != ExitErr || fromFile.stderr != fromRun.stderr || !strings.Contains(fromFile.stderr, "pass --shared-cases to compare only the 37 cases") {
		t.Errorf("dataset refusal from the file: exit %d %q; from the run %q", fromFile.code, fromFile.stderr, fromRun.stderr)
	}
	// With shared cases the file's side says what it cannot know.
	d, _ := driftDoc(t, file, "r4", "--shared-cases", "--db", db)
	if ws := fmt.Sprint(d["warnings"]); !strings.Contains(ws, fileWarning) {
		t.Errorf("warnings %s: want the file's missing expected values named", ws)
	}

	// Two shared cases change their expected value, one its tags: from the
	// run all three count as changed, from the file (which holds tags, not
	// expected values) only the one.
	r5 := r4
	r5.id, r5.dataset, r5.cases = "r5", "sha256:d3", canaryCases(40, 3)
	r5.cases[7].expected, r5.cases[9].expected = `"y"`, `{"a":1}`
	r5.cases[11].tags = map[string]string{"tier": "new"}
	putCanaryRun(t, db, r5)
	for _, c := range []struct {
		before  string
		changed float64
		warning string
	}{{"r1", 3, "3 shared cases kept their ID but changed"}, {file, 1, "1 shared case kept their ID but changed"}} {
		d, _ := driftDoc(t, c.before, "r5", "--shared-cases", "--db", db)
		sc, _ := d["shared_cases"].(map[string]any)
		if sc["changed"] != c.changed || !strings.Contains(fmt.Sprint(d["warnings"]), c.warning) {
			t.Errorf("from %s: shared_cases %v, warnings %v; want %v changed", c.before, sc, d["warnings"], c.changed)
		}
	}
	refusal := runCLI(t, cliEnv{}, "drift", "r1", "r5", "--db", db)
	if !strings.Contains(refusal.stderr, "37 shared (3 of them with a changed expected value or tags)") {
		t.Errorf("refusal %q", refusal.stderr)
	}
}

// A baseline exported from a run the response cache served knows nothing
// of the cache: drift from the file says nothing about it (from the run it
// would), but still reports a cached candidate.
func TestDriftFromBaselineFileHasNoCache(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "assay.db")
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	base := canaryRun{id: "cached", dataset: "sha256:d", prompt: "sha256:p", scorers: "sha256:s", started: t0,
		status: record.StatusComplete, epochs: 1, temps: map[string]string{"a": "0"}, targets: []string{"a"}, cases: canaryCases(20, 0)}
	base.results = canaryResults(base.targets, base.cases, 1, func(r *canaryResult, i int) { r.cached = true })
	putCanaryRun(t, db, base)
	fresh := base
	fresh.id, fresh.started = "fresh", t0.Add(time.Hour)
	fresh.results = canaryResults(fresh.targets, fresh.cases, 1, nil)
	putCanaryRun(t, db, fresh)
	file := exportBaseline(t, db, "cached", dir)

	fromRun, _ := runDriftJSON(t, "cached", "fresh", "--db", db)
	fromFile, _ := runDriftJSON(t, file, "fresh", "--db", db)
	if fromRun.Targets[0].FromCache.Before != 20 || !strings.Contains(strings.Join(fromRun.Targets[0].Notes, " "), "response cache") {
		t.Fatalf("from the run: %+v", fromRun.Targets[0])
	}
	if fromFile.Targets[0].FromCache.Before != 0 || strings.Contains(strings.Join(fromFile.Targets[0].Notes, " "), "cache") {
		t.Errorf("from the file: cache %+v, notes %q; want nothing said of the cache", fromFile.Targets[0].FromCache, fromFile.Targets[0].Notes)
	}
	back, _ := runDriftJSON(t, file, "cached", "--db", db)
	if back.Targets[0].FromCache.After != 20 || !strings.Contains(strings.Join(back.Targets[0].Notes, " "), "20 of 20 results after and 0 before") {
		t.Errorf("a cached candidate against a file: %+v", back.Targets[0])
	}
}

// The canary job: the baseline file was exported once elsewhere; CI runs
// the canary into a fresh store that holds only that run, and checks it
// against the file (`latest` naming the run).
func TestDriftBaselineFileFreshStore(t *testing.T) {
	t.Parallel()
	var rules []mock.Rule
	for i := 11; i <= 19; i++ {
		w := fmt.Sprintf("word-%d", i)
		rules = append(rules, mock.Rule{Match: w, Reply: w + " "})
	}
	_, before := startMock(t, mock.Options{})
	_, after := startMock(t, mock.Options{Rules: rules})
	dir := t.TempDir()
	a := runJSON(t, cliEnv{}, "run", echoTask(t, dir, 30, echoTarget(before, "0")), "--db", filepath.Join(dir, "dev.db"), "--no-cache")
	file := exportBaseline(t, filepath.Join(dir, "dev.db"), a.RunID, dir)

	ci := filepath.Join(t.TempDir(), "ci.db")
	runJSON(t, cliEnv{}, "run", echoTask(t, t.TempDir(), 30, echoTarget(after, "0")), "--db", ci, "--no-cache")
	d, inv := runDriftJSON(t, file, "latest", "--db", ci)
	if inv.code != ExitOK || len(d.Targets) != 1 {
		t.Fatalf("exit %d, want 0 (uncalibrated: the identical-output rate decides nothing alone)\n%s%s", inv.code, inv.stdout, inv.stderr)
	}
	tg := d.Targets[0]
	// 21 of 30 identical at temperature 0; statsmodels
	// proportion_confint(21, 30, method="wilson") = [0.521242, 0.833353].
	if tg.Verdict != "stable" || tg.Identical.Identical != 21 || tg.Identical.N != 30 || !tg.Temperature.Zero ||
		math.Abs(tg.Identical.CI[1]-0.833352517317562) > 1e-6 || math.Abs(tg.Identical.CI[0]-0.5212421254128503) > 1e-6 ||
		!strings.Contains(strings.Join(tg.Notes, " "), "uncalibrated") {
		t.Errorf("%+v: want stable on 21/30 identical outputs at temperature 0 (uncalibrated), CI [0.521242, 0.833353]", tg)
	}
	// Calibrated by a second baseline run, itself a file (no database):
	// its 30/30 self-agreement makes 21/30 drift (z = −3.254, p = 0.000569
	// by statsmodels proportions_ztest).
	c := runJSON(t, cliEnv{}, "run", echoTask(t, dir, 30, echoTarget(before, "0")), "--db", filepath.Join(dir, "dev.db"), "--no-cache")
	calib := filepath.Join(t.TempDir(), "calibration.json")
	if inv := runCLI(t, cliEnv{}, "baseline", "export", c.RunID, "--db", filepath.Join(dir, "dev.db"), "-o", calib); inv.code != ExitOK {
		t.Fatalf("export: %d %s", inv.code, inv.stderr)
	}
	d, inv = runDriftJSON(t, file, "latest", "--db", ci, "--calibrate", calib)
	if inv.code != ExitFailed || d.Targets[0].Calibration == nil || d.Targets[0].Calibration.Identical != 30 ||
		math.Abs(d.Targets[0].Calibration.IdenticalTest.PValue-0.0005690477923374636) > 1e-12 || !strings.Contains(inv.stderr, "oa drifted") {
		t.Errorf("calibrated by a file: exit %d, %+v, stderr %q; want drifted", inv.code, d.Targets[0].Calibration, inv.stderr)
	}
}

// A baseline file written before temperatures were recorded still reads;
// drift then says the temperature is unknown, and the identical-output
// rate decides nothing.
func TestDriftOldBaselineFileTemperatureUnknown(t *testing.T) {
	t.Parallel()
	var rules []mock.Rule
	for i := 11; i <= 19; i++ {
		w := fmt.Sprintf("word-%d", i)
		rules = append(rules, mock.Rule{Match: w, Reply: w + " "})
	}
	_, before := startMock(t, mock.Options{})
	_, after := startMock(t, mock.Options{Rules: rules})
	dir := t.TempDir()
	db := filepath.Join(dir, "assay.db")
	a := runJSON(t, cliEnv{}, "run", echoTask(t, dir, 30, echoTarget(before, "0")), "--db", db, "--no-cache")
	b := runJSON(t, cliEnv{}, "run", echoTask(t, dir, 30, echoTarget(after, "0")), "--db", db, "--no-cache")
	file := exportBaseline(t, db, a.RunID, dir)

	// The file as an older assay wrote it: no temperature, no errored.
	var doc map[string]any
	if err := json.Unmarshal([]byte(readFileT(t, file)), &doc); err != nil {
		t.Fatal(err)
	}
	for _, tg := range doc["targets"].([]any) {
		m := tg.(map[string]any)
		if m["temperature"] != 0.0 {
			t.Fatalf("the exported file records temperature %v, want 0", m["temperature"])
		}
		delete(m, "temperature")
		delete(m, "errored")
	}
	old := filepath.Join(dir, "old-baseline.json")
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, old, string(out))

	d, inv := runDriftJSON(t, old, b.RunID, "--db", db)
	if inv.code != ExitOK || len(d.Targets) != 1 {
		t.Fatalf("exit %d, want 0: with the temperature unknown, 21/30 identical outputs decide nothing\n%s", inv.code, inv.stdout)
	}
	tg := d.Targets[0]
	notes := strings.Join(tg.Notes, "\n")
	if tg.Verdict != "stable" || tg.Temperature.Zero || tg.Temperature.Before != nil || tg.Temperature.After == nil || *tg.Temperature.After != 0 ||
		tg.Identical.Identical != 21 || !strings.Contains(notes, "the temperature is unknown: the baseline file "+old+" does not record it") {
		t.Errorf("%+v: want stable, temperature unknown before and 0 after, 21 identical, a note naming the file", tg)
	}
	var raw struct {
		Targets []struct {
			Temperature map[string]any `json:"temperature"`
		}
	}
	if err := json.Unmarshal([]byte(inv.stdout), &raw); err != nil || raw.Targets[0].Temperature["before_unknown"] != true {
		t.Errorf("JSON temperature %v: want before_unknown true", raw.Targets[0].Temperature)
	}
	text := runCLI(t, cliEnv{}, "drift", old, b.RunID, "--db", db)
	if !strings.Contains(text.stdout, "unknown→0") || !strings.Contains(text.stdout, "the temperature is unknown") {
		t.Errorf("text must show the temperature as unknown:\n%s", text.stdout)
	}
	// Exported by this assay, the same file knows the temperature, and
	// calibrated by a second baseline run it decides.
	c := runJSON(t, cliEnv{}, "run", echoTask(t, dir, 30, echoTarget(before, "0")), "--db", db, "--no-cache")
	if inv := runCLI(t, cliEnv{}, "drift", file, b.RunID, "--db", db, "--calibrate", c.RunID); inv.code != ExitFailed {
		t.Errorf("the current file, calibrated: exit %d, want 3\n%s", inv.code, inv.stdout)
	}
}

// What goes wrong with a baseline file is said, with the exit code of an
// error.
func TestDriftBaselineFileErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "assay.db")
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	r := canaryRun{id: "r1", dataset: "sha256:d", prompt: "sha256:p", scorers: "sha256:s", started: t0,
		status: record.StatusComplete, epochs: 1, temps: map[string]string{"a": "0"}, targets: []string{"a"}, cases: canaryCases(5, 0)}
	r.results = canaryResults(r.targets, r.cases, 1, nil)
	putCanaryRun(t, db, r)
	other := r
	other.id, other.targets, other.started = "r2", []string{"z"}, t0.Add(time.Hour)
	other.results = canaryResults(other.targets, other.cases, 1, nil)
	putCanaryRun(t, db, other)
	file := exportBaseline(t, db, "r1", dir)
	bad := filepath.Join(dir, "bad.json")
	writeFile(t, bad, `{"assay_baseline": 1, "run": {"id": "x", "epochs": 1}, "epochs": 1}`)

	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"drift", file, "nope", "--db", db}, ExitErr, "nope"},
		{[]string{"drift", dir, "r1", "--db", db}, ExitErr, "is a directory, not a baseline file"},
		{[]string{"drift", bad, "r1", "--db", db}, ExitErr, "drift: baseline: " + bad + ": scorers: must name at least one scorer"},
		{[]string{"drift", file, "r1", "--db", db, "--target", "z"}, ExitErr, `target "z" is not in both runs (r1 has a; r1 has a)`},
		{[]string{"drift", file, "r2", "--db", db}, ExitErr, "runs r1 and r2 share no target (a; z): nothing to check"},
	} {
		inv := runCLI(t, cliEnv{}, c.args...)
		if inv.code != c.code || !strings.Contains(inv.stderr, c.msg) {
			t.Errorf("%v: exit %d %q; want %d and %q", c.args, inv.code, inv.stderr, c.code, c.msg)
		}
	}
}

// Recorded GSM8K through a baseline file: the 175B verifier's replay
// exported, the 6B verifier's replay as the candidate; the same drift as
// between the two runs (TestDriftGSM8KSwappedModel counts its flips from
// the data file).
func TestDriftGSM8KFromBaselineFile(t *testing.T) {
	t.Parallel()
	db, a, b := gsm8kCanaryRuns(t)
	file := exportBaseline(t, db, a.RunID, t.TempDir())
	d := driftTargets(t, sameDrift(t, db, file, []string{a.RunID, b.RunID}, []string{file, b.RunID}))
	if len(d.Targets) != 1 || d.Targets[0].Verdict != "drifted" || d.Targets[0].Flips.N != 1319 || d.Targets[0].Flips.Direction != "worse" {
		t.Errorf("%+v: want canary drifted, worse, on 1319 questions", d.Targets)
	}
}
