package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/mock"
)

// Issue 14's first Must-show: one tool-calling spec run against assay mock
// through the openai and anthropic providers, plain and streamed, stores the
// same tool calls (names, order, arguments — invalid ones as written) and
// the same scores for every case, and a response format the same JSON reply.
func TestSameToolCallsAndScoresThroughEveryProvider(t *testing.T) {
	_, url := startMock(t, mock.Options{Rules: []mock.Rule{
		{Match: "Paris", ToolCalls: []mock.ToolCall{{Name: "get_weather", Arguments: `{"city":"Paris","unit":"c"}`}}},
		{Match: "two cities", Reply: "Checking both.", ToolCalls: []mock.ToolCall{{Name: "get_weather", Arguments: `{"city":"Oslo"}`}, {Name: "search", Arguments: `{"q":"rome"}`}}},
		{Match: "broken", ToolCalls: []mock.ToolCall{{Name: "get_weather", Arguments: `{"city": "Par`}}},
		{Match: "no call", Reply: "No tool needed."},
	}})
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "cases.jsonl"), strings.Join([]string{
		`{"id": "paris", "q": "Weather in Paris?", "want": {"name": "get_weather", "arguments": {"city": "Paris", "unit": "c"}}}`,
		`{"id": "two", "q": "Weather in two cities?", "want": {"name": "get_weather", "arguments": {"city": "Oslo"}}}`,
		`{"id": "default", "q": "Anything else?", "want": {"name": "get_weather", "arguments": {"city": "mock"}}}`,
		`{"id": "wrong", "q": "Paris or Lyon?", "want": {"name": "get_weather", "arguments": {"city": "Lyon"}}}`,
		`{"id": "broken", "q": "A broken call", "want": {"name": "get_weather", "arguments": {"city": "Paris"}}}`,
		`{"id": "none", "q": "no call please", "want": {"name": "get_weather", "arguments": {"city": "Paris"}}}`,
	}, "\n")+"\n")
	targets := ""
	for _, p := range []struct{ provider, base string }{{"openai", url + "/v1"}, {"anthropic", url}} {
		for _, stream := range []bool{false, true} {
			targets += fmt.Sprintf("  - {name: %s-%v, provider: %s, model: m, base_url: %q, stream: %v, api_key_env: MOCK_KEY}\n", p.provider, stream, p.provider, p.base, stream)
		}
	}
	tools := `tools:
  - name: get_weather
    description: The weather in a city.
    parameters: {type: object, properties: {city: {type: string}, unit: {enum: [c, f]}}, required: [city]}
  - name: search
    parameters: {type: object, properties: {q: {type: string}}}
`
	spec := filepath.Join(dir, "tools.yaml")
	writeFile(t, spec, "name: tools-wire\ndataset: {path: cases.jsonl, id: id, expected: want}\nprompt: {system: Use the tools., user: '{{.q}}'}\n"+
		tools+"targets:\n"+targets+"scorers:\n  - {name: call, type: tool_call}\n  - {name: calls, type: tool_calls, match: subset}\n")
	rows := runAndExport(t, dir, spec)
	same(t, rows, func(r map[string]any) string {
		return fmt.Sprint(r["raw"], " ", callsText(t, r["tool_calls"]), " ", r["score.call.pass"], r["score.call.shape"], r["score.call.kind"], r["score.call.value"], " ", r["score.calls.value"], r["score.calls.kind"])
	})
	// What the cases must have stored, written out.
	for _, r := range rows {
		if !strings.HasPrefix(fmt.Sprint(r["target"]), "openai-false") {
			continue
		}
		want := map[string]string{
			"paris":   `get_weather {"city":"Paris","unit":"c"} pass`,
			"two":     `get_weather {"city":"Oslo"}; search {"q":"rome"} silent`,
			"default": `get_weather {"city":"mock"} pass`,
			"wrong":   `get_weather {"city":"Paris","unit":"c"} silent`,
			"broken":  `get_weather {"city": "Par loud`,
			"none":    ` loud`,
		}[fmt.Sprint(r["case_id"])]
		if got := callsText(t, r["tool_calls"]) + " " + fmt.Sprint(r["score.call.shape"]); got != want {
			t.Errorf("case %s: %s; want %s", r["case_id"], got, want)
		}
	}

	// A response format: OpenAI's structured output and Anthropic's forced
	// tool give the same JSON text and no call.
	format := filepath.Join(dir, "format.yaml")
	writeFile(t, format, "name: format-wire\ndataset: {path: cases.jsonl, id: id, expected: want}\noutput: {format: json}\nprompt: {user: '{{.q}}'}\n"+
		"response_format: {json_schema: {name: answer, strict: true, schema: {type: object, properties: {city: {type: string}, temp: {type: integer, minimum: 3}}, required: [city, temp], additionalProperties: false}}}\n"+
		"targets:\n"+targets+"scorers:\n  - {name: shape, type: json_schema, schema: {type: object, required: [city, temp]}}\n")
	rows = runAndExport(t, dir, format)
	same(t, rows, func(r map[string]any) string {
		return fmt.Sprint(r["raw"], " ", callsText(t, r["tool_calls"]), " ", r["score.shape.pass"])
	})
	for _, r := range rows {
		if r["case_id"] == "none" {
			// A text rule matches this question: its reply, on every wire.
			if r["raw"] != "No tool needed." {
				t.Errorf("%s none: reply %v; want the text rule's", r["target"], r["raw"])
			}
			continue
		}
		if r["raw"] != `{"city":"mock","temp":3}` || r["score.shape.pass"] != true {
			t.Errorf("%s %s: reply %v, pass %v; want the schema's JSON, passing", r["target"], r["case_id"], r["raw"], r["score.shape.pass"])
		}
	}
}

