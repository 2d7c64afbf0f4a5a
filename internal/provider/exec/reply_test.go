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
		if _, ok := obj["output"]; !ok {
			// Duplicate keys: encoding/json keeps the last, as decodeReply does.
			t.Fatalf("accepted %q without an output field", stdout)
		}
		if r.usage.Input < 0 || r.usage.Output < 0 || r.usage.Cached < 0 || r.usage.Cached > r.usage.Input {
			t.Fatalf("accepted impossible usage %+v", r.usage)
		}
	})
}
