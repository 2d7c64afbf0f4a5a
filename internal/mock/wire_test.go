package mock

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestWords(t *testing.T) {
	for _, tt := range []struct {
		s    string
		want int
	}{
		{"", 0}, {"   \n\t", 0}, {"one", 1}, {" one  two\nthree\t", 3},
		{"naïve café", 2}, {"a\u00a0b", 2}, // NBSP is whitespace
	} {
		if got := words(tt.s); got != tt.want {
			t.Errorf("words(%q) = %d, want %d", tt.s, got, tt.want)
		}
	}
}

func TestPiecesRebuildTheText(t *testing.T) {
	for _, tt := range []struct {
		s    string
		want []string
	}{
		{"", nil},
		{"one", []string{"one"}},
		{"  lead and trail  ", []string{"  lead", " and", " trail  "}},
		{"a\n\nb", []string{"a", "\n\nb"}},
		{"   ", []string{"   "}},
	} {
		var got []string
		pieces(tt.s, func(p string) bool { got = append(got, p); return true })
		if strings.Join(got, "|") != strings.Join(tt.want, "|") || len(got) != len(tt.want) {
			t.Errorf("pieces(%q) = %q, want %q", tt.s, got, tt.want)
		}
	}
	var n int
	if pieces("a b c", func(string) bool { n++; return n < 2 }) || n != 2 {
		t.Errorf("pieces did not stop when asked: %d calls", n)
	}
}

func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{"", "plain", `quote " backslash \ slash /`, "nl\ncr\rtab\t\x00\x1f\x7f", "é 漢字 🙂", "bad \xff utf8", "\u2028\u2029", "<html>&"} {
		got := appendString(nil, s)
		var back string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Errorf("appendString(%q) = %s is not a JSON string: %v", s, got, err)
			continue
		}
		want := strings.ToValidUTF8(s, "\ufffd")
		if back != want {
			t.Errorf("appendString(%q) decodes to %q, want %q", s, back, want)
		}
	}
}

// FuzzAppendString checks that every string the mock writes into a body is
// valid JSON that decodes to the original (invalid UTF-8 replaced, as
// encoding/json does).
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "a\"b\\c", "\x00\n\u2028", "\xff\xfe", "🙂"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b := appendString(nil, s)
		var back string
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("appendString(%q) = %s: %v", s, b, err)
		}
		want, _ := json.Marshal(s)
		var ref string
		_ = json.Unmarshal(want, &ref)
		if back != ref {
			t.Fatalf("appendString(%q) decodes to %q, encoding/json gives %q", s, back, ref)
		}
	})
}

// FuzzHandler sends arbitrary bodies to both endpoints: the server must
// answer 200 with a well-formed reply or 4xx with the API's error shape,
// and never panic.
func FuzzHandler(f *testing.F) {
	f.Add(true, []byte(chatBody))
	f.Add(false, []byte(messagesBody))
	f.Add(true, []byte(`{"model":"m","stream":true,"stream_options":{"include_usage":true},"stop":["b"],"max_tokens":1,"messages":[{"role":"user","content":[{"type":"text","text":"a b"}]}]}`))
	f.Add(false, []byte(`{"model":"c","max_tokens":2,"stream":true,"system":[{"type":"text","text":"s"}],"stop_sequences":[""],"messages":[{"role":"user","content":"x\u0000y"}]}`))
	f.Add(true, []byte(`{"model":"m","messages":[{"role":"user","content":null}]}`))
	f.Add(false, []byte(`[]`))
	f.Add(true, []byte(`{"model":1}`))
	for _, m := range modes {
		f.Add(!m.anthropic, []byte(toolBody(m.anthropic, m.stream, "", `[{"role":"user","content":"call b"}]`)))
		f.Add(!m.anthropic, []byte(toolBody(m.anthropic, m.stream, toolChoice(m.anthropic, "get_weather"), `[{"role":"user","content":"x"}]`)))
	}
	f.Add(true, []byte(`{"model":"m","messages":[{"role":"user","content":"x"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{"}}]},{"role":"tool","tool_call_id":"c1","content":"r"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}],"stream":true}`))
	f.Add(false, []byte(`{"model":"m","max_tokens":9,"tools":[{"name":"f","input_schema":{"type":"object","properties":{"q":{"enum":["\u2028"]}}}}],"messages":[{"role":"user","content":"x"},{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"f","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"r"}]}]}]}`))
	f.Add(true, []byte(`{"model":"m","response_format":{"type":"json_schema","json_schema":{"name":"a","schema":{"type":"array","items":{"type":"string"}}}},"messages":[{"role":"user","content":"x"}]}`))
	s := New(Options{CacheSystem: true, MalformedArgs: 0.5, Rules: []Rule{
		{Match: "b", Reply: "rule \"b\" fired\n", ToolCalls: []ToolCall{{Name: "get_weather", Arguments: "{\"a\":\"\u2028\xff\"}"}, {Name: "other"}}},
		{Match: "b", Reply: "rule \"b\" fired\n"},
	}})
	h := s.Handler()
	f.Fuzz(func(t *testing.T, openAI bool, body []byte) {
		path := "/v1/messages"
		if openAI {
			path = "/v1/chat/completions"
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body)))
		out := rec.Body.Bytes()
		switch {
		case rec.Code == 200 && rec.Header().Get("Content-Type") == "text/event-stream":
			for _, ev := range bytes.Split(bytes.TrimSuffix(out, []byte("\n\n")), []byte("\n\n")) {
				for _, line := range bytes.Split(ev, []byte("\n")) {
					data, ok := bytes.CutPrefix(line, []byte("data: "))
					if ok && string(data) != "[DONE]" && !json.Valid(data) {
						t.Fatalf("stream event data is not JSON: %q", data)
					}
				}
			}
		case rec.Code == 200 || rec.Code == 400:
			if !json.Valid(out) {
				t.Fatalf("status %d body is not JSON: %q", rec.Code, out)
			}
			if rec.Code == 400 && !bytes.Contains(out, []byte(`"message":`)) {
				t.Fatalf("400 without a message: %s", out)
			}
		default:
			t.Fatalf("status %d for body %q", rec.Code, body)
		}
		if !utf8.Valid(out) {
			t.Fatalf("response is not valid UTF-8: %q", out)
		}
	})
}
