package mock

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// weatherTools is one tool offered in each wire format.
const (
	weatherSchema    = `{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer","minimum":1},"unit":{"enum":["c","f"]}},"required":["city","unit","days"]}`
	openAIToolsJSON  = `[{"type":"function","function":{"name":"get_weather","description":"d","parameters":` + weatherSchema + `}},{"type":"function","function":{"name":"other","parameters":{"type":"object"}}}]`
	anthropicToolsJS = `[{"name":"get_weather","description":"d","input_schema":` + weatherSchema + `},{"name":"other","input_schema":{"type":"object"}}]`
)

// toolBody builds a request in either wire format offering the two tools,
// with choice ("" for none sent) and the messages given as raw JSON.
func toolBody(anthropic, stream bool, choice, messages string) string {
	if anthropic {
		b := `{"model":"m","max_tokens":100,"stream":` + fmt.Sprint(stream) + `,"tools":` + anthropicToolsJS
		if choice != "" {
			b += `,"tool_choice":` + choice
		}
		return b + `,"messages":` + messages + `}`
	}
	b := `{"model":"m","stream":` + fmt.Sprint(stream) + `,"stream_options":{"include_usage":true},"tools":` + openAIToolsJSON
	if choice != "" {
		b += `,"tool_choice":` + choice
	}
	return b + `,"messages":` + messages + `}`
}

// decoded is a reply read back independently of the server's code.
type decoded struct {
	text   string
	calls  []ToolCall
	ids    []string
	finish string
}

