// Package report renders an analysis.Report: text for a terminal, JSON for
// scripts and CI (the DESIGN.md contract), Markdown for a pull-request
// comment, JUnit XML for CI test views, and one self-contained HTML page
// with SVG charts. It formats only; it never reads
// the store or computes statistics. Everything that came from a model or a
// dataset (target names, outputs, case text) is escaped for the format it is
// written in.
package report

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/assay-eval/assay/internal/analysis"
	"github.com/assay-eval/assay/internal/units"
)

// Render writes rep in format to w (the registry's report document; the
// junit format needs the run's rows: see RunReport).
func Render(w io.Writer, format string, rep *analysis.Report) error {
	return NewRegistry().Report.Render(w, format, RunReport{Report: rep})
}

// JSON writes the report as indented JSON.
func JSON(w io.Writer, rep *analysis.Report) error { return writeJSON(w, rep) }

// Text writes a terminal summary.
func Text(w io.Writer, rep *analysis.Report) error {
	r := rep.Run
	fmt.Fprintf(w, "run %s  spec %s  status %s\n", term(r.ID), term(r.Spec), r.Status)
	fmt.Fprintf(w, "  cases %d × epochs %d   spec %s  dataset %s  prompt %s\n",
		r.Cases, r.Epochs, r.SpecHash, r.DatasetHash, r.PromptHash)
	if r.GitCommit != "" {
		fmt.Fprintf(w, "  git %s\n", r.GitCommit)
	}
	if l := rescoredLine(r); l != "" {
		fmt.Fprintf(w, "  %s\n", term(l))
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "target\tn\tpassed\trate\t95% CI\tloud\tsilent\tp50 ms\tp95 ms\tcost $\t")
	for _, t := range rep.Targets {
		// A target with no result yet has no rate (not 0%) and no interval.
		rate, ci := units.Missing, units.Missing
		if t.Primary.N > 0 {
			rate, ci = units.Pct(t.Primary.Rate), units.PctCI(t.Primary.CI)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%d\t%d\t%s\t%s\t%s\t\n",
			term(t.Name), t.N, t.Primary.Passed, rate, ci,
			t.Failures.Loud, t.Failures.Silent, units.MSCell(t.LatencyMS.P50), units.MSCell(t.LatencyMS.P95), units.USDCell(t.CostUSD.Total))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, n := range targetNotes(rep, term) {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
	if err := textFirstToken(w, rep); err != nil {
		return err
	}
	if err := textScorers(w, rep); err != nil {
		return err
	}
	if err := textFields(w, rep); err != nil {
		return err
	}
	if err := textCalls(w, rep); err != nil {
		return err
	}
	if err := textClasses(w, rep); err != nil {
		return err
	}
	if err := textPairwise(w, rep); err != nil {
		return err
	}
	if err := textNoise(w, rep); err != nil {
		return err
	}
	if err := textComparisons(w, rep); err != nil {
		return err
	}
	if err := textLedger(w, rep.Ledger); err != nil {
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
	if len(rep.Worst) > 0 {
		fmt.Fprintln(w)
		textWorst(w, rep)
	}
	if len(rep.Targets) > 0 {
		fmt.Fprintf(w, "\n\nprimary scorer: %s; rates are passed/n with %s 95%% intervals\n", term(rep.Targets[0].Primary.Scorer), intervalWord(rep.Targets[0].Primary.CIMethod))
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
		fmt.Fprintf(w, "\nby %s (primary scorer, passed/n, %s 95%% CI)\n", term(k), sliceRateWord(rep, k))
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
				fmt.Fprintf(tw, "%d/%d %s %s\t", r.Passed, r.N, units.PctWhole(r.Rate), units.WholeCI(r.CI[0], r.CI[1]))
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
		fmt.Fprintf(w, "\npaired comparisons (same cases; Δ = A − B in points, 95%% CI; %s; p Holm-adjusted over the pairs)\n", term(analysis.MethodLabel(rep.Comparisons)))
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "A\tB\tn\tΔ\t95% CI\tA only\tB only\tp\tp adj\tverdict\t")
		for _, c := range rep.Comparisons {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t[%s, %s]\t%d\t%d\t%s\t%s\t%s\t\n", term(c.A), term(c.B), c.N,
				units.SignedPts(c.Delta), units.SignedPts(c.CI[0]), units.SignedPts(c.CI[1]), c.AOnly, c.BOnly, units.PValueCell(c.PValue), units.PValueCell(c.PAdjusted), verdictText(c))
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
	fmt.Fprintf(w, "\nΔ = after − before in points, 95%% CI; %s; p Holm-adjusted over targets\n", term(analysis.MethodLabel(rc.Comparisons)))
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
		fmt.Fprintf(tw, "%s\t%d\t%s\t[%s, %s]\t%d\t%d\t%s\t%s\t%s\t\n", term(name), c.N, units.SignedPts(c.Delta),
			units.SignedPts(c.CI[0]), units.SignedPts(c.CI[1]), c.AOnly, c.BOnly, units.PValueCell(c.PValue), units.PValueCell(c.PAdjusted), v)
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
				parts[i] = fmt.Sprintf("%s %s [%s, %s]", term(v), units.SignedPtsWhole(s.Delta), units.SignedPtsWhole(s.CI[0]), units.SignedPtsWhole(s.CI[1]))
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

// textNoise writes, for targets whose cases ran several epochs, the
// between-run standard deviation beside the standard error across cases.
func textNoise(w io.Writer, rep *analysis.Report) error {
	rows := noiseRows(rep)
	if len(rows) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nnoise across epochs (points; SE across cases vs SD between runs of the same cases)")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "target\tSE across cases\tbetween-run SD\tK\tepoch rates\twithin-case share\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t\n", term(r.name), r.se, r.sd, r.k, r.rates, r.share)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, noiseNote)
	return nil
}

// textLedger writes the selection ledger of a run in an experiment.
func textLedger(w io.Writer, l *analysis.Ledger) error {
	if l == nil {
		return nil
	}
	fmt.Fprintf(w, "\nselection ledger: experiment %s, %s tried in %s (primary scorer %s)\n",
		term(l.Experiment), plural(l.Variants, "variant"), plural(l.Runs, "run"), term(l.Scorer))
	if len(l.Tried) > 0 {
		fmt.Fprintf(w, "  chosen     %s  %s  deflated %s (expected best-of-%d inflation %s points = %s σ, σ = %s points)\n",
			term(l.Chosen.Name()), units.Pct(l.Chosen.Rate), units.Pct(l.DeflatedRate), l.Variants, units.Pts(l.Inflation), units.Z(l.ExpectedMaxZ), units.Pts(l.Sigma))
		fmt.Fprintf(w, "  reference  %s  %s  (%s)\n", term(l.Reference.Name()), units.Pct(l.Reference.Rate), referenceWords(l))
		if c := l.Chosen.VsReference; c != nil {
			fmt.Fprintf(w, "  lead       %s points, p %s, Holm-adjusted over %s %s: %s\n", deltaCI(*c), units.PValue(c.PValue),
				plural(l.Family, "comparison"), units.PValue(c.PAdjusted), survivesWords(l))
		}
	}
	fmt.Fprintf(w, "  %s\n", term(l.Summary))
	if len(l.Tried) > 1 {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "  variant\tstarted\tcases\trate\tΔ vs reference\tp\tp adj\tverdict\t")
		for _, v := range ledgerShown(l) {
			d, p, pa := "—", "—", "—"
			if c := v.VsReference; c != nil {
				d, p, pa = deltaCI(*c), units.PValue(c.PValue), units.PValue(c.PAdjusted)
			}
			fmt.Fprintf(tw, "  %s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t\n", term(v.Name()), term(v.Started), v.Cases, units.Pct(v.Rate), d, p, pa, ledgerRole(v))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if more := len(l.Tried) - len(ledgerShown(l)); more > 0 {
			fmt.Fprintf(w, "  … and %d more variants (the JSON report lists them all)\n", more)
		}
	}
	for _, n := range l.Notes {
		fmt.Fprintf(w, "  note: %s\n", term(n))
	}
	return nil
}

// noiseNote explains the noise table in every format.
const noiseNote = "SE across cases: how far the rate would move on another draw of cases (epochs averaged per case). " +
	"Between-run SD: how far one run moves from the next on these same cases (the SD, n−1, of the K per-epoch rates). " +
	"Within-case share: the part of one answer's variance that is the model answering the same case differently; more epochs shrink only that part."

type noiseRow struct {
	name, se, sd, rates, share string
	k                          int
}

// noiseRows are the targets whose cases ran several epochs, with their
// between-run figures formatted (points).
func noiseRows(rep *analysis.Report) []noiseRow {
	var rows []noiseRow
	for _, t := range rep.Targets {
		es := t.Epochs
		if es == nil || es.BetweenRunSD == nil || es.Epochs < 2 {
			continue
		}
		r := noiseRow{name: t.Name, se: "—", sd: units.Pts(*es.BetweenRunSD), k: es.Epochs, share: "—"}
		if t.Primary.SE > 0 {
			r.se = units.Pts(t.Primary.SE)
		}
		if es.WithinShare != nil {
			r.share = units.PctWhole(*es.WithinShare)
		}
		r.rates = epochRates(es.EpochRates)
		rows = append(rows, r)
	}
	return rows
}

// epochRates lists up to six per-epoch rates (percent), or their range.
func epochRates(rs []float64) string {
	if len(rs) == 0 {
		return "—"
	}
	if len(rs) <= 6 {
		parts := make([]string, len(rs))
		for i, r := range rs {
			parts[i] = units.Pts(r)
		}
		return strings.Join(parts, ", ")
	}
	lo, hi := rs[0], rs[0]
	for _, r := range rs {
		lo, hi = min(lo, r), max(hi, r)
	}
	return units.Pts(lo) + " to " + units.Pts(hi)
}

// ptsAbs formats a spread of rates in points without a sign: "2.1".

// ledgerMaxShown bounds the variants listed in the text, Markdown and
// HTML reports (JSON lists them all).
const ledgerMaxShown = 30

// ledgerShown are the variants to list: all of them, or the reference, the
// chosen one and those with the smallest adjusted p-values, in the order
// they were tried.
func ledgerShown(l *analysis.Ledger) []analysis.LedgerVariant {
	if len(l.Tried) <= ledgerMaxShown {
		return l.Tried
	}
	idx := make([]int, 0, len(l.Tried))
	for i := range l.Tried {
		idx = append(idx, i)
	}
	padj := func(v analysis.LedgerVariant) float64 {
		switch {
		case v.Reference || v.Chosen:
			return -1
		case v.VsReference == nil:
			return 2
		}
		return v.VsReference.PAdjusted
	}
	sort.SliceStable(idx, func(a, b int) bool { return padj(l.Tried[idx[a]]) < padj(l.Tried[idx[b]]) })
	idx = idx[:ledgerMaxShown]
	sort.Ints(idx)
	out := make([]analysis.LedgerVariant, len(idx))
	for i, j := range idx {
		out[i] = l.Tried[j]
	}
	return out
}

// ledgerRole is a variant's verdict column: "reference", or its corrected
// verdict against the reference, marked when it is the chosen one.
func ledgerRole(v analysis.LedgerVariant) string {
	s := "—"
	switch {
	case v.Reference:
		s = "reference"
	case v.VsReference != nil:
		s = v.VsReference.Verdict
	}
	if v.Chosen && !v.Reference {
		s += " (chosen)"
	} else if v.Chosen {
		s = "reference (chosen)"
	}
	return s
}

func referenceWords(l *analysis.Ledger) string {
	if l.ReferenceFrom == "option" {
		return "named by --reference"
	}
	return "the experiment's first variant"
}

func survivesWords(l *analysis.Ledger) string {
	switch {
	case l.Survives:
		return "the lead survives the correction"
	case l.Chosen.VsReference != nil && l.Chosen.VsReference.Delta <= 0:
		return "no lead over the reference"
	}
	return "the lead does not survive the correction"
}

// streamed lists the targets that reported a time to first token (they
// streamed), in the report's order.
func streamed(rep *analysis.Report) []analysis.Target {
	var out []analysis.Target
	for _, t := range rep.Targets {
		if t.LatencyMS.FirstToken != nil {
			out = append(out, t)
		}
	}
	return out
}

// textFirstToken writes the time to first token of the targets that
// streamed (nothing when none did).
func textFirstToken(w io.Writer, rep *analysis.Report) error {
	ts := streamed(rep)
	if len(ts) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\ntime to first token (streamed targets):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "target\tp50 ms\tp95 ms\tp99 ms\t")
	for _, t := range ts {
		ft := t.LatencyMS.FirstToken
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\n", term(t.Name), units.MSCell(ft.P50), units.MSCell(ft.P95), units.MSCell(ft.P99))
	}
	return tw.Flush()
}
