package report

import (
	"html"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/analysis"
)

// A pairwise judge's verdicts show as wins, ties and losses with the win
// and loss rates' intervals and the net lead's, in every format; a tie is
// said not to be a failure; names from the spec are escaped.
func TestPairwiseInEveryFormat(t *testing.T) {
	rep := &analysis.Report{Targets: []analysis.Target{{Name: "cand<i>", Pairwise: []analysis.Pairwise{{
		Scorer: "prefers<b>", Baseline: "base", Wins: 31, Ties: 52, Losses: 17, Undecided: 3, N: 100,
		WinRate: 0.31, WinCI: [2]float64{0.2289, 0.4047}, TieRate: 0.52, LossRate: 0.17, LossCI: [2]float64{0.1091, 0.2554},
		Net: 0.14, NetCI: [2]float64{-0.0071, 0.2829}, NetPValue: 0.0601,
	}}}}}
	for name, render := range map[string]func(*strings.Builder) error{
		"text":     func(b *strings.Builder) error { return Text(b, rep) },
		"markdown": func(b *strings.Builder) error { return Markdown(b, rep) },
		"html":     func(b *strings.Builder) error { return HTML(b, rep) },
		"json":     func(b *strings.Builder) error { return JSON(b, rep) },
	} {
		var b strings.Builder
		if err := render(&b); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		text := out
		if name == "html" {
			text = html.UnescapeString(out)
		}
		want := []string{"31", "52", "17", "31.0%", "[22.9, 40.5]", "17.0%", "+14.0", "[−0.7, +28.3]", "not failures"}
		if name == "json" {
			want = []string{`"wins": 31`, `"ties": 52`, `"losses": 17`, `"undecided": 3`, `"win_ci"`, `"net_ci"`, `"net_p_value"`}
		}
		for _, w := range want {
			if !strings.Contains(text, w) {
				t.Errorf("%s: %q missing:\n%s", name, w, out)
			}
		}
		if (name == "html" || name == "markdown") && (strings.Contains(out, "cand<i>") || strings.Contains(out, "prefers<b>")) {
			t.Errorf("%s: a name from the spec is not escaped", name)
		}
	}
}
