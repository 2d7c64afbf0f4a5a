package selftest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const toolsYAML = `tools:
  - name: get_weather
    description: Current weather in a city
    parameters: {type: object, properties: {city: {type: string, examples: [London]}, units: {type: string, enum: [celsius, fahrenheit], default: celsius}}, required: [city]}
  - name: send_email
    description: Send an email
    parameters: {type: object, properties: {to: {type: string}, subject: {type: string}}, required: [to, subject]}
`

// writeToolSpec writes a tool-calling spec whose cases each ask for the
// weather in another city; expected names the dataset field the expected
// value comes from ("" for none).
func writeToolSpec(t *testing.T, expected, scorers string) string {
	t.Helper()
	dir := t.TempDir()
	var cases strings.Builder
	for i := range 40 {
		c := map[string]any{
			"id":   fmt.Sprint(i),
			"q":    fmt.Sprintf("What is the weather in city %d?", i),
			"args": map[string]any{"city": fmt.Sprintf("City %d", i), "units": "celsius"},
			"call": map[string]any{"name": "get_weather", "arguments": map[string]any{"city": fmt.Sprintf("City %d", i)}},
			"tool": "get_weather",
			"seq":  []any{"get_weather"},
		}
		b, _ := json.Marshal(c)
		cases.Write(b)
		cases.WriteByte('\n')
	}
	ds := "dataset: {path: cases.jsonl, id: id}\n"
	if expected != "" {
		ds = "dataset: {path: cases.jsonl, id: id, expected: " + expected + "}\n"
	}
	src := ds + "prompt: {user: \"{{.q}}\"}\ntargets: [{name: m, provider: exec, command: [x]}]\n" + toolsYAML + "scorers:\n" + scorers
	for name, body := range map[string]string{"assay.yaml": src, "cases.jsonl": cases.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "assay.yaml")
}

// The must-show: selftest flags a tool_call scorer configured to accept any
// arguments (it checks only the tool), through the null model that calls
// the right tool with the schema's example arguments, while a tool_call
// that compares the arguments, and no_tool_call, are sound.
func TestSelftestFlagsToolCallAcceptingAnyArguments(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, expected, scorers string
		exploitable             bool
		null                    string
	}{
		{"tool only, from tool:", "", "  - {name: call, type: tool_call, tool: get_weather}\n", true, NullSchemaExample},
		{"tool only, from the expected name", "tool", "  - {name: call, type: tool_call}\n", true, NullSchemaExample},
		{"sequence of names", "seq", "  - {name: call, type: tool_calls, match: subset}\n", true, NullSchemaExample},
		{"arguments compared", "args", "  - {name: call, type: tool_call, tool: get_weather}\n", false, ""},
		{"expected call compared", "call", "  - {name: call, type: tool_call}\n", false, ""},
		{"no tool call", "", "  - {name: call, type: no_tool_call}\n", false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := run(t, writeToolSpec(t, tc.expected, tc.scorers), Options{})
			for _, nm := range rep.NullModels {
				if nm.Skipped != "" && strings.HasPrefix(nm.Name, "call-") {
					t.Errorf("null model %s skipped: %s", nm.Name, nm.Skipped)
				}
			}
			if got := rep.Verdict == VerdictExploitable; got != tc.exploitable {
				t.Fatalf("verdict %s, want exploitable %v; findings %+v", rep.Verdict, tc.exploitable, rep.Findings)
			}
			if !tc.exploitable {
				return
			}
			f := hasFinding(rep, SeverityExploitable, "call", tc.null, ModeRaw)
			if f == nil {
				t.Fatalf("no exploitable finding through %s: %+v", tc.null, rep.Findings)
			}
			if f.Passed != f.N || f.Chance != 0 || len(f.Examples) == 0 {
				t.Fatalf("finding %+v: want every case passed, chance 0, examples", f)
			}
			if ex := f.Examples[0].Output; ex != `tool calls: get_weather({"city":"London","units":"celsius"})` {
				t.Errorf("example output %q: want the calls shown", ex)
			}
			// The other tool null models fail it: no call is loud, every
			// tool at once is the wrong tool (subset allows the extra
			// calls: that one passes too), {} breaks the schema.
			others := []string{NullNoCall, NullEveryTool, NullEmptyArgs}
			if strings.Contains(tc.scorers, "subset") {
				if c := findCell(rep, "call", NullEveryTool, ModeRaw); c == nil || c.Passed != c.N || !c.Above {
					t.Errorf("%s: cell %+v, want every case passed, above chance", NullEveryTool, c)
				}
				others = []string{NullNoCall, NullEmptyArgs}
			}
			for _, null := range others {
				if c := findCell(rep, "call", null, ModeRaw); c == nil || c.Passed != 0 {
					t.Errorf("%s: cell %+v, want 0 passed", null, c)
				}
			}
		})
	}
}

