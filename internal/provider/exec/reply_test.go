package exec

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/assay-eval/assay/internal/provider"
)

func TestDecodeReplyAccepts(t *testing.T) {
	cases := []struct {
		name, stdout, text string
		usage              provider.Usage
	}{
		{"minimal", `{"output":"4"}`, "4", provider.Usage{}},
		{"trailing newline and spaces", "  {\"output\": \"4\"}\n\n", "4", provider.Usage{}},
		{"byte order mark", "\xef\xbb\xbf{\"output\":\"4\"}", "4", provider.Usage{}},
		{"empty output is an answer", `{"output":""}`, "", provider.Usage{}},
		{"escapes decoded", `{"output":"a\nb \"q\" \u00e9 \ud83e\uddea <script>"}`, "a\nb \"q\" é 🧪 <script>", provider.Usage{}},
		{"object output becomes JSON text", `{"output": {"team": "billing", "n": [1, 2]}}`, `{"team":"billing","n":[1,2]}`, provider.Usage{}},
		{"number output", `{"output": 42.5}`, "42.5", provider.Usage{}},
		{"usage", `{"output":"x","usage":{"input":10,"output":3,"cached":4}}`, "x", provider.Usage{Input: 10, Output: 3, Cached: 4}},
		{"unknown fields ignored", `{"output":"x","trace":{"steps":[1]},"cost":0.1}`, "x", provider.Usage{}},
		{"empty error is no error", `{"output":"x","error":""}`, "x", provider.Usage{}},
		{"null error is no error", `{"output":"x","error":null}`, "x", provider.Usage{}},
		{"tool calls beside the output", `{"output":"x","tool_calls":[{"name":"f","arguments":{"a": 1}}]}`, "x", provider.Usage{}},
		{"tool calls alone", `{"tool_calls":[{"name":"f","arguments":"{\"a\":"}]}`, "", provider.Usage{}},
		{"tool calls with a null output", `{"output":null,"tool_calls":[{"name":"f"}]}`, "", provider.Usage{}},
		{"empty tool calls", `{"output":"x","tool_calls":[]}`, "x", provider.Usage{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := decodeReply([]byte(c.stdout))
			if err != nil {
				t.Fatalf("decodeReply(%q): %v", c.stdout, err)
			}
			if r.output != c.text || r.usage != c.usage {
				t.Errorf("decodeReply(%q) = %q %+v; want %q %+v", c.stdout, r.output, r.usage, c.text, c.usage)
			}
		})
	}
}

func TestDecodeReplyRejects(t *testing.T) {
	long := strings.Repeat("garbage-", 100) // 800 bytes
	cases := []struct {
		name, stdout string
		kind         provider.ErrorKind
		want         []string
	}{
		{"empty", "", provider.KindInvalid, []string{"printed nothing"}},
		{"whitespace", " \n\t", provider.KindInvalid, []string{"printed nothing"}},
		{"prose", "The answer is 4", provider.KindInvalid, []string{"not a JSON object", `"The answer is 4"`}},
		{"array", `["4"]`, provider.KindInvalid, []string{"not a JSON object"}},
		{"string", `"4"`, provider.KindInvalid, []string{"not a JSON object"}},
		{"truncated", `{"output": "4`, provider.KindInvalid, []string{"not valid JSON"}},
		{"no output", `{"answer":"4"}`, provider.KindInvalid, []string{`no "output" field`}},
		{"null output", `{"output":null}`, provider.KindInvalid, []string{`"output" is null`}},
		{"two objects", "{\"output\":\"a\"}\n{\"output\":\"b\"}", provider.KindInvalid, []string{"unexpected data after the reply"}},
		{"log line first", "loading index...\n{\"output\":\"a\"}", provider.KindInvalid, []string{"not a JSON object", "loading index"}},
		{"negative usage", `{"output":"a","usage":{"input":-1}}`, provider.KindInvalid, []string{`"usage.input" is "-1"`}},
		{"output key in another case", `{"Output":"a"}`, provider.KindInvalid, []string{`no "output" field (it has "Output"; field names are lower case)`}},
		{"cached over input", `{"output":"a","usage":{"input":1,"cached":2}}`, provider.KindInvalid, []string{"cached tokens"}},
		{"fractional usage", `{"output":"a","usage":{"input":1.5}}`, provider.KindInvalid, []string{`"usage.input" is "1.5"`, "want a non-negative whole number"}},
		{"usage not an object", `{"output":"a","usage":"many"}`, provider.KindInvalid, []string{`"usage" is a JSON string`, "want an object"}},
		{"model not a string", `{"output":"a","model":7}`, provider.KindInvalid, []string{`"model" is a JSON number`, "want a string"}},
		{"error string", `{"output":"","error":"upstream 503"}`, provider.KindExec, []string{"reported an error", "upstream 503"}},
		{"error object", `{"error":{"code":7}}`, provider.KindExec, []string{`{\"code\":7}`}},
		{"tool_calls not a list", `{"output":"a","tool_calls":{"name":"f"}}`, provider.KindInvalid, []string{"tool_calls is a JSON object; want a list"}},
		{"tool call without a name", `{"output":"a","tool_calls":[{"arguments":{}}]}`, provider.KindInvalid, []string{"tool_calls[0] has no name"}},
		{"tool call not an object", `{"output":"a","tool_calls":["f"]}`, provider.KindInvalid, []string{"tool_calls[0] is a JSON string"}},
		{"tool call id a number", `{"output":"a","tool_calls":[{"name":"f","id":1}]}`, provider.KindInvalid, []string{`"id" is a JSON number`}},
		{"empty tool calls need an output", `{"tool_calls":[]}`, provider.KindInvalid, []string{`no "output" field`}},
		{"long garbage quoted by its head", "x" + long, provider.KindInvalid, []string{"(first 200 of 801 bytes)"}},
		{"terminal escapes are quoted", "\x1b[2J\x1b[31mboom", provider.KindInvalid, []string{`\x1b[2J`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := decodeReply([]byte(c.stdout))
			if err == nil {
				t.Fatalf("decodeReply(%q) = %+v; want a %s error", c.stdout, r, c.kind)
			}
			if err.Kind != c.kind {
				t.Errorf("kind %q (%v); want %q", err.Kind, err, c.kind)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Msg, w) {
					t.Errorf("message %q does not contain %q", err.Msg, w)
				}
			}
			if strings.Contains(err.Msg, "\x1b") {
				t.Errorf("message carries a raw escape: %q", err.Msg)
			}
			if c.kind == provider.KindInvalid && !strings.Contains(err.Msg, "want one JSON object") {
				t.Errorf("message %q does not say what a valid reply is", err.Msg)
			}
		})
	}
}

