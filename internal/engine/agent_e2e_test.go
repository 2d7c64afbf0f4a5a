package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/engine"
	"github.com/assay-eval/assay/internal/mock"
	"github.com/assay-eval/assay/internal/provider/builtin"
	"github.com/assay-eval/assay/internal/provider/httpcall/httpcalltest"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store/sqlite"
	"github.com/assay-eval/assay/internal/task"
	"github.com/assay-eval/assay/internal/toolrun"
)

// agentSpec writes an agent spec whose two tools are answered by exec
// handlers (shell scripts reading the call on stdin), n cases, the mock's
// server at url, and agentExtra appended to the agent: section.
func agentSpec(t *testing.T, dir, url string, n int, agent string) string {
	t.Helper()
	var cases strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&cases, `{"id": "o%d", "ask": "Refund order %d", "plan": ["lookup_order", "refund"]}`+"\n", i, i)
	}
	write(t, filepath.Join(dir, "cases.jsonl"), cases.String())
	// lookup echoes the call it was given (one line of JSON on stdin);
	// refund says what it refunded, from its arguments.
	write(t, filepath.Join(dir, "lookup.sh"), "read -r call\nprintf 'found: %s\\n' \"$call\"\n")
	write(t, filepath.Join(dir, "refund.sh"), "read -r call\ncase \"$call\" in *'\"id\":'*) echo refunded;; *) echo 'no id' ;; esac\n")
	write(t, filepath.Join(dir, "hang.sh"), "read -r call\necho started\nexec sleep 60\n")
	path := filepath.Join(dir, "assay.yaml")
	write(t, path, `name: agent
dataset: {path: cases.jsonl, id: id, expected: plan}
prompt: {user: "{{.ask}}"}
tools:
  - {name: lookup_order, parameters: {type: object, properties: {id: {type: integer}}, required: [id]}}
  - {name: refund, parameters: {type: object, properties: {id: {type: integer}}, required: [id]}}
agent:
`+agent+`targets:
  - {name: m, provider: openai, model: m, base_url: "`+url+`/v1", limits: {concurrency: 4}}
scorers:
  - {name: calls, type: tool_calls, match: in_order}
  - {name: turns, type: cel, expr: 'size(trajectory) == 3 && trajectory[0].results[0].content.startsWith("found: ") && raw == "refunded"'}
run: {timeout: 10s, retries: 0}
`)
	return path
}