// No tools, no tool scorers: the tool null models are not listed (the
// report of a spec without tools is as it was).
func TestToolNullModelsNeedTools(t *testing.T) {
	t.Parallel()
	rep := run(t, filepath.Join("testdata", "regex_any.yaml"), Options{})
	for _, nm := range rep.NullModels {
		switch nm.Name {
		case NullNoCall, NullEveryTool, NullEmptyArgs, NullSchemaExample:
			t.Errorf("null model %s listed for a spec without tools", nm.Name)
		}
	}
	// Tools offered but no scorer naming the expected tools: listed, and
	// the two that need the expected tool say why they did not run.
	rep = run(t, writeToolSpec(t, "", "  - {name: call, type: no_tool_call}\n"), Options{})
	skipped := map[string]string{}
	for _, nm := range rep.NullModels {
		skipped[nm.Name] = nm.Skipped
	}
	if skipped[NullNoCall] != "" || skipped[NullEveryTool] != "" || !strings.Contains(skipped[NullEmptyArgs], "names the expected tools") || skipped[NullSchemaExample] == "" {
		t.Errorf("skipped: %v", skipped)
	}
}

func TestSchemaExampleArgs(t *testing.T) {
	t.Parallel()
	params := json.RawMessage(`{"type": "object", "properties": {
		"city": {"type": "string", "examples": ["Oslo", "Rome"]},
		"units": {"enum": ["c", "f"]},
		"days": {"type": "integer", "default": 3},
		"exact": {"type": ["null", "boolean"]},
		"tags": {"type": "array", "items": {"type": "string"}},
		"where": {"properties": {"lat": {"type": "number"}}},
		"either": {"anyOf": [{"const": "x"}, {"type": "string"}]}
	}}`)
	got := schemaExampleArgs(params)
	want := map[string]any{"city": "Oslo", "units": "c", "days": 3.0, "exact": true, "tags": []any{"example"}, "where": map[string]any{"lat": 1}, "either": "x"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v\nwant %#v", got, want)
	}
	for _, bad := range []string{``, `[]`, `"x"`, `{"type": "string"}`} {
		if got := schemaExampleArgs(json.RawMessage(bad)); len(got) != 0 {
			t.Errorf("%q: got %v, want {}", bad, got)
		}
	}
}

// FuzzSchemaExampleArgs: any parameters text gives an object (never a
// panic), and a deeply nested schema is cut at maxExampleDepth.
func FuzzSchemaExampleArgs(f *testing.F) {
	for _, s := range []string{`{"type":"object","properties":{"a":{"type":"string"}}}`, `{"properties":{"a":{"properties":{"b":{"anyOf":[{"type":"integer"}]}}}}}`, `[]`, `{"examples":[1]}`, `{"type":["null","array"],"items":{"items":{}}}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := schemaExampleArgs(json.RawMessage(s))
		if got == nil {
			t.Fatal("nil arguments")
		}
		if _, err := json.Marshal(got); err != nil {
			t.Fatalf("arguments of %q do not encode: %v", s, err)
		}
	})
}
