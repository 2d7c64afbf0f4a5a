package selftest

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
)

// maxExampleCells bounds the flagged cells of one severity whose examples
// the text report shows; the rest are listed by name (the JSON has all).
const maxExampleCells = 5

// WriteText renders the report for a terminal. Every output, parsed value
// and reason that came from a null model or the data is shown quoted and
// escaped (strconv.Quote), so control characters cannot reach the
// terminal.
func (r *Report) WriteText(w io.Writer) error {
	b := &strings.Builder{}
	fmt.Fprintf(b, "assay selftest: spec %s (%s), %d cases\n", r.Spec, r.SpecPath, r.Cases)
	run := 0
	for _, nm := range r.NullModels {
		if nm.Skipped == "" {
			run++
		}
	}
	fmt.Fprintf(b, "%d null models × raw and parsed modes; judge scorers: %s\n", run, judgeText(r.JudgeVia))
	fmt.Fprintf(b, "rule: %s\n", r.Rule.Text)

	for _, sr := range r.Scorers {
		b.WriteString("\n")
		fmt.Fprintf(b, "%s · %s · %s", sr.Name, sr.Type, roleText(sr))
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
		rows := map[string][2]*CellReport{}
		var order []string
		for i := range sr.Results {
			c := &sr.Results[i]
			pair, seen := rows[c.Null]
			if !seen {
				order = append(order, c.Null)
			}
			if c.Mode == ModeRaw {
				pair[0] = c
			} else {
				pair[1] = c
			}
			rows[c.Null] = pair
		}
		for _, null := range order {
			pair := rows[null]
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%.1f%%\t\n", null, cellText(pair[0]), cellText(pair[1]), 100*chanceOf(pair))
		}
		tw.Flush()
	}

	bySeverity := map[string][]Finding{}
	for _, f := range r.Findings {
		bySeverity[f.Severity] = append(bySeverity[f.Severity], f)
	}
	if fs := bySeverity[SeverityExploitable]; len(fs) > 0 {
		fmt.Fprintf(b, "\nEXPLOITABLE: the headline score %s passes %d null model × mode cell(s) clearly above chance:\n", r.Headline, len(fs))
		for i, f := range fs {
			fmt.Fprintf(b, "  %s (%s) · null model %s · %s mode: %d/%d = %.1f%% [%.1f, %.1f] vs chance %.1f%%\n",
				f.Scorer, f.Type, f.Null, f.Mode, f.Passed, f.N, 100*f.Rate, 100*f.CI[0], 100*f.CI[1], 100*f.Chance)
			if i < maxExampleCells {
				writeExamples(b, f.Examples)
			}
		}
		if len(fs) > maxExampleCells {
			fmt.Fprintf(b, "  (examples shown for the first %d cells; --format json has them all)\n", maxExampleCells)
		}
	}
	for _, sev := range []string{SeverityWarning, SeverityNote} {
		fs := bySeverity[sev]
		if len(fs) == 0 {
			continue
		}
		b.WriteString("\n")
		byScorer := map[string][]Finding{}
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
				cells[i] = fmt.Sprintf("%s/%s %.0f%%", f.Null, f.Mode, 100*f.Rate)
			}
			switch sev {
			case SeverityWarning:
				fmt.Fprintf(b, "warning: %s (%s) passes null models clearly above chance: %s\n", name, group[0].Type, strings.Join(cells, ", "))
				fmt.Fprintf(b, "  it does not decide the headline score, but its pass rate is not evidence of correctness\n")
				writeExamples(b, group[0].Examples)
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
	case VerdictExploitable:
		fmt.Fprintf(b, "verdict: EXPLOITABLE — the headline score %s can be passed without knowing the answers (exit 3)\n", r.Headline)
	case VerdictIncomplete:
		fmt.Fprintf(b, "verdict: incomplete — nothing found, but the headline score %s was not attacked (exit 0)\n", r.Headline)
	default:
		fmt.Fprintf(b, "verdict: sound — no null model passes the headline score %s clearly above chance (exit 0)\n", r.Headline)
	}
	if r.JudgeRequests > 0 {
		fmt.Fprintf(b, "judge verdicts requested: %d (judge cost $%.4f)\n", r.JudgeRequests, r.JudgeCost)
	}
	fmt.Fprintf(b, "checked %d cases × %d null models × 2 modes in %.2fs\n", r.Cases, run, r.ElapsedMS/1000)
	_, err := io.WriteString(w, b.String())
	return err
}

func writeExamples(b *strings.Builder, exs []Example) {
	for _, e := range exs {
		fmt.Fprintf(b, "      case %s: output %s", strconv.Quote(e.CaseID), strconv.Quote(e.Output))
		if e.Parsed != "" {
			fmt.Fprintf(b, " → parsed %s", strconv.Quote(e.Parsed))
		}
		fmt.Fprintf(b, " → passed: %s\n", strconv.Quote(e.Reason))
	}
}

func cellText(c *CellReport) string {
	if c == nil || c.Skipped != "" {
		return "—\t\t"
	}
	mark := ""
	if c.Above {
		mark = " !"
	}
	return fmt.Sprintf("%d/%d\t%.1f%%\t[%.1f, %.1f]%s", c.Passed, c.N, 100*c.Rate, 100*c.CI[0], 100*c.CI[1], mark)
}

func chanceOf(pair [2]*CellReport) float64 {
	for _, c := range pair {
		if c != nil {
			return c.Chance
		}
	}
	return 0
}

func roleText(sr ScorerReport) string {
	switch {
	case sr.Headline:
		return "headline"
	case sr.Primary:
		return "primary"
	case sr.Role == RoleForm:
		return "check of form"
	case sr.Role == RoleCall:
		return "check of the call"
	}
	return "scorer of correctness"
}

func judgeText(via string) string {
	switch via {
	case "mock":
		return "graded by an in-process mock that passes everything (the worst case: a grader that believes any output)"
	case "target":
		return "graded by the spec's configured judge targets (real calls)"
	}
	return "skipped (no grader is called; use --judge-via mock or target)"
}
