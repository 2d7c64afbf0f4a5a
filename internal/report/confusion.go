package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/assay-eval/assay/internal/analysis"
	"github.com/assay-eval/assay/internal/units"
)

// maxShownClasses bounds the classes a report shows: the most frequent
// ones, the rest summed into one row and column (the JSON has them all).
const maxShownClasses = 20

// classView is one target's confusion matrix as every format shows it,
// unescaped: each renderer escapes the labels (a label is a dataset's
// expected value and can be anything).
type classView struct {
	Target, Scorer string
	// Columns are the predicted columns' headings; Rows a row per shown
	// class (and one for the rest) with the expected label first.
	Columns []string
	Rows    [][]string
	// Stats are the per-class figures: label, support, precision, recall,
	// F1 (each "86.0% [70.6, 93.7]").
	Stats    [][5]string
	Macro    string
	Note     string
	Methods  string
	Compared []classComparisonView
}

// classComparisonView is one pair of targets' per-class recall comparison.
type classComparisonView struct {
	A, B string
	Rows [][6]string // label, n, recall A, recall B, Δ [CI], p (Holm)
}

// classRest names the row and column that sum the classes not shown.
func classRest(n int) string { return fmt.Sprintf("(%d more)", n) }

// classViews are the report's confusion matrices, one per target that has
// one.
func classViews(rep *analysis.Report) []classView {
	var out []classView
	for _, t := range rep.Targets {
		c := t.Classes
		if c == nil {
			continue
		}
		K := len(c.Labels)
		shown := min(K, maxShownClasses)
		v := classView{Target: t.Name, Scorer: c.Scorer}
		v.Columns = append(v.Columns, c.Labels[:shown]...)
		if shown < K {
			v.Columns = append(v.Columns, classRest(K-shown))
			v.Note = fmt.Sprintf("%d classes; the %d most frequent are shown, the other %d summed in %s (the JSON report has every class). ",
				K, shown, K-shown, classRest(K-shown))
		}
		v.Columns = append(v.Columns, analysis.ClassOther, analysis.ClassNone)
		// col maps a matrix column to a shown column.
		col := func(j int) int {
			switch {
			case j < shown:
				return j
			case j < K:
				return shown
			}
			return len(v.Columns) - (K + 2 - j)
		}
		rowsShown := shown
		if shown < K {
			rowsShown++
		}
		counts := make([][]int, rowsShown)
		for i := range counts {
			counts[i] = make([]int, len(v.Columns))
		}
		for i, row := range c.Matrix {
			r := min(i, shown)
			for j, n := range row {
				counts[r][col(j)] += n
			}
		}
		for i, row := range counts {
			label := ""
			if i < shown {
				label = c.Labels[i]
			} else {
				label = classRest(K - shown)
			}
			cells := []string{label}
			for _, n := range row {
				cells = append(cells, units.Count(n))
			}
			v.Rows = append(v.Rows, cells)
		}
		for _, s := range c.PerClass[:shown] {
			v.Stats = append(v.Stats, [5]string{s.Label, units.Count(s.Support),
				units.Pct(s.Precision) + " " + units.PctCI(s.PrecisionCI), units.Pct(s.Recall) + " " + units.PctCI(s.RecallCI),
				units.Pct(s.F1) + " " + units.PctCI(s.F1CI)})
		}
		v.Macro = units.Pct(c.MacroF1) + " " + units.PctCI(c.MacroF1CI)
		pr := "Wilson"
		if c.PRMethod != "wilson" {
			pr = "percentile bootstrap (cases resampled with their epochs)"
		}
		v.Methods = "Rows are the expected label, columns the predicted one; the diagonal is what " + c.Scorer +
			" passed. " + analysis.ClassOther + " is an answer outside the labels, " + analysis.ClassNone +
			" no answer (a provider error, an unparseable or empty output). Precision and recall have " + pr +
			" 95% intervals; F1 and macro-F1 BCa bootstrap intervals over cases (percentile where BCa is undefined; bounds from precision and recall where every resample agrees)."
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil
	}
	// Per-class recall comparisons, grouped by pair.
	byPair := map[[2]string]int{}
	var pairs []classComparisonView
	shownLabel := map[string]bool{}
	if c := firstClasses(rep); c != nil {
		for _, l := range c.Labels[:min(len(c.Labels), maxShownClasses)] {
			shownLabel[l] = true
		}
	}
	for _, cc := range rep.ClassComparisons {
		if !shownLabel[cc.Label] {
			continue
		}
		k := [2]string{cc.A, cc.B}
		i, ok := byPair[k]
		if !ok {
			i = len(pairs)
			byPair[k] = i
			pairs = append(pairs, classComparisonView{A: cc.A, B: cc.B})
		}
		pairs[i].Rows = append(pairs[i].Rows, [6]string{cc.Label, units.Count(cc.N), units.Pct(cc.RecallA), units.Pct(cc.RecallB),
			units.Delta(cc.Delta) + " " + units.DeltaCI(cc.CI), units.PValueCell(cc.PValue) + " (" + units.PValueCell(cc.PAdjusted) + ")"})
	}
	out[0].Compared = pairs
	return out
}

