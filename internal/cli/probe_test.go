package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/mock"
	"github.com/assay-eval/assay/internal/probe"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store/sqlite"
)

// probeCases is the size of the planted probe's dataset; probeNoTwin more
// cases have no twin.
const (
	probeCases  = 40
	probeNoTwin = 2
)

// probeTask writes a dataset of arithmetic questions, a twin file with a
// new question and a new answer for each (GSM1K-style), and a spec whose
// targets are the given YAML. Case i asks "Q-orig-i: what is i + 100?"
// (answer i+100); its twin asks "T-twin-i: what is i + 200?" (answer i+200).
func probeTask(t *testing.T, dir, targets string) (specPath, twinsPath string) {
	t.Helper()
	var cases, twins strings.Builder
	for i := 1; i <= probeCases+probeNoTwin; i++ {
		fmt.Fprintf(&cases, `{"id":"c%d","question":"Q-orig-%d: what is %d + 100?","answer":"%d"}`+"\n", i, i, i, i+100)
		if i <= probeCases {
			fmt.Fprintf(&twins, `{"id":"c%d","question":"T-twin-%d: what is %d + 200?","answer":"%d"}`+"\n", i, i, i, i+200)
		}
	}
	writeFile(t, filepath.Join(dir, "cases.jsonl"), cases.String())
	twinsPath = filepath.Join(dir, "twins.jsonl")
	writeFile(t, twinsPath, twins.String())
	specPath = filepath.Join(dir, "assay.yaml")
	writeFile(t, specPath, `name: arithmetic
dataset: {path: cases.jsonl, id: id, expected: answer}
prompt: {user: "{{.question}}"}
targets:
`+targets+`
output: {extract: 'A:\s*(\S+)'}
scorers:
  - {name: correct, type: equals, normalize: [trim], primary: true}
run: {timeout: 5s, retries: 2}
`)
	return specPath, twinsPath
}

// plantedRules script two targets on one mock. "planted" has memorised the
// originals: right on every original, right on one twin in four (chance for
// a four-way guess), "A: -1" otherwise. "clean" is right on 80% of the
// originals and 80% of the twins, on different cases: the same accuracy on
// both, with discordant pairs either way.
func plantedRules() []mock.Rule {
	var rules []mock.Rule
	for i := 1; i <= probeCases+probeNoTwin; i++ {
		orig := fmt.Sprintf("A: %d", i+100)
		twin := fmt.Sprintf("A: %d", i+200)
		rules = append(rules, mock.Rule{Model: "planted", Match: fmt.Sprintf("Q-orig-%d:", i), Reply: orig})
		if i%4 == 0 {
			rules = append(rules, mock.Rule{Model: "planted", Match: fmt.Sprintf("T-twin-%d:", i), Reply: twin})
		}
		if i%5 != 0 {
			rules = append(rules, mock.Rule{Model: "clean", Match: fmt.Sprintf("Q-orig-%d:", i), Reply: orig})
		}
		if i%5 != 1 {
			rules = append(rules, mock.Rule{Model: "clean", Match: fmt.Sprintf("T-twin-%d:", i), Reply: twin})
		}
	}
	return append(rules, mock.Rule{Model: "planted", Reply: "A: -1"}, mock.Rule{Model: "clean", Reply: "A: -1"})
}

func mockTarget(name, model, url string) string {
	return fmt.Sprintf("  - {name: %s, provider: openai, model: %s, base_url: %s/v1, limits: {concurrency: 4}}\n", name, model, url)
}

func probeJSON(t *testing.T, inv invocation) probe.Report {
	t.Helper()
	var r probe.Report
	if err := json.Unmarshal([]byte(inv.stdout), &r); err != nil {
		t.Fatalf("exit %d; stdout is not the JSON report: %v\n%s\nstderr: %s", inv.code, err, inv.stdout, inv.stderr)
	}
	return r
}

func findingOf(t *testing.T, r probe.Report, name string) probe.Finding {
	t.Helper()
	for _, f := range r.Targets {
		if f.Target == name {
			return f
		}
	}
	t.Fatalf("no finding for target %s in %+v", name, r.Targets)
	return probe.Finding{}
}

