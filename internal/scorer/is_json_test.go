package scorer

import (
	"testing"

	"github.com/assay-eval/assay/internal/spec"
)

func TestIsJSON(t *testing.T) {
	for _, out := range []spec.Output{{}, {Format: "json"}} {
		t.Run("format "+out.Format, func(t *testing.T) {
			runCases(t, out, spec.Scorer{Type: "is_json"}, []scoreCase{
				{"object", call{raw: ` {"a": [1, 2]} `}, passes, ""},
				{"array", call{raw: `[1]`}, passes, ""},
				{"fenced JSON is not bare JSON", call{raw: "```json\n{\"a\":1}\n```"}, loudKind(KindInvalidFormat), ""},
				{"prose around JSON", call{raw: `Sure! {"a":1}`}, loudKind(KindInvalidFormat), ""},
				{"two values", call{raw: `{"a":1} {"b":2}`}, loudKind(KindInvalidFormat), "text after the JSON value"},
				{"truncated", call{raw: `{"a": [1, 2`}, loudKind(KindInvalidFormat), ""},
				{"null is empty", call{raw: `null`}, loudKind(KindEmpty), ""},
			})
		})
	}
}
