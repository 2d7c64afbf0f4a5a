package scorer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/spec"
)

func TestCompileProblems(t *testing.T) {
	text := spec.Output{}
	cases := []struct {
		name    string
		out     spec.Output
		scorers []spec.Scorer
		msg     string // substring of the one problem's message
		hint    string // substring of its hint
	}{
		{"unknown type", text, []spec.Scorer{{Name: "a", Type: "equal"}}, `unknown scorer type "equal"`, "did you mean equals?"},
		{"unknown type lists types", text, []spec.Scorer{{Name: "a", Type: "vibes"}}, `unknown scorer type "vibes"`, "supported types: cel, contains, cost, equals"},
		{"missing type", text, []spec.Scorer{{Name: "a"}}, "scorer has no type", "supported types"},
		{"bad regex", text, []spec.Scorer{{Type: "regex", Pattern: "(yes|no"}}, "pattern is not a valid regular expression", "RE2"},
		{"regex without pattern", text, []spec.Scorer{{Type: "regex"}}, "regex scorer needs pattern:", ""},
		{"contains without value", text, []spec.Scorer{{Type: "contains"}}, "contains scorer needs value: or values:", ""},
		{"not_contains without value", text, []spec.Scorer{{Type: "not_contains"}}, "not_contains scorer needs value: or values:", ""},
		{"contains empty value", text, []spec.Scorer{{Type: "contains", Values: []string{"a", " "}, Normalize: []string{"trim"}}}, "is empty", ""},
		{"number negative tolerance", text, []spec.Scorer{{Type: "number", Tolerance: -0.1}}, "tolerance -0.1 is invalid", ""},
		{"max_length without max", text, []spec.Scorer{{Type: "max_length"}}, "max_length needs max: it is missing", "whole number of characters"},
		{"max_length fractional", text, []spec.Scorer{{Type: "max_length", Max: 2.5}}, "max_length needs max", ""},
		{"max_length not a number", text, []spec.Scorer{{Type: "max_length", Max: "long"}}, "is not a number", ""},
		{"latency without max", text, []spec.Scorer{{Type: "latency"}}, "latency scorer needs max:", "duration"},
		{"latency without unit", text, []spec.Scorer{{Type: "latency", Max: uint64(2)}}, "has no unit", "max: 2s"},
		{"latency bad duration", text, []spec.Scorer{{Type: "latency", Max: "2 seconds"}}, `"2 seconds" is not a duration`, ""},
		{"latency zero", text, []spec.Scorer{{Type: "latency", Max: "0s"}}, "must be positive", ""},
		{"cost without max", text, []spec.Scorer{{Type: "cost"}}, "cost scorer needs max", "USD"},
		{"cost negative", text, []spec.Scorer{{Type: "cost", Max: -1.0}}, "cost scorer needs max", ""},
		{"unknown normaliser", text, []spec.Scorer{{Type: "equals", Normalize: []string{"trim", "lowercase"}}}, `unknown normaliser "lowercase"`, "did you mean lower?"},
		{"field_equals with text output", text, []spec.Scorer{{Type: "field_equals", Field: "team"}}, "field_equals reads fields of a JSON output, but the output format is text", "format: json"},
		{"required_fields with regex output", spec.Output{Extract: "A: (.*)"}, []spec.Scorer{{Type: "required_fields", Fields: []string{"a"}}}, "output format is regex", ""},
		{"json_schema with last_number output", spec.Output{Format: "last_number"}, []spec.Scorer{{Type: "json_schema", Schema: map[string]any{"type": "object"}}}, "output format is last_number", ""},
		{"field_equals without field", spec.Output{Format: "json"}, []spec.Scorer{{Type: "field_equals"}}, "needs field: or fields:", ""},
		{"field_equals bad path", spec.Output{Format: "json"}, []spec.Scorer{{Type: "field_equals", Field: "a..b"}}, "empty segment", ""},
		{"field_equals bad index", spec.Output{Format: "json"}, []spec.Scorer{{Type: "field_equals", Field: "items[x]"}}, "not a non-negative integer", ""},
		{"required_fields without fields", spec.Output{Format: "json"}, []spec.Scorer{{Type: "required_fields"}}, "needs fields:", ""},
		{"one_of without values", text, []spec.Scorer{{Type: "one_of"}}, "one_of scorer needs values:", ""},
		{"cel that does not parse", text, []spec.Scorer{{Type: "cel", Expr: "output ==="}}, "CEL expression does not compile", "variables: output"},
		{"cel unknown variable", text, []spec.Scorer{{Type: "cel", Expr: "answer == expected"}}, "undeclared reference to 'answer'", ""},
		{"cel not bool", text, []spec.Scorer{{Type: "cel", Expr: "size(raw)"}}, "the expression gives int, but a scorer needs a bool", ""},
		{"cel without expr", text, []spec.Scorer{{Type: "cel"}}, "cel scorer needs expr:", ""},
		{"json_schema without schema", spec.Output{Format: "json"}, []spec.Scorer{{Type: "json_schema"}}, "json_schema scorer needs schema:", ""},
		{"json_schema that does not compile", spec.Output{Format: "json"}, []spec.Scorer{{Type: "json_schema", Schema: map[string]any{"type": "objekt"}}}, "schema does not compile", ""},
		{"json_schema missing file", spec.Output{Format: "json"}, []spec.Scorer{{Type: "json_schema", Schema: "file://nope.json"}}, "reading schema file", ""},
		{"json_schema bare string", spec.Output{Format: "json"}, []spec.Scorer{{Type: "json_schema", Schema: `{"type":"object"}`}}, "neither an inline schema nor file://PATH", ""},
		{"judge unknown target", text, []spec.Scorer{{Type: "judge", Target: "grder", Rubric: "r"}}, `judge scorer: target "grder" is not defined`, "did you mean grader?"},
		{"judge no target", text, []spec.Scorer{{Type: "judge", Rubric: "r"}}, "judge scorer needs target:", ""},
		{"judge bad mode", text, []spec.Scorer{{Type: "judge", Target: "grader", Rubric: "r", Mode: "triple"}}, `unknown judge mode "triple"`, ""},
		{"duplicate names", text, []spec.Scorer{{Name: "x", Type: "equals"}, {Name: "x", Type: "is_json"}}, `duplicate scorer name "x" (also scorers[0])`, ""},
		{"duplicate default names", text, []spec.Scorer{{Type: "equals"}, {Type: "equals"}}, `duplicate scorer name "equals"`, ""},
		{"reserved name with several primaries", text, []spec.Scorer{{Name: "primary", Type: "equals", Primary: true}, {Name: "b", Type: "is_json", Primary: true}}, `"primary" is reserved`, ""},
		{"negative weight", text, []spec.Scorer{{Type: "equals", Weight: -1}}, "weight -1 is negative", ""},
		{"parameter of another type", text, []spec.Scorer{{Type: "equals", Pattern: "x"}}, "pattern does not apply to a equals scorer", "equals takes normalize"},
		{"allow_empty where meaningless", text, []spec.Scorer{{Type: "contains", Value: "x", AllowEmpty: true}}, "allow_empty has no meaning for a contains scorer", ""},
		{"no scorers", text, nil, "no scorers", ""},
		{"unknown output format", spec.Output{Format: "jsn"}, []spec.Scorer{{Type: "equals"}}, `unknown output format "jsn"`, "did you mean json?"},
		{"regex format without extract", spec.Output{Format: "regex"}, []spec.Scorer{{Type: "equals"}}, "needs extract", ""},
		{"bad extract", spec.Output{Extract: "A:(("}, []spec.Scorer{{Type: "equals"}}, "not a valid regular expression", ""},
		{"strict without json", spec.Output{Format: "text", Strict: true}, []spec.Scorer{{Type: "equals"}}, "output.strict applies only to output format json", "format: json"},
		{"number field with text output", text, []spec.Scorer{{Type: "number", Field: "total"}}, "number with field: reads fields of a JSON output, but the output format is text", "format: json"},
		{"number bad field", spec.Output{Format: "json"}, []spec.Scorer{{Type: "number", Field: "a..b"}}, "empty segment", ""},
		{"field_equals negative tolerance", spec.Output{Format: "json"}, []spec.Scorer{{Type: "field_equals", Field: "a", Tolerance: -1}}, "tolerance -1 is invalid", ""},
		{"similarity unknown method", text, []spec.Scorer{{Type: "similarity", Method: "token-set"}}, `unknown similarity method "token-set"`, "did you mean token_set?"},
		{"similarity threshold above 1", text, []spec.Scorer{{Type: "similarity", Threshold: ptrFloat(85)}}, "threshold 85 is out of range", "(0, 1]"},
		{"similarity field with text output", text, []spec.Scorer{{Type: "similarity", Field: "vendor"}}, "similarity with field: reads fields of a JSON output", ""},
		{"method on another type", text, []spec.Scorer{{Type: "equals", Method: "edit"}}, "method does not apply to a equals scorer", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			set, probs := Compile(newSpec(tc.out, tc.scorers...))
			if set != nil {
				t.Errorf("Compile returned a Set despite problems")
			}
			if len(probs) != 1 {
				t.Fatalf("got %d problems, want 1: %v", len(probs), probs)
			}
			p := probs[0]
			if !strings.Contains(p.Msg, tc.msg) || !strings.Contains(p.Hint, tc.hint) {
				t.Errorf("problem %q (hint %q); want message containing %q and hint containing %q", p.Msg, p.Hint, tc.msg, tc.hint)
			}
			if p.File != "assay.yaml" {
				t.Errorf("problem file %q", p.File)
			}
		})
	}
}

