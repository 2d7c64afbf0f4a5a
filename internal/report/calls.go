package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/assay-eval/assay/internal/analysis"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/units"
)

// The tool-call section (analysis.CallReport), in every format: per
// target the tool-selection accuracy, calls and turns per case and the
// cost of one trajectory with their intervals, then the paired
// comparisons. A report without calls has no section (Report.Calls nil).

// callsNote explains the section in every format.
const callsNote = "With calls: results whose reply made a tool call; call only: those whose reply was calls and no text. Tool choice: outputs whose call named the expected tool (the tool scorer's (tool) or (tools) field) out of every output the scorer scored, with the interval the target's rates use; the other fields of a tool scorer are its arguments, one row each in the fields table. " +
	"Calls per case: tool calls of the case's reply (every turn's in an agent loop); turns: model calls per case; cost: the price of one trajectory, every turn at the target's price (cache hits included). " +
	"Each is the mean over cases (a case's epochs averaged) with a 95% Student's t interval across cases."

// callsCompareNote explains the comparisons.
const callsCompareNote = "Same cases; Δ = A − B. Tool choice in points with the primary rates' test; calls, turns and cost by paired t on the per-case values (by the sign test when every case differs by the same amount). p Holm-adjusted over the pairs of each measure."

// callColumn is one column of the section's table: a tool scorer's
// selection field.
type callColumn struct{ scorer, field string }

// callColumns are the tool-selection columns of a call report, in the
// order the targets list them.
func callColumns(cr *analysis.CallReport) []callColumn {
	var out []callColumn
	for _, t := range cr.Targets {
		for _, s := range t.Selection {
			c := callColumn{s.Scorer, s.Field}
			seen := false
			for _, o := range out {
				seen = seen || o == c
			}
			if !seen {
				out = append(out, c)
			}
		}
	}
	return out
}

// selectionOf is a target's rate in a selection column.
func selectionOf(t analysis.TargetCalls, c callColumn) (analysis.Rate, bool) {
	for _, s := range t.Selection {
		if s.Scorer == c.scorer && s.Field == c.field {
			return s.Rate, s.N > 0
		}
	}
	return analysis.Rate{}, false
}

// meanCells formats a count mean and its interval.
func meanCells(m analysis.Mean) (string, string) {
	if m.N == 0 {
		return units.Missing, ""
	}
	if m.CIMethod == "" {
		return units.PerCase(m.Mean), ""
	}
	return units.PerCase(m.Mean), "[" + units.PerCase(m.CI[0]) + ", " + units.PerCase(m.CI[1]) + "]"
}

// costCells formats a cost mean and its interval.
func costCells(m analysis.Mean) (string, string) {
	if m.N == 0 {
		return units.Missing, ""
	}
	if m.CIMethod == "" {
		return units.USD(m.Mean), ""
	}
	return units.USD(m.Mean), "[" + units.USD(m.CI[0]) + ", " + units.USD(m.CI[1]) + "]"
}

// joinCell joins a value and its interval with a space.
func joinCell(v, ci string) string {
	if ci == "" {
		return v
	}
	return v + " " + ci
}

// measureWord names a measure in a table.
func measureWord(m string) string {
	switch m {
	case analysis.MeasureCalls:
		return "calls/case"
	case analysis.MeasureTurns:
		return "turns/case"
	case analysis.MeasureCost:
		return "cost/trajectory"
	}
	return m
}

// measureDelta formats a measure's difference and interval.
func measureDelta(c analysis.MeasureComparison) (string, string) {
	if c.Measure == analysis.MeasureCost {
		return units.SignedUSD(c.Delta), "[" + units.SignedUSD(c.CI[0]) + ", " + units.SignedUSD(c.CI[1]) + "]"
	}
	return units.SignedPerCase(c.Delta), "[" + units.SignedPerCase(c.CI[0]) + ", " + units.SignedPerCase(c.CI[1]) + "]"
}