// decode reads a reply of either wire format, plain or streamed.
func decode(t *testing.T, anthropic bool, body []byte) decoded {
	t.Helper()
	var d decoded
	if bytes.HasPrefix(body, []byte("data: ")) || bytes.HasPrefix(body, []byte("event: ")) {
		args := map[int]*strings.Builder{}
		for _, line := range strings.Split(string(body), "\n") {
			data, ok := strings.CutPrefix(line, "data: ")
			if !ok || data == "[DONE]" {
				continue
			}
			if anthropic {
				var ev struct {
					Type         string `json:"type"`
					Index        int    `json:"index"`
					ContentBlock struct {
						Type, ID, Name string
					} `json:"content_block"`
					Delta struct {
						Type        string `json:"type"`
						Text        string `json:"text"`
						PartialJSON string `json:"partial_json"`
						StopReason  string `json:"stop_reason"`
					} `json:"delta"`
				}
				if err := json.Unmarshal([]byte(data), &ev); err != nil {
					t.Fatalf("event %q: %v", data, err)
				}
				switch {
				case ev.Type == "content_block_start" && ev.ContentBlock.Type == "tool_use":
					d.calls = append(d.calls, ToolCall{Name: ev.ContentBlock.Name})
					d.ids = append(d.ids, ev.ContentBlock.ID)
					args[len(d.calls)-1] = &strings.Builder{}
				case ev.Delta.Type == "text_delta":
					d.text += ev.Delta.Text
				case ev.Delta.Type == "input_json_delta":
					args[len(d.calls)-1].WriteString(ev.Delta.PartialJSON)
				case ev.Type == "message_delta":
					d.finish = ev.Delta.StopReason
				}
				continue
			}
			var ch struct {
				Choices []struct {
					Delta struct {
						Content   string `json:"content"`
						ToolCalls []struct {
							Index    int    `json:"index"`
							ID       string `json:"id"`
							Function struct {
								Name      string `json:"name"`
								Arguments string `json:"arguments"`
							} `json:"function"`
						} `json:"tool_calls"`
					} `json:"delta"`
					FinishReason *string `json:"finish_reason"`
				} `json:"choices"`
			}
			if err := json.Unmarshal([]byte(data), &ch); err != nil {
				t.Fatalf("chunk %q: %v", data, err)
			}
			for _, c := range ch.Choices {
				d.text += c.Delta.Content
				for _, tc := range c.Delta.ToolCalls {
					if tc.ID != "" {
						d.calls = append(d.calls, ToolCall{Name: tc.Function.Name})
						d.ids = append(d.ids, tc.ID)
						args[tc.Index] = &strings.Builder{}
					}
					args[tc.Index].WriteString(tc.Function.Arguments)
				}
				if c.FinishReason != nil {
					d.finish = *c.FinishReason
				}
			}
		}
		for i := range d.calls {
			d.calls[i].Arguments = args[i].String()
		}
		return d
	}
	if anthropic {
		var m struct {
			Content []struct {
				Type, Text, ID, Name string
				Input                json.RawMessage
			} `json:"content"`
			StopReason string `json:"stop_reason"`
		}
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatalf("message %s: %v", body, err)
		}
		for _, b := range m.Content {
			switch b.Type {
			case "text":
				d.text += b.Text
			case "tool_use":
				args := string(b.Input)
				var s string
				if json.Unmarshal(b.Input, &s) == nil {
					args = s
				}
				d.calls = append(d.calls, ToolCall{Name: b.Name, Arguments: args})
				d.ids = append(d.ids, b.ID)
			}
		}
		d.finish = m.StopReason
		return d
	}
	var cc struct {
		Choices []struct {
			Message struct {
				Content   *string `json:"content"`
				ToolCalls []struct {
					ID       string `json:"id"`
					Type     string `json:"type"`
					Function struct {
						Name      string `json:"name"`
						Arguments string `json:"arguments"`
					} `json:"function"`
				} `json:"tool_calls"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(body, &cc); err != nil {
		t.Fatalf("completion %s: %v", body, err)
	}
	m := cc.Choices[0].Message
	if m.Content != nil {
		d.text = *m.Content
	}
	for _, tc := range m.ToolCalls {
		if tc.Type != "function" {
			t.Errorf("tool call type %q, want function", tc.Type)
		}
		d.calls = append(d.calls, ToolCall{Name: tc.Function.Name, Arguments: tc.Function.Arguments})
		d.ids = append(d.ids, tc.ID)
	}
	d.finish = cc.Choices[0].FinishReason
	return d
}

// serveBody sends body to the handler and returns the status and body.
func serveBody(t *testing.T, h http.Handler, anthropic bool, body string) (int, []byte) {
	t.Helper()
	path := "/v1/chat/completions"
	if anthropic {
		path = "/v1/messages"
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, strings.NewReader(body)))
	out, _ := io.ReadAll(rec.Body)
	return rec.Code, out
}

// modes are the four ways a reply goes out.
var modes = []struct {
	name              string
	anthropic, stream bool
}{{"openai", false, false}, {"openai-stream", false, true}, {"anthropic", true, false}, {"anthropic-stream", true, true}}

// toolChoice is a choice in the request's wire format.
func toolChoice(anthropic bool, choice string) string {
	switch {
	case choice == "":
		return ""
	case anthropic && choice == "required":
		return `{"type":"any"}`
	case anthropic && (choice == "auto" || choice == "none"):
		return `{"type":"` + choice + `"}`
	case anthropic:
		return `{"type":"tool","name":"` + choice + `"}`
	case choice == "auto" || choice == "none" || choice == "required":
		return `"` + choice + `"`
	}
	return `{"type":"function","function":{"name":"` + choice + `"}}`
}

// Every wire format, plain and streamed, answers a tool-offering request
// with the same calls: by rule, by the default derived from the schema, the
// tool a choice forces, none under "none", and text once the conversation
// answered its calls.
func TestToolCallsSameInEveryWireFormat(t *testing.T) {
	rules := []Rule{
		{Match: "two calls", Reply: "calling", ToolCalls: []ToolCall{{Name: "get_weather", Arguments: `{"city":"Paris","unit":"c","days":2}`}, {Name: "other"}}},
		{Match: "json reply", Reply: `{"city":"Oslo"}`},
		{Match: "plain reply", Reply: "just text"},
		{Match: "stranger", ToolCalls: []ToolCall{{Name: "not_offered"}}},
	}
	user := func(s string) string { return `[{"role":"user","content":"` + s + `"}]` }
	tests := []struct {
		name, choice, messages string
		want                   decoded
	}{
		{"rule with calls and text", "", user("please make two calls"), decoded{text: "calling", calls: []ToolCall{{"get_weather", `{"city":"Paris","unit":"c","days":2}`}, {"other", "{}"}}}},
		{"default from the schema", "auto", user("what is the weather"), decoded{calls: []ToolCall{{"get_weather", `{"city":"mock","days":1,"unit":"c"}`}}}},
		{"required", "required", user("what is the weather"), decoded{calls: []ToolCall{{"get_weather", `{"city":"mock","days":1,"unit":"c"}`}}}},
		{"named", "other", user("what is the weather"), decoded{calls: []ToolCall{{"other", `{}`}}}},
		{"named with a JSON rule", "get_weather", user("json reply"), decoded{calls: []ToolCall{{"get_weather", `{"city":"Oslo"}`}}}},
		{"text rule", "auto", user("plain reply"), decoded{text: "just text"}},
		{"none", "none", user("please make two calls"), decoded{text: "please make two calls"}},
		{"rule calling a tool not forced", "get_weather", user("please make two calls"), decoded{calls: []ToolCall{{"get_weather", `{"city":"mock","days":1,"unit":"c"}`}}}},
		{"rule calling a tool not offered", "", user("call a stranger"), decoded{calls: []ToolCall{{"get_weather", `{"city":"mock","days":1,"unit":"c"}`}}}},
	}
	h := New(Options{Rules: rules}).Handler()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var firstIDs []string // without their prefix, the same in every mode
			for _, m := range modes {
				code, body := serveBody(t, h, m.anthropic, toolBody(m.anthropic, m.stream, toolChoice(m.anthropic, tt.choice), tt.messages))
				if code != 200 {
					t.Fatalf("%s: status %d: %s", m.name, code, body)
				}
				got := decode(t, m.anthropic, body)
				if got.text != tt.want.text || !reflect.DeepEqual(got.calls, tt.want.calls) {
					t.Errorf("%s: text %q calls %q; want %q %q", m.name, got.text, got.calls, tt.want.text, tt.want.calls)
				}
				wantFinish := map[bool]string{false: "stop", true: "end_turn"}[m.anthropic]
				if len(tt.want.calls) > 0 {
					wantFinish = map[bool]string{false: "tool_calls", true: "tool_use"}[m.anthropic]
				}
				if got.finish != wantFinish {
					t.Errorf("%s: finish %q, want %q", m.name, got.finish, wantFinish)
				}
				var ids []string
				for i, id := range got.ids {
					if id == "" || strings.Contains(strings.Join(got.ids[:i], " "), id) {
						t.Errorf("%s: call ids %q are not unique and non-empty", m.name, got.ids)
					}
					ids = append(ids, strings.TrimPrefix(strings.TrimPrefix(id, "call_mock_"), "toolu_mock_"))
				}
				if firstIDs == nil {
					firstIDs = ids
				} else if !reflect.DeepEqual(ids, firstIDs) {
					t.Errorf("%s: call ids %q; the first mode gave %q", m.name, ids, firstIDs)
				}
			}
		})
	}
}

// After the calls are answered, the next turn is text: the last tool result
// echoed (or Default); with ToolTurns 2 the second turn calls again.
func TestToolTurnsEndInText(t *testing.T) {
	openAIConvo := `[{"role":"user","content":"weather?"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"get_weather","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"sunny, 21 C"}]`
	anthropicConvo := `[{"role":"user","content":"weather?"},{"role":"assistant","content":[{"type":"tool_use","id":"c1","name":"get_weather","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","content":"sunny, 21 C"}]}]`
	for _, turns := range []int{0, 1, 2} {
		h := New(Options{ToolTurns: turns}).Handler()
		for _, m := range modes {
			convo := openAIConvo
			if m.anthropic {
				convo = anthropicConvo
			}
			code, body := serveBody(t, h, m.anthropic, toolBody(m.anthropic, m.stream, "", convo))
			if code != 200 {
				t.Fatalf("%s: status %d: %s", m.name, code, body)
			}
			got := decode(t, m.anthropic, body)
			if turns == 2 {
				if len(got.calls) != 1 || got.calls[0].Name != "get_weather" {
					t.Errorf("%s, tool turns 2: %+v; want a second call", m.name, got)
				}
				continue
			}
			if got.text != "sunny, 21 C" || len(got.calls) != 0 {
				t.Errorf("%s, tool turns %d: %+v; want the tool result echoed, no call", m.name, turns, got)
			}
		}
	}
}

// MalformedArgs at 1 breaks every call's arguments the same way in every
// format (Anthropic's plain format carries them as a JSON string); at 0 no
// call is broken; in between the same seed breaks the same calls.
func TestMalformedArguments(t *testing.T) {
	rules := []Rule{{ToolCalls: []ToolCall{{Name: "get_weather", Arguments: `{"city":"Paris"}`}, {Name: "other", Arguments: `7`}}}}
	s := New(Options{Rules: rules, MalformedArgs: 1})
	for _, m := range modes {
		code, body := serveBody(t, s.Handler(), m.anthropic, toolBody(m.anthropic, m.stream, "", `[{"role":"user","content":"x"}]`))
		if code != 200 {
			t.Fatalf("%s: status %d: %s", m.name, code, body)
		}
		got := decode(t, m.anthropic, body)
		want := []ToolCall{{"get_weather", `{"city":"Paris"`}, {"other", `7,`}}
		if !reflect.DeepEqual(got.calls, want) {
			t.Errorf("%s: calls %q, want %q", m.name, got.calls, want)
		}
		for _, c := range got.calls {
			if json.Valid([]byte(c.Arguments)) {
				t.Errorf("%s: %q is valid JSON; want it broken", m.name, c.Arguments)
			}
		}
	}
	if n := s.Stats().MalformedArgs; n != 8 {
		t.Errorf("Stats.MalformedArgs = %d, want 8", n)
	}
	broken := func(seed int64) []bool {
		s := New(Options{Rules: rules, MalformedArgs: 0.5, Seed: seed})
		var out []bool
		for range 20 {
			_, body := serveBody(t, s.Handler(), false, toolBody(false, false, "", `[{"role":"user","content":"x"}]`))
			for _, c := range decode(t, false, body).calls {
				out = append(out, !json.Valid([]byte(c.Arguments)))
			}
		}
		return out
	}
	a, b := broken(3), broken(3)
	if !reflect.DeepEqual(a, b) {
		t.Errorf("the same seed broke different calls: %v vs %v", a, b)
	}
	n := 0
	for _, x := range a {
		if x {
			n++
		}
	}
	if n == 0 || n == len(a) {
		t.Errorf("a fraction of 0.5 broke %d of %d calls", n, len(a))
	}
}

// A cut stream with calls stops before its end in both formats.
func TestTruncatedToolStream(t *testing.T) {
	h := New(Options{Truncate: 1}).Handler()
	for _, anthropic := range []bool{false, true} {
		_, body := serveBody(t, h, anthropic, toolBody(anthropic, true, "", `[{"role":"user","content":"x"}]`))
		if bytes.Contains(body, []byte("[DONE]")) || bytes.Contains(body, []byte("message_stop")) || bytes.Contains(body, []byte(`"finish_reason":"tool_calls"`)) {
			t.Errorf("anthropic %v: a truncated stream has its end: %s", anthropic, body)
		}
	}
}

// Requests that break the tool protocol are refused in the API's shape.
func TestBadToolRequests(t *testing.T) {
	tests := []struct {
		name      string
		anthropic bool
		body      string
		want      string
	}{
		{"tool message answering nothing", false, toolBody(false, false, "", `[{"role":"user","content":"x"},{"role":"tool","tool_call_id":"c9","content":"r"}]`), "must answer a tool call"},
		{"tool message for another call", false, toolBody(false, false, "", `[{"role":"user","content":"x"},{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c2","content":"r"}]`), `c2\" matches none`},
		{"assistant call without id", false, toolBody(false, false, "", `[{"role":"user","content":"x"},{"role":"assistant","tool_calls":[{"type":"function","function":{"name":"f"}}]}]`), "needs an id"},
		{"tool_choice without tools", false, `{"model":"m","tool_choice":"auto","messages":[{"role":"user","content":"x"}]}`, "only allowed when 'tools'"},
		{"named tool not offered", false, toolBody(false, false, `{"type":"function","function":{"name":"nope"}}`, `[{"role":"user","content":"x"}]`), `no tool named \"nope\"`},
		{"bad tool_choice", false, toolBody(false, false, `"sometimes"`, `[{"role":"user","content":"x"}]`), "tool_choice: expected"},
		{"tool without function", false, `{"model":"m","tools":[{"type":"function"}],"messages":[{"role":"user","content":"x"}]}`, "tools[0]"},
		{"bad response_format", false, `{"model":"m","response_format":{"type":"xml"},"messages":[{"role":"user","content":"x"}]}`, "response_format.type"},
		{"json_schema without name", false, `{"model":"m","response_format":{"type":"json_schema","json_schema":{"schema":{}}},"messages":[{"role":"user","content":"x"}]}`, "json_schema"},
		{"tool_result answering nothing", true, toolBody(true, false, "", `[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"r"}]}]`), "unexpected `tool_use_id`"},
		{"tool_result in an assistant message", true, toolBody(true, false, "", `[{"role":"user","content":"x"},{"role":"assistant","content":[{"type":"tool_result","tool_use_id":"t1"}]}]`), "belong in user messages"},
		{"tool_use in a user message", true, toolBody(true, false, "", `[{"role":"user","content":[{"type":"tool_use","id":"t1","name":"f","input":{}}]}]`), "belong in assistant messages"},
		{"tool_use with a string input", true, toolBody(true, false, "", `[{"role":"user","content":"x"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":"{}"}]}]`), "valid dictionary"},
		{"tool_result without id", true, toolBody(true, false, "", `[{"role":"user","content":[{"type":"tool_result","content":"r"}]}]`), "tool_use_id: Field required"},
		{"tool without input_schema", true, `{"model":"m","max_tokens":5,"tools":[{"name":"f"}],"messages":[{"role":"user","content":"x"}]}`, "input_schema: Field required"},
		{"tool without name", true, `{"model":"m","max_tokens":5,"tools":[{"input_schema":{}}],"messages":[{"role":"user","content":"x"}]}`, "name: Field required"},
		{"tool_choice naming no tool", true, toolBody(true, false, `{"type":"tool","name":"nope"}`, `[{"role":"user","content":"x"}]`), `tool \"nope\" not found`},
		{"bad tool_choice type", true, toolBody(true, false, `{"type":"sometimes"}`, `[{"role":"user","content":"x"}]`), "tool_choice.type"},
		{"any without tools", true, `{"model":"m","max_tokens":5,"tool_choice":{"type":"any"},"messages":[{"role":"user","content":"x"}]}`, "while providing tools"},
	}
	h := New(Options{}).Handler()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body := serveBody(t, h, tt.anthropic, tt.body)
			if code != 400 || !bytes.Contains(body, []byte(tt.want)) {
				t.Errorf("status %d body %s; want 400 saying %q", code, body, tt.want)
			}
		})
	}
}

// A json_schema response format without a rule is answered with JSON that
// the schema derives, on OpenAI's wire; Default, when set, wins.
func TestResponseFormat(t *testing.T) {
	body := `{"model":"m","response_format":{"type":"json_schema","json_schema":{"name":"answer","strict":true,"schema":{"type":"object","properties":{"answer":{"type":"number","minimum":2.5},"why":{"type":"string"}},"required":["answer"]}}},"messages":[{"role":"user","content":"x"}]}`
	_, out := serveBody(t, New(Options{}).Handler(), false, body)
	if got := decode(t, false, out).text; got != `{"answer":2.5}` {
		t.Errorf("reply %q, want {\"answer\":2.5}", got)
	}
	_, out = serveBody(t, New(Options{Default: `{"answer":4}`}).Handler(), false, body)
	if got := decode(t, false, out).text; got != `{"answer":4}` {
		t.Errorf("reply %q, want Default", got)
	}
}

// The arguments derived from typical tool schemas are valid against them.
func TestDerivedArgumentsValidate(t *testing.T) {
	for _, schema := range []string{
		weatherSchema,
		`{"type":"object","properties":{"when":{"type":"string","format":"date-time"},"to":{"type":"string","format":"email"},"site":{"type":"string","format":"uri"},"id":{"type":"string","format":"uuid"}},"required":["when","to","site","id"],"additionalProperties":false}`,
		`{"type":"object","properties":{"code":{"type":"string","minLength":6,"maxLength":8},"tag":{"type":"string","maxLength":2}},"required":["code","tag"]}`,
		`{"type":"object","properties":{"ids":{"type":"array","items":{"type":"integer","minimum":10},"minItems":3}},"required":["ids"]}`,
		`{"type":"object","properties":{"t":{"type":"number","exclusiveMinimum":0.5},"d":{"type":"integer","maximum":-4},"f":{"type":["null","boolean"]}},"required":["t","d","f"]}`,
		`{"type":"object","properties":{"mode":{"enum":["fast","slow"]},"n":{"const":3},"lang":{"type":"string","default":"en"}},"required":["mode","n","lang"]}`,
		`{"type":"object","properties":{"filter":{"type":"object","properties":{"kind":{"anyOf":[{"type":"string"},{"type":"null"}]}},"required":["kind"]}},"required":["filter"]}`,
	} {
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(schema))
		if err != nil {
			t.Fatal(err)
		}
		c := jsonschema.NewCompiler()
		c.AssertFormat()
		if err := c.AddResource("mem:///s.json", doc); err != nil {
			t.Fatal(err)
		}
		sch, err := c.Compile("mem:///s.json")
		if err != nil {
			t.Fatal(err)
		}
		args := deriveJSON(json.RawMessage(schema))
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(args))
		if err != nil {
			t.Fatal(err)
		}
		if err := sch.Validate(v); err != nil {
			t.Errorf("%s derives %s, which the schema refuses: %v", schema, args, err)
		}
	}
}

