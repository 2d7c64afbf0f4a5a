package cli

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/promote"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store/sqlite"
)

// promoteTraces are production traces of one day: failures to promote, a
// repeat within the batch, repeats of dataset cases (exact and near), a
// conversation with a system prompt, one without a user message, and two
// that people labeled against the scorer.
func promoteTraces() []record.Trace {
	t0 := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	user := func(s string) []record.Message { return []record.Message{{Role: "user", Content: s}} }
	bad, good := "Sure! not json", `{"ok": true}`
	ts := []struct {
		id    string
		input []record.Message
		out   string
		sys   string
	}{
		{"t01", user("How do I reset my password?"), good, ""},
		{"t02", user("Cancel my subscription please"), bad, ""},
		{"t03", user("cancel my subscription, PLEASE!"), bad, ""},                   // t02 normalised
		{"t04", user("What is the capital of France?"), bad, ""},                    // dataset line 1
		{"t05", user("Please tell me the current capital city of France"), bad, ""}, // near line 2
		{"t06", []record.Message{{Role: "user", Content: "I have a billing problem"}, {Role: "assistant", Content: "What is it?"},
			{Role: "user", Content: "I was charged twice in March </script><script>alert(1)</script>"}}, bad, "You are support."},
		{"t07", []record.Message{{Role: "assistant", Content: "Hello?"}}, bad, ""},
		{"t08", user("Write a poem about the sea"), good, ""}, // labeled fail
		{"t09", user("Translate hello into German"), bad, ""}, // labeled pass
	}
	var out []record.Trace
	for i, x := range ts {
		out = append(out, record.Trace{ID: x.id, TraceID: x.id, Source: "otlp", Time: t0.Add(time.Duration(i) * time.Minute),
			Model: "m1", System: x.sys, Input: x.input, Output: []record.Message{{Role: "assistant", Content: x.out}}})
	}
	return out
}

// promoteTask writes the spec promote's tests score promoteTraces with, in
// dir: two cases (one near-duplicate of a trace), a replay target, an
// is_json scorer every trace fails; it returns the dataset's and the
// spec's paths.
func promoteTask(t *testing.T, dir string) (data, spec string) {
	t.Helper()
	data = filepath.Join(dir, "cases.jsonl")
	writeFile(t, data, `{"id":"c1","input":"What is the capital of France?","system":"","answer":"Paris"}`+"\n"+
		`{"id":"c2","input":"Please tell me the current capital city of France quickly","system":"","answer":"Paris"}`+"\n")
	spec = filepath.Join(dir, "assay.yaml")
	writeFile(t, spec, `name: support
dataset: {path: cases.jsonl, id: id, expected: answer}
prompt: {system: "{{.system}}", user: "{{.input}}"}
targets:
  - {name: m1, provider: replay, replay: {path: cases.jsonl, join: input, output: answer}}
scorers:
  - {name: json, type: is_json, primary: true}
traces:
  promote: {messages: history, context: system}
`)
	return data, spec
}

