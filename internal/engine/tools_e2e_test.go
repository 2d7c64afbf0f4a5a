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
	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/provider/builtin"
	"github.com/assay-eval/assay/internal/provider/httpcall/httpcalltest"
	"github.com/assay-eval/assay/internal/provider/providertest"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store/sqlite"
	"github.com/assay-eval/assay/internal/task"
)

// The first Must-show at the run level: one tool-calling spec —
// message templates, a case's history with answered calls, tools inline and
// from a file — run through the engine against `assay mock` by the openai
// and anthropic providers, plain and streamed, stores the same tool calls
// (names and order; arguments JSON-equal, the ones the mock broke byte for
// byte) and the same scores for every target.
func TestSameToolCallsStoredThroughEveryWire(t *testing.T) {
	dir := t.TempDir()
	opts := mock.Options{
		Rules: []mock.Rule{{Match: "Paris and Oslo", ToolCalls: []mock.ToolCall{
			{Name: "get_weather", Arguments: `{"city":"Paris"}`},
			{Name: "get_weather", Arguments: `{"city":"Oslo","days":2}`},
		}}, {Match: "Find a flight", ToolCalls: []mock.ToolCall{{Name: "find_flight", Arguments: `{"to":"Oslo","seats":1}`}}}},
		MalformedArgs: 0.3,
		Seed:          11,
	}
	// A mock per target, each with the same seed, and one call in flight
	// per target: the same requests in the same order draw the same broken
	// arguments. Each target names its own model, so none is served from
	// another's cached reply.
	var targets strings.Builder
	var names []string
	for _, name := range []string{"openai", "anthropic"} {
		for _, stream := range []bool{false, true} {
			root := httpcalltest.StartMock(t, opts)
			if name == "openai" {
				root += "/v1"
			}
			tg := fmt.Sprintf("%s-%v", name, stream)
			names = append(names, tg)
			fmt.Fprintf(&targets, "  - {name: %s, provider: %s, model: m-%s, base_url: %q, stream: %v, limits: {concurrency: 1}}\n", tg, name, tg, root, stream)
		}
	}
	var cases strings.Builder
	for i := 1; i <= 6; i++ {
		fmt.Fprintf(&cases, `{"id": "w%d", "who": "Ann", "ask": "Weather in Paris and Oslo, day %d?", "history": []}`+"\n", i, i)
		fmt.Fprintf(&cases, `{"id": "f%d", "who": "Bob", "ask": "Find a flight %d", "history": null}`+"\n", i, i)
	}
	cases.WriteString(`{"id": "h1", "who": "Cy", "ask": "Thanks", "history": [{"role": "user", "content": "Weather in Rome?"}, {"role": "assistant", "tool_calls": [{"id": "c1", "name": "get_weather", "arguments": {"city": "Rome"}}]}, {"role": "tool", "tool_call_id": "c1", "content": "sunny in Rome"}]}` + "\n")
	write(t, filepath.Join(dir, "cases.jsonl"), cases.String())
	write(t, filepath.Join(dir, "tools.json"), `{"type": "function", "function": {"name": "find_flight", "parameters": {"type": "object", "properties": {"to": {"type": "string"}, "seats": {"type": "integer"}}, "required": ["to", "seats"]}}}`)
	path := filepath.Join(dir, "assay.yaml")
	write(t, path, `name: tools
dataset: {path: cases.jsonl, id: id}
prompt:
  messages:
    - {role: system, content: "You help {{.who}}."}
    - {role: user, content: "{{.ask}}"}
  messages_field: history
tools:
  - name: get_weather
    parameters: {type: object, properties: {city: {type: string}, days: {type: integer}}, required: [city]}
  - file://tools.json
targets:
`+targets.String()+`scorers:
  - {name: weather, type: tool_call, tool: get_weather}
`)
	tk, err := task.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(context.Background(), filepath.Join(dir, "assay.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	e := &engine.Engine{Store: st, Providers: builtin.Registry(), Now: time.Now, Version: "test"}
	ctx := context.Background()
	run, err := e.Start(ctx, tk, engine.StartOptions{Targets: names})
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	if sum, err := run.Execute(ctx, engine.ExecuteOptions{}); err != nil || sum.Errors != 0 {
		t.Fatalf("execute: %+v, %v", sum, err)
	}
	if _, err := run.Finish(ctx); err != nil {
		t.Fatal(err)
	}

	calls := map[string]map[string][]provider.ToolCall{} // target → case → calls
	for _, r := range results(t, st, run.Record.ID) {
		if calls[r.Target] == nil {
			calls[r.Target] = map[string][]provider.ToolCall{}
		}
		var cs []provider.ToolCall
		for _, c := range r.ToolCalls {
			cs = append(cs, provider.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
		}
		calls[r.Target][r.CaseID] = cs
	}
	verdicts := map[string]map[string]string{}
	err = st.Scores(ctx, run.Record.ID, 1, func(s record.Score) error {
		if verdicts[s.Target] == nil {
			verdicts[s.Target] = map[string]string{}
		}
		verdicts[s.Target][s.CaseID+"/"+s.Scorer] = fmt.Sprintf("%v %s %s %.3f", s.Pass, s.Shape, s.Kind, s.Value)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != 4 || len(verdicts[names[0]]) != 13 {
		t.Fatalf("%d targets stored, %d verdicts of %s; want 4 and 13", len(calls), len(verdicts[names[0]]), names[0])
	}
	want := calls[names[0]]
	broken, weather, flights := 0, 0, 0
	for id, cs := range want {
		for _, c := range cs {
			if !json.Valid([]byte(c.Arguments)) {
				broken++
			}
			switch c.Name {
			case "get_weather":
				weather++
			case "find_flight":
				flights++
			}
		}
		if id == "h1" && len(cs) != 0 {
			t.Errorf("h1's calls were answered: the model must reply in text, got %v", cs)
		}
	}
	if broken == 0 || weather != 12 || flights != 6 {
		t.Errorf("%s: %d broken arguments, %d weather and %d flight calls; want some broken, 12 and 6", names[0], broken, weather, flights)
	}
	for _, tg := range names[1:] {
		if len(calls[tg]) != len(want) {
			t.Fatalf("%s: %d results, %s %d", tg, len(calls[tg]), names[0], len(want))
		}
		for id, cs := range want {
			if d := providertest.DiffToolCalls(calls[tg][id], cs); d != "" {
				t.Errorf("%s, case %s: %s", tg, id, d)
			}
		}
		for k, v := range verdicts[names[0]] {
			if verdicts[tg][k] != v {
				t.Errorf("%s, %s: verdict %q, %s %q", tg, k, verdicts[tg][k], names[0], v)
			}
		}
	}
}
