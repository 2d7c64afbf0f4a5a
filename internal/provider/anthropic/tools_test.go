package anthropic

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/provider/httpcall/httpcalltest"
	"github.com/assay-eval/assay/internal/spec"
)

// toolRequest offers two tools with a choice and carries an answered round
// of two calls followed by a user message.
func toolRequest(choice string) *provider.Request {
	req := request("and now?")
	req.Messages = append([]provider.Message{req.Messages[0], {Role: "user", Content: "weather?"},
		{Role: "assistant", ToolCalls: []provider.ToolCall{{ID: "t1", Name: "get_weather", Arguments: `{"city": "Paris"}`}, {ID: "t2", Name: "noargs"}}},
		{Role: "tool", ToolCallID: "t1", Content: "sunny"},
		{Role: "tool", ToolCallID: "t2", Content: "done"}}, req.Messages[1])
	req.Tools = []provider.Tool{
		{Name: "get_weather", Description: "weather", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}`)},
		{Name: "noargs"},
	}
	req.ToolChoice = choice
	return req
}

func TestToolsOnTheWire(t *testing.T) {
	base, last := recordingServer(t)
	for _, tc := range []struct{ choice, want string }{
		{"", "<nil>"},
		{"auto", "map[type:auto]"},
		{"none", "map[type:none]"},
		{"required", "map[type:any]"},
		{"noargs", "map[name:noargs type:tool]"},
	} {
		if _, err := newProvider(t, base, false, "").Complete(context.Background(), toolRequest(tc.choice)); err != nil {
			t.Fatalf("Complete: %v", err)
		}
		body, _ := last()
		if got := fmt.Sprint(body["tool_choice"]); got != tc.want {
			t.Errorf("choice %q: tool_choice %s, want %s", tc.choice, got, tc.want)
		}
		if tc.choice != "" {
			continue
		}
		b, _ := json.Marshal(body["tools"])
		if want := `[{"description":"weather","input_schema":{"additionalProperties":false,"properties":{"city":{"type":"string"}},"required":["city"],"type":"object"},"name":"get_weather"},{"input_schema":{"properties":{},"type":"object"},"name":"noargs"}]`; string(b) != want {
			t.Errorf("tools %s\nwant  %s", b, want)
		}
		b, _ = json.Marshal(body["messages"])
		if want := `[{"content":[{"text":"weather?","type":"text"}],"role":"user"},{"content":[{"id":"t1","input":{"city":"Paris"},"name":"get_weather","type":"tool_use"},{"id":"t2","input":{},"name":"noargs","type":"tool_use"}],"role":"assistant"},{"content":[{"content":[{"text":"sunny","type":"text"}],"tool_use_id":"t1","type":"tool_result"},{"content":[{"text":"done","type":"text"}],"tool_use_id":"t2","type":"tool_result"},{"text":"and now?","type":"text"}],"role":"user"}]`; string(b) != want {
			t.Errorf("messages %s\nwant     %s", b, want)
		}
	}

	// A response format is one more tool, forced; with tools offered the
	// model must call one of them or it.
	req := request("x")
	req.ResponseFormat = &provider.ResponseFormat{Name: "answer", Strict: true, Schema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"number"}}}`)}
	if _, err := newProvider(t, base, false, "").Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	body, _ := last()
	b, _ := json.Marshal([]any{body["tools"], body["tool_choice"]})
	if want := `[[{"description":"Give your reply as this tool's input: a JSON value that fills its schema.","input_schema":{"properties":{"a":{"type":"number"}},"type":"object"},"name":"answer","strict":true}],{"name":"answer","type":"tool"}]`; string(b) != want {
		t.Errorf("format as a tool: %s\nwant %s", b, want)
	}
	for choice, want := range map[string]string{"": "map[type:any]", "auto": "map[type:any]", "none": "map[name:answer type:tool]", "noargs": "map[name:noargs type:tool]"} {
		req := toolRequest(choice)
		req.ResponseFormat = &provider.ResponseFormat{Name: "answer", Schema: json.RawMessage(`{"type":"object"}`)}
		if _, err := newProvider(t, base, false, "").Complete(context.Background(), req); err != nil {
			t.Fatal(err)
		}
		if body, _ := last(); fmt.Sprint(body["tool_choice"]) != want {
			t.Errorf("tools, choice %q and a format: tool_choice %v, want %s", choice, body["tool_choice"], want)
		}
	}
	// An empty user message after tool results adds no empty text block.
	req = toolRequest("")
	req.Messages[len(req.Messages)-1].Content = ""
	if _, err := newProvider(t, base, false, "").Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	body, _ = last()
	if b, _ := json.Marshal(body["messages"]); strings.Contains(string(b), `"text":""`) {
		t.Errorf("an empty text block was sent: %s", b)
	}
	// A tool choice without tools is not sent.
	req = request("x")
	req.ToolChoice = "required"
	if _, err := newProvider(t, base, false, "").Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if body, _ := last(); body["tool_choice"] != nil || body["tools"] != nil {
		t.Errorf("sent %v %v for a request without tools", body["tool_choice"], body["tools"])
	}
}

