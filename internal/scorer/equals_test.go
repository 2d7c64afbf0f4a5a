package scorer

import (
	"testing"

	"github.com/assay-eval/assay/internal/spec"
)

func TestEquals(t *testing.T) {
	gsm := spec.Scorer{Type: "equals", Normalize: []string{"trim", "no_commas"}}
	runCases(t, spec.Output{Extract: `A:\s*(.+)$`}, gsm, []scoreCase{
		{"same number", call{raw: "so\nA: 18", expected: "18"}, passes, ""},
		{"thousands commas on one side", call{raw: "A: 1,234", expected: "1234"}, passes, ""},
		{"thousands commas on the other side", call{raw: "A: 1234", expected: "1,234"}, passes, ""},
		{"numeric expected from JSON", call{raw: "A: 70000", expected: 70000.0}, passes, ""},
		{"different number is silent wrong", call{raw: "A: 26", expected: "18"}, silent, `got "26", expected "18"`},
		{"no normalising beyond what is listed", call{raw: "A: 18.0", expected: "18"}, silent, ""},
		{"no answer line is unparseable", call{raw: "I think 18", expected: "18"}, loudKind(KindUnparseable), "does not match"},
		{"no expected value is a loud scorer error", call{raw: "A: 18"}, loudKind(KindScorerError), "no expected value"},
	})
	runCases(t, spec.Output{}, spec.Scorer{Type: "equals", Normalize: []string{"trim", "lower", "collapse_spaces", "nfc"}}, []scoreCase{
		{"case and spaces", call{raw: "  New   York\n", expected: "new york"}, passes, ""},
		{"nfc: composed equals decomposed", call{raw: "Cafe\u0301", expected: "caf\u00e9"}, passes, ""},
		{"different text", call{raw: "Boston", expected: "new york"}, silent, ""},
	})
	runCases(t, spec.Output{}, spec.Scorer{Type: "equals"}, []scoreCase{
		{"exact without normalize", call{raw: "Paris", expected: "Paris"}, passes, ""},
		{"case matters without lower", call{raw: "paris", expected: "Paris"}, silent, ""},
	})
	runCases(t, spec.Output{Format: "json"}, spec.Scorer{Type: "equals", Normalize: []string{"lower"}}, []scoreCase{
		{"objects compare structurally", call{raw: `{"b": 2, "a": "X"}`, expected: map[string]any{"a": "x", "b": 2.0}}, passes, ""},
		{"object differs", call{raw: `{"a": "x", "b": 3}`, expected: map[string]any{"a": "x", "b": 2.0}}, silent, ""},
		{"object vs scalar", call{raw: `{"a": "x"}`, expected: "x"}, silent, ""},
	})
	runCases(t, spec.Output{Extract: `A:(.*)$`}, spec.Scorer{Type: "equals", AllowEmpty: true}, []scoreCase{
		{"allow_empty: empty answer may equal an empty expected", call{raw: "A:", expected: ""}, passes, ""},
		{"allow_empty: still wrong when expected is not empty", call{raw: "A:", expected: "5"}, silent, ""},
	})
}
