package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/engine"
	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/provider/openai"
	"github.com/assay-eval/assay/internal/provider/registry"
	"github.com/assay-eval/assay/internal/provider/replay"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/spec"
	"github.com/assay-eval/assay/internal/store/sqlite"
)

// traceFixture stores six traces of two models and a sample "wk" of all of
// them, beside a spec with a judge, a rule on tool calls, a CEL expression
// and two scorers that cannot score a trace (an equals and a pairwise
// judge).
func traceFixture(t *testing.T) (*spec.Spec, *sqlite.DB, time.Time) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	write(t, filepath.Join(dir, "cases.jsonl"), `{"q":"x","a":"y"}`+"\n")
	path := filepath.Join(dir, "assay.yaml")
	write(t, path, `name: prod
dataset: {path: cases.jsonl, expected: a}
prompt: {user: "{{.q}}"}
targets:
  - {name: grader, provider: openai, model: judge-1}
  - {name: base, provider: replay, replay: {path: cases.jsonl, join: q, output: a}}
scorers:
  - {name: exact, type: equals, primary: true}
  - {name: helpful, type: judge, target: grader, rubric: "Is the reply helpful?"}
  - {name: vs-base, type: judge, target: grader, rubric: "Which is better?", mode: pairwise, baseline: base}
  - {name: no-tools, type: no_tool_call}
  - {name: short, type: cel, expr: "size(output) < 30"}
`)
	sp, err := spec.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(ctx, filepath.Join(dir, "assay.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })

	t0 := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	var traces []record.Trace
	for i := range 6 {
		model := "m-small"
		if i%2 == 1 {
			model = "m-large"
		}
		tr := record.Trace{
			ID: fmt.Sprintf("t%d", i), Model: model, ResponseModel: model + "-0613", Source: "otlp",
			Time: t0.Add(time.Duration(i) * time.Hour), LatencyMS: 250, InputTokens: 12, OutputTokens: 7, CostUSD: 0.002,
			System: "Be brief.", Input: []record.Message{{Role: "user", Content: fmt.Sprintf("question %d", i)}},
			Output:     []record.Message{{Role: "assistant", Content: []string{"good answer", "bad answer, and far too long to be short"}[i%3/2]}},
			Attributes: []byte(`{"route":"/faq"}`),
		}
		if i == 4 {
			tr.Output = []record.Message{{Role: "assistant", ToolCalls: []record.ToolCall{{ID: "c1", Name: "search", Arguments: `{"q":"x"}`}}}}
		}
		if i == 5 {
			tr.Output, tr.ErrorType = nil, "RateLimitError"
		}
		traces = append(traces, tr)
	}
	if _, err := st.PutTraces(ctx, traces); err != nil {
		t.Fatal(err)
	}
	smp := &record.Sample{ID: "wk", Since: t0, Until: t0.Add(24 * time.Hour), By: []string{"model", "route"}, Per: 3, Seed: 1,
		Strata: []record.SampleStratum{{Key: "model=m-large,route=/faq", Population: 9, Drawn: 3}, {Key: "model=m-small,route=/faq", Population: 3, Drawn: 3}}}
	for _, tr := range traces {
		w := 1.0
		if tr.Model == "m-large" {
			w = 3
		}
		smp.Items = append(smp.Items, record.SampleItem{TraceID: tr.ID, Stratum: "model=" + tr.Model + ",route=/faq", Weight: w})
	}
	if err := st.PutSample(ctx, smp); err != nil {
		t.Fatal(err)
	}
	return sp, st, t0
}

// judgeEngine is an engine whose judge target answers with judge; a
// candidate is never called.
func judgeEngine(st *sqlite.DB, judge provider.Func) *engine.Engine {
	reg := registry.New(registry.Factory{Info: openai.Info(), New: func(*spec.Target, registry.Env) (provider.Provider, error) {
		return judge, nil
	}}, registry.Factory{Info: replay.Info(), New: func(*spec.Target, registry.Env) (provider.Provider, error) {
		return nil, errors.New("a candidate is never called")
	}})
	return &engine.Engine{Store: st, Providers: reg, Now: time.Now, Version: "test", Getenv: func(string) string { return "test-key" }}
}

// A sample scored by a judge (through the provider registry), a rule on
// tool calls and a CEL expression, beside scorers that cannot score a
// trace: the run stored is complete, with the contract's cases, results
// and scores.
func TestScoreTraces(t *testing.T) {
	ctx := context.Background()
	sp, st, t0 := traceFixture(t)

	// The judge passes an output saying "good"; it sees the trace's
	// conversation as the case's fields.
	var mu sync.Mutex
	var judged []string
	judge := func(_ context.Context, req *provider.Request) (*provider.Response, error) {
		user := req.Messages[len(req.Messages)-1].Content
		mu.Lock()
		judged = append(judged, user)
		mu.Unlock()
		verdict := "fail"
		if strings.Contains(user, "good answer") {
			verdict = "pass"
		}
		return &provider.Response{Text: `{"verdict":"` + verdict + `","reason":"r"}`, Attempts: 1}, nil
	}
	ts, err := judgeEngine(st, judge).ScoreTraces(ctx, sp, "wk", engine.TraceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ts.Scorers, []string{"helpful", "no-tools", "short"}) || ts.Primary != "helpful" || len(ts.Skipped) != 2 ||
		!strings.HasPrefix(ts.Skipped[0], "exact: ") || !strings.HasPrefix(ts.Skipped[1], "vs-base: a pairwise judge") {
		t.Errorf("scorers %v primary %s skipped %q", ts.Scorers, ts.Primary, ts.Skipped)
	}
	run, err := st.GetRun(ctx, ts.Run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != record.StatusComplete || run.Sample != "wk" || run.DatasetHash != "sample:wk" || run.Cases != 6 || run.Epochs != 1 ||
		!slices.Equal(run.Targets, []string{"m-large", "m-small"}) || run.ScorersHash != sp.ScorersHash() || run.SpecHash != sp.Hash {
		t.Errorf("run %+v", run)
	}
	var cases []record.Case
	if err := st.Cases(ctx, run.ID, func(c record.Case) error { cases = append(cases, c); return nil }); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		want := map[string]string{"model": c.Tags["model"], "route": "/faq", "stratum": "model=" + c.Tags["model"] + ",route=/faq"}
		// The sampling weight stays in the sample: a case's weight is the
		// cost of its wrong answer, which a report adds up in dollars.
		if c.Weight != nil || c.Tags["route"] != want["route"] ||
			c.Tags["stratum"] != want["stratum"] || c.Tags["day"] == "" || string(c.Expected) != "null" && c.Expected != nil {
			t.Errorf("case %+v", c)
		}
	}
	if len(cases) != 6 {
		t.Fatalf("%d cases", len(cases))
	}
	rs := map[string]record.Result{}
	if err := st.Results(ctx, run.ID, func(r record.Result) error { rs[r.CaseID] = r; return nil }); err != nil {
		t.Fatal(err)
	}
	if r := rs["t1"]; r.Target != "m-large" || r.Raw != "good answer" || r.Model != "m-large-0613" || r.LatencyMS != 250 ||
		r.CostUSD != 0.002 || r.InputTokens != 12 || !r.CreatedAt.Equal(t0.Add(time.Hour)) {
		t.Errorf("result t1 %+v", r)
	}
	if r := rs["t5"]; r.ErrorKind != string(provider.KindRateLimited) || !strings.Contains(r.Error, "RateLimitError") {
		t.Errorf("result t5: kind %q error %q", r.ErrorKind, r.Error)
	}
	if r := rs["t4"]; len(r.ToolCalls) != 1 || r.ToolCalls[0].Name != "search" {
		t.Errorf("result t4 tool calls %+v", r.ToolCalls)
	}
	pass := map[string]bool{}
	if err := st.Scores(ctx, run.ID, 1, func(s record.Score) error {
		pass[s.CaseID+"/"+s.Scorer] = s.Pass
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]bool{
		"t0/helpful": true, "t2/helpful": false, "t3/helpful": true, "t5/helpful": false,
		"t4/no-tools": false, "t0/no-tools": true, "t0/short": true, "t2/short": false,
	} {
		if got, ok := pass[k]; !ok || got != want {
			t.Errorf("%s: pass %v (scored %v), want %v", k, got, ok, want)
		}
	}
	if _, ok := pass["t0/exact"]; ok {
		t.Error("the skipped equals scorer scored a trace")
	}
	if len(ts.Verdicts) != 18 {
		t.Errorf("%d verdicts, want 6 traces × 3 scorers", len(ts.Verdicts))
	}
	// The judge saw the conversation (system and input), never the model.
	for _, u := range judged {
		if !strings.Contains(u, "Be brief.") || !strings.Contains(u, "question") || strings.Contains(u, "m-large") {
			t.Errorf("judge prompt:\n%s", u)
			break
		}
	}
	b, _ := json.Marshal(ts.Verdicts[0])
	if len(judged) != 4 { // t4 (a tool call, no text) and t5 (failed) fail before the judge
		t.Errorf("the judge was called %d times, want 4 (%s)", len(judged), b)
	}
}

// A stop (the first Ctrl-C) hands out no more traces: what was scored is
// stored and the run is interrupted, not complete.
func TestScoreTracesStopped(t *testing.T) {
	ctx := context.Background()
	sp, st, _ := traceFixture(t)
	stop := make(chan struct{})
	var once sync.Once
	judge := func(context.Context, *provider.Request) (*provider.Response, error) {
		once.Do(func() { close(stop) })
		return &provider.Response{Text: `{"verdict":"pass","reason":"r"}`, Attempts: 1}, nil
	}
	ts, err := judgeEngine(st, judge).ScoreTraces(ctx, sp, "wk", engine.TraceOptions{Workers: 1, Stop: stop})
	if err != nil {
		t.Fatal(err)
	}
	run, err := st.GetRun(ctx, ts.Run.ID)
	if err != nil {
		t.Fatal(err)
	}
	n := len(results(t, st, run.ID))
	if run.Status != record.StatusInterrupted || n == 0 || n >= 6 || len(ts.Verdicts) != 3*n {
		t.Errorf("status %s with %d of 6 results stored and %d verdicts", run.Status, n, len(ts.Verdicts))
	}
}
