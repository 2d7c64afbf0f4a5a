package report

import (
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/analysis"
)

// A target some of whose replies the response cache served is told apart:
// its latency columns hold the timings of the calls that first made them.
func TestNoteOnCachedLatency(t *testing.T) {
	rep := &analysis.Report{Targets: []analysis.Target{
		{Name: "fresh", N: 10},
		{Name: "warm", N: 10, LatencyMS: analysis.Latency{FromCache: 7}},
	}}
	notes := strings.Join(targetNotes(rep, func(s string) string { return s }), "\n")
	if !strings.Contains(notes, "target warm: 7 of 10 results came from the response cache") {
		t.Errorf("no cache note for warm:\n%s", notes)
	}
	if strings.Contains(notes, "target fresh:") {
		t.Errorf("a note for fresh, which had nothing cached:\n%s", notes)
	}
}
