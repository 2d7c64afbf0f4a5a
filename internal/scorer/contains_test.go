package scorer

import (
	"testing"

	"github.com/assay-eval/assay/internal/spec"
)

func TestContains(t *testing.T) {
	runCases(t, spec.Output{}, spec.Scorer{Type: "contains", Value: "refund"}, []scoreCase{
		{"contains", call{raw: "We will refund you."}, passes, ""},
		{"case sensitive by default", call{raw: "Refund issued"}, silent, `does not contain "refund"`},
		{"reads raw even when the parser fails", call{raw: "refund"}, passes, ""},
	})
	runCases(t, spec.Output{Format: "json"}, spec.Scorer{Type: "contains", Values: []string{"refund", "sorry"}, Normalize: []string{"lower"}}, []scoreCase{
		{"all values, case-insensitive", call{raw: "SORRY, a Refund is on its way"}, passes, ""},
		{"one missing", call{raw: "a refund is on its way"}, silent, `does not contain "sorry"`},
	})
}

func TestNotContains(t *testing.T) {
	runCases(t, spec.Output{}, spec.Scorer{Type: "not_contains", Values: []string{"SSN", "password"}}, []scoreCase{
		{"clean", call{raw: "Your ticket is closed."}, passes, ""},
		{"leaks one", call{raw: "your password is hunter2"}, silent, `contains "password"`},
		{"empty output fails closed", call{raw: ""}, loudKind(KindEmpty), ""},
		{"a refusal is not a clean pass", call{raw: "I cannot assist with that."}, loudKind(KindRefusal), ""},
	})
	runCases(t, spec.Output{}, spec.Scorer{Type: "not_contains", Value: "x", AllowEmpty: true}, []scoreCase{
		{"allow_empty: empty passes", call{raw: " "}, passes, ""},
		{"allow_empty: still judged", call{raw: "x"}, silent, ""},
	})
}
