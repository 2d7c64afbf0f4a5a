package httpcalltest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/assay-eval/assay/internal/mock"
	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/provider/anthropic"
	"github.com/assay-eval/assay/internal/provider/httpcall/httpcalltest"
	"github.com/assay-eval/assay/internal/provider/openai"
	"github.com/assay-eval/assay/internal/provider/providertest"
	"github.com/assay-eval/assay/internal/spec"
)

// wireProvider builds the openai or anthropic provider, plain or streamed,
// for the mock at root.
func wireProvider(t *testing.T, name, root string, stream bool) provider.Provider {
	t.Helper()
	tg := &spec.Target{Name: name, Provider: name, Model: "mock-model", BaseURL: root, Stream: stream}
	var (
		p   provider.Provider
		err error
	)
	if name == "openai" {
		tg.BaseURL += "/v1"
		p, err = openai.New(tg, "", nil)
	} else {
		p, err = anthropic.New(tg, "", nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// wireRequests are the tool-calling requests the cross-format test sends,
// in order: calls by rule, the default call derived from the schema, a
// forced tool, required, none, a response format, and a history whose calls
// were answered.
func wireRequests() []*provider.Request {
	base := func(user string) *provider.Request {
		req := providertest.ToolRequest(0)
		req.Messages = []provider.Message{{Role: "system", Content: "Use the tools."}, {Role: "user", Content: user}}
		return req
	}
	var out []*provider.Request
	out = append(out, base("What is the weather in Paris and Oslo?"))
	out = append(out, base("Anything at all."))
	named := base("Find it.")
	named.ToolChoice = "search"
	out = append(out, named)
	required := base("Anything, but call a tool.")
	required.ToolChoice = provider.ToolChoiceRequired
	out = append(out, required)
	none := base("What is the weather in Paris and Oslo?")
	none.ToolChoice = provider.ToolChoiceNone
	out = append(out, none)
	format := base("Answer in the format.")
	format.Tools, format.ToolChoice = nil, ""
	format.ResponseFormat = &provider.ResponseFormat{Name: "answer", Strict: true, Schema: json.RawMessage(`{"type":"object","properties":{"answer":{"type":"number","minimum":4},"unit":{"enum":["C","F"]}},"required":["answer","unit"],"additionalProperties":false}`)}
	out = append(out, format)
	// A format asked for by a question a rule with calls matches: on
	// Anthropic the format is a forced tool, which no rule's calls may
	// take the place of.
	matched := base("Paris and Oslo, in the format.")
	matched.Tools, matched.ToolChoice, matched.ResponseFormat = nil, "", format.ResponseFormat
	out = append(out, matched)
	answered := providertest.ToolRequest(1)
	answered.Messages = answered.Messages[:5] // ends with the two tool results
	out = append(out, answered)
	return out
}

// The first Must-show at the provider level: the same tool-calling
// requests through the openai and anthropic providers, plain and streamed,
// against `assay mock` give the same calls — names, order, arguments
// (JSON-equal when valid, byte-equal when the mock broke them) — and the
// same text; a response format's reply is the same JSON whether it came as
// OpenAI's structured output or Anthropic's forced tool.
func TestSameToolCallsThroughEveryWire(t *testing.T) {
	opts := mock.Options{
		Rules: []mock.Rule{{Match: "Paris and Oslo", ToolCalls: []mock.ToolCall{
			{Name: "get_weather", Arguments: `{"city":"Paris"}`},
			{Name: "get_weather", Arguments: `{"city":"Oslo","days":1}`},
		}}},
		MalformedArgs: 0.3,
		Seed:          11,
	}
	type result struct {
		text  string
		calls []provider.ToolCall
	}
	results := map[string][]result{}
	var order []string
	for _, name := range []string{"openai", "anthropic"} {
		for _, stream := range []bool{false, true} {
			mode := name + "/" + httpcalltest.Mode(stream)
			order = append(order, mode)
			// A mock per mode with the same seed: the same requests in the
			// same order draw the same broken arguments.
			p := wireProvider(t, name, httpcalltest.StartMock(t, opts), stream)
			for i, req := range wireRequests() {
				resp, err := p.Complete(context.Background(), req)
				if err != nil {
					t.Fatalf("%s: request %d: %v", mode, i, err)
				}
				results[mode] = append(results[mode], result{resp.Text, resp.ToolCalls})
			}
		}
	}
	want := results[order[0]]
	broken := 0
	for i, r := range want {
		for _, c := range r.calls {
			if !json.Valid([]byte(c.Arguments)) {
				broken++
			}
		}
		t.Logf("request %d: text %q calls %q", i, r.text, r.calls)
	}
	if broken == 0 {
		t.Errorf("no call's arguments were broken; the test must cover malformed arguments (change the seed)")
	}
	// What each request must have got, written out.
	names := [][]string{{"get_weather", "get_weather"}, {"get_weather"}, {"search"}, {"get_weather"}, nil, nil, nil, nil}
	for i, r := range want {
		var got []string
		for _, c := range r.calls {
			got = append(got, c.Name)
		}
		if fmt.Sprint(got) != fmt.Sprint(names[i]) {
			t.Errorf("request %d: calls %v, want %v", i, got, names[i])
		}
	}
	if !providertest.ArgumentsEqual(want[5].text, `{"answer":4,"unit":"C"}`) {
		t.Errorf("the response format's reply is %q", want[5].text)
	}
	if want[6].text != want[5].text {
		t.Errorf("the response format's reply to a question a rule matches is %q", want[6].text)
	}
	if want[7].text != `[{"title":"Paris forecast"}]` {
		t.Errorf("the reply after the answered calls is %q; want the last tool result echoed", want[6].text)
	}
	for _, mode := range order[1:] {
		for i, r := range results[mode] {
			if d := providertest.DiffToolCalls(r.calls, want[i].calls); d != "" {
				t.Errorf("%s, request %d, against %s: %s", mode, i, order[0], d)
			}
			if r.text != want[i].text && !providertest.ArgumentsEqual(r.text, want[i].text) {
				t.Errorf("%s, request %d: text %q, %s gave %q", mode, i, r.text, order[0], want[i].text)
			}
		}
	}
}
