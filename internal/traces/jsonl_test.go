package traces

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/spec"
)

var fixedNow = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func reader(t testing.TB, m *spec.Traces) *JSONL {
	t.Helper()
	j, err := NewJSONL(m, "logs/app.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	j.Now = func() time.Time { return fixedNow }
	return j
}

func readAll(t *testing.T, j *JSONL, in string) ([]record.Trace, []string, JSONLCount) {
	t.Helper()
	var ts []record.Trace
	var ps []string
	n, err := j.Read(strings.NewReader(in), func(tr *record.Trace) error {
		ts = append(ts, *tr)
		return nil
	}, func(p spec.Problem) error {
		ps = append(ps, p.String())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ts, ps, n
}

var openAIMapping = &spec.Traces{
	ID: "request_id", Input: "request.messages", Output: "response.choices.0.message", Model: "request.model",
	Time: "ts", LatencyMS: "latency_ms", InputTokens: "response.usage.prompt_tokens", OutputTokens: "response.usage.completion_tokens",
	Attributes: map[string]string{"route": "meta.route", "temperature": "request.temperature"},
}

// An OpenAI chat log: messages with a system message first, content as a
// string and as parts, a tool call with its arguments and the tool's answer;
// the reply with a tool call.
func TestJSONLOpenAIForm(t *testing.T) {
	line := `{"request_id":"r-1","ts":"2026-05-01T12:00:00.250+02:00","latency_ms":812.5,"user":"u-7","meta":{"route":"/chat"},` +
		`"request":{"model":"gpt-4o","temperature":0.2,"messages":[` +
		`{"role":"system","content":"Be brief."},` +
		`{"role":"user","content":[{"type":"text","text":"Weather in"},{"type":"text","text":"Paris?"}]},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Paris\"}"}}]},` +
		`{"role":"tool","tool_call_id":"c1","content":"rain"}]},` +
		`"response":{"choices":[{"message":{"role":"assistant","content":"Rain.","tool_calls":[{"id":"c2","function":{"name":"umbrella","arguments":"{}"}}]},"finish_reason":"stop"}],` +
		`"usage":{"prompt_tokens":120,"completion_tokens":7}}}`
	ts, ps, n := readAll(t, reader(t, openAIMapping), line+"\n")
	if len(ps) != 0 || len(ts) != 1 || n.Lines != 1 || n.Bad != 0 {
		t.Fatalf("problems %v, traces %d, count %+v", ps, len(ts), n)
	}
	got := ts[0]
	want := record.Trace{
		ID: "r-1", TraceID: "r-1", Source: "jsonl:app.jsonl",
		Time: time.Date(2026, 5, 1, 10, 0, 0, 250e6, time.UTC), LatencyMS: 812.5,
		Model: "gpt-4o", InputTokens: 120, OutputTokens: 7, System: "Be brief.",
		Input: []record.Message{
			{Role: "user", Content: "Weather in\nParis?"},
			{Role: "assistant", ToolCalls: []record.ToolCall{{ID: "c1", Name: "weather", Arguments: `{"city":"Paris"}`}}},
			{Role: "tool", ToolCallID: "c1", Content: "rain"},
		},
		Output:   []record.Message{{Role: "assistant", Content: "Rain.", ToolCalls: []record.ToolCall{{ID: "c2", Name: "umbrella", Arguments: "{}"}}}},
		Received: fixedNow,
	}
	attrs := got.Attributes
	got.Attributes = nil
	if g, w := mustJSON(t, got), mustJSON(t, want); g != w {
		t.Errorf("trace\n got %s\nwant %s", g, w)
	}
	// The mapped attributes under their names, the other top-level fields
	// (user) under theirs; fields a mapping reads (request, response, ts,
	// meta...) are not copied again.
	var a map[string]any
	if err := json.Unmarshal(attrs, &a); err != nil {
		t.Fatalf("attributes %s: %v", attrs, err)
	}
	if mustJSON(t, a) != `{"route":"/chat","temperature":0.2,"user":"u-7"}` {
		t.Errorf("attributes %s", attrs)
	}
}

// The GenAI conventions' form: parts with text, a tool call with object
// arguments and a tool call response; system instructions as parts; a Unix
// time in milliseconds; no id mapped, so the ID is the line's hash.
func TestJSONLGenAIForm(t *testing.T) {
	m := &spec.Traces{Input: "in", Output: "out", System: "sys", Time: "t", Model: "m"}
	line := `{"t":1767323045123,"m":"claude","sys":[{"type":"text","content":"Rules."}],` +
		`"in":[{"role":"user","parts":[{"type":"text","content":"hi"}]},{"role":"assistant","parts":[{"type":"tool_call","id":"x","name":"f","arguments":{"a":1}}]},` +
		`{"role":"tool","parts":[{"type":"tool_call_response","id":"x","response":"ok"}]}],` +
		`"out":[{"role":"assistant","parts":[{"type":"text","content":"done"}],"finish_reason":"stop"}]}`
	ts, ps, _ := readAll(t, reader(t, m), line+"\r\n"+line+"\n")
	if len(ps) != 0 || len(ts) != 2 {
		t.Fatalf("problems %v, %d traces", ps, len(ts))
	}
	tr := ts[0]
	if tr.System != "Rules." || tr.Model != "claude" || !tr.Time.Equal(time.UnixMilli(1767323045123)) || tr.FinishReason != "stop" {
		t.Errorf("trace %+v", tr)
	}
	if mustJSON(t, tr.Input) != `[{"role":"user","content":"hi"},{"role":"assistant","content":"","tool_calls":[{"id":"x","name":"f","arguments":"{\"a\":1}"}]},{"role":"tool","content":"ok","tool_call_id":"x"}]` {
		t.Errorf("input %s", mustJSON(t, tr.Input))
	}
	if tr.OutputText() != "done" {
		t.Errorf("output %q", tr.OutputText())
	}
	// The hash of the line's bytes (its line end not counted): the same
	// line gets the same ID however it ends, so it is stored once.
	if !strings.HasPrefix(tr.ID, "sha256:") || len(tr.ID) != 7+64 || ts[1].ID != tr.ID || tr.TraceID != tr.ID {
		t.Errorf("IDs %q %q", tr.ID, ts[1].ID)
	}
	if tr.Attributes != nil {
		t.Errorf("every field is mapped, yet attributes %s", tr.Attributes)
	}
}

func TestJSONLStringsAndTimes(t *testing.T) {
	m := &spec.Traces{ID: "id", Input: "q", Output: "a", Time: "t"}
	for _, c := range []struct {
		t    string
		want time.Time
	}{
		{`"2026-01-02T03:04:05Z"`, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)},
		{`1767323045`, time.Unix(1767323045, 0)},
		{`1767323045.5`, time.Unix(1767323045, 5e8)},
		{`1767323045123`, time.UnixMilli(1767323045123)},
	} {
		ts, ps, _ := readAll(t, reader(t, m), `{"id":7,"q":"hello","a":"hi there","t":`+c.t+`}`)
		if len(ps) != 0 {
			t.Fatalf("%s: %v", c.t, ps)
		}
		tr := ts[0]
		if !tr.Time.Equal(c.want) || tr.Time.Location() != time.UTC {
			t.Errorf("time %s read as %v, want %v", c.t, tr.Time, c.want)
		}
		if tr.ID != "7" || mustJSON(t, tr.Input) != `[{"role":"user","content":"hello"}]` || mustJSON(t, tr.Output) != `[{"role":"assistant","content":"hi there"}]` {
			t.Errorf("trace %+v", tr)
		}
	}
	// No time mapped: the time of reading.
	ts, _, _ := readAll(t, reader(t, &spec.Traces{Input: "q", Output: "a"}), `{"q":"x","a":"y"}`)
	if !ts[0].Time.Equal(fixedNow) {
		t.Errorf("unmapped time %v", ts[0].Time)
	}
}

// Bad lines: each fixture's problems, exactly, at FILE:LINE:COL; good lines
// around them are still read.
func TestJSONLBadLines(t *testing.T) {
	m := &spec.Traces{ID: "id", Input: "req.messages", Output: "out", Time: "ts", Model: "model", InputTokens: "usage.in", LatencyMS: "ms",
		Attributes: map[string]string{"route": "meta.route"}}
	in, err := os.ReadFile(filepath.Join("testdata", "bad.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join("testdata", "bad.problems"))
	if err != nil {
		t.Fatal(err)
	}
	j := reader(t, m)
	j.MaxLine = 1024
	ts, ps, n := readAll(t, j, string(in))
	wantLines := strings.Split(strings.TrimSpace(string(want)), "\n")
	if strings.Join(ps, "\n") != strings.Join(wantLines, "\n") {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(ps, "\n"), strings.Join(wantLines, "\n"))
	}
	if len(ts) != 2 || ts[0].ID != "good-1" || ts[1].ID != "good-2" {
		t.Errorf("good lines read: %d", len(ts))
	}
	if n.Bad != len(wantLines) || n.Lines != len(wantLines)+2 {
		t.Errorf("count %+v", n)
	}
	// Check finds the same problems without making traces.
	var checked []string
	cn, err := j.Check(strings.NewReader(string(in)), func(p spec.Problem) error {
		checked = append(checked, p.String())
		return nil
	})
	if err != nil || strings.Join(checked, "\n") != strings.Join(ps, "\n") || cn != n {
		t.Errorf("Check: %v, %+v, problems:\n%s", err, cn, strings.Join(checked, "\n"))
	}
	// No problem repeats what may be private: the email, phone number and
	// key in the fixture's bad values.
	for _, p := range ps {
		for _, secret := range []string{"alice@example.com", "555", "sk-"} {
			if strings.Contains(p, secret) {
				t.Errorf("problem repeats %q: %s", secret, p)
			}
		}
	}
}

func TestNewJSONLNeedsInputAndOutput(t *testing.T) {
	for _, m := range []*spec.Traces{nil, {Input: "q"}, {Output: "a"}} {
		if _, err := NewJSONL(m, "f.jsonl"); err == nil {
			t.Errorf("%+v: no error", m)
		}
	}
	if _, err := NewJSONL(&spec.Traces{Input: "q", Output: "a..b"}, "f.jsonl"); err == nil {
		t.Error("a malformed path: no error")
	}
}

// Hostile lines: the reader never panics, a line is a trace or a problem
// (never both, never neither), a problem's column is within the line, and a
// trace's attributes are valid JSON.
func FuzzJSONLLine(f *testing.F) {
	for _, s := range []string{
		`{"id":"a","q":"x","a":"y"}`, `{"q":[{"role":"user","content":[{"type":"text","text":"x"}]}],"a":{"role":"assistant","parts":[]}}`,
		`{"q":"x","a":"y","t":1e300}`, `{"q":{"parts":7},"a":"y"}`, `[1]`, `{"q":"x","q":"y"}`, "{\"q\":\"\xff\"}", `{"id":{},"q":"","a":""}`,
		`{"x":{"y":[1,{"z":2}]},"q":"x","a":[{"tool_calls":[{"function":{"arguments":{"k":[]}}}]}]}`,
	} {
		f.Add([]byte(s))
	}
	j := reader(f, &spec.Traces{ID: "id", Input: "q", Output: "a", Time: "t", Model: "x.y.1.z", Attributes: map[string]string{"deep": "x.y.1"}})
	j2 := reader(f, &spec.Traces{Input: "q", Output: "a"})
	f.Fuzz(func(t *testing.T, line []byte) {
		if bytes.ContainsAny(line, "\n") {
			return
		}
		for _, jj := range []*JSONL{j, j2} {
			tr, p := jj.Line(1, line)
			if (tr == nil) == (p == nil) {
				t.Fatalf("%q: trace %v and problem %v", line, tr, p)
			}
			if p != nil {
				if p.Col < 1 || p.Col > len(line)+1 || p.Msg == "" {
					t.Errorf("%q: problem %v", line, p)
				}
				continue
			}
			if tr.Attributes != nil && !json.Valid(tr.Attributes) {
				t.Errorf("%q: attributes %q", line, tr.Attributes)
			}
			if tr.ID == "" || tr.Input == nil || tr.Output == nil {
				t.Errorf("%q: trace %+v", line, tr)
			}
		}
	})
}

// One OpenAI-form log line of about 1.4 KB mapped into a trace.
func BenchmarkJSONLLine(b *testing.B) {
	long := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 12)
	line := []byte(`{"request_id":"r-1","ts":"2026-05-01T12:00:00Z","latency_ms":812.5,"user":"u-7","meta":{"route":"/chat"},` +
		`"request":{"model":"gpt-4o","temperature":0.2,"messages":[{"role":"system","content":"` + long + `"},{"role":"user","content":"` + long + `"}]},` +
		`"response":{"choices":[{"message":{"role":"assistant","content":"` + long + `"}}],"usage":{"prompt_tokens":120,"completion_tokens":7}}}`)
	j := reader(b, openAIMapping)
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cpu := threadCPU()
	defer func() { b.ReportMetric(float64(threadCPU()-cpu)/float64(b.N), "cpu-ns/op") }()
	for b.Loop() {
		if _, p := j.Line(1, line); p != nil {
			b.Fatal(p)
		}
	}
}
