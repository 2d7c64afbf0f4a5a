package scorer

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/assay-eval/assay/internal/record"
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

// field_equals compares numbers by value, and within tolerance: when set.
func TestFieldEqualsNumbers(t *testing.T) {
	n := func(s string) json.Number { return json.Number(s) }
	exp := map[string]any{"vendor": "Acme", "total": n("12442"), "rate": n("1.5"), "id": n("9007199254740993")}
	runCases(t, spec.Output{Format: "json"}, spec.Scorer{Type: "field_equals", Fields: []string{"vendor", "total", "rate", "id"}}, []scoreCase{
		{"written differently, same values", call{raw: `{"vendor": "Acme", "total": 12442.0, "rate": 1.50, "id": 9007199254740993}`, expected: exp}, passes, ""},
		{"a neighbour beyond 2^53", call{raw: `{"vendor": "Acme", "total": 12442, "rate": 1.5, "id": 9007199254740992}`, expected: exp}, silent, "id wrong (got 9007199254740992, expected 9007199254740993)"},
		{"a numeral string equals the number", call{raw: `{"vendor": "Acme", "total": "12442", "rate": "1.5", "id": "9007199254740993"}`, expected: exp}, passes, ""},
	})
	runCases(t, spec.Output{Format: "json"}, spec.Scorer{Type: "field_equals", Fields: []string{"vendor", "total"}, Tolerance: 0.01, Relative: true}, []scoreCase{
		{"within 1% of the total", call{raw: `{"vendor": "Acme", "total": 12500}`, expected: exp}, passes, ""},
		{"outside 1%", call{raw: `{"vendor": "Acme", "total": 12600}`, expected: exp}, silent, "total wrong"},
		{"text fields still compare as text", call{raw: `{"vendor": "Acme Inc", "total": 12442}`, expected: exp}, silent, "vendor wrong"},
	})
}

// Every field_equals verdict reached by comparing carries the per-field
// outcomes in field order; a scorer error and a gated result carry none.
func TestFieldEqualsRecordsFields(t *testing.T) {
	set := mustCompile(t, newSpec(spec.Output{Format: "json"}, spec.Scorer{Type: "field_equals", Fields: []string{"vendor", "total", "currency"}}))
	exp := map[string]any{"vendor": "Acme", "total": json.Number("10"), "currency": "EUR"}
	for _, c := range []struct {
		raw  string
		exp  any
		want []record.FieldVerdict
	}{
		{`{"vendor": "Acme", "total": 10.0, "currency": "EUR"}`, exp, []record.FieldVerdict{{Field: "vendor", Status: "ok"}, {Field: "total", Status: "ok"}, {Field: "currency", Status: "ok"}}},
		{`{"vendor": "Acme", "total": 11}`, exp, []record.FieldVerdict{{Field: "vendor", Status: "ok"}, {Field: "total", Status: "wrong"}, {Field: "currency", Status: "missing"}}},
		{`{"vendor": "Acme"}`, map[string]any{"vendor": "Acme"}, nil}, // the expected value lacks total: scorer error
		{`not json`, exp, nil}, // failed by the parse gate, before the scorer
	} {
		s := call{raw: c.raw, expected: c.exp}.one(t, set)
		if !reflect.DeepEqual(s.Fields, c.want) {
			t.Errorf("%s: fields %v, want %v (%s)", c.raw, s.Fields, c.want, s.Reason)
		}
	}
}