func TestDeriveJSON(t *testing.T) {
	tests := []struct{ schema, want string }{
		{`{"type":"object","properties":{"b":{"type":"boolean"},"a":{"type":"array","items":{"type":"integer","exclusiveMinimum":3}},"n":{"type":["null","string"]}}}`, `{"a":[4],"b":true,"n":"mock"}`},
		{`{"const":{"x":1}}`, `{"x":1}`},
		{`{"enum":[7,8]}`, `7`},
		{`{"type":"string","default":"d"}`, `"d"`},
		{`{"examples":["e"],"type":"string"}`, `"e"`},
		{`{"anyOf":[{"type":"null"},{"type":"string"}]}`, `null`},
		{`{"type":"number","minimum":1e400}`, `1e400`},
		{`not json`, `{}`},
		{`[]`, `{}`},
		{``, `{}`},
		{`{"required":["z"],"properties":{"y":{"type":"string"}}}`, `{"z":{}}`},
		{strings.Repeat(`{"type":"array","items":`, 100) + `{"type":"string"}` + strings.Repeat(`}`, 100), strings.Repeat("[", 33) + "{}" + strings.Repeat("]", 33)},
	}
	for _, tt := range tests {
		if got := deriveJSON(json.RawMessage(tt.schema)); got != tt.want {
			t.Errorf("deriveJSON(%.60s) = %s, want %s", tt.schema, got, tt.want)
		}
	}
}