// A planted contaminated target (right on every original, at chance on the
// twins) is flagged and the probe exits 3; a clean target (the same
// accuracy on both) is not. End to end through the CLI: openai-provider
// targets on a started mock, a twin file joined by ID, two stored runs that
// `assay report` reads, and a second probe that reuses the stored twins.
func TestProbeFlagsPlantedContamination(t *testing.T) {
	t.Parallel()
	_, url := startMock(t, mock.Options{Rules: plantedRules()})
	dir := t.TempDir()
	specPath, twinsPath := probeTask(t, dir, mockTarget("planted", "planted", url)+mockTarget("clean", "clean", url))
	e := cliEnv{env: map[string]string{"ASSAY_DB": filepath.Join(dir, "assay.db")}}

	inv := runCLI(t, e, "probe", "contamination", specPath, "--twins", twinsPath, "--format", "json")
	if inv.code != ExitFailed {
		t.Fatalf("exit %d, want %d (a target flagged)\nstdout %s\nstderr %s", inv.code, ExitFailed, inv.stdout, inv.stderr)
	}
	r := probeJSON(t, inv)
	if r.Cases.Dataset != probeCases+probeNoTwin || r.Cases.Paired != probeCases || r.Cases.NoTwin != probeNoTwin {
		t.Errorf("cases %+v, want %d read, %d paired, %d without a twin", r.Cases, probeCases+probeNoTwin, probeCases, probeNoTwin)
	}
	if strings.Join(r.Cases.NoTwinIDs, ",") != "c41,c42" {
		t.Errorf("cases without a twin: %v, want c41, c42", r.Cases.NoTwinIDs)
	}
	planted, clean := findingOf(t, r, "planted"), findingOf(t, r, "clean")
	if planted.Verdict != probe.VerdictContaminated || planted.Original.Passed != 40 || planted.Twin.Passed != 10 || planted.N != 40 {
		t.Errorf("planted: %+v, want contaminated? with 40/40 on originals and 10/40 on twins", planted)
	}
	if clean.Verdict != probe.VerdictClean || clean.Original.Passed != 32 || clean.Twin.Passed != 32 || clean.OriginalOnly != 8 || clean.TwinOnly != 8 {
		t.Errorf("clean: %+v, want clean with 32/40 on both and 8 discordant cases each way", clean)
	}
	if strings.Join(r.Flagged, ",") != "planted" {
		t.Errorf("flagged %v, want [planted]", r.Flagged)
	}
	if r.Method.Adjustment != "holm" || r.Method.Family != 2 || r.Method.CILevel != 0.9 {
		t.Errorf("method %+v", r.Method)
	}
	if !strings.HasPrefix(r.TwinSet.ID, "sha256:") || r.TwinSet.Added != probeCases || r.TwinSet.Stored != 0 {
		t.Errorf("twin set %+v, want a sha256 ID with %d twins added", r.TwinSet, probeCases)
	}

	// Each run is an ordinary run: assay report reads it. The twins' run
	// scored the twins against their own answers.
	for _, c := range []struct {
		run        string
		passed     int
		datasetHas string
	}{{r.Runs.Original, 40, "sha256:"}, {r.Runs.Twins, 10, r.TwinSet.ID}} {
		rinv := runCLI(t, e, "report", c.run, "--format", "json")
		if rinv.code != 0 {
			t.Fatalf("report %s: exit %d: %s", c.run, rinv.code, rinv.stderr)
		}
		var rep struct {
			Run struct {
				DatasetHash string `json:"dataset_hash"`
				Experiment  string `json:"experiment"`
				Cases       int    `json:"cases"`
			} `json:"run"`
			Targets []struct {
				Name    string `json:"name"`
				Primary struct {
					Passed, N int
				} `json:"primary"`
			} `json:"targets"`
		}
		if err := json.Unmarshal([]byte(rinv.stdout), &rep); err != nil {
			t.Fatal(err)
		}
		if rep.Run.Cases != probeCases || !strings.HasPrefix(rep.Run.DatasetHash, c.datasetHas) || rep.Run.Experiment != "" {
			t.Errorf("run %s: %+v", c.run, rep.Run)
		}
		for _, tg := range rep.Targets {
			if tg.Name == "planted" && (tg.Primary.Passed != c.passed || tg.Primary.N != probeCases) {
				t.Errorf("report of run %s: planted passed %d/%d, want %d/%d", c.run, tg.Primary.Passed, tg.Primary.N, c.passed, probeCases)
			}
		}
	}
	if rinv := runCLI(t, e, "rescore", r.Runs.Twins); rinv.code == 0 {
		t.Errorf("rescore of the twins' run succeeded; it must refuse (the spec's dataset holds the originals, not the twins)")
	}

	// The same probe again reads the stored twins (none added) and comes to
	// the same verdicts; the text format names both runs and the verdicts.
	inv = runCLI(t, e, "probe", "contamination", specPath, "--twins", twinsPath)
	if inv.code != ExitFailed {
		t.Fatalf("second probe: exit %d\n%s", inv.code, inv.stderr)
	}
	for _, want := range []string{r.TwinSet.ID + " (file:" + twinsPath + "; 40 twins stored before, 0 added)", "contaminated?", "clean", `cases without a twin: "c41", "c42"`, "Holm-adjusted"} {
		if !strings.Contains(inv.stdout, want) {
			t.Errorf("text report lacks %q:\n%s", want, inv.stdout)
		}
	}
	if !strings.Contains(inv.stderr, "flagged contaminated? (planted)") {
		t.Errorf("stderr does not say which target was flagged: %s", inv.stderr)
	}

	// Only the clean target: exit 0.
	inv = runCLI(t, e, "probe", "contamination", specPath, "--twins", twinsPath, "--targets", "clean", "--format", "json")
	if inv.code != 0 {
		t.Fatalf("clean target alone: exit %d, want 0\n%s", inv.code, inv.stderr)
	}
	if r := probeJSON(t, inv); len(r.Flagged) != 0 || len(r.Targets) != 1 {
		t.Errorf("clean alone: %+v", r)
	}
}

