package scorer

import (
	"testing"

	"github.com/assay-eval/assay/internal/spec"
)

func TestFieldEquals(t *testing.T) {
	exp := map[string]any{"team": "billing", "priority": 2.0, "customer": map[string]any{"id": "C-7"}}
	runCases(t, spec.Output{Format: "json"}, spec.Scorer{Type: "field_equals", Fields: []string{"team", "priority", "customer.id"}, Normalize: []string{"lower"}}, []scoreCase{
		{"all fields", call{raw: `{"team":"Billing","priority":2,"customer":{"id":"c-7"}}`, expected: exp}, passes, "team ok; priority ok; customer.id ok"},
		{"number as string", call{raw: `{"team":"billing","priority":"2","customer":{"id":"C-7"}}`, expected: exp}, passes, ""},
		{"one wrong is silent, with per-field reason", call{raw: `{"team":"sales","priority":2,"customer":{"id":"C-7"}}`, expected: exp}, silent, `team wrong (got "sales", expected "billing"); priority ok; customer.id ok`},
		{"one missing is loud", call{raw: `{"team":"billing","priority":2}`, expected: exp}, loudKind(KindInvalidFormat), "customer.id missing"},
		{"expected lacks the field", call{raw: `{"team":"billing"}`, expected: map[string]any{"team": "billing"}}, loudKind(KindScorerError), "expected value has no field priority"},
		{"scalar expected with several fields", call{raw: `{"team":"billing"}`, expected: "billing"}, loudKind(KindScorerError), "is a scalar"},
	})
	runCases(t, spec.Output{Format: "json"}, spec.Scorer{Type: "field_equals", Field: "team"}, []scoreCase{
		{"scalar expected compares to the field", call{raw: `{"team":"billing"}`, expected: "billing"}, passes, ""},
		{"object expected is read at the path", call{raw: `{"team":"billing"}`, expected: map[string]any{"team": "billing"}}, passes, ""},
		{"empty field never equals a value", call{raw: `{"team":"","x":1}`, expected: "billing"}, silent, ""},
	})

	t.Run("per-field accuracy is the value", func(t *testing.T) {
		set := mustCompile(t, newSpec(spec.Output{Format: "json"}, spec.Scorer{Type: "field_equals", Fields: []string{"a", "b", "c", "d"}}))
		s := call{raw: `{"a":1,"b":2,"c":0,"d":0}`, expected: map[string]any{"a": 1.0, "b": 2.0, "c": 3.0, "d": 4.0}}.one(t, set)
		if s.Pass || s.Value != 0.5 {
			t.Errorf("pass %v value %v; want a failure worth 0.5", s.Pass, s.Value)
		}
	})
}
