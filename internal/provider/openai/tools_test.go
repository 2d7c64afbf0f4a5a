package openai

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
)

// toolRequest offers two tools, forces a choice, asks for a format, and
// carries an answered round of calls.
func toolRequest(choice string) *provider.Request {
	req := request("and now?")
	req.Messages = append([]provider.Message{req.Messages[0], {Role: "user", Content: "weather?"},
		{Role: "assistant", Content: "Looking.", ToolCalls: []provider.ToolCall{{ID: "c1", Name: "get_weather", Arguments: `{"city": "Paris"`}}},
		{Role: "tool", ToolCallID: "c1", Content: "sunny"}}, req.Messages[1])
	req.Tools = []provider.Tool{
		{Name: "get_weather", Description: "weather", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}`)},
		{Name: "noargs"},
	}
	req.ToolChoice = choice
	req.ResponseFormat = &provider.ResponseFormat{Name: "answer", Strict: true, Schema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"number"}}}`)}
	return req
}

func TestToolsOnTheWire(t *testing.T) {
	base, last := recordingServer(t)
	for _, tc := range []struct{ choice, want string }{
		{"", "<nil>"},
		{"auto", "auto"},
		{"none", "none"},
		{"required", "required"},
		{"noargs", "map[function:map[name:noargs] type:function]"},
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
		if want := `[{"function":{"description":"weather","name":"get_weather","parameters":{"additionalProperties":false,"properties":{"city":{"type":"string"}},"required":["city"],"type":"object"}},"type":"function"},{"function":{"name":"noargs"},"type":"function"}]`; string(b) != want {
			t.Errorf("tools %s\nwant  %s", b, want)
		}
		b, _ = json.Marshal(body["response_format"])
		if want := `{"json_schema":{"name":"answer","schema":{"properties":{"a":{"type":"number"}},"type":"object"},"strict":true},"type":"json_schema"}`; string(b) != want {
			t.Errorf("response_format %s\nwant            %s", b, want)
		}
		b, _ = json.Marshal(body["messages"])
		if want := `[{"content":"answer in one word","role":"system"},{"content":"weather?","role":"user"},{"content":"Looking.","role":"assistant","tool_calls":[{"function":{"arguments":"{\"city\": \"Paris\"","name":"get_weather"},"id":"c1","type":"function"}]},{"content":"sunny","role":"tool","tool_call_id":"c1"},{"content":"and now?","role":"user"}]`; string(b) != want {
			t.Errorf("messages %s\nwant     %s", b, want)
		}
	}
	// A tool choice without tools is not sent: the API refuses it.
	req := request("x")
	req.ToolChoice = "required"
	if _, err := newProvider(t, base, false, "").Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if body, _ := last(); body["tool_choice"] != nil || body["tools"] != nil || body["response_format"] != nil {
		t.Errorf("sent %v %v %v for a request without tools or format", body["tool_choice"], body["tools"], body["response_format"])
	}
}

func TestBadToolRequestsFailBeforeSending(t *testing.T) {
	p := newProvider(t, "http://127.0.0.1:1/v1", false, "")
	for name, edit := range map[string]func(*provider.Request){
		"parameters not an object": func(r *provider.Request) { r.Tools[0].Parameters = json.RawMessage(`[1]`) },
		"parameters null":          func(r *provider.Request) { r.Tools[0].Parameters = json.RawMessage(`null`) },
		"tool message without id":  func(r *provider.Request) { r.Messages[3].ToolCallID = "" },
	} {
		req := toolRequest("")
		edit(req)
		_, err := p.Complete(context.Background(), req)
		if pe := httpcalltest.ProviderError(t, err); pe.Kind != provider.KindBadRequest || pe.Retryable() {
			t.Errorf("%s: kind %s (%v), want a non-retryable bad_request", name, pe.Kind, err)
		}
	}
}

