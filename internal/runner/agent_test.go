package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/scorer"
	"github.com/assay-eval/assay/internal/toolrun"
)

// scripted answers each model call of a conversation by the number of
// tool messages it has seen so far: reply[n] for n tool results.
type scripted struct {
	mu    sync.Mutex
	reqs  []*provider.Request
	reply func(req *provider.Request, answered int) (*provider.Response, error)
}

func (s *scripted) Complete(_ context.Context, req *provider.Request) (*provider.Response, error) {
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	s.mu.Unlock()
	n := 0
	for _, m := range req.Messages {
		if m.Role == "tool" {
			n++
		}
	}
	return s.reply(req, n)
}

// handlerFunc is a toolrun.Handler from a function.
type handlerFunc func(ctx context.Context, c toolrun.Call) (string, error)

func (f handlerFunc) Call(ctx context.Context, c toolrun.Call) (string, error) { return f(ctx, c) }

func agentRun(t *testing.T, p provider.Provider, a *Agent, n int) *memStore {
	t.Helper()
	st := newMemStore()
	_, err := Run(context.Background(), Options{
		RunID:   "r",
		Targets: []Target{target("a", p, 2)},
		Cases:   cases(n), Render: render, Score: noScore, Store: st,
		Offer: Offer{Tools: []provider.Tool{{Name: "lookup"}, {Name: "refund"}}},
		Agent: a,
	})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func call(id, name, args string) provider.ToolCall {
	return provider.ToolCall{ID: id, Name: name, Arguments: args}
}

// A three-turn conversation: the calls answered in order, the results
// sent back as tool messages after the assistant's message with its calls,
// the last reply the result's text, every turn stored whole with the sums
// over turns on the result.
func TestAgentLoopStoresTheTrajectory(t *testing.T) {
	p := &scripted{reply: func(req *provider.Request, answered int) (*provider.Response, error) {
		u := provider.Usage{Input: 100 * (answered + 1), Output: 10}
		switch answered {
		case 0:
			return &provider.Response{Text: "let me look", FinishReason: "tool_calls", Usage: u, Attempts: 1, Latency: 20 * time.Millisecond, FirstToken: 5 * time.Millisecond, Model: "m1",
				ToolCalls: []provider.ToolCall{call("c1", "lookup", `{"id": 42}`), call("", "lookup", `{"id": 7}`)}}, nil
		case 2:
			return &provider.Response{FinishReason: "tool_calls", Usage: u, Attempts: 3, Latency: 30 * time.Millisecond, Model: "m1",
				ToolCalls: []provider.ToolCall{call("c3", "refund", `{"id": 42}`)}}, nil
		default:
			return &provider.Response{Text: "refunded order 42", FinishReason: "stop", Usage: u, Attempts: 1, Latency: 10 * time.Millisecond, Model: "m2"}, nil
		}
	}}
	var handled []toolrun.Call
	var mu sync.Mutex
	h := handlerFunc(func(_ context.Context, c toolrun.Call) (string, error) {
		mu.Lock()
		handled = append(handled, c)
		mu.Unlock()
		return c.Tool + " says " + c.Arguments, nil
	})
	st := agentRun(t, p, &Agent{MaxTurns: 5, Handlers: map[string]toolrun.Handler{"lookup": h, "refund": h}, Withhold: []string{"answer"}}, 1)
	r := st.results[record.Key{CaseID: "1", Target: "a", Epoch: 1}]
	if r.ErrorKind != "" || r.Raw != "refunded order 42" || r.FinishReason != "stop" {
		t.Fatalf("result %+v", r)
	}
	if len(r.Turns) != 3 {
		t.Fatalf("%d turns, want 3: %+v", len(r.Turns), r.Turns)
	}
	want := []record.ToolResult{
		{CallID: "c1", Name: "lookup", Content: `lookup says {"id": 42}`},
		{CallID: "call_1_2", Name: "lookup", Content: `lookup says {"id": 7}`},
	}
	got := r.Turns[0].Results
	for i := range got {
		got[i].LatencyMS = 0
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("turn 1's results %+v, want %+v", got, want)
	}
	if r.Turns[1].Results[0].Content != `refund says {"id": 42}` || len(r.Turns[2].Results) != 0 {
		t.Errorf("turns %+v", r.Turns)
	}
	if r.Turns[0].Text != "let me look" || r.Turns[0].InputTokens != 100 || r.Turns[2].InputTokens != 400 {
		t.Errorf("turn texts and tokens %+v", r.Turns)
	}
	// The result's calls are every turn's, in order; its numbers the sums.
	var names []string
	for _, c := range r.ToolCalls {
		names = append(names, c.Name+c.Arguments)
	}
	if strings.Join(names, ",") != `lookup{"id": 42},lookup{"id": 7},refund{"id": 42}` {
		t.Errorf("calls %v", names)
	}
	if r.InputTokens != 100+300+400 || r.OutputTokens != 30 || r.LatencyMS != 60 || r.FirstTokenMS != 5 || r.Attempts != 3 || r.Model != "m2" {
		t.Errorf("sums: in %d out %d latency %v ttft %v attempts %d model %s", r.InputTokens, r.OutputTokens, r.LatencyMS, r.FirstTokenMS, r.Attempts, r.Model)
	}
	wantCost := 0.0
	for _, tr := range r.Turns {
		wantCost += tr.CostUSD
	}
	if r.CostUSD == 0 || r.CostUSD != wantCost {
		t.Errorf("cost %v, want the turns' sum %v", r.CostUSD, wantCost)
	}
	// The conversation as the model saw it on its third call.
	last := p.reqs[2].Messages
	var roles []string
	for _, m := range last {
		roles = append(roles, m.Role+":"+m.ToolCallID)
	}
	if strings.Join(roles, " ") != "user: assistant: tool:c1 tool:call_1_2 assistant: tool:c3" {
		t.Errorf("messages of the third call: %v", roles)
	}
	if len(last[1].ToolCalls) != 2 || last[1].ToolCalls[1].ID != "call_1_2" || last[1].Content != "let me look" {
		t.Errorf("the assistant message %+v", last[1])
	}
	if len(p.reqs[0].Messages) != 1 || len(p.reqs[0].Tools) != 2 {
		t.Errorf("the first call's request %+v", p.reqs[0])
	}
	if handled[0].Turn != 1 || handled[2].Turn != 2 || handled[0].CaseID != "1" || handled[0].CallID != "c1" || handled[0].Vars["q"] != "question 1" {
		t.Errorf("handler calls %+v", handled)
	}
}

// Arguments that are not a JSON object never reach the handler: the model
// is told, and the loop goes on; so is a call of a tool no handler answers.
func TestAgentLoopBadArgumentsAreToldToTheModel(t *testing.T) {
	p := &scripted{reply: func(req *provider.Request, answered int) (*provider.Response, error) {
		if answered == 0 {
			return &provider.Response{FinishReason: "tool_calls", ToolCalls: []provider.ToolCall{
				call("a", "lookup", `{"id": `), call("b", "lookup", `[1]`), call("c", "lookup", ``), call("d", "lookup", `{"id": 1} x`), call("e", "nope", `{}`),
			}}, nil
		}
		return &provider.Response{Text: "sorry"}, nil
	}}
	var n atomic.Int64
	h := handlerFunc(func(context.Context, toolrun.Call) (string, error) { n.Add(1); return "", nil })
	st := agentRun(t, p, &Agent{MaxTurns: 3, Handlers: map[string]toolrun.Handler{"lookup": h, "refund": h}}, 1)
	r := st.results[record.Key{CaseID: "1", Target: "a", Epoch: 1}]
	if n.Load() != 0 {
		t.Errorf("the handler was called %d times with bad arguments", n.Load())
	}
	if r.ErrorKind != "" || r.Raw != "sorry" || len(r.Turns) != 2 {
		t.Fatalf("result %+v", r)
	}
	for i, res := range r.Turns[0].Results[:4] {
		if !strings.HasPrefix(res.Content, "error: the arguments are not a JSON object: ") || res.Error != "" {
			t.Errorf("result %d: %+v", i, res)
		}
	}
	if c := r.Turns[0].Results[4].Content; c != `error: there is no tool named "nope"; the tools are: lookup, refund` {
		t.Errorf("unknown tool: %q", c)
	}
	tools := p.reqs[1].Messages[2:]
	if len(tools) != 5 || tools[0].Content != r.Turns[0].Results[0].Content {
		t.Errorf("tool messages %+v", tools)
	}
}

// A model that keeps calling tools stops at max_turns model calls, loudly,
// with every turn kept.
func TestAgentLoopMaxTurns(t *testing.T) {
	var calls atomic.Int64
	p := &scripted{reply: func(req *provider.Request, answered int) (*provider.Response, error) {
		calls.Add(1)
		return &provider.Response{Text: fmt.Sprint("turn ", answered+1), FinishReason: "tool_calls", ToolCalls: []provider.ToolCall{call("", "lookup", `{}`)}}, nil
	}}
	h := handlerFunc(func(context.Context, toolrun.Call) (string, error) { return "more", nil })
	st := agentRun(t, p, &Agent{MaxTurns: 4, Handlers: map[string]toolrun.Handler{"lookup": h}}, 3)
	if calls.Load() != 12 {
		t.Errorf("%d model calls, want 4 per case", calls.Load())
	}
	r := st.results[record.Key{CaseID: "2", Target: "a", Epoch: 1}]
	if r.ErrorKind != KindMaxTurns || len(r.Turns) != 4 || r.Raw != "turn 4" || !strings.Contains(r.Error, "after 4 model calls: agent.max_turns is 4") {
		t.Fatalf("result: kind %q, %d turns, raw %q, error %q", r.ErrorKind, len(r.Turns), r.Raw, r.Error)
	}
	if len(r.Turns[3].Results) != 0 || len(r.Turns[2].Results) != 1 || len(r.ToolCalls) != 4 {
		t.Errorf("the last turn's calls are not answered: %+v", r.Turns)
	}
}

// A handler's failure ends the conversation with its kind, loud, the turns
// so far stored with the failed result; the calls after it are not made.
func TestAgentLoopHandlerFailureIsLoud(t *testing.T) {
	p := &scripted{reply: func(req *provider.Request, answered int) (*provider.Response, error) {
		return &provider.Response{FinishReason: "tool_calls", ToolCalls: []provider.ToolCall{call("x", "lookup", `{}`), call("y", "refund", `{}`), call("z", "lookup", `{}`)}}, nil
	}}
	var lookups atomic.Int64
	handlers := map[string]toolrun.Handler{
		"lookup": handlerFunc(func(context.Context, toolrun.Call) (string, error) { lookups.Add(1); return "ok", nil }),
		"refund": handlerFunc(func(context.Context, toolrun.Call) (string, error) {
			return "half", &toolrun.Error{Kind: toolrun.KindTimeout, Tool: "refund", Msg: "no answer within 2s: killed"}
		}),
	}
	st := agentRun(t, p, &Agent{MaxTurns: 5, Handlers: handlers}, 1)
	r := st.results[record.Key{CaseID: "1", Target: "a", Epoch: 1}]
	if r.ErrorKind != toolrun.KindTimeout || !strings.Contains(r.Error, "no answer within 2s") || len(r.Turns) != 1 {
		t.Fatalf("result: kind %q error %q turns %d", r.ErrorKind, r.Error, len(r.Turns))
	}
	res := r.Turns[0].Results
	if len(res) != 2 || res[1].Error != "tool_timeout: no answer within 2s: killed" || res[1].Content != "half" || lookups.Load() != 1 {
		t.Errorf("results %+v (lookups %d)", res, lookups.Load())
	}
	// Any other error from a handler is a tool_error.
	handlers["refund"] = handlerFunc(func(context.Context, toolrun.Call) (string, error) { return "", errors.New("boom") })
	r = agentRun(t, p, &Agent{MaxTurns: 5, Handlers: handlers}, 1).results[record.Key{CaseID: "1", Target: "a", Epoch: 1}]
	if r.ErrorKind != toolrun.KindFailed {
		t.Errorf("kind %q, want %s", r.ErrorKind, toolrun.KindFailed)
	}
}

// A provider failure on a later turn is the result's error, the turns
// before it kept; a cancelled conversation is not stored at all.
func TestAgentLoopProviderErrorAndCancel(t *testing.T) {
	p := &scripted{reply: func(req *provider.Request, answered int) (*provider.Response, error) {
		if answered == 0 {
			return &provider.Response{ToolCalls: []provider.ToolCall{call("x", "lookup", `{}`)}, Usage: provider.Usage{Input: 5}}, nil
		}
		return nil, &provider.Error{Kind: provider.KindServer, Status: 500}
	}}
	h := handlerFunc(func(context.Context, toolrun.Call) (string, error) { return "ok", nil })
	r := agentRun(t, p, &Agent{MaxTurns: 5, Handlers: map[string]toolrun.Handler{"lookup": h}}, 1).results[record.Key{CaseID: "1", Target: "a", Epoch: 1}]
	if r.ErrorKind != string(provider.KindServer) || len(r.Turns) != 1 || r.InputTokens != 5 || !strings.HasPrefix(r.Error, "model call 2: ") || r.Attempts != 1 {
		t.Fatalf("result: kind %q error %q turns %d attempts %d", r.ErrorKind, r.Error, len(r.Turns), r.Attempts)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	block := handlerFunc(func(ctx context.Context, _ toolrun.Call) (string, error) {
		cancel()
		<-ctx.Done()
		return "", &toolrun.Error{Kind: toolrun.KindFailed, Tool: "lookup", Msg: "killed"}
	})
	p2 := &scripted{reply: func(*provider.Request, int) (*provider.Response, error) {
		return &provider.Response{ToolCalls: []provider.ToolCall{call("x", "lookup", `{}`)}}, nil
	}}
	st := newMemStore()
	sum, _ := Run(ctx, Options{RunID: "r", Targets: []Target{target("a", p2, 1)}, Cases: cases(1), Render: render, Score: noScore, Store: st,
		Agent: &Agent{MaxTurns: 5, Handlers: map[string]toolrun.Handler{"lookup": block}}})
	if st.len() != 0 || sum.Stored != 0 {
		t.Errorf("a conversation cut short by cancellation was stored: %+v", st.results)
	}
}

// Cached turns cost nothing and count as saved spend; the result is from
// the cache only when every turn was.
func TestAgentLoopCachedTurns(t *testing.T) {
	p := &scripted{reply: func(req *provider.Request, answered int) (*provider.Response, error) {
		u := provider.Usage{Input: 1_000_000, Output: 0}
		if answered == 0 {
			return &provider.Response{Cached: true, Usage: u, ToolCalls: []provider.ToolCall{call("x", "lookup", `{}`)}}, nil
		}
		return &provider.Response{Text: "done", Usage: u}, nil
	}}
	h := handlerFunc(func(context.Context, toolrun.Call) (string, error) { return "ok", nil })
	r := agentRun(t, p, &Agent{MaxTurns: 5, Handlers: map[string]toolrun.Handler{"lookup": h}}, 1).results[record.Key{CaseID: "1", Target: "a", Epoch: 1}]
	if r.CostUSD != 1 || r.SavedUSD != 1 || r.Turns[0].CostUSD != 0 || r.Turns[1].CostUSD != 1 || !r.Turns[0].FromCache || r.FromCache {
		t.Errorf("cost %v saved %v turns %+v from cache %v", r.CostUSD, r.SavedUSD, r.Turns, r.FromCache)
	}
}

// The expected answer is withheld from the handlers' vars.
func TestAgentLoopWithholdsTheAnswer(t *testing.T) {
	c := &dataset.Case{ID: "1", Vars: map[string]any{"q": "x", "answer": "secret"}}
	if v := handlerVars(c, []string{"answer"}); v["answer"] != nil || v["q"] != "x" || c.Vars["answer"] != "secret" {
		t.Errorf("vars %v (case %v)", v, c.Vars)
	}
}

// Every kind a loop can end with is a kind error_costs.by_kind accepts.
func TestAgentKindsKnownToErrorCosts(t *testing.T) {
	known := map[string]bool{}
	for _, k := range scorer.Kinds() {
		known[k] = true
	}
	for _, k := range append(Kinds(), KindMaxTurns) {
		if !known[k] {
			t.Errorf("kind %q is not among scorer.Kinds()", k)
		}
	}
	b, _ := json.Marshal(Kinds())
	for _, k := range toolrun.Kinds() {
		if !strings.Contains(string(b), `"`+k+`"`) {
			t.Errorf("Kinds() lacks %s", k)
		}
	}
}

// A secret the spec names, echoed by a handler (in its answer or its
// failure), is hidden before the model sees it or it is stored, and
// counted in the result's redactions.
func TestAgentLoopRedactsHandlerAnswers(t *testing.T) {
	const secret = "sk-live-0123456789abcdef0123"
	p := &scripted{reply: func(req *provider.Request, answered int) (*provider.Response, error) {
		if answered == 0 {
			return &provider.Response{ToolCalls: []provider.ToolCall{call("x", "lookup", `{}`), call("y", "refund", `{}`)}}, nil
		}
		return &provider.Response{Text: "ok"}, nil
	}}
	handlers := map[string]toolrun.Handler{
		"lookup": handlerFunc(func(context.Context, toolrun.Call) (string, error) { return "token " + secret, nil }),
		"refund": handlerFunc(func(context.Context, toolrun.Call) (string, error) {
			return "", &toolrun.Error{Kind: toolrun.KindFailed, Tool: "refund", Msg: "exit 1: bad token " + secret}
		}),
	}
	red := provider.NewRedactor([]provider.Secret{{Name: "SHOP_TOKEN", Value: secret}})
	st := agentRun(t, p, &Agent{MaxTurns: 3, Handlers: handlers, Redact: red}, 1)
	r := st.results[record.Key{CaseID: "1", Target: "a", Epoch: 1}]
	b, _ := json.Marshal(r)
	if strings.Contains(string(b), secret) {
		t.Fatalf("the secret was stored: %s", b)
	}
	if r.Redactions != 2 || r.ErrorKind != toolrun.KindFailed || !strings.Contains(r.Turns[0].Results[0].Content, "SHOP_TOKEN") {
		t.Errorf("redactions %d, kind %s, result %+v", r.Redactions, r.ErrorKind, r.Turns[0].Results)
	}
}
