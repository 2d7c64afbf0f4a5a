package scorer

import (
	"testing"

	"github.com/assay-eval/assay/internal/spec"
)

func TestRegex(t *testing.T) {
	runCases(t, spec.Output{}, spec.Scorer{Type: "regex", Pattern: `^(?i)(yes|no)$`}, []scoreCase{
		{"matches the trimmed text", call{raw: " Yes\n"}, passes, ""},
		{"anchored pattern rejects extra words", call{raw: "yes, definitely"}, silent, "does not match"},
	})
	runCases(t, spec.Output{Format: "json"}, spec.Scorer{Type: "regex", Pattern: `"team":"billing"`}, []scoreCase{
		{"JSON output is matched as compact JSON", call{raw: "```json\n{ \"team\" : \"billing\" }\n```"}, passes, ""},
		{"unparseable JSON fails loudly", call{raw: `"team":"billing"`}, loudKind(KindUnparseable), ""},
	})
	runCases(t, spec.Output{}, spec.Scorer{Type: "regex", Pattern: `^$|^N/A$`, AllowEmpty: true}, []scoreCase{
		{"allow_empty lets the pattern judge empty output", call{raw: ""}, passes, ""},
		{"and others", call{raw: "N/A"}, passes, ""},
		{"and rejects", call{raw: "42"}, silent, ""},
	})
}
