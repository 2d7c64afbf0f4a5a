package report

import (
	"bytes"
	"html"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/analysis"
	"github.com/assay-eval/assay/internal/units"
)

// What a user must not miss about a target — its JSON arrived wrapped, the
// cache paid for part of it, some results were called again — is said in
// text, Markdown and HTML, not only in the JSON.
func TestTargetNotesInEveryFormat(t *testing.T) {
	rep := &analysis.Report{
		Run: analysis.RunInfo{ID: "r1", Spec: "invoices", Cases: 40, Epochs: 1, Status: "complete", Scoring: 1},
		Targets: []analysis.Target{
			{Name: "chatty", N: 40, Primary: analysis.Rate{Scorer: "fields", Passed: 30, N: 40, Rate: 0.75},
				ParseTolerated: 12, Attempts: 47, Retried: 3,
				CostUSD: analysis.Cost{Total: 0.5, SavedUSD: 0.25}, JudgeSavedUSD: 0.0125},
			{Name: "clean", N: 40, Primary: analysis.Rate{Scorer: "fields", Passed: 36, N: 40, Rate: 0.9}, Attempts: 40},
			{Name: "retried", N: 40, Primary: analysis.Rate{Scorer: "fields", Passed: 36, N: 40, Rate: 0.9}, Attempts: 52},
			{Name: "judged", N: 40, Primary: analysis.Rate{Scorer: "fields", Passed: 36, N: 40, Rate: 0.9}, Attempts: 40, JudgeSavedUSD: 0.002},
		},
	}
	want := []string{
		"target chatty: 12 of 40 outputs were JSON only after a code fence or prose",
		"output: {strict: true}",
		"target chatty: the response cache saved $0.25 of replies and $0.0125 of judge verdicts",
		"target retried: 52 calls behind its 40 results (the rest were retries",
		"target judged: the response cache saved $0.002 of judge verdicts (not billed",
		"target chatty: 3 results called again by run --retry-errors (47 calls in all behind its 40 results)",
	}
	for _, f := range []struct {
		name   string
		render func(*bytes.Buffer) error
		unesc  func(string) string
	}{
		{"text", func(b *bytes.Buffer) error { return Text(b, rep) }, func(s string) string { return s }},
		{"markdown", func(b *bytes.Buffer) error { return Markdown(b, rep) }, func(s string) string { return strings.ReplaceAll(s, `\`, "") }},
		{"html", func(b *bytes.Buffer) error { return HTML(b, rep) }, html.UnescapeString},
	} {
		var b bytes.Buffer
		if err := f.render(&b); err != nil {
			t.Fatalf("%s: %v", f.name, err)
		}
		out := f.unesc(b.String())
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("%s report lacks %q", f.name, w)
			}
		}
		if strings.Contains(out, "$0 of") {
			t.Errorf("%s report names a saving of $0", f.name)
		}
		if strings.Contains(out, "target clean:") {
			t.Errorf("%s report has a note for a target with nothing to note", f.name)
		}
	}
}

// Latency cells in the text tables: a local target's sub-millisecond
// latency is shown, not rounded to 0.
func TestMSCell(t *testing.T) {
	for _, c := range []struct {
		in   float64
		want string
	}{
		{0, "0"}, {0.086, "0.086"}, {0.2, "0.20"}, {0.0004, "<0.001"}, {1.5, "1.5"},
		{9.94, "9.9"}, {9.96, "10"}, {812.5, "812"}, {2140, "2140"},
	} {
		if got := units.MSCell(c.in); got != c.want {
			t.Errorf("units.MSCell(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}
