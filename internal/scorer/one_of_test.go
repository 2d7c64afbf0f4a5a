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

// A JSON number is one of the values when one of them spells its value.
func TestOneOfNumbers(t *testing.T) {
	runCases(t, spec.Output{Format: "json"}, spec.Scorer{Type: "one_of", Values: []string{"1.5", "9007199254740993"}}, []scoreCase{
		{"written with a trailing zero", call{raw: "1.50"}, passes, ""},
		{"beyond 2^53, exactly", call{raw: "9007199254740993"}, passes, ""},
		{"the float64 neighbour is not in the set", call{raw: "9007199254740992"}, loudKind(KindInvalidFormat), "not one of"},
	})
}