// ptsCI formats an interval of differences in points: "[−3.1, +8.5]".
func firstClasses(rep *analysis.Report) *analysis.Classes {
	for _, t := range rep.Targets {
		if t.Classes != nil {
			return t.Classes
		}
	}
	return nil
}

const classComparisonNote = "Recall per class, paired on the class's cases (epoch 1): McNemar score test with Tango's interval; p in brackets is Holm's over the pair's classes."

// textClasses writes each target's confusion matrix and per-class table.
func textClasses(w io.Writer, rep *analysis.Report) error {
	views := classViews(rep)
	for _, v := range views {
		fmt.Fprintf(w, "\nconfusion matrix of %s on %s (rows expected, columns predicted)\n", term(v.Scorer), term(v.Target))
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprint(tw, "expected \\ predicted\t")
		for _, c := range v.Columns {
			fmt.Fprintf(tw, "%s\t", term(c))
		}
		fmt.Fprintln(tw)
		for _, r := range v.Rows {
			for _, c := range r {
				fmt.Fprintf(tw, "%s\t", term(c))
			}
			fmt.Fprintln(tw)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "class\tsupport\tprecision\trecall\tF1\t")
		for _, s := range v.Stats {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t\n", term(s[0]), s[1], s[2], s[3], s[4])
		}
		fmt.Fprintf(tw, "macro-F1\t\t\t\t%s\t\n", v.Macro)
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintf(w, "  %s%s\n", v.Note, term(v.Methods))
	}
	if len(views) == 0 {
		return nil
	}
	for _, p := range views[0].Compared {
		fmt.Fprintf(w, "\nrecall per class: %s vs %s\n", term(p.A), term(p.B))
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "class\tn\t%s\t%s\tΔ pts [95%% CI]\tp (Holm)\t\n", term(p.A), term(p.B))
		for _, r := range p.Rows {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t\n", term(r[0]), r[1], r[2], r[3], r[4], r[5])
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if len(views[0].Compared) > 0 {
		fmt.Fprintln(w, "  "+classComparisonNote)
	}
	return nil
}

// mdClasses writes each target's confusion matrix and per-class table.
func mdClasses(b *strings.Builder, rep *analysis.Report) {
	views := classViews(rep)
	for _, v := range views {
		fmt.Fprintf(b, "\n### Confusion matrix: %s on %s\n\n| expected \\\\ predicted |", mdText(v.Scorer), mdText(v.Target))
		align := "|:--|"
		for _, c := range v.Columns {
			b.WriteString(" " + mdText(c) + " |")
			align += "--:|"
		}
		b.WriteString("\n" + align + "\n")
		for _, r := range v.Rows {
			b.WriteString("|")
			for _, c := range r {
				b.WriteString(" " + mdText(c) + " |")
			}
			b.WriteString("\n")
		}
		b.WriteString("\n| class | support | precision | recall | F1 |\n|:--|--:|--:|--:|--:|\n")
		for _, s := range v.Stats {
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", mdText(s[0]), s[1], s[2], s[3], s[4])
		}
		fmt.Fprintf(b, "| **macro-F1** | | | | **%s** |\n", v.Macro)
		b.WriteString("\n" + mdText(v.Note+v.Methods) + "\n")
	}
	if len(views) == 0 {
		return
	}
	for _, p := range views[0].Compared {
		fmt.Fprintf(b, "\n**Recall per class: %s vs %s**\n\n| class | n | %s | %s | Δ pts [95%% CI] | p (Holm) |\n|:--|--:|--:|--:|--:|--:|\n",
			mdText(p.A), mdText(p.B), mdText(p.A), mdText(p.B))
		for _, r := range p.Rows {
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s |\n", mdText(r[0]), r[1], r[2], r[3], r[4], r[5])
		}
	}
	if len(views[0].Compared) > 0 {
		b.WriteString("\n" + mdText(classComparisonNote) + "\n")
	}
}

// htmlClasses is the HTML report's confusion section (template
// "confusion"); html/template escapes every label.
type htmlClasses struct {
	Views []classView
	Note  string
}

func newHTMLClasses(rep *analysis.Report) *htmlClasses {
	views := classViews(rep)
	if len(views) == 0 {
		return nil
	}
	for i := range views {
		v := &views[i]
		v.Target, v.Scorer = visible(v.Target, false), visible(v.Scorer, false)
		for j := range v.Columns {
			v.Columns[j] = visible(v.Columns[j], false)
		}
		for _, r := range v.Rows {
			r[0] = visible(r[0], false)
		}
		for j := range v.Stats {
			v.Stats[j][0] = visible(v.Stats[j][0], false)
		}
		v.Methods = visible(v.Methods, false)
		for j := range v.Compared {
			p := &v.Compared[j]
			p.A, p.B = visible(p.A, false), visible(p.B, false)
			for k := range p.Rows {
				p.Rows[k][0] = visible(p.Rows[k][0], false)
			}
		}
	}
	return &htmlClasses{Views: views, Note: classComparisonNote}
}
