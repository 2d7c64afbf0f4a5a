package scorer

import (
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
