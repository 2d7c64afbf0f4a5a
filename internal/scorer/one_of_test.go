package scorer

import (
	"testing"

	"github.com/assay-eval/assay/internal/spec"
)

func TestOneOf(t *testing.T) {
	runCases(t, spec.Output{}, spec.Scorer{Type: "one_of", Values: []string{"billing", "tech"}, Normalize: []string{"lower"}}, []scoreCase{
		{"in the set", call{raw: "Tech"}, passes, ""},
		{"outside the set is loud", call{raw: "sales"}, loudKind(KindInvalidFormat), "not one of billing, tech"},
		{"a sentence is not a label", call{raw: "tech, probably"}, loudKind(KindInvalidFormat), ""},
	})
	runCases(t, spec.Output{Format: "json"}, spec.Scorer{Type: "one_of", Values: []string{"1", "2"}}, []scoreCase{
		{"JSON scalar", call{raw: "2"}, passes, ""},
		{"JSON object is not a single value", call{raw: `{"a":1}`}, loudKind(KindInvalidFormat), ""},
	})
}
