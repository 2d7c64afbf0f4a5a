package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// A rules file's tool calls decode; a misspelt key or a call without a name
// is an error naming the rule.
func TestMockRulesFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.jsonl")
	writeFile(t, good, `{"match": "Paris", "turn": 1, "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": "f", "arguments": "{\"x\": "}]}`+"\n"+`{"match": "", "reply": "ok"}`+"\n")
	rules, err := readRules(good)
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) != 2 || len(rules[0].ToolCalls) != 2 || rules[0].ToolCalls[0].Arguments != `{"city":"Paris"}` || rules[0].ToolCalls[1].Arguments != `{"x": ` || rules[0].Turn != 1 {
		t.Errorf("rules %+v", rules)
	}
	for name, c := range map[string]struct{ line, want string }{
		"misspelt key":      {`{"match": "a", "tool_call": [{"name": "f"}]}`, `rule 1: json: unknown field "tool_call"`},
		"call without name": {`{"match": "a", "tool_calls": [{"arguments": {}}]}`, "rule 1: a tool call needs a name"},
		"misspelt call key": {`{"match": "a", "tool_calls": [{"name": "f", "args": {}}]}`, `unknown field "args"`},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "_")+".jsonl")
		writeFile(t, path, c.line+"\n")
		if _, err := readRules(path); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v; want one saying %q", name, err, c.want)
		}
	}
}