func TestBadToolRequestsFailBeforeSending(t *testing.T) {
	p := newProvider(t, "http://127.0.0.1:1", false, "")
	for name, edit := range map[string]func(*provider.Request){
		"parameters not an object":  func(r *provider.Request) { r.Tools[0].Parameters = json.RawMessage(`[1]`) },
		"parameters of type string": func(r *provider.Request) { r.Tools[0].Parameters = json.RawMessage(`{"type":"string"}`) },
		"tool message without id":   func(r *provider.Request) { r.Messages[3].ToolCallID = "" },
		"format named as a tool": func(r *provider.Request) {
			r.ResponseFormat = &provider.ResponseFormat{Name: "noargs", Schema: json.RawMessage(`{"type":"object"}`)}
		},
	} {
		req := toolRequest("")
		edit(req)
		_, err := p.Complete(context.Background(), req)
		if pe := httpcalltest.ProviderError(t, err); pe.Kind != provider.KindBadRequest || pe.Retryable() {
			t.Errorf("%s: kind %s (%v), want a non-retryable bad_request", name, pe.Kind, err)
		}
	}
}

// A past call whose arguments the model wrote as invalid JSON, or as JSON
// that is no object, is sent as an object holding the text as written (the
// Messages API takes no other input), so an agent loop that told the model
// so goes on as it does through the OpenAI wire.
func TestInvalidPastArgumentsSentAsText(t *testing.T) {
	base, last := recordingServer(t)
	for _, args := range []string{`{"city": "Par`, `[1]`, `"Paris"`} {
		req := toolRequest("")
		req.Messages[2].ToolCalls[0].Arguments = args
		if _, err := newProvider(t, base, false, "").Complete(context.Background(), req); err != nil {
			t.Fatalf("%s: %v", args, err)
		}
		body, _ := last()
		msgs, _ := body["messages"].([]any)
		blocks := msgs[1].(map[string]any)["content"].([]any)
		input := blocks[0].(map[string]any)["input"]
		want := map[string]any{InvalidArgumentsKey: args}
		if fmt.Sprint(input) != fmt.Sprint(want) {
			t.Errorf("arguments %s sent as input %v, want %v", args, input, want)
		}
	}
}