// Replies with tool calls, plain and streamed, and bad ones.
func TestToolCallReplies(t *testing.T) {
	const sse = "text/event-stream"
	chunk := func(delta, finish string) string {
		f := "null"
		if finish != "" {
			f = `"` + finish + `"`
		}
		return `data: {"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + f + "}]}\n\n"
	}
	done := "data: [DONE]\n\n"
	tests := []struct {
		name, ctype, body string
		stream            bool
		kind              provider.ErrorKind
		msg               string
		text              string
		calls             string // fmt of the calls
		finish            string
	}{
		{name: "plain calls", ctype: "application/json", body: `{"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{\"x\": 1"}},{"id":"b","type":"function","function":{"name":"g","arguments":""}}]},"finish_reason":"tool_calls"}]}`,
			calls: `[{a f {"x": 1} {b g }]`, finish: "tool_calls"},
		{name: "plain custom call", ctype: "application/json", body: `{"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"t","tool_calls":[{"id":"a","type":"custom","custom":{"name":"grammar","input":"raw text"}}]},"finish_reason":"tool_calls"}]}`,
			text: "t", calls: `[{a grammar raw text}]`, finish: "tool_calls"},
		{name: "plain arguments as a JSON value", ctype: "application/json", body: `{"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":{ "x" : [1, 2.50] }}}]},"finish_reason":"tool_calls"}]}`,
			calls: `[{a f {"x":[1,2.50]}}]`, finish: "tool_calls"},
		{name: "plain name a number", ctype: "application/json", body: `{"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","tool_calls":[{"id":"a","type":"function","function":{"name":7,"arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`,
			calls: `[{a 7 {}}]`, finish: "tool_calls"}, // the SDK reads a number as its text
		{name: "plain tool_calls not a list", ctype: "application/json", body: `{"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","tool_calls":{"id":"a"}},"finish_reason":"tool_calls"}]}`,
			kind: provider.KindMalformed, msg: "not a list"},
		{name: "plain call without a name", ctype: "application/json", body: `{"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","tool_calls":[{"id":"a","type":"function","function":{"arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`,
			kind: provider.KindMalformed, msg: "no name"},
		{name: "stream interleaved by index", ctype: sse, stream: true, body: chunk(`{"tool_calls":[{"index":1,"id":"b","type":"function","function":{"name":"g","arguments":""}}]}`, "") +
			chunk(`{"tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"f","arguments":"{\"x\""}}]}`, "") +
			chunk(`{"tool_calls":[{"index":1,"function":{"arguments":"{}"}}]}`, "") +
			chunk(`{"tool_calls":[{"index":0,"function":{"arguments":":1}"}}]}`, "") + chunk(`{}`, "tool_calls") + done,
			calls: `[{a f {"x":1}} {b g {}}]`, finish: "tool_calls"},
		{name: "stream repeating the name", ctype: sse, stream: true, body: chunk(`{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{"}}]}`, "") +
			chunk(`{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"}"}}]}`, "tool_calls") + done,
			calls: `[{a f {}}]`, finish: "tool_calls"},
		{name: "stream without indexes", ctype: sse, stream: true, body: chunk(`{"tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{\"x\":1}"}}]}`, "") +
			chunk(`{"tool_calls":[{"id":"b","type":"function","function":{"name":"g","arguments":"{}"}}]}`, "tool_calls") + done,
			calls: `[{a f {"x":1}} {b g {}}]`, finish: "tool_calls"},
		{name: "stream with text and a call", ctype: sse, stream: true, body: chunk(`{"content":"Let me"}`, "") + chunk(`{"content":" check."}`, "") +
			chunk(`{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{\"q\":\"ü\"}"}}]}`, "tool_calls") + done,
			text: "Let me check.", calls: `[{a f {"q":"ü"}}]`, finish: "tool_calls"},
		{name: "stream call never named", ctype: sse, stream: true, body: chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]}`, "tool_calls") + done,
			kind: provider.KindMalformed, msg: "index 0 has no name"},
		{name: "stream cut inside arguments", ctype: sse, stream: true, body: chunk(`{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{\"x"}}]}`, ""),
			kind: provider.KindTruncated, msg: "finish_reason"},
		{name: "stream bad tool_calls", ctype: sse, stream: true, body: chunk(`{"tool_calls":{"index":0}}`, "tool_calls") + done,
			kind: provider.KindMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newProvider(t, httpcalltest.Serve(t, 200, tt.ctype, tt.body)+"/v1", tt.stream, "")
			resp, err := p.Complete(context.Background(), toolRequest(""))
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
			if got := fmt.Sprint(resp.ToolCalls); got != tt.calls || resp.Text != tt.text || resp.FinishReason != tt.finish {
				t.Errorf("text %q calls %s finish %q; want %q %s %q", resp.Text, got, resp.FinishReason, tt.text, tt.calls, tt.finish)
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

// FuzzToolCallReplies sends arbitrary streamed and plain replies: the
// provider never panics, and a reply it accepts has named calls only.
func FuzzToolCallReplies(f *testing.F) {
	f.Add(true, []byte(`data: {"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{"}}]},"finish_reason":"tool_calls"}]}`+"\n\ndata: [DONE]\n\n"))
	f.Add(true, []byte(`data: {"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":-9223372036854775808,"function":{"name":"","arguments":"\u0000"}}]},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n"))
	f.Add(false, []byte(`{"id":"c","choices":[{"index":0,"message":{"tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"x"}}]},"finish_reason":"tool_calls"}]}`))
	f.Add(false, []byte(`{"choices":[{"message":{"tool_calls":[null,{}]}}]}`))
	f.Fuzz(func(t *testing.T, stream bool, body []byte) {
		ctype := "application/json"
		if stream {
			ctype = "text/event-stream"
		}
		p, err := New(targetFor("http://fuzz.invalid/v1", stream), "", &http.Client{Transport: bodyTransport{ctype, body}})
		if err != nil {
			t.Fatal(err)
		}
		resp, err := p.Complete(context.Background(), toolRequest(""))
		if err != nil {
			if provider.KindOf(err) == "" {
				t.Fatalf("unclassified error %v", err)
			}
			return
		}
		for i, c := range resp.ToolCalls {
			if c.Name == "" {
				t.Fatalf("call %d of an accepted reply has no name: %+v", i, resp.ToolCalls)
			}
		}
	})
}
