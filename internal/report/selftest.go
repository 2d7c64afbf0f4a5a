package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/assay-eval/assay/internal/selftest/findings"
	"github.com/assay-eval/assay/internal/units"
)

// Renderers for `assay selftest`: a findings.Report as text (JSON is the
// report itself).

// selftestExampleCells bounds the flagged cells of one severity whose examples
// the text report shows; the rest are listed by name (the JSON has all).
const selftestExampleCells = 5

// SelftestText renders a selftest for a terminal. Every output, parsed value
// and reason that came from a null model or the data is shown quoted and
// escaped (strconv.Quote), so control characters cannot reach the
// terminal.
func SelftestText(w io.Writer, r *findings.Report) error {
	b := &strings.Builder{}
	fmt.Fprintf(b, "assay selftest: spec %s (%s), %d cases\n", r.Spec, r.SpecPath, r.Cases)
	run := 0
	for _, nm := range r.NullModels {
		if nm.Skipped == "" {
			run++
		}
	}
	fmt.Fprintf(b, "%d null models × raw and parsed modes; judge scorers: %s\n", run, selftestJudgeVia(r.JudgeVia))
	fmt.Fprintf(b, "rule: %s\n", r.Rule.Text)

	for _, sr := range r.Scorers {
		b.WriteString("\n")
		fmt.Fprintf(b, "%s · %s · %s", sr.Name, sr.Type, selftestRole(sr))
		if sr.Skipped != "" {
			fmt.Fprintf(b, "\n  not attacked: %s\n", sr.Skipped)
			continue
		}
		fmt.Fprintf(b, " (intervals simultaneous over %d cells; ! = clearly above chance)\n", sr.Tests)
		if sr.Note != "" {
			fmt.Fprintf(b, "  %s\n", sr.Note)
		}
		tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "  null model\traw\t\t\tparsed\t\t\tchance\t\n")
		rows := map[string][2]*findings.CellReport{}
		var order []string
		for i := range sr.Results {
			c := &sr.Results[i]
			pair, seen := rows[c.Null]
			if !seen {
				order = append(order, c.Null)
			}
			if c.Mode == findings.ModeRaw {
				pair[0] = c
			} else {
				pair[1] = c
			}
			rows[c.Null] = pair
		}
		for _, null := range order {
			pair := rows[null]
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t\n", null, selftestCell(pair[0]), selftestCell(pair[1]), units.Pct(selftestChance(pair)))
		}
		tw.Flush()
	}

	bySeverity := map[string][]findings.Finding{}
	for _, f := range r.Findings {
		bySeverity[f.Severity] = append(bySeverity[f.Severity], f)
	}
	if fs := bySeverity[findings.SeverityExploitable]; len(fs) > 0 {
		fmt.Fprintf(b, "\nEXPLOITABLE: the headline score %s passes %d null model × mode cell(s) clearly above chance:\n", r.Headline, len(fs))
		for i, f := range fs {
			fmt.Fprintf(b, "  %s (%s) · null model %s · %s mode: %d/%d = %s %s vs chance %s\n",
				f.Scorer, f.Type, f.Null, f.Mode, f.Passed, f.N, units.Pct(f.Rate), units.PctCI(f.CI), units.Pct(f.Chance))
			if i < selftestExampleCells {
				selftestExamples(b, f.Examples)
			}
		}
		if len(fs) > selftestExampleCells {
			fmt.Fprintf(b, "  (examples shown for the first %d cells; --format json has them all)\n", selftestExampleCells)
		}
	}
	for _, sev := range []string{findings.SeverityWarning, findings.SeverityNote} {
		fs := bySeverity[sev]
		if len(fs) == 0 {
			continue
		}
		b.WriteString("\n")
		byScorer := map[string][]findings.Finding{}
		var names []string
		for _, f := range fs {
			if _, ok := byScorer[f.Scorer]; !ok {
				names = append(names, f.Scorer)
			}
			byScorer[f.Scorer] = append(byScorer[f.Scorer], f)
		}
		for _, name := range names {
			group := byScorer[name]
			cells := make([]string, len(group))
			for i, f := range group {
				cells[i] = fmt.Sprintf("%s/%s %s", f.Null, f.Mode, units.PctWhole(f.Rate))
			}
			switch sev {
			case findings.SeverityWarning:
				fmt.Fprintf(b, "warning: %s (%s) passes null models clearly above chance: %s\n", name, group[0].Type, strings.Join(cells, ", "))
				fmt.Fprintf(b, "  it does not decide the headline score, but its pass rate is not evidence of correctness\n")
				selftestExamples(b, group[0].Examples)
			default:
				fmt.Fprintf(b, "note: %s (%s) passes null models above chance, as a check of form or of the call may: %s\n", name, group[0].Type, strings.Join(cells, ", "))
			}
		}
	}
	if len(r.Notes) > 0 {
		b.WriteString("\n")
		for _, n := range r.Notes {
			fmt.Fprintf(b, "note: %s\n", n)
		}
	}
	b.WriteString("\n")
	switch r.Verdict {
	case findings.VerdictExploitable:
		fmt.Fprintf(b, "verdict: EXPLOITABLE — the headline score %s can be passed without knowing the answers (exit 3)\n", r.Headline)
	case findings.VerdictIncomplete:
		fmt.Fprintf(b, "verdict: incomplete — nothing found, but the headline score %s was not attacked (exit 0)\n", r.Headline)
	default:
		fmt.Fprintf(b, "verdict: sound — no null model passes the headline score %s clearly above chance (exit 0)\n", r.Headline)
	}
	if r.JudgeRequests > 0 {
		fmt.Fprintf(b, "judge verdicts requested: %d (judge cost %s)\n", r.JudgeRequests, units.USD(r.JudgeCost))
	}
	fmt.Fprintf(b, "checked %d cases × %d null models × 2 modes in %s\n", r.Cases, run, units.Seconds(r.ElapsedMS))
	_, err := io.WriteString(w, b.String())
	return err
}

func selftestExamples(b *strings.Builder, exs []findings.Example) {
	for _, e := range exs {
		fmt.Fprintf(b, "      case %s: output %s", strconv.Quote(e.CaseID), strconv.Quote(e.Output))
		if e.Parsed != "" {
			fmt.Fprintf(b, " → parsed %s", strconv.Quote(e.Parsed))
		}
		fmt.Fprintf(b, " → passed: %s\n", strconv.Quote(e.Reason))
	}
}

func selftestCell(c *findings.CellReport) string {
	if c == nil || c.Skipped != "" {
		return "—\t\t"
	}
	mark := ""
	if c.Above {
		mark = " !"
	}
	return fmt.Sprintf("%d/%d\t%s\t%s%s", c.Passed, c.N, units.Pct(c.Rate), units.PctCI(c.CI), mark)
}

func selftestChance(pair [2]*findings.CellReport) float64 {
	for _, c := range pair {
		if c != nil {
			return c.Chance
		}
	}
	return 0
}

func selftestRole(sr findings.ScorerReport) string {
	switch {
	case sr.Headline:
		return "headline"
	case sr.Primary:
		return "primary"
	case sr.Role == findings.RoleForm:
		return "check of form"
	case sr.Role == findings.RoleCall:
		return "check of the call"
	}
	return "scorer of correctness"
}

func selftestJudgeVia(via string) string {
	switch via {
	case "mock":
		return "graded by an in-process mock that passes everything (the worst case: a grader that believes any output)"
	case "target":
		return "graded by the spec's configured judge targets (real calls)"
	}
	return "skipped (no grader is called; use --judge-via mock or target)"
}
