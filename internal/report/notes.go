package report

import (
	"fmt"
	"strings"

	"github.com/assay-eval/assay/internal/analysis"
	"github.com/assay-eval/assay/internal/units"
)

// targetNotes are the per-target facts every format states under the
// target table, each only when it applies:
//
//   - secrets replaced in a target's stored outputs and errors (the target
//     echoed a key it was given; its outputs now read [REDACTED:VARIABLE]);
//   - outputs the json parser read only by tolerating a fence or prose
//     around the value (a format failure in many workloads; output.strict
//     makes it one);
//   - spend the response cache saved (replies and judge verdicts served from
//     it cost nothing; the cost column counts what was paid);
//   - results the response cache served (their latency is the first call's);
//   - the calls behind a target's results when there were more than results
//     (provider retries, results `run --retry-errors` called again).
//
// esc escapes each note for the format: the whole of it, as its brackets
// are markup in Markdown.
func targetNotes(rep *analysis.Report, esc func(string) string) []string {
	var notes []string
	add := func(format string, a ...any) { notes = append(notes, esc(fmt.Sprintf(format, a...))) }
	for _, t := range rep.Targets {
		if t.Redactions > 0 {
			add("target %s: %s replaced by [REDACTED:VARIABLE] (the variable the spec names) in its outputs and errors before they were stored",
				t.Name, plural(t.Redactions, "secret"))
		}
		if t.ParseTolerated > 0 {
			add("target %s: %d of %d outputs were JSON only after a code fence or prose around the value was dropped; with output: {strict: true} they fail as unparseable",
				t.Name, t.ParseTolerated, t.N)
		}
		if c := t.LatencyMS.FromCache; c > 0 {
			add("target %s: %d of %d results came from the response cache: their latency is that of the call that first made them, not measured by this run (for latency, run with --no-cache)",
				t.Name, c, t.N)
		}
		var saved []string
		if t.CostUSD.SavedUSD > 0 {
			saved = append(saved, units.USD(t.CostUSD.SavedUSD)+" of replies")
		}
		if t.JudgeSavedUSD > 0 {
			saved = append(saved, units.USD(t.JudgeSavedUSD)+" of judge verdicts")
		}
		if len(saved) > 0 {
			add("target %s: the response cache saved %s (not billed again; cost columns count what was paid)",
				t.Name, strings.Join(saved, " and "))
		}
		switch {
		case t.Retried > 0:
			add("target %s: %s called again by run --retry-errors (%d calls in all behind its %d results)",
				t.Name, plural(t.Retried, "result"), t.Attempts, t.N)
		case t.Attempts > t.N:
			add("target %s: %d calls behind its %d results (the rest were retries after rate limits, time-outs or server errors)",
				t.Name, t.Attempts, t.N)
		}
	}
	return notes
}
