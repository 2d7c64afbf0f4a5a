package report

import (
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/analysis"
)

// Text from a model or a dataset cannot drive the terminal: control
// characters (escape sequences) are shown, not sent.
func TestTextEscapesControlCharacters(t *testing.T) {
	rep := &analysis.Report{Targets: []analysis.Target{{
		Name:     "evil\x1b]0;pwned\x07\x1b[2J",
		Failures: analysis.Failures{ByKind: map[string]int{"wrong\x1b[31m": 1}},
		Slices:   map[string]map[string]analysis.Rate{"tier\x1b[1m": {"\x1b[Hx": {Passed: 1, N: 1}}},
	}}}
	var b strings.Builder
	if err := Text(&b, rep); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsRune(b.String(), 0x1b) || strings.ContainsRune(b.String(), 0x07) {
		t.Errorf("escape sequence reached the terminal: %q", b.String())
	}
	if !strings.Contains(b.String(), `evil\x1b]0;pwned\x07`) {
		t.Errorf("the escaped name is not shown: %q", b.String())
	}
}

// A target with no result yet (a run killed before its first call) has no
// rate: every format shows "—", never 0.0% with the interval [0.0, 0.0].
func TestNoResultsIsNoRate(t *testing.T) {
	rep := &analysis.Report{Targets: []analysis.Target{{Name: "early", Primary: analysis.Rate{Scorer: "correct"}}}}
	for name, render := range map[string]func(*strings.Builder) error{
		"text":     func(b *strings.Builder) error { return Text(b, rep) },
		"markdown": func(b *strings.Builder) error { return Markdown(b, rep) },
	} {
		var b strings.Builder
		if err := render(&b); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(b.String(), "0.0%") || strings.Contains(b.String(), "[0.0, 0.0]") {
			t.Errorf("%s shows a rate for a target with no results:\n%s", name, b.String())
		}
	}
}