// The must-show for promote: a sample of traces scored, its failures (and
// with --labels, people's) promoted into the dataset as cases without an
// expected value, with their provenance; duplicates of the dataset and of
// the batch skipped naming what they repeat; the dataset's version
// changes; promoting again adds nothing.
func TestPromoteEndToEnd(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "assay.db")
	ctx := context.Background()
	st, err := sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	traces := promoteTraces()
	if _, err := st.PutTraces(ctx, traces); err != nil {
		t.Fatal(err)
	}
	st.Close()
	data, spec := promoteTask(t, dir)
	if inv := runCLI(t, cliEnv{}, "sample", "--since", "2026-11-24", "--until", "2026-11-25", "--size", "50", "--seed", "1", "--name", "day", "--db", db); inv.code != 0 {
		t.Fatalf("sample: %s", inv.stderr)
	}
	inv := runCLI(t, cliEnv{}, "score-traces", spec, "--sample", "day", "--db", db, "--format", "json")
	if inv.code != 0 {
		t.Fatalf("score-traces: %s", inv.stderr)
	}
	var sc struct {
		RunID string `json:"run_id"`
	}
	json.Unmarshal([]byte(inv.stdout), &sc)

	// People's labels: t08 (passed json) is bad, t09 (failed json) fine.
	st, err = sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	label := func(id, verdict, reason string) record.Label {
		r := &record.Result{Raw: `{"ok": true}`}
		return record.Label{RunID: sc.RunID, CaseID: id, Target: "m1", Epoch: 1, OutputHash: record.LabelOutputHash(r), Labeler: "ana",
			Verdict: verdict, Reason: reason, Created: now}
	}
	if _, err := st.PutLabels(ctx, []record.Label{label("t08", "fail", "rhymes badly"), label("t09", "pass", "")}); err != nil {
		t.Fatal(err)
	}
	st.Close()

	before := readFileT(t, data)
	inv = runCLI(t, cliEnv{}, "promote", spec, "--dry-run", "--db", db, "--format", "json")
	if inv.code != 0 {
		t.Fatalf("promote --dry-run: exit %d\n%s", inv.code, inv.stderr)
	}
	var dry promote.Result
	if err := json.Unmarshal([]byte(inv.stdout), &dry); err != nil {
		t.Fatal(err)
	}
	if readFileT(t, data) != before || dry.Before != dry.After {
		t.Error("a dry run wrote the dataset")
	}
	if got := addedTraces(dry); !slices.Equal(got, []string{"t02", "t06", "t09"}) {
		t.Errorf("dry run adds %v, want t02 t06 t09 (the json failures that are new; without --labels people's verdicts are not read)", got)
	}

	inv = runCLI(t, cliEnv{}, "promote", spec, "--labels", "--db", db, "--format", "json")
	if inv.code != 0 {
		t.Fatalf("promote: exit %d\n%s", inv.code, inv.stderr)
	}
	var res promote.Result
	if err := json.Unmarshal([]byte(inv.stdout), &res); err != nil {
		t.Fatal(err)
	}
	if got := addedTraces(res); !slices.Equal(got, []string{"t02", "t06", "t08"}) {
		t.Errorf("added %v, want t02 t06 t08", got)
	}
	skips := map[string]promote.Skip{}
	for _, s := range res.Skipped {
		skips[s.TraceID] = s
	}
	check := func(id, why string, ok func(promote.Skip) bool) {
		t.Helper()
		if s, found := skips[id]; !found || s.Why != why || !ok(s) {
			t.Errorf("%s: skipped %+v, want %s", id, s, why)
		}
	}
	check("t03", promote.SkipExact, func(s promote.Skip) bool { return s.OfTrace == "t02" })
	check("t04", promote.SkipExact, func(s promote.Skip) bool { return s.Of != nil && s.Of.ID == "c1" && s.Of.Line == 1 })
	check("t05", promote.SkipNear, func(s promote.Skip) bool { return s.Of != nil && s.Of.ID == "c2" && s.Similarity == 0.9 })
	check("t07", promote.SkipNoInput, func(promote.Skip) bool { return true })
	check("t09", promote.SkipLabelPass, func(promote.Skip) bool { return true })
	if len(res.Skipped) != 5 || res.Before == res.After || res.Dataset != data {
		t.Errorf("skipped %d, file %s, version %s → %s", len(res.Skipped), res.Dataset, res.Before, res.After)
	}

	// The file: the two cases it had, then the three added, each with its
	// provenance and no expected value.
	lines := strings.Split(strings.TrimSpace(readFileT(t, data)), "\n")
	if len(lines) != 5 || strings.Join(lines[:2], "\n")+"\n" != before {
		t.Fatalf("the dataset:\n%s", strings.Join(lines, "\n"))
	}
	byTrace := map[string]map[string]any{}
	for _, l := range lines[2:] {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		if _, has := m["answer"]; has {
			t.Errorf("a promoted case has an expected value: %s", l)
		}
		if m["trace_model"] != "m1" || !strings.HasPrefix(m["promoted_from"].(string), "run "+sc.RunID) || m["id"] == nil {
			t.Errorf("provenance: %s", l)
		}
		byTrace[m["trace_id"].(string)] = m
	}
	t06 := byTrace["t06"]
	if t06["input"] != "I was charged twice in March </script><script>alert(1)</script>" || t06["system"] != "You are support." ||
		t06["trace_time"] != "2026-11-24T09:05:00Z" || t06["label_reason"] == "" {
		t.Errorf("t06: %v", t06)
	}
	if h, ok := t06["history"].([]any); !ok || len(h) != 3 || h[1].(map[string]any)["content"] != "What is it?" {
		t.Errorf("t06's conversation: %v", t06["history"])
	}
	if byTrace["t08"]["label_reason"] != "rhymes badly" || byTrace["t08"]["promoted_from"] != "run "+sc.RunID+", label by ana" {
		t.Errorf("t08: %v", byTrace["t08"])
	}
	// The dataset still reads, now with five cases.
	inv = runCLI(t, cliEnv{}, "validate", spec, "--format", "json")
	if inv.code != 0 || !strings.Contains(inv.stdout, `"cases": 5`) {
		t.Errorf("validate after promote: exit %d\n%s%s", inv.code, inv.stdout, inv.stderr)
	}

	// Again: everything is already there.
	after := readFileT(t, data)
	inv = runCLI(t, cliEnv{}, "promote", spec, "--labels", "--db", db)
	if inv.code != 0 || readFileT(t, data) != after {
		t.Fatalf("promote again: exit %d, file changed: %v\n%s", inv.code, readFileT(t, data) != after, inv.stderr)
	}
	for _, want := range []string{"added 0 case(s)", "trace t02: already promoted of case", "trace t05: near-duplicate of case \"c2\" (line 2), similarity 0.9"} {
		if !strings.Contains(inv.stdout, want) {
			t.Errorf("promote's summary lacks %q:\n%s", want, inv.stdout)
		}
	}

	// An evaluation run is not a score-traces run; an unknown scorer is
	// named with the run's.
	inv = runCLI(t, cliEnv{}, "promote", spec, "--scorer", "nope", "--db", db)
	if inv.code != ExitUsage || !strings.Contains(inv.stderr, `scorer "nope" has no verdicts`) || !strings.Contains(inv.stderr, "json") {
		t.Errorf("--scorer nope: exit %d, %s", inv.code, inv.stderr)
	}
	if inv := runCLI(t, cliEnv{}, "run", spec, "--limit", "2", "--db", db); inv.code != 0 {
		t.Fatalf("run: %s", inv.stderr)
	}
	inv = runCLI(t, cliEnv{}, "promote", spec, "--run", "latest", "--db", db, "--format", "json")
	if inv.code != 0 {
		t.Errorf("latest is the newest score-traces run, not the evaluation run: exit %d, %s", inv.code, inv.stderr)
	}
	runs := runCLI(t, cliEnv{}, "runs", "--json", "--db", db)
	var rs []struct {
		ID     string `json:"id"`
		Sample string `json:"sample"`
	}
	json.Unmarshal([]byte(runs.stdout), &rs)
	for _, r := range rs {
		if r.Sample == "" {
			inv = runCLI(t, cliEnv{}, "promote", spec, "--run", r.ID, "--db", db)
			if inv.code != ExitUsage || !strings.Contains(inv.stderr, "not a score-traces run") {
				t.Errorf("an evaluation run: exit %d, %s", inv.code, inv.stderr)
			}
		}
	}
}

func addedTraces(r promote.Result) []string {
	var ids []string
	for _, a := range r.Added {
		ids = append(ids, a.TraceID)
	}
	return ids
}
