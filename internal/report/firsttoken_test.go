package report

import (
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/analysis"
)

// A target that streamed shows its time to first token (p50 and p95) in
// text, Markdown and HTML; one that did not is not given one, and a
// report where no target streamed has no such section or column.
func TestFirstTokenInEveryFormat(t *testing.T) {
	streamedRep := &analysis.Report{Targets: []analysis.Target{
		{Name: "local<b>", LatencyMS: analysis.Latency{P50: 900, P95: 2000, FirstToken: &analysis.Percentiles{P50: 123, P95: 457, P99: 601}}},
		{Name: "hosted", LatencyMS: analysis.Latency{P50: 800, P95: 1500}},
	}}
	plain := &analysis.Report{Targets: []analysis.Target{{Name: "hosted", LatencyMS: analysis.Latency{P50: 800, P95: 1500}}}}
	renders := map[string]func(*strings.Builder, *analysis.Report) error{
		"text":     func(b *strings.Builder, r *analysis.Report) error { return Text(b, r) },
		"markdown": func(b *strings.Builder, r *analysis.Report) error { return Markdown(b, r) },
		"html":     func(b *strings.Builder, r *analysis.Report) error { return HTML(b, r) },
	}
	for name, render := range renders {
		var b strings.Builder
		if err := render(&b, streamedRep); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if !strings.Contains(strings.ToLower(out), "first token") {
			t.Errorf("%s: no time-to-first-token heading:\n%s", name, out)
		}
		for _, v := range []string{"123", "457"} {
			if !strings.Contains(out, v) {
				t.Errorf("%s: first-token %s ms missing:\n%s", name, v, out)
			}
		}
		if name != "text" && strings.Contains(out, "local<b>") {
			t.Errorf("%s: target name not escaped", name)
		}
		b.Reset()
		if err := render(&b, plain); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(strings.ToLower(b.String()), "first token") {
			t.Errorf("%s: a first-token section with no streamed target:\n%s", name, b.String())
		}
	}
}
