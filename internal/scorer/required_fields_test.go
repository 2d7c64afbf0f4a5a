package scorer

import (
	"testing"

	"github.com/assay-eval/assay/internal/spec"
)

func TestRequiredFields(t *testing.T) {
	runCases(t, spec.Output{Format: "json"}, spec.Scorer{Type: "required_fields", Fields: []string{"team", "customer.id", "items[0].sku"}}, []scoreCase{
		{"all present", call{raw: `{"team":"a","customer":{"id":0},"items":[{"sku":"x"}]}`}, passes, ""},
		{"zero and false are values", call{raw: `{"team":false,"customer":{"id":0},"items":[{"sku":0}]}`}, passes, ""},
		{"missing nested", call{raw: `{"team":"a","customer":{},"items":[{"sku":"x"}]}`}, loudKind(KindInvalidFormat), "missing customer.id"},
		{"blank string", call{raw: `{"team":" ","customer":{"id":1},"items":[{"sku":"x"}]}`}, loudKind(KindInvalidFormat), "empty team"},
		{"null", call{raw: `{"team":"a","customer":{"id":null},"items":[{"sku":"x"}]}`}, loudKind(KindInvalidFormat), "empty customer.id"},
		{"index out of range", call{raw: `{"team":"a","customer":{"id":1},"items":[]}`}, loudKind(KindInvalidFormat), "missing items[0].sku"},
		{"array instead of object", call{raw: `["team"]`}, loudKind(KindInvalidFormat), "missing team"},
	})
}
