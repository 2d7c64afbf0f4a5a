package scorer

import (
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/spec"
)

func TestJSONSchema(t *testing.T) {
	schema := map[string]any{
		"type":     "object",
		"required": []any{"team", "priority"},
		"properties": map[string]any{
			"team":     map[string]any{"enum": []any{"billing", "tech"}},
			"priority": map[string]any{"type": "integer", "minimum": uint64(1), "maximum": uint64(3)},
		},
		"additionalProperties": false,
	}
	runCases(t, spec.Output{Format: "json"}, spec.Scorer{Type: "json_schema", Schema: schema}, []scoreCase{
		{"valid", call{raw: `{"team": "tech", "priority": 2}`}, passes, ""},
		{"valid in a fence", call{raw: "```json\n{\"team\": \"tech\", \"priority\": 3}\n```"}, passes, ""},
		{"big integers stay integers", call{raw: `{"team": "tech", "priority": 2.0}`}, passes, ""},
		{"every violation listed", call{raw: `{"team": "sales", "priority": 9, "extra": 1}`}, loudKind(KindInvalidFormat), "3 schema violation(s)"},
		{"missing required", call{raw: `{"team": "tech"}`}, loudKind(KindInvalidFormat), "priority"},
		{"wrong type at root", call{raw: `[1, 2]`}, loudKind(KindInvalidFormat), "at /:"},
		{"unparseable", call{raw: `team: tech`}, loudKind(KindUnparseable), ""},
	})

	t.Run("violations name their locations", func(t *testing.T) {
		set := mustCompile(t, newSpec(spec.Output{Format: "json"}, spec.Scorer{Type: "json_schema", Schema: schema}))
		s := call{raw: `{"team": "sales", "priority": 9, "extra": 1}`}.one(t, set)
		for _, loc := range []string{"at /team:", "at /priority:", "extra"} {
			if !strings.Contains(s.Reason, loc) {
				t.Errorf("reason %q does not mention %s", s.Reason, loc)
			}
		}
	})

	// A permissive schema still fails {} (fail closed) unless allow_empty.
	runCases(t, spec.Output{Format: "json"}, spec.Scorer{Type: "json_schema", Schema: map[string]any{"type": "object"}}, []scoreCase{
		{"{} fails a schema that would accept it", call{raw: `{}`}, loudKind(KindEmpty), ""},
	})
	runCases(t, spec.Output{Format: "json"}, spec.Scorer{Type: "json_schema", Schema: map[string]any{"type": "object"}, AllowEmpty: true}, []scoreCase{
		{"allow_empty: the schema decides", call{raw: `{}`}, passes, ""},
	})
}

// A schema bound is held exactly against a number beyond 2^53, from the
// output and from a YAML schema alike.
func TestJSONSchemaExactNumbers(t *testing.T) {
	schema := map[string]any{"type": "object", "properties": map[string]any{
		"id": map[string]any{"type": "integer", "maximum": uint64(9007199254740992)}}}
	runCases(t, spec.Output{Format: "json"}, spec.Scorer{Type: "json_schema", Schema: schema}, []scoreCase{
		{"at the maximum", call{raw: `{"id": 9007199254740992}`}, passes, ""},
		{"one over, though the same float64", call{raw: `{"id": 9007199254740993}`}, loudKind(KindInvalidFormat), "at /id"},
		{"12442.0 is an integer", call{raw: `{"id": 12442.0}`}, passes, ""},
	})
}