// Replies with tool_use blocks, whole and streamed, and bad ones.
func TestToolUseReplies(t *testing.T) {
	const sse = "text/event-stream"
	start := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"m\",\"content\":[],\"stop_reason\":null,\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\n"
	use := func(i int, id, name string) string {
		return fmt.Sprintf("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":%d,\"content_block\":{\"type\":\"tool_use\",\"id\":%q,\"name\":%q,\"input\":{}}}\n\n", i, id, name)
	}
	text := func(i int, s string) string {
		return fmt.Sprintf("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":%d,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\nevent: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":%d,\"delta\":{\"type\":\"text_delta\",\"text\":%q}}\n\n", i, i, s)
	}
	part := func(i int, s string) string {
		b, _ := json.Marshal(s)
		return fmt.Sprintf("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":%d,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":%s}}\n\n", i, b)
	}
	stop := func(i int) string {
		return fmt.Sprintf("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":%d}\n\n", i)
	}
	end := "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":1}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
	whole := func(content string) string {
		return `{"id":"msg_1","type":"message","role":"assistant","model":"m","content":` + content + `,"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}`
	}
	tests := []struct {
		name, ctype, body string
		stream            bool
		format            bool // the request asks for the format "answer"
		kind              provider.ErrorKind
		msg               string
		text, calls       string
	}{
		{name: "whole calls", ctype: "application/json", body: whole(`[{"type":"text","text":"Checking."},{"type":"tool_use","id":"a","name":"f","input":{ "x" : [1, 2.50] }},{"type":"tool_use","id":"b","name":"g","input":{}}]`),
			text: "Checking.", calls: `[{a f {"x":[1,2.50]}} {b g {}}]`},
		{name: "whole input as a string", ctype: "application/json", body: whole(`[{"type":"tool_use","id":"a","name":"f","input":"{\"x\": 1"}]`),
			calls: `[{a f {"x": 1}]`},
		{name: "whole tool_use without a name", ctype: "application/json", body: whole(`[{"type":"tool_use","id":"a","input":{}}]`),
			kind: provider.KindMalformed, msg: "without a name"},
		{name: "whole format", ctype: "application/json", format: true, body: whole(`[{"type":"tool_use","id":"a","name":"answer","input":{"a": 4}}]`),
			text: `{"a":4}`, calls: `[]`},
		{name: "whole format beside a call", ctype: "application/json", format: true, body: whole(`[{"type":"tool_use","id":"a","name":"f","input":{}},{"type":"tool_use","id":"b","name":"answer","input":{"a":4}}]`),
			text: `{"a":4}`, calls: `[{a f {}}]`},
		{name: "streamed calls", ctype: sse, stream: true, body: start + text(0, "Checking.") + stop(0) + use(1, "a", "f") + part(1, `{"x":`) + part(1, ` "ü"}`) + stop(1) + use(2, "b", "g") + part(2, "") + stop(2) + end,
			text: "Checking.", calls: `[{a f {"x": "ü"}} {b g {}}]`},
		{name: "streamed fragments the SDK would rewrite", ctype: sse, stream: true, body: start + use(0, "a", "f") + part(0, "{") + part(0, "}") + part(0, `x`) + stop(0) + end,
			calls: `[{a f {}x}]`},
		{name: "streamed malformed arguments", ctype: sse, stream: true, body: start + use(0, "a", "f") + part(0, `{"city": "Par`) + stop(0) + end,
			calls: `[{a f {"city": "Par}]`},
		{name: "streamed format", ctype: sse, stream: true, format: true, body: start + use(0, "a", "answer") + part(0, `{"a": 4}`) + stop(0) + end,
			text: `{"a": 4}`, calls: `[]`},
		{name: "input_json_delta for a text block", ctype: sse, stream: true, body: start + text(0, "x") + part(0, `{}`) + stop(0) + end,
			kind: provider.KindMalformed, msg: "input_json_delta for content block 0"},
		{name: "input_json_delta out of range", ctype: sse, stream: true, body: start + use(0, "a", "f") + part(3, `{}`) + stop(0) + end,
			kind: provider.KindMalformed, msg: "content block 3 of 1"},
		{name: "stream cut inside arguments", ctype: sse, stream: true, body: start + use(0, "a", "f") + part(0, `{"x`),
			kind: provider.KindTruncated, msg: "without message_stop"},
		{name: "null body", ctype: "application/json", body: `null`, kind: provider.KindMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newProvider(t, httpcalltest.Serve(t, 200, tt.ctype, tt.body), tt.stream, "")
			req := toolRequest("")
			if tt.format {
				req.ResponseFormat = &provider.ResponseFormat{Name: "answer", Schema: json.RawMessage(`{"type":"object"}`)}
			}
			resp, err := p.Complete(context.Background(), req)
			if tt.kind != "" {
				pe := httpcalltest.ProviderError(t, err)
				if pe.Kind != tt.kind || !strings.Contains(err.Error(), tt.msg) {
					t.Errorf("kind %s err %v; want %s saying %q", pe.Kind, err, tt.kind, tt.msg)
				}
				return
			}
			if err != nil {
				t.Fatalf("Complete: %v", err)
			}
			finish := "tool_use"
			if tt.calls == "[]" {
				finish = "end_turn" // the format's tool alone is no call
			}
			if got := fmt.Sprint(resp.ToolCalls); got != tt.calls || resp.Text != tt.text || resp.FinishReason != finish {
				t.Errorf("text %q calls %s finish %q; want %q %s %s", resp.Text, got, resp.FinishReason, tt.text, tt.calls, finish)
			}
		})
	}
}

// bodyTransport answers every request with one body, without a network.
type bodyTransport struct {
	ctype string
	body  []byte
}

func (b bodyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {b.ctype}}, Body: io.NopCloser(strings.NewReader(string(b.body))), Request: r}, nil
}

// FuzzToolUseReplies sends arbitrary whole and streamed replies: the
// provider never panics, and a reply it accepts has named calls only.
func FuzzToolUseReplies(f *testing.F) {
	f.Add(false, []byte(`{"id":"m","type":"message","content":[{"type":"tool_use","id":"a","name":"f","input":"{"}],"stop_reason":"tool_use"}`))
	f.Add(false, []byte(`null`))
	f.Add(true, []byte("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"content\":[]}}\n\nevent: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"a\",\"name\":\"f\",\"input\":{}}}\n\nevent: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\"}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"))
	f.Add(true, []byte("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"content\":[{\"type\":\"tool_use\"}]}}\n\nevent: message_stop\ndata: {}\n\n"))
	f.Fuzz(func(t *testing.T, stream bool, body []byte) {
		ctype := "application/json"
		if stream {
			ctype = "text/event-stream"
		}
		p, err := New(&spec.Target{Name: "t", Provider: "anthropic", Model: "m", BaseURL: "http://fuzz.invalid", Stream: stream}, "", &http.Client{Transport: bodyTransport{ctype, body}})
		if err != nil {
			t.Fatal(err)
		}
		req := toolRequest("")
		req.ResponseFormat = &provider.ResponseFormat{Name: "answer", Schema: json.RawMessage(`{"type":"object"}`)}
		resp, err := p.Complete(context.Background(), req)
		if err != nil {
			if provider.KindOf(err) == "" {
				t.Fatalf("unclassified error %v", err)
			}
			return
		}
		for i, c := range resp.ToolCalls {
			if c.Name == "" || c.Name == "answer" {
				t.Fatalf("call %d of an accepted reply is unnamed or the format's: %+v", i, resp.ToolCalls)
			}
		}
	})
}
