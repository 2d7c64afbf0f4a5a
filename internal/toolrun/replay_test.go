package toolrun

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/spec"
)

// replayTool builds the replay handler of tool over a file holding content.
func replayTool(t *testing.T, tool, content string) (Handler, error) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "calls.jsonl"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	hs, err := Build(&spec.Agent{Tools: map[string]spec.ToolHandler{tool: {Replay: "calls.jsonl"}}}, dir, nil)
	if err != nil {
		return nil, err
	}
	return hs[tool], nil
}

const recorded = `{"tool": "lookup", "arguments": {"id": 42}, "result": "shipped on May 2"}
{"tool": "lookup", "arguments": {"id": 42}, "result": "cancelled by the customer", "case_id": "17"}
{"tool": "lookup", "arguments": "{\"id\": 7, \"fields\": [\"status\", \"eta\"]}", "result": {"status": "late", "eta": "2026-12-09"}}
{"tool": "lookup", "arguments": {"id": 9, "q": {"b": 1, "a": "<x>"}}, "result": "nine", "case_id": 3}

{"tool": "refund", "arguments": {"id": 42}, "result": "refund lines belong to another handler"}
{"tool": "lookup", "arguments": {}, "result": "no arguments"}
`

// A call is answered by the line of its tool with JSON-equal arguments
// that names its case, or else the one naming no case; none is
// tool_no_record.
func TestReplayJoin(t *testing.T) {
	h, err := replayTool(t, "lookup", recorded)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, caseID, args, want string
	}{
		{"the case's own line first", "17", `{"id": 42}`, "cancelled by the customer"},
		{"else the line for every case", "18", `{"id": 42}`, "shipped on May 2"},
		{"no case ID", "", `{"id": 42}`, "shipped on May 2"},
		{"numbers by value", "18", `{"id": 42.0}`, "shipped on May 2"},
		{"exponent", "17", `{"id": 4.2e1}`, "cancelled by the customer"},
		{"spacing and key order", "1", `{ "fields" : ["status","eta"], "id":7 }`, `{"status":"late","eta":"2026-12-09"}`},
		{"nested key order and escapes", "3", `{"q": {"a": "\u003cx>", "b": 1}, "id": 9}`, "nine"},
		{"a numeric case_id matches its text", "3", `{"id": 9, "q": {"a": "<x>", "b": 1.00}}`, "nine"},
		{"empty arguments are {}", "5", ``, "no arguments"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := h.Call(context.Background(), Call{CaseID: c.caseID, Tool: "lookup", CallID: "c", Arguments: c.args, Turn: 1})
			if err != nil {
				t.Fatal(err)
			}
			if out != c.want {
				t.Errorf("result %q; want %q", out, c.want)
			}
		})
	}
	for _, c := range []struct{ name, caseID, args string }{
		{"other arguments", "17", `{"id": 43}`},
		{"an extra argument", "17", `{"id": 42, "x": null}`},
		{"a string is not a number", "17", `{"id": "42"}`},
		{"a case's line answers only its case", "4", `{"id": 9, "q": {"a": "<x>", "b": 1}}`},
		{"array order matters", "1", `{"id": 7, "fields": ["eta", "status"]}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := h.Call(context.Background(), Call{CaseID: c.caseID, Tool: "lookup", Arguments: c.args})
			te := toolError(t, err, KindNoRecord)
			if !strings.Contains(te.Msg, "calls.jsonl") || !strings.Contains(te.Msg, c.caseID) {
				t.Errorf("message %q names neither the file nor the case", te.Msg)
			}
		})
	}
	// Arguments that are not a JSON object match nothing, and say so.
	_, err = h.Call(context.Background(), Call{CaseID: "1", Tool: "lookup", Arguments: `{"id": `})
	toolError(t, err, KindFailed)
}

// Bad lines are reported with their line numbers, every one at once (up to
// a bound), whether or not they are the handler's tool's.
func TestReplayBadLines(t *testing.T) {
	for _, c := range []struct {
		name, content string
		want          []string
	}{
		{"not an object", "[1, 2]\n", []string{"calls.jsonl:1: not a JSON object"}},
		{"not JSON", `{"tool": "lookup", "arguments": {}` + "\n", []string{"calls.jsonl:1: not a JSON object"}},
		{"no tool", `{"arguments": {}, "result": "x"}`, []string{`calls.jsonl:1: no "tool"`}},
		{"tool not a string", `{"tool": 3, "arguments": {}, "result": "x"}`, []string{`calls.jsonl:1: "tool" is "3"`}},
		{"no arguments", `{"tool": "lookup", "result": "x"}`, []string{`calls.jsonl:1: no "arguments"`}},
		{"arguments not an object", `{"tool": "lookup", "arguments": [1], "result": "x"}`, []string{`calls.jsonl:1: "arguments" are not a JSON object`}},
		{"arguments string not JSON", `{"tool": "lookup", "arguments": "{\"id\": ", "result": "x"}`, []string{`calls.jsonl:1: "arguments" are not JSON`}},
		{"no result", `{"tool": "lookup", "arguments": {}}`, []string{`calls.jsonl:1: no "result"`}},
		{"null result", `{"tool": "lookup", "arguments": {}, "result": null}`, []string{`calls.jsonl:1: no "result"`}},
		{"case_id an object", `{"tool": "lookup", "arguments": {}, "result": "x", "case_id": {}}`, []string{`calls.jsonl:1: "case_id" is "{}"`}},
		{"duplicate", `{"tool": "lookup", "arguments": {"a": 1, "b": 2}, "result": "x"}` + "\n\n" + `{"tool": "lookup", "arguments": {"b": 2, "a": 1.0}, "result": "y"}`,
			[]string{"calls.jsonl:3: the same tool, arguments and case_id as line 1"}},
		{"other tools' lines are checked", `{"tool": "lookup", "arguments": {}, "result": "x"}` + "\n" + `{"tool": "refund", "arguments": 5, "result": "x"}`,
			[]string{`calls.jsonl:2: "arguments" are not a JSON object`}},
		{"empty file", "", []string{`calls.jsonl has no line for tool "lookup"`}},
		{"several at once", "x\n{\"tool\": \"lookup\", \"arguments\": {}, \"result\": \"ok\"}\ny\n\nz\n", []string{"calls.jsonl:1:", "calls.jsonl:3:", "calls.jsonl:5:"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := replayTool(t, "lookup", c.content)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not contain %q:\n%v", w, err)
				}
			}
			if !strings.Contains(err.Error(), "agent.tools.lookup") {
				t.Errorf("error does not name the tool: %v", err)
			}
		})
	}

	var many strings.Builder
	for range 30 {
		many.WriteString("nope\n")
	}
	_, err := replayTool(t, "lookup", many.String())
	if err == nil || !strings.Contains(err.Error(), "calls.jsonl:20:") || strings.Contains(err.Error(), "calls.jsonl:21:") || !strings.Contains(err.Error(), "and 10 more problems") {
		t.Errorf("30 bad lines: want the first 20 listed and the rest counted:\n%v", err)
	}
}

// A BOM, CRLF line ends and a last line without a newline are read.
func TestReplayLineEnds(t *testing.T) {
	h, err := replayTool(t, "lookup", "\xef\xbb\xbf"+`{"tool": "lookup", "arguments": {"id": 1}, "result": "one"}`+"\r\n"+`{"tool": "lookup", "arguments": {"id": 2}, "result": "two"}`)
	if err != nil {
		t.Fatal(err)
	}
	for args, want := range map[string]string{`{"id": 1}`: "one", `{"id": 2}`: "two"} {
		if out, err := h.Call(context.Background(), Call{Tool: "lookup", Arguments: args}); err != nil || out != want {
			t.Errorf("%s: %q, %v; want %q", args, out, err, want)
		}
	}
}

// A file changed after it was read fails the call instead of answering
// from another line.
func TestReplayFileChanged(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "calls.jsonl")
	if err := os.WriteFile(path, []byte(`{"tool": "lookup", "arguments": {"id": 1}, "result": "one"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	hs, err := Build(&spec.Agent{Tools: map[string]spec.ToolHandler{"lookup": {Replay: "calls.jsonl"}}}, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(`{"tool": "lookup", "arguments": {"id": 2}, "result": "two"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = hs["lookup"].Call(context.Background(), Call{Tool: "lookup", Arguments: `{"id": 1}`})
	if te := toolError(t, err, KindFailed); !strings.Contains(te.Msg, "changed") {
		t.Errorf("message %q", te.Msg)
	}
}

func TestCanonicalNumber(t *testing.T) {
	for lit, want := range map[string]string{
		"0": "0", "-0": "0", "0.000": "0", "0e5": "0",
		"42": "42", "42.0": "42", "4.2e1": "42", "420e-1": "42", "4.20E+1": "42",
		"420": "42e1", "0.5": "5e-1", "-0.50": "-5e-1", "1e400": "1e400", "100e-2": "1",
		"1e99999999999999999999": "1e99999999999999999999",
	} {
		if got := canonicalNumber(lit); got != want {
			t.Errorf("canonicalNumber(%s) = %s; want %s", lit, got, want)
		}
	}
}