// measureVerdict words a measure comparison's verdict; esc escapes a
// target's name for the format.
func measureVerdict(c analysis.MeasureComparison, esc func(string) string) string {
	switch c.Verdict {
	case "a_higher":
		return esc(c.A) + " higher"
	case "b_higher":
		return esc(c.B) + " higher"
	}
	return c.Verdict
}

// selectionVerdict words a tool-choice comparison's verdict.
func selectionVerdict(c analysis.Comparison, esc func(string) string) string {
	switch c.Verdict {
	case "a_better":
		return esc(c.A) + " better"
	case "b_better":
		return esc(c.B) + " better"
	}
	return c.Verdict
}

// callsHeader is the section's column heads, escaped by esc.
func callsHeader(cr *analysis.CallReport, cols []callColumn, esc func(string) string) []string {
	h := []string{"target", "with calls", "call only"}
	for _, c := range cols {
		h = append(h, "tool choice: "+esc(c.scorer))
	}
	h = append(h, "calls/case")
	if cr.Agent {
		h = append(h, "turns/case")
	}
	return append(h, "cost/trajectory")
}

// callsRow is one target's cells (value, interval), escaped by esc.
func callsRow(cr *analysis.CallReport, cols []callColumn, t analysis.TargetCalls, esc func(string) string) [][2]string {
	row := [][2]string{{esc(t.Target), ""},
		{units.Count(t.WithCalls) + "/" + units.Count(t.Results), ""},
		{units.Count(t.CallOnly), ""}}
	for _, c := range cols {
		r, ok := selectionOf(t, c)
		if !ok {
			row = append(row, [2]string{units.Missing, ""})
			continue
		}
		row = append(row, [2]string{units.Count(r.Passed) + "/" + units.Count(r.N) + " " + units.Pct(r.Rate), units.PctCI(r.CI)})
	}
	v, ci := meanCells(t.Calls)
	row = append(row, [2]string{v, ci})
	if cr.Agent {
		m := analysis.Mean{}
		if t.Turns != nil {
			m = *t.Turns
		}
		v, ci := meanCells(m)
		row = append(row, [2]string{v, ci})
	}
	v, ci = costCells(t.Cost)
	return append(row, [2]string{v, ci})
}

// textCalls writes the tool-call section (nothing for a run without
// calls).
func textCalls(w io.Writer, rep *analysis.Report) error {
	cr := rep.Calls
	if cr == nil {
		return nil
	}
	cols := callColumns(cr)
	fmt.Fprintln(w, "\ntool calls (per case: mean [95% t CI])")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, strings.Join(callsHeader(cr, cols, term), "\t")+"\t")
	for _, t := range cr.Targets {
		cells := callsRow(cr, cols, t, term)
		parts := make([]string, len(cells))
		for i, c := range cells {
			parts[i] = joinCell(c[0], c[1])
		}
		fmt.Fprintln(tw, strings.Join(parts, "\t")+"\t")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, callsNote)
	if len(cr.Selection) == 0 && len(cr.Measures) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\npaired comparisons of tool calls (same cases; Δ = A − B, 95% CI; p Holm-adjusted over the pairs of each measure)")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "measure\tA\tB\tn\tΔ\t95% CI\ttest\tp\tp adj\tverdict\t")
	for _, c := range callComparisons(cr, term, strconv.Itoa) {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", c.Measure, c.A, c.B, c.N, c.Delta, c.CI, c.Test, c.P, c.PAdj, c.Verdict)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, callsCompareNote)
	return nil
}