// countingMock starts a mock whose requests the test counts.
func countingMock(t *testing.T, rules []mock.Rule) (*mock.Server, string) {
	t.Helper()
	return startMock(t, mock.Options{Rules: rules})
}

// The rewriter path: a mock rewriter paraphrases each case with a canned
// reply; the twins are stored under a set ID; unusable rewrites (not JSON,
// empty, unchanged) are counted, reported and left out; and probing again
// calls the rewriter only for the cases it failed on — even with the
// response cache bypassed — then not at all once --twins-set names the set.
func TestProbeRewriterStoresTwins(t *testing.T) {
	t.Parallel()
	const n = 12
	var rw []mock.Rule
	for i := 1; i <= n; i++ {
		q := fmt.Sprintf("Q-orig-%d: what is %d + 100?", i, i)
		var reply string
		switch i {
		case 3:
			reply = "Sorry, I cannot help with that."
		case 5:
			reply = `{"question": "   "}`
		case 7:
			reply = fmt.Sprintf(`{"question": %q}`, strings.ToUpper(q))
		default:
			reply = fmt.Sprintf("```json\n{\"question\": \"P-para-%d: add one hundred to %d.\"}\n```", i, i)
		}
		rw = append(rw, mock.Rule{Match: q, Reply: reply})
	}
	rewriter, rurl := countingMock(t, rw)
	var cand []mock.Rule
	for i := 1; i <= n; i++ {
		cand = append(cand, mock.Rule{Match: fmt.Sprintf("P-para-%d:", i), Reply: fmt.Sprintf("A: %d", i+100)})
		cand = append(cand, mock.Rule{Match: fmt.Sprintf("Q-orig-%d:", i), Reply: fmt.Sprintf("A: %d", i+100)})
	}
	_, curl := startMock(t, mock.Options{Rules: cand})

	dir := t.TempDir()
	var cases strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&cases, `{"id":"c%d","question":"Q-orig-%d: what is %d + 100?","answer":"%d"}`+"\n", i, i, i, i+100)
	}
	writeFile(t, filepath.Join(dir, "cases.jsonl"), cases.String())
	specPath := filepath.Join(dir, "assay.yaml")
	writeFile(t, specPath, `name: paraphrase
dataset: {path: cases.jsonl, id: id, expected: answer}
prompt: {user: "{{.question}}"}
targets:
`+mockTarget("para", "para", rurl)+mockTarget("cand", "cand", curl)+`output: {extract: 'A:\s*(\S+)'}
scorers:
  - {name: correct, type: equals}
run: {timeout: 5s, retries: 0}
`)
	db := filepath.Join(dir, "assay.db")
	e := cliEnv{env: map[string]string{"ASSAY_DB": db}}

	inv := runCLI(t, e, "probe", "contamination", specPath, "--rewriter", "para", "--format", "json")
	if inv.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", inv.code, inv.stdout, inv.stderr)
	}
	r := probeJSON(t, inv)
	if got := rewriter.Stats().Requests; got != n {
		t.Errorf("first probe: the rewriter got %d requests, want %d (one per case)", got, n)
	}
	if r.TwinSet.Source != "rewriter:para" || r.TwinSet.Added != n-3 || r.TwinSet.RewritePromptHash != probe.RewritePromptHash() || strings.Join(r.TwinSet.Fields, ",") != "question" {
		t.Errorf("twin set %+v", r.TwinSet)
	}
	if r.Cases.Paired != n-3 || r.Cases.RewriteFailed != 3 || r.Cases.NoTwin != 0 {
		t.Errorf("cases %+v, want %d paired and 3 failed rewrites", r.Cases, n-3)
	}
	want := map[string]string{"c3": probe.FailUnparseable, "c5": probe.FailEmpty, "c7": probe.FailUnchanged}
	for _, f := range r.Cases.RewriteFailures {
		if want[f.CaseID] != f.Kind {
			t.Errorf("failure %+v, want kind %q", f, want[f.CaseID])
		}
		delete(want, f.CaseID)
	}
	if len(want) != 0 {
		t.Errorf("failures not reported: %v", want)
	}
	if len(r.Targets) != 1 || r.Targets[0].Target != "cand" {
		t.Fatalf("probed %+v, want only cand (the rewriter is not a candidate by default)", r.Targets)
	}
	if f := r.Targets[0]; f.N != n-3 || f.Original.Passed != n-3 || f.Twin.Passed != n-3 || f.Verdict != probe.VerdictClean {
		t.Errorf("cand: %+v, want %d/%d on both, clean", f, n-3, n-3)
	}

	// The twins are in the store, with the paraphrase in place of the
	// question and the other fields kept.
	ctx := context.Background()
	st, err := sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	var stored []*probe.Twin
	err = st.Twins(ctx, r.TwinSet.ID, func(rec record.Twin) error {
		if rec.Source != "rewriter:para" {
			t.Errorf("twin source %q", rec.Source)
		}
		tw, err := probe.FromRecord(rec)
		if err != nil {
			return err
		}
		stored = append(stored, tw)
		return nil
	})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(stored) != n-3 {
		t.Fatalf("%d twins stored, want %d", len(stored), n-3)
	}
	for _, tw := range stored {
		q, _ := tw.Vars["question"].(string)
		if !strings.HasPrefix(q, "P-para-") || tw.Vars["answer"] == nil || tw.Vars["id"] != tw.CaseID || tw.OwnExpected {
			t.Errorf("stored twin %+v: want the paraphrase, the original's other fields, and the original's expected value", tw)
		}
	}

	// Again, with the response cache bypassed: only the 3 failed cases are
	// asked again; the stored twins are not re-paraphrased.
	before := rewriter.Stats().Requests
	inv = runCLI(t, e, "probe", "contamination", specPath, "--rewriter", "para", "--format", "json", "--no-cache")
	if inv.code != 0 {
		t.Fatalf("second probe: exit %d\n%s", inv.code, inv.stderr)
	}
	r2 := probeJSON(t, inv)
	if got := rewriter.Stats().Requests - before; got != 3 {
		t.Errorf("second probe: the rewriter got %d requests, want 3 (the failed cases only)", got)
	}
	if r2.TwinSet.ID != r.TwinSet.ID || r2.TwinSet.Stored != n-3 || r2.TwinSet.Added != 0 {
		t.Errorf("second probe: twin set %+v, want the same set with %d stored and none added", r2.TwinSet, n-3)
	}

	// Reusing the set by ID calls no rewriter at all.
	before = rewriter.Stats().Requests
	inv = runCLI(t, e, "probe", "contamination", specPath, "--twins-set", r.TwinSet.ID, "--targets", "cand", "--format", "json")
	if inv.code != 0 {
		t.Fatalf("--twins-set: exit %d\n%s", inv.code, inv.stderr)
	}
	if got := rewriter.Stats().Requests - before; got != 0 {
		t.Errorf("--twins-set: the rewriter got %d requests, want 0", got)
	}
	if r3 := probeJSON(t, inv); r3.Cases.Paired != n-3 || r3.Cases.NoTwin != 3 || r3.TwinSet.Source != "stored" {
		t.Errorf("--twins-set: %+v / %+v", r3.Cases, r3.TwinSet)
	}

	// A stored set is never paired with another version of the dataset:
	// the same case IDs may name other questions there.
	writeFile(t, filepath.Join(dir, "cases.jsonl"), strings.Replace(cases.String(), "what is 1 + 100?", "what is 1 + 1000?", 1))
	inv = runCLI(t, e, "probe", "contamination", specPath, "--twins-set", r.TwinSet.ID, "--targets", "cand")
	if inv.code != ExitErr || !strings.Contains(inv.stderr, "was made for another version of the dataset") {
		t.Errorf("--twins-set on a changed dataset: exit %d\n%s", inv.code, inv.stderr)
	}
}
