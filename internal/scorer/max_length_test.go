package scorer

import (
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/spec"
)

func TestMaxLength(t *testing.T) {
	runCases(t, spec.Output{}, spec.Scorer{Type: "max_length", Max: uint64(5)}, []scoreCase{
		{"at the limit", call{raw: "12345"}, passes, ""},
		{"characters, not bytes", call{raw: "héllö"}, passes, ""},
		{"over", call{raw: "123456"}, loudKind(KindTooLong), "6 characters, over the max of 5"},
		{"counts raw, including whitespace", call{raw: " 1234 "}, loudKind(KindTooLong), ""},
	})
	runCases(t, spec.Output{}, spec.Scorer{Type: "max_length", Max: "3"}, []scoreCase{
		{"max as a string", call{raw: strings.Repeat("x", 4)}, loudKind(KindTooLong), ""},
	})
}
