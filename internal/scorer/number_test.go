package scorer

import (
	"encoding/json"
	"testing"

	"github.com/assay-eval/assay/internal/spec"
)

func TestNumber(t *testing.T) {
	runCases(t, spec.Output{Format: "last_number"}, spec.Scorer{Type: "number"}, []scoreCase{
		{"exact", call{raw: "so 18 eggs", expected: "18"}, passes, ""},
		{"commas in expected", call{raw: "he made 70000", expected: "70,000"}, passes, ""},
		{"trailing zeros", call{raw: "$18.00", expected: 18.0}, passes, ""},
		{"float rounding", call{raw: "0.30000000000000004", expected: "0.3"}, passes, ""},
		{"off by one", call{raw: "19", expected: "18"}, silent, "got 19, expected 18"},
		{"no number", call{raw: "eighteen", expected: "18"}, loudKind(KindUnparseable), ""},
		{"expected not a number", call{raw: "18", expected: "many"}, loudKind(KindScorerError), "expected value is not a number"},
		{"expected missing", call{raw: "18"}, loudKind(KindScorerError), ""},
	})
	runCases(t, spec.Output{}, spec.Scorer{Type: "number", Tolerance: 0.5}, []scoreCase{
		{"within absolute tolerance", call{raw: "3.4", expected: 3.0}, passes, ""},
		{"at the bound", call{raw: "3.5", expected: 3.0}, passes, ""},
		{"outside", call{raw: "3.6", expected: 3.0}, silent, ""},
		{"text is not a number", call{raw: "about 3", expected: 3.0}, loudKind(KindUnparseable), ""},
		{"a list is not a number", call{raw: "1,2,3", expected: 123.0}, loudKind(KindUnparseable), ""},
		{"NaN is not a number", call{raw: "NaN", expected: 3.0}, loudKind(KindUnparseable), ""},
	})
	runCases(t, spec.Output{}, spec.Scorer{Type: "number", Tolerance: 0.1, Relative: true}, []scoreCase{
		{"within 10%", call{raw: "1,090", expected: "1000"}, passes, ""},
		{"outside 10%", call{raw: "-1100.5", expected: "-1000"}, silent, ""},
	})
	runCases(t, spec.Output{Format: "json"}, spec.Scorer{Type: "number"}, []scoreCase{
		{"JSON number", call{raw: `42`, expected: "42"}, passes, ""},
		{"JSON object", call{raw: `{"n":42}`, expected: "42"}, loudKind(KindUnparseable), ""},
	})
}

// number is exact on the written digits: whole numbers beyond 2^53 are not
// rounded into each other, and a tolerance is held exactly.
func TestNumberExact(t *testing.T) {
	runCases(t, spec.Output{}, spec.Scorer{Type: "number"}, []scoreCase{
		{"2^53+1 is itself", call{raw: "9007199254740993", expected: json.Number("9007199254740993")}, passes, ""},
		{"2^53+1 is not 2^53", call{raw: "9007199254740992", expected: json.Number("9007199254740993")}, silent, "got 9007199254740992, expected 9007199254740993 (off by 1"},
		{"beyond uint64", call{raw: "123456789012345678901234567890", expected: json.Number("123456789012345678901234567891")}, silent, "off by 1,"},
		{"12442.0 is 12442", call{raw: "12442.0", expected: json.Number("12442")}, passes, ""},
		{"an exponent bomb is out of range, not a hang", call{raw: "1e999999999", expected: json.Number("1")}, loudKind(KindUnparseable), "in range"},
	})
	runCases(t, spec.Output{}, spec.Scorer{Type: "number", Tolerance: 0.01}, []scoreCase{
		// 1.01 − 1 is 0.01 exactly in decimal (in float64 it is
		// 0.010000000000000009, over the tolerance).
		{"at the bound exactly", call{raw: "1.01", expected: json.Number("1")}, passes, ""},
		{"just over", call{raw: "1.0101", expected: json.Number("1")}, silent, ""},
		// The reason shows the tolerance the spec set, not it plus the
		// rounding allowance (0.0100003 here).
		{"the reason names the spec's tolerance", call{raw: "291.6", expected: json.Number("302.0")}, silent, "got 291.6, expected 302 (off by 10.4, tolerance 0.01)"},
	})
}

// With field:, number reads the field of a JSON output and of an object
// expected value.
func TestNumberField(t *testing.T) {
	runCases(t, spec.Output{Format: "json"}, spec.Scorer{Type: "number", Field: "total", Tolerance: 0.5}, []scoreCase{
		{"object expected", call{raw: `{"vendor": "Acme", "total": 12442.4}`, expected: map[string]any{"total": json.Number("12442")}}, passes, "total: got 12442.4, expected 12442"},
		{"scalar expected", call{raw: `{"total": "$12,442.00"}`, expected: json.Number("12442")}, passes, ""},
		{"outside the tolerance", call{raw: `{"total": 12443}`, expected: json.Number("12442")}, silent, "total: got 12443, expected 12442 (off by 1, tolerance 0.5)"},
		{"missing field is loud", call{raw: `{"sum": 1}`, expected: json.Number("1")}, loudKind(KindInvalidFormat), "field total is missing"},
		{"expected lacks the field", call{raw: `{"total": 1}`, expected: map[string]any{"sum": json.Number("1")}}, loudKind(KindScorerError), "no field total"},
		{"not a number", call{raw: `{"total": "n/a"}`, expected: json.Number("1")}, loudKind(KindUnparseable), "total: output is not a number"},
	})
}