// FuzzDecodeReply: any bytes a program prints give either a reply or a
// bounded, classified error, never a panic; an accepted reply is one JSON
// object whose "output" the reply text reflects.
func FuzzDecodeReply(f *testing.F) {
	for _, s := range []string{
		`{"output":"4"}`, `{"output":{"a":1}}`, `{"output":"x","usage":{"input":1,"output":2,"cached":0}}`,
		`{"error":"e"}`, `{"output":null}`, "", "null", `{"output":"a"} x`, "\xef\xbb\xbf{\"output\":\"\\u00e9\"}",
		`{"output":"a","usage":{"input":-5}}`, "{\"output\":\"\xff\"}",
		`{"tool_calls":[{"name":"f","arguments":{"a":1},"id":"c"}]}`, `{"output":null,"tool_calls":[{"name":""}]}`, `{"tool_calls":[{"name":"f","arguments":"{"}],"output":1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, stdout []byte) {
		r, err := decodeReply(stdout)
		if err != nil {
			if r != nil {
				t.Fatal("both a reply and an error")
			}
			if err.Kind != provider.KindInvalid && err.Kind != provider.KindExec {
				t.Fatalf("kind %q; want invalid_reply or exec_error", err.Kind)
			}
			if len(err.Msg) > 2000 {
				t.Fatalf("message is %d bytes; it must quote only the head of the output", len(err.Msg))
			}
			if !utf8.ValidString(err.Msg) {
				t.Fatalf("message is not valid UTF-8: %q", err.Msg)
			}
			return
		}
		body := bytes.TrimSpace(bytes.TrimPrefix(stdout, []byte("\xef\xbb\xbf")))
		var obj map[string]json.RawMessage
		if json.Unmarshal(body, &obj) != nil {
			t.Fatalf("accepted %q, which is not one JSON object", stdout)
		}
		if _, ok := obj["output"]; !ok && len(r.toolCalls) == 0 {
			// Duplicate keys: encoding/json keeps the last, as decodeReply does.
			t.Fatalf("accepted %q without an output field", stdout)
		}
		for _, c := range r.toolCalls {
			if c.Name == "" {
				t.Fatalf("accepted a tool call without a name: %q", stdout)
			}
		}
		if r.usage.Input < 0 || r.usage.Output < 0 || r.usage.Cached < 0 || r.usage.Cached > r.usage.Input {
			t.Fatalf("accepted impossible usage %+v", r.usage)
		}
	})
}

// A tool-calling request reaches the program whole: tools, tool choice,
// response format, and a history of calls and their results.
func TestToolRequestProtocol(t *testing.T) {
	p := newHelper(t, "request")
	req := &provider.Request{
		CaseID: "1",
		Messages: []provider.Message{
			{Role: "user", Content: "weather?"},
			{Role: "assistant", ToolCalls: []provider.ToolCall{{ID: "c1", Name: "get_weather", Arguments: `{"city": "Par`}}},
			{Role: "tool", ToolCallID: "c1", Content: "sunny"},
		},
		Tools:          []provider.Tool{{Name: "get_weather", Description: "d", Parameters: json.RawMessage(`{"type": "object"}`)}},
		ToolChoice:     "get_weather",
		ResponseFormat: &provider.ResponseFormat{Name: "answer", Schema: json.RawMessage(`{"type":"object"}`), Strict: true},
	}
	resp, err := call(t, p, req)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]json.RawMessage
	if err := json.Unmarshal([]byte(resp.Text), &got); err != nil {
		t.Fatal(err)
	}
	for field, want := range map[string]string{
		"tools":           `[{"name":"get_weather","description":"d","parameters":{"type":"object"}}]`,
		"tool_choice":     `"get_weather"`,
		"response_format": `{"name":"answer","schema":{"type":"object"},"strict":true}`,
		"messages":        `[{"role":"user","content":"weather?"},{"role":"assistant","content":"","tool_calls":[{"id":"c1","name":"get_weather","arguments":"{\"city\": \"Par"}]},{"role":"tool","content":"sunny","tool_call_id":"c1"}]`,
	} {
		if string(got[field]) != want {
			t.Errorf("%s = %s\nwant %s", field, got[field], want)
		}
	}
	// Without them, none of the three is sent.
	resp, err = call(t, p, &provider.Request{CaseID: "1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, absent := range []string{`"tools"`, `"tool_choice"`, `"response_format"`} {
		if strings.Contains(resp.Text, absent) {
			t.Errorf("%s sent for a request without it: %s", absent, resp.Text)
		}
	}
}