func runAgent(t *testing.T, path string) (*sqlite.DB, *engine.Run, engine.Summary, time.Duration) {
	t.Helper()
	tk, err := task.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(context.Background(), filepath.Join(filepath.Dir(path), "assay.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	e := &engine.Engine{Store: st, Providers: builtin.Registry(), Now: time.Now, Version: "test", Getenv: func(string) string { return "" }}
	ctx := context.Background()
	run, err := e.Start(ctx, tk, engine.StartOptions{Targets: []string{"m"}, NoCache: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(run.Close)
	start := time.Now()
	sum, err := run.Execute(ctx, engine.ExecuteOptions{})
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run.Finish(ctx); err != nil {
		t.Fatal(err)
	}
	return st, run, sum, took
}

// scripted mock turns: the model looks the order up, then refunds it, then
// answers with the last tool result.
func agentMock(t *testing.T, turns int) string {
	return httpcalltest.StartMock(t, mock.Options{ToolTurns: turns, Rules: []mock.Rule{
		{Match: "Refund order", Turn: 1, ToolCalls: []mock.ToolCall{{Name: "lookup_order", Arguments: `{"id": 7}`}}},
		{Match: "Refund order", Turn: 2, ToolCalls: []mock.ToolCall{{Name: "refund", Arguments: `{"id": 7}`}}},
	}})
}

// The agent Must-show through the engine: exec tool handlers
// against assay mock; every result's trajectory stored whole (each turn's
// calls and the handlers' results, the last reply the output), scored by
// tool_calls over every turn and by CEL over the trajectory.
func TestAgentLoopWithExecHandlers(t *testing.T) {
	dir := t.TempDir()
	path := agentSpec(t, dir, agentMock(t, 2), 6, `  max_turns: 5
  tools:
    lookup_order: {exec: [sh, lookup.sh], timeout: 10s}
    refund: {exec: [sh, refund.sh], timeout: 10s}
`)
	st, run, sum, _ := runAgent(t, path)
	if sum.Stored != 6 || sum.Errors != 0 {
		t.Fatalf("summary %+v", sum)
	}
	rs := results(t, st, run.Record.ID)
	for _, r := range rs {
		if len(r.Turns) != 3 || r.Raw != "refunded" || r.ErrorKind != "" {
			t.Fatalf("%s: %d turns, raw %q, error %s %s", r.CaseID, len(r.Turns), r.Raw, r.ErrorKind, r.Error)
		}
		t1, t2, t3 := r.Turns[0], r.Turns[1], r.Turns[2]
		if len(t1.ToolCalls) != 1 || t1.ToolCalls[0].Name != "lookup_order" || len(t1.Results) != 1 || t1.Results[0].CallID != t1.ToolCalls[0].ID {
			t.Errorf("%s: turn 1 %+v", r.CaseID, t1)
		}
		// The handler got the call on stdin: the tool, its arguments, the
		// case, the turn — and the case's fields without the answer.
		got := t1.Results[0].Content
		for _, want := range []string{`found: {`, `"tool":"lookup_order"`, `"arguments":{"id":7}`, `"case_id":"` + r.CaseID + `"`, `"turn":1`, `"ask":"Refund order`} {
			if !strings.Contains(got, want) {
				t.Errorf("%s: lookup's result %q lacks %q", r.CaseID, got, want)
			}
		}
		if strings.Contains(got, "plan") {
			t.Errorf("%s: the handler was given the expected answer: %q", r.CaseID, got)
		}
		if len(t2.ToolCalls) != 1 || t2.ToolCalls[0].Name != "refund" || t2.Results[0].Content != "refunded" || t3.Text != "refunded" || len(t3.ToolCalls) != 0 {
			t.Errorf("%s: turns 2 and 3 %+v %+v", r.CaseID, t2, t3)
		}
		if len(r.ToolCalls) != 2 || r.InputTokens != t1.InputTokens+t2.InputTokens+t3.InputTokens || r.InputTokens == 0 {
			t.Errorf("%s: calls %d, tokens %d vs turns %d+%d+%d", r.CaseID, len(r.ToolCalls), r.InputTokens, t1.InputTokens, t2.InputTokens, t3.InputTokens)
		}
	}
	passes := map[string]int{}
	err := st.Scores(context.Background(), run.Record.ID, 1, func(s record.Score) error {
		if s.Pass {
			passes[s.Scorer]++
		} else {
			t.Errorf("%s %s: %s %s", s.CaseID, s.Scorer, s.Kind, s.Reason)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if passes["calls"] != 6 || passes["turns"] != 6 {
		t.Errorf("passes %v, want 6 of each", passes)
	}
}

// max_turns is enforced: a model that keeps calling tools is stopped after
// max_turns model calls, each result a loud max_turns failure with every
// turn kept.
func TestAgentLoopMaxTurnsEnforced(t *testing.T) {
	dir := t.TempDir()
	path := agentSpec(t, dir, agentMock(t, 50), 3, `  max_turns: 4
  tools:
    lookup_order: {exec: [sh, lookup.sh]}
    refund: {mock: {result: "refunded"}}
`)
	st, run, sum, _ := runAgent(t, path)
	if sum.Stored != 3 || sum.Errors != 3 {
		t.Fatalf("summary %+v", sum)
	}
	for _, r := range results(t, st, run.Record.ID) {
		if r.ErrorKind != "max_turns" || len(r.Turns) != 4 || !strings.Contains(r.Error, "agent.max_turns is 4") {
			t.Errorf("%s: kind %q, %d turns, error %q", r.CaseID, r.ErrorKind, len(r.Turns), r.Error)
		}
	}
	err := st.Scores(context.Background(), run.Record.ID, 1, func(s record.Score) error {
		if s.Pass || s.Shape != "loud" || s.Kind != "max_turns" {
			t.Errorf("%s %s: %v %s %s, want a loud max_turns", s.CaseID, s.Scorer, s.Pass, s.Shape, s.Kind)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A handler that hangs is killed at its time-out, and the case fails loudly
// as tool_timeout, with the turn that made the call stored; the run counts
// it in its health like a provider failure.
func TestAgentLoopHangingHandlerKilledAtItsTimeout(t *testing.T) {
	dir := t.TempDir()
	path := agentSpec(t, dir, agentMock(t, 2), 4, `  tools:
    lookup_order: {exec: [sh, hang.sh], timeout: 300ms}
    refund: {mock: {result: "refunded"}}
`)
	st, run, sum, took := runAgent(t, path)
	if sum.Stored != 4 || sum.Errors != 4 {
		t.Fatalf("summary %+v", sum)
	}
	// Four cases, four in flight: one time-out each, far below the sleep's
	// 60 s (and the kill must not wait for it).
	if took > 10*time.Second {
		t.Errorf("the run took %v: the hanging handlers were not killed at 300ms", took)
	}
	for _, r := range results(t, st, run.Record.ID) {
		if r.ErrorKind != toolrun.KindTimeout || len(r.Turns) != 1 || len(r.Turns[0].Results) != 1 {
			t.Fatalf("%s: kind %q (%s), %d turns", r.CaseID, r.ErrorKind, r.Error, len(r.Turns))
		}
		res := r.Turns[0].Results[0]
		if !strings.HasPrefix(res.Error, toolrun.KindTimeout+": ") || res.Name != "lookup_order" || res.LatencyMS < 300 {
			t.Errorf("%s: tool result %+v", r.CaseID, res)
		}
	}
	health, err := run.Health(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(health) != 1 || health[0].Errors != 4 || health[0].Kinds[toolrun.KindTimeout] != 4 {
		t.Errorf("health %+v: the time-outs are the run's failures", health)
	}
}

// A changed handler decides replies like a changed tool: the resume is
// refused, naming the prompt hash and the handler's program.
func TestResumeRefusedWhenAHandlerChanged(t *testing.T) {
	dir := t.TempDir()
	agent := `  tools:
    lookup_order: {exec: [sh, ./lookup.sh]}
    refund: {mock: {result: "refunded"}}
`
	path := agentSpec(t, dir, "http://127.0.0.1:9", 1, agent)
	load := func() *task.Task {
		t.Helper()
		tk, err := task.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		return tk
	}
	before := load()
	cfg, _ := json.Marshal(before.Spec)
	run := &record.Run{ID: "r1", SpecHash: before.Spec.Hash, PromptHash: before.Spec.PromptHash(), ScorersHash: before.Spec.ScorersHash(),
		DatasetHash: before.Dataset.Hash, FileHash: before.Dataset.FileHash, Config: cfg}
	if err := engine.ResumeChanged(run, load().Spec, load().Dataset); err != nil {
		t.Fatalf("nothing changed: %v", err)
	}
	write(t, filepath.Join(dir, "lookup.sh"), "read -r call\necho other\n")
	err := engine.ResumeChanged(run, load().Spec, load().Dataset)
	if err == nil || !strings.Contains(err.Error(), "prompt ") || !strings.Contains(err.Error(), "lookup.sh changed (read by the prompt)") {
		t.Fatalf("a changed handler program: %v", err)
	}
}
