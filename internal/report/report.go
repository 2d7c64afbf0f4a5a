// Package report renders an analysis.Report: text for a terminal, JSON for
// scripts and CI (the DESIGN.md contract), Markdown for a pull-request
// comment, JUnit XML for CI test views, and one self-contained HTML page
// with SVG charts. It formats only; it never reads
// the store or computes statistics. Everything that came from a model or a
// dataset (target names, outputs, case text) is escaped for the format it is
// written in.
package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/assay-eval/assay/internal/analysis"
)

// Formats are the report formats this build renders.
var Formats = []string{"text", "json", "markdown", "html", "junit"}

// Render writes rep in format to w.
func Render(w io.Writer, format string, rep *analysis.Report) error {
	switch format {
	case "json":
		return JSON(w, rep)
	case "text", "":
		return Text(w, rep)
	case "markdown", "md":
		return Markdown(w, rep)
	case "html":
		return HTML(w, rep)
	case "junit":
		// JUnit lists every result; the report alone does not carry them.
		return errors.New("the junit format needs the run's results: call report.JUnit with analysis.ResultRow values")
	default:
		return fmt.Errorf("unknown report format %q (formats are: %s)", format, strings.Join(Formats, ", "))
	}
}

// JSON writes the report as indented JSON.
func JSON(w io.Writer, rep *analysis.Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

// Text writes a terminal summary.
func Text(w io.Writer, rep *analysis.Report) error {
	r := rep.Run
	fmt.Fprintf(w, "run %s  spec %s  status %s\n", term(r.ID), term(r.Spec), r.Status)
	fmt.Fprintf(w, "  cases %d × epochs %d   spec %s  dataset %s  prompt %s\n",
		r.Cases, r.Epochs, r.SpecHash, r.DatasetHash, r.PromptHash)
	if r.GitCommit != "" {
		fmt.Fprintf(w, "  git %s\n", r.GitCommit)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "target\tn\tpassed\trate\t95% CI\tloud\tsilent\tp50 ms\tp95 ms\tcost $\t")
	for _, t := range rep.Targets {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.1f%%\t[%.1f, %.1f]\t%d\t%d\t%.0f\t%.0f\t%.4f\t\n",
			term(t.Name), t.N, t.Primary.Passed, 100*t.Primary.Rate, 100*t.Primary.CI[0], 100*t.Primary.CI[1],
			t.Failures.Loud, t.Failures.Silent, t.LatencyMS.P50, t.LatencyMS.P95, t.CostUSD.Total)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if err := textComparisons(w, rep); err != nil {
		return err
	}
	if err := textSlices(w, rep); err != nil {
		return err
	}
	for _, t := range rep.Targets {
		if len(t.Failures.ByKind) == 0 {
			continue
		}
		kinds := make([]string, 0, len(t.Failures.ByKind))
		for k := range t.Failures.ByKind {
			kinds = append(kinds, k)
		}
		sort.Strings(kinds)
		parts := make([]string, len(kinds))
		for i, k := range kinds {
			parts[i] = fmt.Sprintf("%s %d", term(k), t.Failures.ByKind[k])
		}
		fmt.Fprintf(w, "\n%s failures: %s", term(t.Name), strings.Join(parts, ", "))
	}
	if len(rep.Targets) > 0 {
		fmt.Fprintf(w, "\n\nprimary scorer: %s; rates are passed/n with Wilson 95%% intervals\n", term(rep.Targets[0].Primary.Scorer))
	} else {
		fmt.Fprintln(w)
	}
	return nil
}

// term makes text safe for a terminal: control characters (escape sequences
// that could move the cursor or retitle the window) are shown as \xNN.
func term(s string) string {
	if !strings.ContainsFunc(s, isControl) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if isControl(r) {
			fmt.Fprintf(&b, "\\x%02x", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) }

// textSlices writes one table per tag key: a row per value (in order: as
// numbers when every value is one, else alphabetically), a column per target.
func textSlices(w io.Writer, rep *analysis.Report) error {
	keys := map[string]map[string]bool{}
	for _, t := range rep.Targets {
		for k, byValue := range t.Slices {
			if keys[k] == nil {
				keys[k] = map[string]bool{}
			}
			for v := range byValue {
				keys[k][v] = true
			}
		}
	}
	names := make([]string, 0, len(keys))
	for k := range keys {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		values := make([]string, 0, len(keys[k]))
		for v := range keys[k] {
			values = append(values, v)
		}
		analysis.SortValues(values)
		fmt.Fprintf(w, "\nby %s (primary scorer, passed/n, Wilson 95%% CI)\n", term(k))
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "%s\t", term(k))
		for _, t := range rep.Targets {
			fmt.Fprintf(tw, "%s\t", term(t.Name))
		}
		fmt.Fprintln(tw)
		for _, v := range values {
			fmt.Fprintf(tw, "%s\t", term(v))
			for _, t := range rep.Targets {
				r, ok := t.Slices[k][v]
				if !ok {
					fmt.Fprint(tw, "—\t")
					continue
				}
				fmt.Fprintf(tw, "%d/%d %.0f%% [%.0f, %.0f]\t", r.Passed, r.N, 100*r.Rate, 100*r.CI[0], 100*r.CI[1])
			}
			fmt.Fprintln(tw)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}

// textComparisons writes the paired comparisons, the ranking and the
// warnings.
func textComparisons(w io.Writer, rep *analysis.Report) error {
	if len(rep.Comparisons) > 0 {
		fmt.Fprintln(w, "\npaired comparisons (same cases; Δ = A − B in points, 95% CI; McNemar exact p, Holm-adjusted)")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "A\tB\tn\tΔ\t95% CI\tA only\tB only\tp\tp adj\tverdict\t")
		for _, c := range rep.Comparisons {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%+.1f\t[%+.1f, %+.1f]\t%d\t%d\t%s\t%s\t%s\t\n", term(c.A), term(c.B), c.N,
				100*c.Delta, 100*c.CI[0], 100*c.CI[1], c.AOnly, c.BOnly, pfmt(c.PValue), pfmt(c.PAdjusted), verdictText(c))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if len(rep.Ranking) > 0 {
		parts := make([]string, len(rep.Ranking))
		for i, g := range rep.Ranking {
			names := make([]string, len(g.Targets))
			for j, n := range g.Targets {
				names[j] = term(n)
			}
			parts[i] = fmt.Sprintf("%d. %s", g.Rank, strings.Join(names, " = "))
		}
		fmt.Fprintf(w, "\nranking (ties: not separated by the paired tests): %s\n", strings.Join(parts, "  "))
	}
	if len(rep.Pareto) > 0 {
		names := make([]string, len(rep.Pareto))
		for i, n := range rep.Pareto {
			names[i] = term(n)
		}
		fmt.Fprintf(w, "quality × cost × p95 latency frontier: %s\n", strings.Join(names, ", "))
	}
	for _, wn := range rep.Warnings {
		fmt.Fprintf(w, "warning: %s\n", term(wn))
	}
	return nil
}

func pfmt(p float64) string {
	if p < 1e-4 {
		return "<0.0001"
	}
	return strconv.FormatFloat(p, 'f', 4, 64)
}

func verdictText(c analysis.Comparison) string {
	switch c.Verdict {
	case "a_better":
		return term(c.A) + " better"
	case "b_better":
		return term(c.B) + " better"
	default:
		return c.Verdict
	}
}

// RunComparisonText writes a before/after comparison of two runs.
func RunComparisonText(w io.Writer, rc *analysis.RunComparison) error {
	fmt.Fprintf(w, "before %s (%s, %s)\nafter  %s (%s, %s)\n", term(rc.Before.ID), term(rc.Before.Spec), rc.Before.SpecHash,
		term(rc.After.ID), term(rc.After.Spec), rc.After.SpecHash)
	fmt.Fprintln(w, "\nΔ = after − before in points, 95% CI; McNemar exact p, Holm-adjusted over targets")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "target\tn\tΔ\t95% CI\tfixed\tbroken\tp\tp adj\tverdict\t")
	for _, c := range rc.Comparisons {
		name, _, _ := strings.Cut(c.A, "@")
		v := c.Verdict
		switch v {
		case "a_better":
			v = "better after"
		case "b_better":
			v = "worse after"
		}
		fmt.Fprintf(tw, "%s\t%d\t%+.1f\t[%+.1f, %+.1f]\t%d\t%d\t%s\t%s\t%s\t\n", term(name), c.N, 100*c.Delta,
			100*c.CI[0], 100*c.CI[1], c.AOnly, c.BOnly, pfmt(c.PValue), pfmt(c.PAdjusted), v)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, c := range rc.Comparisons {
		name, _, _ := strings.Cut(c.A, "@")
		keys := make([]string, 0, len(c.Slices))
		for k := range c.Slices {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			vals := make([]string, 0, len(c.Slices[k]))
			for v := range c.Slices[k] {
				vals = append(vals, v)
			}
			analysis.SortValues(vals)
			parts := make([]string, len(vals))
			for i, v := range vals {
				s := c.Slices[k][v]
				parts[i] = fmt.Sprintf("%s %+.0f [%+.0f, %+.0f]", term(v), 100*s.Delta, 100*s.CI[0], 100*s.CI[1])
			}
			fmt.Fprintf(w, "%s by %s: %s\n", term(name), term(k), strings.Join(parts, " · "))
		}
	}
	if len(rc.Only) > 0 {
		names := make([]string, len(rc.Only))
		for i, n := range rc.Only {
			names[i] = term(n)
		}
		fmt.Fprintf(w, "in one run only (not compared): %s\n", strings.Join(names, ", "))
	}
	for _, wn := range rc.Warnings {
		fmt.Fprintf(w, "warning: %s\n", term(wn))
	}
	return nil
}
