package replay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/spec"
)

// writeRecords writes lines to a file in a temp dir and returns the dir and
// the file's name within it.
func writeRecords(t *testing.T, lines ...string) (dir, name string) {
	t.Helper()
	dir = t.TempDir()
	name = "recorded.jsonl"
	if err := os.WriteFile(filepath.Join(dir, name), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, name
}

func newReplay(t *testing.T, r spec.Replay, lines ...string) *Provider {
	t.Helper()
	dir, name := writeRecords(t, lines...)
	r.Path = name
	p, err := New(&spec.Target{Name: "rec", Provider: "replay", Model: "target-model", Replay: &r}, dir)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func ask(t *testing.T, p *Provider, vars map[string]any) (*provider.Response, error) {
	t.Helper()
	return p.Complete(context.Background(), &provider.Request{CaseID: "c", Model: "req-model", Vars: vars})
}

func mustAsk(t *testing.T, p *Provider, vars map[string]any) *provider.Response {
	t.Helper()
	resp, err := ask(t, p, vars)
	if err != nil {
		t.Fatalf("Complete(%v): %v", vars, err)
	}
	return resp
}

func wantKind(t *testing.T, err error, kind provider.ErrorKind, contains ...string) *provider.Error {
	t.Helper()
	var pe *provider.Error
	if !errors.As(err, &pe) {
		t.Fatalf("error %v (%T) is not a *provider.Error", err, err)
	}
	if pe.Kind != kind {
		t.Fatalf("kind %q (%v); want %q", pe.Kind, err, kind)
	}
	for _, c := range contains {
		if !strings.Contains(pe.Error(), c) {
			t.Errorf("error %q does not contain %q", pe.Error(), c)
		}
	}
	return pe
}

func TestJoinsEachCaseToItsRecord(t *testing.T) {
	p := newReplay(t, spec.Replay{Join: "question", Output: "answers.model_b"},
		`{"question": "2+2?", "answers": {"model_a": "5", "model_b": "4"}}`,
		`{"question": "capital of France?", "answers": {"model_a": "Lyon", "model_b": "Paris"}}`,
		`{"question": "q with \"quotes\" and ünïcode", "answers": {"model_b": "yes\nreally"}}`,
	)
	for q, want := range map[string]string{
		"2+2?":                        "4",
		"capital of France?":          "Paris",
		`q with "quotes" and ünïcode`: "yes\nreally",
	} {
		if got := mustAsk(t, p, map[string]any{"question": q}).Text; got != want {
			t.Errorf("question %q: reply %q; want %q", q, got, want)
		}
	}
	if p.Len() != 3 {
		t.Errorf("Len() = %d; want 3", p.Len())
	}
}

func TestRecordJoinNamesTheRecordField(t *testing.T) {
	p := newReplay(t, spec.Replay{Join: "id", RecordJoin: "meta.case_id", Output: "out"},
		`{"meta": {"case_id": "a"}, "out": "A"}`,
		`{"meta": {"case_id": "b"}, "out": "B"}`,
	)
	if got := mustAsk(t, p, map[string]any{"id": "b"}).Text; got != "B" {
		t.Errorf("reply %q; want B", got)
	}
}

// Numbers and strings join by value: the dataset may hold 7, 7.0 or "7".
func TestJoinValuesCompareAsText(t *testing.T) {
	p := newReplay(t, spec.Replay{Join: "id", Output: "out"},
		`{"id": 7, "out": "seven"}`,
		`{"id": "8", "out": "eight"}`,
		`{"id": 9.0, "out": "nine"}`,
		`{"id": 1e3, "out": "thousand"}`,
		`{"id": 0.25, "out": "quarter"}`,
		`{"id": 12345678901234567890, "out": "big"}`,
		`{"id": true, "out": "yes"}`,
	)
	cases := []struct {
		v    any
		want string
	}{
		{7.0, "seven"}, {"7", "seven"}, {json.Number("7"), "seven"}, {7, "seven"}, {int64(7), "seven"},
		{8.0, "eight"}, {"8", "eight"},
		{9, "nine"}, {"9", "nine"},
		{1000.0, "thousand"}, {"1000", "thousand"},
		{0.25, "quarter"}, {"0.25", "quarter"}, {json.Number("2.5e-1"), "quarter"},
		{"12345678901234567890", "big"}, {json.Number("12345678901234567890"), "big"},
		{true, "yes"}, {"true", "yes"},
	}
	for _, c := range cases {
		resp, err := ask(t, p, map[string]any{"id": c.v})
		if err != nil {
			t.Errorf("id %#v: %v", c.v, err)
			continue
		}
		if resp.Text != c.want {
			t.Errorf("id %#v: reply %q; want %q", c.v, resp.Text, c.want)
		}
	}
	for _, v := range []any{7.5, "07", "7.0 ", false, 10.0} {
		_, err := ask(t, p, map[string]any{"id": v})
		wantKind(t, err, provider.KindNoRecord)
	}
}

func TestNoRecord(t *testing.T) {
	p := newReplay(t, spec.Replay{Join: "question", Output: "out"}, `{"question": "known", "out": "x"}`)

	_, err := ask(t, p, map[string]any{"question": "unknown <b>"})
	pe := wantKind(t, err, provider.KindNoRecord, "recorded.jsonl", `"unknown <b>"`)
	if pe.Retryable() {
		t.Error("a missing record is retryable; it can never succeed")
	}
	_, err = ask(t, p, map[string]any{"other": "known"})
	wantKind(t, err, provider.KindNoRecord, `no "question" to join on`)
	_, err = ask(t, p, map[string]any{"question": nil})
	wantKind(t, err, provider.KindNoRecord)
	_, err = ask(t, p, map[string]any{"question": map[string]any{"a": 1}})
	wantKind(t, err, provider.KindNoRecord, "want a string or a number")
}

// A record without the output (the recorded model failed on that case) is
// kept: its case fails with the reason, the others replay.
func TestRecordWithoutOutput(t *testing.T) {
	p := newReplay(t, spec.Replay{Join: "q", Output: "m.solution"},
		`{"q": "a", "m": {"solution": "A"}}`,
		`{"q": "b", "m": {"error": "content filter"}}`,
		`{"q": "c", "m": {"solution": null}}`,
		`{"q": "d", "m": "oops"}`,
	)
	if got := mustAsk(t, p, map[string]any{"q": "a"}).Text; got != "A" {
		t.Errorf("reply %q", got)
	}
	_, err := ask(t, p, map[string]any{"q": "b"})
	wantKind(t, err, provider.KindNoRecord, "recorded.jsonl:2", `no "solution" in m`, `"error"`)
	_, err = ask(t, p, map[string]any{"q": "c"})
	wantKind(t, err, provider.KindNoRecord, "recorded.jsonl:3", "m.solution is null")
	_, err = ask(t, p, map[string]any{"q": "d"})
	wantKind(t, err, provider.KindNoRecord, "recorded.jsonl:4", "m is a JSON string, not an object")
}

func TestOutputThatIsNotAString(t *testing.T) {
	p := newReplay(t, spec.Replay{Join: "q", Output: "out"},
		`{"q": "obj", "out": {"team": "billing",  "priority": [1, 2]}}`,
		`{"q": "num", "out": 42.50}`,
		`{"q": "bool", "out": false}`,
		`{"q": "arr", "out": ["a", {"b": null}]}`,
	)
	for q, want := range map[string]string{
		"obj":  `{"team":"billing","priority":[1,2]}`,
		"num":  "42.50",
		"bool": "false",
		"arr":  `["a",{"b":null}]`,
	} {
		if got := mustAsk(t, p, map[string]any{"q": q}).Text; got != want {
			t.Errorf("%s: reply %q; want %q", q, got, want)
		}
	}
}

func TestOutputPathThroughArrays(t *testing.T) {
	p := newReplay(t, spec.Replay{Join: "q", Output: "choices.1.text"},
		`{"q": "a", "choices": [{"text": "first"}, {"text": "second"}]}`,
		`{"q": "b", "choices": [{"text": "only"}]}`,
		`{"q": "c", "choices": {"x": 1}}`,
	)
	if got := mustAsk(t, p, map[string]any{"q": "a"}).Text; got != "second" {
		t.Errorf("reply %q; want second", got)
	}
	_, err := ask(t, p, map[string]any{"q": "b"})
	wantKind(t, err, provider.KindNoRecord, "choices has 1 elements")
	_, err = ask(t, p, map[string]any{"q": "c"})
	wantKind(t, err, provider.KindNoRecord, `no "1" in choices`)
}

func TestRecordedMetadata(t *testing.T) {
	p := newReplay(t, spec.Replay{Join: "q", Output: "run.out"},
		// next to the output
		`{"q": "near", "run": {"out": "x", "usage": {"input": 100, "output": 20, "cached": 30}, "latency_ms": 1500, "model": "m-near", "finish_reason": "length"}}`,
		// at the top level
		`{"q": "top", "run": {"out": "x"}, "usage": {"prompt_tokens": 7, "completion_tokens": 3}, "latency_ms": 2.5, "model": "m-top"}`,
		// next to the output wins over the top level
		`{"q": "both", "run": {"out": "x", "model": "m-near", "usage": {"input_tokens": 5, "output_tokens": 6}}, "model": "m-top", "usage": {"input": 1, "output": 1}}`,
		// none
		`{"q": "none", "run": {"out": "x"}}`,
	)
	cases := []struct {
		q       string
		usage   provider.Usage
		latency time.Duration
		model   string
		finish  string
	}{
		{"near", provider.Usage{Input: 100, Output: 20, Cached: 30}, 1500 * time.Millisecond, "m-near", "length"},
		{"top", provider.Usage{Input: 7, Output: 3}, 2500 * time.Microsecond, "m-top", ""},
		{"both", provider.Usage{Input: 5, Output: 6}, 0, "m-near", ""},
		{"none", provider.Usage{}, 0, "target-model", ""},
	}
	for _, c := range cases {
		resp := mustAsk(t, p, map[string]any{"q": c.q})
		if resp.Usage != c.usage || resp.Model != c.model || resp.FinishReason != c.finish || resp.Attempts != 1 {
			t.Errorf("%s: %+v; want usage %+v, model %q, finish %q, 1 attempt", c.q, resp, c.usage, c.model, c.finish)
		}
		if c.latency > 0 && resp.Latency != c.latency {
			t.Errorf("%s: latency %v; want the recorded %v", c.q, resp.Latency, c.latency)
		}
		if c.latency == 0 && (resp.Latency <= 0 || resp.Latency > time.Second) {
			t.Errorf("%s: latency %v; want the measured lookup time (tiny, > 0)", c.q, resp.Latency)
		}
	}
}

// Without a model recorded or on the target, the request's model is reported.
func TestModelFallsBackToRequest(t *testing.T) {
	dir, name := writeRecords(t, `{"q": "a", "out": "x"}`)
	p, err := New(&spec.Target{Name: "r", Replay: &spec.Replay{Path: name, Join: "q", Output: "out"}}, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if got := mustAsk(t, p, map[string]any{"q": "a"}).Model; got != "req-model" {
		t.Errorf("model %q; want the request's", got)
	}
}

func TestLineEndingsBOMAndBlankLines(t *testing.T) {
	dir := t.TempDir()
	content := "\xef\xbb\xbf{\"q\": \"a\", \"out\": \"A\"}\r\n\r\n  \n{\"q\": \"b\", \"out\": \"B\"}\r\n{\"q\": \"c\", \"out\": \"C\"}"
	if err := os.WriteFile(filepath.Join(dir, "r.jsonl"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := New(&spec.Target{Name: "r", Replay: &spec.Replay{Path: "r.jsonl", Join: "q", Output: "out"}}, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for q, want := range map[string]string{"a": "A", "b": "B", "c": "C"} {
		if got := mustAsk(t, p, map[string]any{"q": q}).Text; got != want {
			t.Errorf("%s: reply %q; want %q", q, got, want)
		}
	}
	// Line numbers count the blank lines.
	_, err = New(&spec.Target{Name: "r", Replay: &spec.Replay{Path: "r.jsonl", Join: "q", Output: "nope"}}, dir)
	if err == nil || !strings.Contains(err.Error(), "r.jsonl: no record has the output \"nope\" (line 1") {
		t.Errorf("error %v", err)
	}
}

// If the file is rewritten after indexing, a call says so rather than
// returning another case's output.
func TestFileChangedAfterIndexing(t *testing.T) {
	dir, name := writeRecords(t, `{"q": "a", "out": "A"}`, `{"q": "b", "out": "B"}`)
	p, err := New(&spec.Target{Name: "r", Replay: &spec.Replay{Path: name, Join: "q", Output: "out"}}, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(`{"q": "b", "out": "B"}`+"\n"+`{"q": "a", "out": "A"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = ask(t, p, map[string]any{"q": "a"})
	wantKind(t, err, provider.KindNoRecord, "changed after it was indexed")

	// Truncated: the record's bytes are gone.
	if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = ask(t, p, map[string]any{"q": "b"})
	wantKind(t, err, provider.KindNoRecord, "recorded.jsonl:2", "changed after it was indexed")
}

func TestNewReportsBadFiles(t *testing.T) {
	cases := []struct {
		name  string
		cfg   spec.Replay
		lines []string
		want  []string
	}{
		{"not JSON", spec.Replay{Join: "q", Output: "out"},
			[]string{`{"q": "a", "out": "A"}`, `{"q": "b", "out": `},
			[]string{"recorded.jsonl:2: not valid JSON", "want one JSON object per line"}},
		{"array line", spec.Replay{Join: "q", Output: "out"},
			[]string{`["a", "A"]`},
			[]string{"recorded.jsonl:1: record is a JSON array; want one JSON object per line"}},
		{"null line", spec.Replay{Join: "q", Output: "out"},
			[]string{`null`},
			[]string{"recorded.jsonl:1: record is null"}},
		{"missing join field", spec.Replay{Join: "question", Output: "out"},
			[]string{`{"question": "a", "out": "A"}`, `{"prompt": "b", "out": "B"}`},
			[]string{"recorded.jsonl:2: record has no join value: no field \"question\"", `its fields: "out", "prompt"`}},
		{"missing record_join", spec.Replay{Join: "question", RecordJoin: "meta.q", Output: "out"},
			[]string{`{"meta": {"id": 1}, "out": "A"}`},
			[]string{"recorded.jsonl:1:", `no "q" in meta`, `"id"`}},
		{"duplicate", spec.Replay{Join: "q", Output: "out"},
			[]string{`{"q": "a", "out": "1"}`, `{"q": "b", "out": "2"}`, `{"q": "a", "out": "3"}`},
			[]string{`recorded.jsonl:3: duplicate q "a" (first at line 1); each record's q must be unique`}},
		{"duplicate across number spellings", spec.Replay{Join: "q", Output: "out"},
			[]string{`{"q": 5, "out": "1"}`, `{"q": "5", "out": "2"}`},
			[]string{`recorded.jsonl:2: duplicate q "5" (first at line 1)`}},
		{"null join", spec.Replay{Join: "q", Output: "out"},
			[]string{`{"q": null, "out": "1"}`},
			[]string{"recorded.jsonl:1: q is null; want a string or a number"}},
		{"object join", spec.Replay{Join: "q", Output: "out"},
			[]string{`{"q": {"a": 1}, "out": "1"}`},
			[]string{"recorded.jsonl:1: q is a JSON object; want a string or a number"}},
		{"bad usage", spec.Replay{Join: "q", Output: "out"},
			[]string{`{"q": "a", "out": "1", "usage": {"input": -3}}`, `{"q": "b", "out": "1", "usage": "lots"}`, `{"q": "c", "out": "1", "usage": {"output": 1.5}}`},
			[]string{"recorded.jsonl:1: usage.input is -3; want a non-negative whole number", "recorded.jsonl:2: usage is \"lots\"; want an object", "recorded.jsonl:3: usage.output is 1.5"}},
		{"bad latency and model", spec.Replay{Join: "q", Output: "out"},
			[]string{`{"q": "a", "out": "1", "latency_ms": -1}`, `{"q": "b", "out": "1", "model": 3}`},
			[]string{"recorded.jsonl:1: latency_ms is -1; want a non-negative number of milliseconds", "recorded.jsonl:2: model is 3; want a string"}},
		{"output path missing everywhere", spec.Replay{Join: "q", Output: "175b.solutoin"},
			[]string{`{"q": "a", "175b": {"solution": "1"}}`, `{"q": "b", "175b": {"solution": "2"}}`},
			[]string{`recorded.jsonl: no record has the output "175b.solutoin" (line 1: no "solutoin" in 175b (its fields: "solution")); check replay.output`}},
		{"empty file", spec.Replay{Join: "q", Output: "out"},
			[]string{""},
			[]string{`recorded.jsonl: no records; want one JSON object per line, each with "q" and "out"`}},
		{"every problem at once", spec.Replay{Join: "q", Output: "out"},
			[]string{`nope`, `{"q": "a", "out": "1"}`, `{"x": 1}`, `{"q": "a", "out": "2"}`},
			[]string{"recorded.jsonl:1:", "recorded.jsonl:3:", "recorded.jsonl:4: duplicate"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir, name := writeRecords(t, c.lines...)
			c.cfg.Path = name
			p, err := New(&spec.Target{Name: "rec", Replay: &c.cfg}, dir)
			if err == nil {
				p.Close()
				t.Fatal("New succeeded; want an error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not contain %q:\n%v", w, err)
				}
			}
			if !strings.Contains(err.Error(), `replay target "rec"`) {
				t.Errorf("error does not name the target: %v", err)
			}
		})
	}
}

func TestNewReportsBadConfig(t *testing.T) {
	dir, name := writeRecords(t, `{"q": "a", "out": "A"}`)
	cases := []struct {
		name   string
		target spec.Target
		want   []string
	}{
		{"no replay section", spec.Target{Name: "r"}, []string{"no replay section", "want replay: {path:"}},
		{"all empty", spec.Target{Name: "r", Replay: &spec.Replay{}}, []string{"replay.path is empty", "replay.join is empty", "replay.output is empty"}},
		{"bad output path", spec.Target{Name: "r", Replay: &spec.Replay{Path: name, Join: "q", Output: "a..b"}}, []string{`replay.output "a..b" has an empty element`}},
		{"bad record_join", spec.Target{Name: "r", Replay: &spec.Replay{Path: name, Join: "q", RecordJoin: ".x", Output: "out"}}, []string{`replay.record_join ".x" has an empty element`}},
		{"missing file", spec.Target{Name: "r", Replay: &spec.Replay{Path: "nope.jsonl", Join: "q", Output: "out"}}, []string{"nope.jsonl", "relative to the spec's directory"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := New(&c.target, dir)
			if err == nil {
				t.Fatal("New succeeded; want an error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not contain %q:\n%v", w, err)
				}
			}
		})
	}
	if _, err := New(nil, dir); err == nil {
		t.Error("New(nil) succeeded")
	}
}

func TestIndexBounds(t *testing.T) {
	cfg := recordConfig{join: []string{"q"}, joinName: "q", output: []string{"out"}, outputName: "out"}
	long := `{"q": "long", "out": "` + strings.Repeat("x", 3<<20) + `"}`
	data := `{"q": "a", "out": "A"}` + "\n" + long + "\n" + `{"q": "b", "out": "B"}` + "\n"
	_, err := buildIndex(strings.NewReader(data), "f.jsonl", cfg, 2<<20)
	if err == nil || !strings.Contains(err.Error(), "f.jsonl:2: record is longer than 2 MiB") {
		t.Errorf("error %v; want line 2 over the record bound", err)
	}
	if err != nil && strings.Contains(err.Error(), "f.jsonl:3") {
		t.Errorf("the line after a long record is misnumbered or misread: %v", err)
	}

	var lines []string
	for range maxProblems + 5 {
		lines = append(lines, "garbage")
	}
	_, err = buildIndex(strings.NewReader(strings.Join(lines, "\n")), "f.jsonl", cfg, maxRecordBytes)
	if err == nil || strings.Count(err.Error(), "f.jsonl:") != maxProblems || !strings.Contains(err.Error(), "... and 5 more problems") {
		t.Errorf("want %d problems listed and 5 summarised; got %v", maxProblems, err)
	}
}

// The index holds offsets, not records: 100 records of 100 KB add far less
// than their 10 MB to the heap.
func TestIndexMemoryDoesNotHoldRecords(t *testing.T) {
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "big.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	pad := strings.Repeat("y", 100<<10)
	for i := range 100 {
		rec, _ := json.Marshal(map[string]any{"q": i, "out": pad})
		f.Write(append(rec, '\n'))
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	p, err := New(&spec.Target{Name: "big", Replay: &spec.Replay{Path: "big.jsonl", Join: "q", Output: "out"}}, dir)
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	grew := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	if grew > 1<<20 {
		t.Errorf("heap grew by %d bytes after indexing 10 MB of records; the index must not keep them", grew)
	}
	if got := mustAsk(t, p, map[string]any{"q": 57.0}).Text; got != pad {
		t.Errorf("record 57 read back as %d bytes; want %d", len(got), len(pad))
	}
	p.Close()
}

// Recorded tool calls replay in order, beside the output or alone; their
// arguments keep invalid JSON as written and JSON values as compact text.
func TestRecordedToolCalls(t *testing.T) {
	p := newReplay(t, spec.Replay{Join: "q", Output: "run.out"},
		`{"q": "both", "run": {"out": "checking", "tool_calls": [{"name": "f", "arguments": {"a": [1, 2.50]}, "id": "c1"}, {"name": "g", "arguments": "{\"x\": "}]}}`,
		`{"q": "alone", "run": {}, "tool_calls": [{"name": "f"}]}`,
		`{"q": "none", "run": {"out": "text"}}`,
	)
	for q, want := range map[string]string{
		"both":  `checking [{c1 f {"a":[1,2.50]}} { g {"x": }]`,
		"alone": ` [{ f }]`,
		"none":  `text []`,
	} {
		resp := mustAsk(t, p, map[string]any{"q": q})
		if got := resp.Text + " " + fmt.Sprint(resp.ToolCalls); got != want {
			t.Errorf("%s: %s; want %s", q, got, want)
		}
	}
}

func TestBadRecordedToolCalls(t *testing.T) {
	for _, c := range []struct{ line, want string }{
		{`{"q": "a", "out": "x", "tool_calls": {"name": "f"}}`, "recorded.jsonl:1: tool_calls is a JSON object; want a list"},
		{`{"q": "a", "out": "x", "tool_calls": [{"arguments": {}}]}`, "recorded.jsonl:1: tool_calls[0] has no name"},
		{`{"q": "a", "out": "x", "tool_calls": [{"name": "f", "id": 3}]}`, `recorded.jsonl:1: tool_calls[0] (f): "id" is a JSON number`},
	} {
		dir, name := writeRecords(t, c.line)
		_, err := New(&spec.Target{Name: "r", Replay: &spec.Replay{Path: name, Join: "q", Output: "out"}}, dir)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v; want one saying %q", c.line, err, c.want)
		}
	}
}