// FuzzDeriveJSON: whatever the schema, the derived arguments are valid JSON.
func FuzzDeriveJSON(f *testing.F) {
	for _, s := range []string{weatherSchema, `{"type":"array"}`, `{"enum":[]}`, `{"minimum":"x","type":"integer"}`, `{"properties":{"a":5},"required":["a",1]}`, `{"type":"number","exclusiveMinimum":1.5}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, schema string) {
		if out := deriveJSON(json.RawMessage(schema)); !json.Valid([]byte(out)) {
			t.Fatalf("deriveJSON(%q) = %q is not JSON", schema, out)
		}
	})
}

func TestToolCallRuleDecoding(t *testing.T) {
	good := []struct{ in, name, args string }{
		{`{"name":"f","arguments":{"a": [1, 2.50]}}`, "f", `{"a":[1,2.50]}`},
		{`{"name":"f","arguments":"{\"a\": 1"}`, "f", `{"a": 1`},
		{`{"name":"f"}`, "f", ""},
		{`{"name":"f","arguments":null}`, "f", ""},
		{`{"name":"f","arguments":3}`, "f", "3"},
	}
	for _, g := range good {
		var c ToolCall
		if err := json.Unmarshal([]byte(g.in), &c); err != nil || c.Name != g.name || c.Arguments != g.args {
			t.Errorf("%s: %+v, %v; want %s %q", g.in, c, err, g.name, g.args)
		}
	}
	bad := []struct{ in, want string }{
		{`{"arguments":{}}`, "needs a name"},
		{`{"name":""}`, "needs a name"},
		{`{"name":5}`, "must be"},
		{`{"name":"f","args":{}}`, "unknown field"},
		{`[]`, "must be"},
		{`{"name":"f","arguments":[1,}`, "invalid character"},
	}
	for _, b := range bad {
		var c ToolCall
		err := json.Unmarshal([]byte(b.in), &c)
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%s: err %v; want one saying %q", b.in, err, b.want)
		}
	}
	if err := (Options{Rules: []Rule{{ToolCalls: []ToolCall{{}}}}}).Validate(); err == nil || !strings.Contains(err.Error(), "has no name") {
		t.Errorf("a rule's call without a name: %v", err)
	}
	if err := (Options{MalformedArgs: 1.5}).Validate(); err == nil {
		t.Error("MalformedArgs 1.5 accepted")
	}
}

// FuzzToolCallRule: a rule's call decodes or fails with an error, never
// panics, and what decodes has a name and round-trips.
func FuzzToolCallRule(f *testing.F) {
	for _, s := range []string{`{"name":"f","arguments":{"a":1}}`, `{"name":"f","arguments":"{"}`, `{"name":"","arguments":1}`, `{"name":"f","arguments":[}`, `null`, `{"name":"f","arguments":"\u0000"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var c ToolCall
		if err := json.Unmarshal([]byte(in), &c); err != nil {
			return
		}
		if c.Name == "" {
			t.Fatalf("%q decoded to a call without a name", in)
		}
		b, _ := json.Marshal(c)
		var back ToolCall
		if err := json.Unmarshal(b, &back); err != nil || back != c {
			t.Fatalf("%q: %+v does not round-trip: %+v %v", in, c, back, err)
		}
	})
}

// docs/mock.md's example holds: its rules decode, and the request it shows
// gets the calls it says; the second rule's broken call and the schema
// default do too.
func TestDocsExample(t *testing.T) {
	md, err := os.ReadFile("../../docs/mock.md")
	if err != nil {
		t.Fatal(err)
	}
	_, example, ok := strings.Cut(string(md), "### Example")
	if !ok {
		t.Fatal("docs/mock.md has no example")
	}
	_, block, _ := strings.Cut(example, "```json\n")
	block, _, _ = strings.Cut(block, "```")
	var rules []Rule
	for _, line := range strings.Split(strings.TrimSpace(block), "\n") {
		var r Rule
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("rule %q: %v", line, err)
		}
		rules = append(rules, r)
	}
	_, curl, _ := strings.Cut(example, "-d '")
	body, _, _ := strings.Cut(curl, "'")
	h := New(Options{Rules: rules}).Handler()
	code, out := serveBody(t, h, false, body)
	if code != 200 {
		t.Fatalf("status %d: %s", code, out)
	}
	d := decode(t, false, out)
	if want := `"tool_calls": [{"id": "` + d.ids[0] + `", "type": "function", "function":`; !strings.Contains(strings.Join(strings.Fields(example), " "), want) {
		t.Errorf("the example does not show the id %q", d.ids[0])
	}
	if fmt.Sprint(d.calls) != `[{get_weather {"city":"Paris","unit":"c"}}]` || d.finish != "tool_calls" {
		t.Errorf("the example's request got %v %q", d.calls, d.finish)
	}
	_, out = serveBody(t, h, false, strings.Replace(body, "What is the weather in Paris?", "Weather in two cities?", 1))
	if d := decode(t, false, out); d.text != "Checking both." || len(d.calls) != 2 || json.Valid([]byte(d.calls[1].Arguments)) {
		t.Errorf("the second rule: %+v", d)
	}
	_, out = serveBody(t, h, false, strings.Replace(body, "What is the weather in Paris?", "Anything else?", 1))
	if d := decode(t, false, out); fmt.Sprint(d.calls) != `[{get_weather {"city":"mock"}}]` {
		t.Errorf("no rule: %+v", d)
	}
}

// Rules by turn script a trajectory: search, then the weather, then the
// answer, the same in every wire format.
func TestRulesByTurn(t *testing.T) {
	h := New(Options{ToolTurns: 2, Rules: []Rule{
		{Turn: 1, ToolCalls: []ToolCall{{Name: "other", Arguments: `{"q":"where"}`}}},
		{Turn: 2, ToolCalls: []ToolCall{{Name: "get_weather", Arguments: `{"city":"Oslo"}`}}},
		{Turn: 3, Reply: "Cold in Oslo."},
	}}).Handler()
	openAI := []string{
		`{"role":"user","content":"weather?"}`,
		`{"role":"assistant","tool_calls":[{"id":"a","type":"function","function":{"name":"other","arguments":"{}"}}]},{"role":"tool","tool_call_id":"a","content":"Oslo"}`,
		`{"role":"assistant","tool_calls":[{"id":"b","type":"function","function":{"name":"get_weather","arguments":"{}"}}]},{"role":"tool","tool_call_id":"b","content":"-3 C"}`,
	}
	anthropic := []string{
		`{"role":"user","content":"weather?"}`,
		`{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"other","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"Oslo"}]}`,
		`{"role":"assistant","content":[{"type":"tool_use","id":"b","name":"get_weather","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"b","content":"-3 C"}]}`,
	}
	want := []string{`[{other {"q":"where"}}] `, `[{get_weather {"city":"Oslo"}}] `, `[] Cold in Oslo.`}
	for _, m := range modes {
		msgs := openAI
		if m.anthropic {
			msgs = anthropic
		}
		for turn := 1; turn <= 3; turn++ {
			code, body := serveBody(t, h, m.anthropic, toolBody(m.anthropic, m.stream, "", "["+strings.Join(msgs[:turn], ",")+"]"))
			if code != 200 {
				t.Fatalf("%s turn %d: status %d: %s", m.name, turn, code, body)
			}
			d := decode(t, m.anthropic, body)
			if got := fmt.Sprint(d.calls) + " " + d.text; got != strings.Replace(want[turn-1], "[]", fmt.Sprint([]ToolCall(nil)), 1) {
				t.Errorf("%s turn %d: %s; want %s", m.name, turn, got, want[turn-1])
			}
		}
	}
	if err := (Options{Rules: []Rule{{Turn: -1}}}).Validate(); err == nil {
		t.Error("a rule for turn -1 was accepted")
	}
}