func TestCompileReportsEveryProblem(t *testing.T) {
	_, probs := Compile(newSpec(spec.Output{Format: "jsn"},
		spec.Scorer{Type: "regex", Pattern: "("},
		spec.Scorer{Type: "cel", Expr: "1 +"},
		spec.Scorer{Type: "nope"},
	))
	if len(probs) != 4 {
		t.Fatalf("got %d problems, want 4 (format, regex, cel, type): %v", len(probs), probs)
	}
}

func TestCompileRefusalProblems(t *testing.T) {
	sp := newSpec(spec.Output{}, spec.Scorer{Type: "equals"})
	sp.Refusal = &spec.Refusal{Phrases: []string{"no can do", " "}, Pattern: "(?i)sorry|"}
	_, probs := Compile(sp)
	if len(probs) != 2 || !strings.Contains(probs[0].Msg, "refusal phrase is empty") || !strings.Contains(probs[1].Msg, "matches the empty string") {
		t.Fatalf("problems %v", probs)
	}
	sp.Refusal = &spec.Refusal{Pattern: "(unclosed"}
	if _, probs := Compile(sp); len(probs) != 1 || !strings.Contains(probs[0].Msg, "refusal pattern is not a valid") {
		t.Fatalf("problems %v", probs)
	}
	sp.Refusal = nil
	sp.Combine = "most"
	if _, probs := Compile(sp); len(probs) != 1 || !strings.Contains(probs[0].Msg, `unknown combine "most"`) {
		t.Fatalf("problems %v", probs)
	}
}

