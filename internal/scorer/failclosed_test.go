package scorer

import (
	"context"
	"testing"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/record"

	"github.com/assay-eval/assay/internal/spec"
)

// lowThreshold makes a similarity scorer pass nearly anything.
var lowThreshold = 0.01

// minimalScorers configures every built-in scorer type minimally, with the
// output format it needs. Most are set up so that a sensible non-empty
// answer would pass, so a failure on empty output is the gate's doing.
func minimalScorers() map[string]struct {
	out spec.Output
	sc  spec.Scorer
} {
	type cfg = struct {
		out spec.Output
		sc  spec.Scorer
	}
	js := spec.Output{Format: "json"}
	return map[string]cfg{
		"equals":          {spec.Output{}, spec.Scorer{Type: "equals", Normalize: []string{"trim"}}},
		"contains":        {spec.Output{}, spec.Scorer{Type: "contains", Value: "a"}},
		"not_contains":    {spec.Output{}, spec.Scorer{Type: "not_contains", Value: "zzz"}},
		"regex":           {spec.Output{}, spec.Scorer{Type: "regex", Pattern: ".*"}},
		"is_json":         {spec.Output{}, spec.Scorer{Type: "is_json"}},
		"json_schema":     {js, spec.Scorer{Type: "json_schema", Schema: map[string]any{}}},
		"required_fields": {js, spec.Scorer{Type: "required_fields", Fields: []string{"a"}}},
		"field_equals":    {js, spec.Scorer{Type: "field_equals", Field: "a"}},
		"number":          {spec.Output{}, spec.Scorer{Type: "number", Tolerance: 1e9}},
		"one_of":          {spec.Output{}, spec.Scorer{Type: "one_of", Values: []string{"", "{}", "a"}}},
		"max_length":      {spec.Output{}, spec.Scorer{Type: "max_length", Max: 1000}},
		"latency":         {spec.Output{}, spec.Scorer{Type: "latency", Max: "1h"}},
		"cost":            {spec.Output{}, spec.Scorer{Type: "cost", Max: 100.0}},
		"cel":             {spec.Output{}, spec.Scorer{Type: "cel", Expr: "true"}},
		"judge":           {spec.Output{}, spec.Scorer{Type: "judge", Target: "grader", Rubric: "polite?"}},
		"similarity":      {spec.Output{}, spec.Scorer{Type: "similarity", Threshold: &lowThreshold}},
		"tool_call":       {spec.Output{}, spec.Scorer{Type: "tool_call", Tool: "lookup"}},
		"tool_calls":      {spec.Output{}, spec.Scorer{Type: "tool_calls", Match: "subset"}},
		"no_tool_call":    {spec.Output{}, spec.Scorer{Type: "no_tool_call"}},
	}
}

// TestEveryScorerFailsEmptyOutput is the fail-closed guarantee: no built-in
// scorer passes "", whitespace or {} unless configured to allow it, whether
// it runs in a Set or is called directly.
func TestEveryScorerFailsEmptyOutput(t *testing.T) {
	cfgs := minimalScorers()
	for _, typ := range Types() {
		if _, ok := cfgs[typ]; !ok {
			t.Errorf("scorer type %s has no minimal configuration in this test", typ)
		}
	}
	empties := []string{"", "   \n", "{}"}
	for typ, c := range cfgs {
		t.Run(typ, func(t *testing.T) {
			set := mustCompile(t, newSpec(c.out, c.sc))
			for _, raw := range empties {
				for _, expected := range []any{"", "{}", map[string]any{}, map[string]any{"a": "x"}, "1"} {
					s := call{raw: raw, expected: expected}.one(t, set)
					if s.Pass || s.Shape == ShapePass || s.Value != 0 {
						t.Errorf("raw %q expected %#v: pass=%v shape=%s value=%v (%s)", raw, expected, s.Pass, s.Shape, s.Value, s.Reason)
					}
				}
			}
			// Called directly, outside a Set, the scorer still fails closed.
			e := set.entries[0]
			for _, raw := range empties {
				parsed, perr := set.parser.Parse(raw)
				v := e.s.Score(t.Context(), &Input{Raw: raw, Parsed: parsed, ParseErr: perr, Expected: raw})
				if v.Pass && typ != "judge" {
					t.Errorf("direct call on %q passed: %+v", raw, v)
				}
			}
		})
	}
}

// TestAllowEmptyIsExplicit shows that allow_empty is what lets empty output
// through, for the scorers where it has a meaning.
func TestAllowEmptyIsExplicit(t *testing.T) {
	for typ, c := range minimalScorers() {
		if !scorerTypes()[typ].allowEmpty || typ == "judge" || typ == "equals" || typ == "one_of" {
			continue
		}
		t.Run(typ, func(t *testing.T) {
			c.sc.AllowEmpty = true
			set := mustCompile(t, newSpec(c.out, c.sc))
			raw := "   \n"
			if c.out.Format == FormatJSON {
				raw = "{}" // blank text is not JSON at all
			}
			if s := (call{raw: raw}).one(t, set); !s.Pass {
				t.Errorf("allow_empty scorer failed %q: %s %s", raw, s.Kind, s.Reason)
			}
		})
	}
}

// ScoreParsed hands a value to the scorers as the parsed output: a parser
// that rejects junk does not hide a scorer that accepts it, and the
// fail-closed gates still apply.
func TestScoreParsedBypassesTheParser(t *testing.T) {
	sp := &spec.Spec{
		Output: spec.Output{Extract: `A:\s*(\d+)`},
		Scorers: []spec.Scorer{
			{Name: "anything", Type: "regex", Pattern: ".*", Primary: true},
			{Name: "correct", Type: "equals"},
		},
	}
	set, probs := Compile(sp)
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	c := &dataset.Case{ID: "1", Expected: "42"}
	pass := func(scores []record.Score, name string) bool {
		for _, s := range scores {
			if s.Scorer == name {
				return s.Pass
			}
		}
		t.Fatalf("no score %s in %+v", name, scores)
		return false
	}
	// Through the parser, junk is unparseable and fails everything.
	r := record.Result{Raw: "banana"}
	if scores := set.Score(context.Background(), c, &r); pass(scores, "anything") || r.ParseError == "" {
		t.Errorf("raw banana passed the regex .* or parsed: %+v", r)
	}
	// Handed over as parsed, the regex .* accepts it: the scorer is exposed.
	r = record.Result{Raw: "banana"}
	if scores := set.ScoreParsed(context.Background(), c, &r, "banana"); !pass(scores, "anything") || pass(scores, "correct") || r.Parsed != `"banana"` {
		t.Errorf("parsed banana: anything should pass, correct fail; result %+v", r)
	}
	// {} is empty, parsed or not: it fails closed.
	r = record.Result{Raw: "{}"}
	if scores := set.ScoreParsed(context.Background(), c, &r, map[string]any{}); pass(scores, "anything") {
		t.Errorf("parsed {} passed")
	}
	// The gates still run on the raw text: empty output fails closed.
	r = record.Result{Raw: "  "}
	if scores := set.ScoreParsed(context.Background(), c, &r, "42"); pass(scores, "correct") {
		t.Errorf("empty raw output passed through ScoreParsed")
	}
	r = record.Result{Raw: "42"}
	if scores := set.ScoreParsed(context.Background(), c, &r, "42"); !pass(scores, "correct") {
		t.Errorf("the right parsed value failed")
	}
}