// mdCalls writes the tool-call section as Markdown tables.
func mdCalls(b *strings.Builder, rep *analysis.Report) {
	cr := rep.Calls
	if cr == nil {
		return
	}
	cols := callColumns(cr)
	head := callsHeader(cr, cols, mdText)
	b.WriteString("\n### Tool calls\n\n| " + strings.Join(head, " | ") + " |\n|:--|")
	b.WriteString(strings.Repeat("--:|", len(head)-1) + "\n")
	for _, t := range cr.Targets {
		cells := callsRow(cr, cols, t, mdText)
		parts := make([]string, len(cells))
		for i, c := range cells {
			parts[i] = c[0]
			if i == 0 {
				parts[i] = "**" + c[0] + "**"
			}
			if c[1] != "" {
				parts[i] += " " + c[1]
			}
		}
		b.WriteString("| " + strings.Join(parts, " | ") + " |\n")
	}
	b.WriteString("\n" + mdText(callsNote) + "\n")
	if len(cr.Selection) == 0 && len(cr.Measures) == 0 {
		return
	}
	b.WriteString("\n#### Tool calls compared\n\n| measure | A | B | n | Δ [95% CI] | test | p | p adj | verdict |\n|:--|:--|:--|--:|--:|:--|--:|--:|:--|\n")
	for _, c := range callComparisons(cr, mdText, strconv.Itoa) {
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s %s | %s | %s | %s | %s |\n", c.Measure, c.A, c.B, c.N, c.Delta, c.CI, c.Test, c.P, c.PAdj, c.Verdict)
	}
	b.WriteString("\n" + mdText(callsCompareNote) + "\n")
}

// htmlCalls is the tool-call section as the HTML template shows it.
type htmlCalls struct {
	Head        []string
	Rows        [][]htmlCell
	Note        string
	Compared    []callComparison
	CompareNote string
}

// callComparison is one paired comparison of the tool-call section,
// formatted and escaped for one output format.
type callComparison struct {
	Measure, A, B, N, Delta, CI, Test, P, PAdj, Verdict string
}

// newHTMLCalls formats the tool-call section (nil for a run without
// calls). html/template escapes every value; visible shows control
// characters.
func newHTMLCalls(rep *analysis.Report) *htmlCalls {
	cr := rep.Calls
	if cr == nil {
		return nil
	}
	esc := func(s string) string { return visible(s, false) }
	cols := callColumns(cr)
	h := &htmlCalls{Head: callsHeader(cr, cols, esc), Note: callsNote, CompareNote: callsCompareNote}
	for _, t := range cr.Targets {
		var row []htmlCell
		for _, c := range callsRow(cr, cols, t, esc) {
			row = append(row, htmlCell{Text: c[0], Sub: c[1]})
		}
		h.Rows = append(h.Rows, row)
	}
	h.Compared = callComparisons(cr, esc, units.Count)
	return h
}

// callComparisons formats the paired comparisons of tool choice and of
// calls, turns and cost, one row each, for every format; esc escapes
// names for the format and count writes the number of cases.
func callComparisons(cr *analysis.CallReport, esc func(string) string, count func(int) string) []callComparison {
	var out []callComparison
	for _, c := range cr.Selection {
		out = append(out, callComparison{Measure: "tool choice: " + esc(c.Scorer), A: esc(c.A), B: esc(c.B), N: count(c.N),
			Delta: units.SignedPts(c.Delta), CI: "[" + units.SignedPts(c.CI[0]) + ", " + units.SignedPts(c.CI[1]) + "]",
			Test: esc(c.Test), P: units.PValueCell(c.PValue), PAdj: units.PValueCell(c.PAdjusted), Verdict: selectionVerdict(c, esc)})
	}
	for _, c := range cr.Measures {
		d, ci := measureDelta(c)
		out = append(out, callComparison{Measure: measureWord(c.Measure), A: esc(c.A), B: esc(c.B), N: count(c.N),
			Delta: d, CI: ci, Test: esc(c.Test), P: units.PValueCell(c.PValue), PAdj: units.PValueCell(c.PAdjusted),
			Verdict: measureVerdict(c, esc)})
	}
	return out
}

// callsLine writes a reply's tool calls on one line: name(arguments)
// joined by " · ". Model output: the caller escapes it.
func callsLine(calls []record.ToolCall) string {
	parts := make([]string, len(calls))
	for i, c := range calls {
		parts[i] = c.String()
	}
	return strings.Join(parts, " · ")
}