func TestCompileValidSpec(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "schema.json"), []byte(`{"type":"object","required":["team"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	sp := newSpec(spec.Output{Format: "json"},
		spec.Scorer{Name: "team", Type: "field_equals", Field: "team", Primary: true},
		spec.Scorer{Name: "shape", Type: "json_schema", Schema: "file://schema.json"},
		spec.Scorer{Name: "fields", Type: "required_fields", Fields: []string{"team", "items[0].sku"}},
		spec.Scorer{Name: "json", Type: "is_json"},
		spec.Scorer{Name: "no-pii", Type: "not_contains", Values: []string{"SSN"}},
		spec.Scorer{Name: "fast", Type: "latency", Max: "1.5s"},
		spec.Scorer{Name: "cheap", Type: "cost", Max: 0.01},
		spec.Scorer{Name: "short", Type: "max_length", Max: uint64(500)},
		spec.Scorer{Name: "rule", Type: "cel", Expr: `output.team == expected.team && meta.latency_ms < 2000.0`},
		spec.Scorer{Name: "judge", Type: "judge", Target: "grader", Rubric: "is it polite?"},
	)
	sp.Dir = dir
	set := mustCompile(t, sp)
	if got := strings.Join(set.Names(), " "); got != "team shape fields json no-pii fast cheap short rule judge" {
		t.Errorf("Names = %s", got)
	}
	ss := call{raw: `{"team":"billing","items":[{"sku":"A1"}]}`, expected: map[string]any{"team": "billing"}, latency: 900, cost: 0.002}.score(t, set)
	for _, s := range ss {
		w := passes
		if s.Scorer == "judge" {
			w = loudKind(KindJudgeError)
		}
		t.Run(s.Scorer, func(t *testing.T) { w.check(t, s) })
	}
}

// TestCompileLocatesProblemsInYAML checks the integration with the spec
// loader: a problem names the line and column of the offending value.
func TestCompileLocatesProblemsInYAML(t *testing.T) {
	src := `name: t
dataset: {path: data.jsonl}
prompt: {user: "{{.q}}"}
targets: [{name: a, provider: openai, model: m}]
output: {format: json}
scorers:
  - name: ok
    type: equals
    normalize: [trim, lowercase]
  - name: bad
    type: regex
    pattern: "(unclosed"
  - name: slow
    type: latency
    max: 2
  - name: shape
    type: json_schema
    schema: {type: object, required: [team], properties: {n: {type: integer, maximum: 3}}}
`
	sp, _ := spec.Parse(filepath.Join(t.TempDir(), "assay.yaml"), []byte(src)) // loader problems (no dataset file) are not ours
	if sp == nil {
		t.Fatal("spec did not parse")
	}
	_, probs := Compile(sp)
	if len(probs) != 3 {
		t.Fatalf("problems: %v", probs)
	}
	for i, want := range [][2]int{{9, 23}, {12, 14}, {15, 10}} {
		if probs[i].Line != want[0] || probs[i].Col != want[1] {
			t.Errorf("problem %q at %d:%d, want %d:%d", probs[i].Msg, probs[i].Line, probs[i].Col, want[0], want[1])
		}
	}
}

func ptrFloat(x float64) *float64 { return &x }