// runAndExport runs spec into a store of its own and returns the exported
// rows.
func runAndExport(t *testing.T, dir, spec string) []map[string]any {
	t.Helper()
	e := cliEnv{env: map[string]string{"MOCK_KEY": "x"}}
	db := filepath.Join(dir, filepath.Base(spec)+".db")
	if inv := runCLI(t, e, "run", spec, "--db", db); inv.code != ExitOK {
		t.Fatalf("run: exit %d\n%s\n%s", inv.code, inv.stdout, inv.stderr)
	}
	out := filepath.Join(dir, filepath.Base(spec)+".jsonl")
	if inv := runCLI(t, e, "export", "latest", "--spec", spec, "--db", db, "--format", "jsonl", "-o", out); inv.code != ExitOK {
		t.Fatalf("export: exit %d\n%s\n%s", inv.code, inv.stdout, inv.stderr)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r map[string]any
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, r)
	}
	if len(rows) == 0 {
		t.Fatal("no rows exported")
	}
	return rows
}

// same fails unless every target stored the same view of each case.
func same(t *testing.T, rows []map[string]any, view func(map[string]any) string) {
	t.Helper()
	byCase := map[string]map[string]string{}
	for _, r := range rows {
		c := fmt.Sprint(r["case_id"])
		if byCase[c] == nil {
			byCase[c] = map[string]string{}
		}
		byCase[c][fmt.Sprint(r["target"])] = view(r)
	}
	for c, targets := range byCase {
		if len(targets) != 4 {
			t.Errorf("case %s: %d targets stored it; want 4", c, len(targets))
		}
		names := make([]string, 0, len(targets))
		for n := range targets {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names[1:] {
			if targets[n] != targets[names[0]] {
				t.Errorf("case %s: %s stored %q, %s %q", c, n, targets[n], names[0], targets[names[0]])
			}
		}
	}
}

// callsText is a stored tool_calls column as "name arguments; …", without
// the IDs (each wire format names its calls its own way).
func callsText(t *testing.T, v any) string {
	t.Helper()
	if v == nil {
		return ""
	}
	list, ok := v.([]any)
	if !ok {
		t.Fatalf("tool_calls column is %T", v)
	}
	var parts []string
	for _, c := range list {
		m, _ := c.(map[string]any)
		parts = append(parts, fmt.Sprint(m["name"], " ", m["arguments"]))
	}
	return strings.Join(parts, "; ")
}
