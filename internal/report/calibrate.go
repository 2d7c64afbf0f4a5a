package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/assay-eval/assay/internal/calibrate"
	"github.com/assay-eval/assay/internal/units"
)

// calibrateDocument is `assay calibrate`'s document: a judge held up
// against people's labels, in every format.
func calibrateDocument() *Document[*calibrate.Report] {
	return newDocument("calibrate",
		Format[*calibrate.Report]{Name: "text", Aliases: []string{""}, Render: CalibrationText},
		Format[*calibrate.Report]{Name: "markdown", Aliases: []string{"md"}, Render: CalibrationMarkdown},
		JSONFormat[*calibrate.Report](),
		Format[*calibrate.Report]{Name: "html", Render: CalibrationPage},
	)
}

// calibrationView is a calibration report with every number formatted
// (through units) and every text from outside (names, labels' reasons)
// as given: each format escapes it for where it lands.
type calibrationView struct {
	Title   string
	Verdict string // the verdict's words
	Kind    string // fit | biased | not_fit (a CSS class)
	Reasons []string
	Labels  string // how many labels were used, and what became of the rest
	// Matrix rows: human pass, human fail; columns judge pass, judge fail:
	// counts of labels.
	Matrix [2][2]string
	// Weighted is the same matrix of the labels' weights (the estimated
	// outputs of the run in each cell), and Weighting says how the labels
	// were weighted; both empty when every label weighs the same.
	Weighted  *[2][2]string
	Weighting string
	// Classes: name, labels, precision, recall, F1.
	Classes [][5]string
	// Measures: name, value, detail.
	Measures  [][3]string
	Needed    string
	Threshold string
	Disagreed []calibrationDisagreement
	More      string // "and N more" when Disagreed was cut
	Notes     []string
}

type calibrationDisagreement struct {
	Output, Human, Judge, Labeler, Reason string
}

func calibrationVerdictText(v string) string {
	switch v {
	case calibrate.Fit:
		return "fit to use"
	case calibrate.Biased:
		return "biased: use the corrected pass rate, not the raw one"
	case calibrate.NotFit:
		return "not fit"
	}
	return v
}

func calPtr(x *float64, f func(float64) string) string {
	if x == nil {
		return units.Missing
	}
	return f(*x)
}

func calRate(r calibrate.Rate) string {
	return calPtr(r.Value, units.Pct) + " (" + units.Count(r.Count) + " of " + units.Count(r.Of) + ")"
}

func newCalibrationView(rep *calibrate.Report) calibrationView {
	v := calibrationView{
		Title:   fmt.Sprintf("judge %s on run %s (scoring %d)", rep.Judge, rep.RunID, rep.Scoring),
		Verdict: calibrationVerdictText(rep.Verdict),
		Kind:    rep.Verdict,
		Reasons: rep.Reasons,
		Notes:   rep.Notes,
	}
	c := rep.Counts
	v.Labels = units.Count(c.Used) + " of " + units.Count(c.Labels) + " labels used"
	var apart []string
	for _, p := range []struct {
		n    int
		what string
	}{
		{c.Skipped, "skipped"}, {c.Stale, "of a replaced output"}, {c.Missing, "of no output of the run"},
		{c.Unjudged, "of an output the judge gave no verdict"}, {c.Superseded, "superseded by a later label"},
	} {
		if p.n > 0 {
			apart = append(apart, units.Count(p.n)+" "+p.what)
		}
	}
	if len(apart) > 0 {
		v.Labels += " (" + strings.Join(apart, ", ") + ")"
	}
	if c.Disagreements > 0 {
		v.Labels += "; " + units.Count(c.Disagreements) + " outputs labeled both pass and fail"
	}
	m := rep.Confusion
	v.Matrix = [2][2]string{{units.Count(m.TP), units.Count(m.FN)}, {units.Count(m.FP), units.Count(m.TN)}}
	rateNote := ""
	if w := rep.Weighting; w != nil {
		c := w.Cells
		v.Weighted = &[2][2]string{{units.Num(c.TP), units.Num(c.FN)}, {units.Num(c.FP), units.Num(c.TN)}}
		v.Weighting = "The first matrix counts labels. The labels were drawn with unequal probabilities (queue " + strings.Join(w.Queues, ", ") +
			"), so each is weighted by the inverse of its probability: the second matrix sums the weights (estimated outputs of the run in each cell), and every rate, precision, recall, F1, κ and agreement below is weighted; counts in parentheses are labels. Effective labels (Kish): " +
			units.Num(w.Effective.All) + " (passes " + units.Num(w.Effective.Pass) + ", fails " + units.Num(w.Effective.Fail) + ")."
		if w.Unweighted > 0 {
			v.Weighting += " " + units.Count(w.Unweighted) + " labels had no queue item and weigh 1."
		}
		rateNote = "; weighted by the queue's selection probabilities, the counts are labels"
	}
	for _, cl := range rep.Classes {
		v.Classes = append(v.Classes, [5]string{cl.Name, units.Count(cl.Support), calPtr(cl.Precision, units.Pct), calPtr(cl.Recall, units.Pct), calPtr(cl.F1, units.Pct)})
	}
	kappa := calPtr(rep.Kappa.Value, units.Ratio)
	kdetail := "undefined: every label and verdict in one class"
	if rep.Kappa.Value != nil && rep.Kappa.CI != nil {
		kdetail = units.Plain(100*rep.Thresholds.Level) + "% interval [" + units.Ratio(rep.Kappa.CI.Low) + ", " + units.Ratio(rep.Kappa.CI.High) + "], SE " + calPtr(rep.Kappa.SE, units.Ratio)
		if w := rep.Weighting; w != nil {
			kdetail += " (of the weighted table; the SE at Kish's " + units.Num(w.Effective.All) + " effective labels)"
		}
	}
	corrected := calPtr(rep.Corrected.Value, units.Pct)
	cdetail := rep.Corrected.Why
	if ci := rep.Corrected.CI; ci != nil {
		cdetail = units.Plain(100*rep.Thresholds.Level) + "% interval " + units.PctCI([2]float64{ci.Low, ci.High}) + " (Fieller, delta-method variance)"
		if rep.Weighting != nil {
			cdetail = units.Plain(100*rep.Thresholds.Level) + "% interval " + units.PctCI([2]float64{ci.Low, ci.High}) + " (Fieller, delta-method variance over the queue's strata, weighted)"
		}
		if b := rep.Corrected.Bootstrap; b != nil {
			cdetail += "; bootstrap " + units.PctCI([2]float64{b.Low, b.High})
		}
		if rep.Corrected.Why != "" {
			cdetail += "; " + rep.Corrected.Why
		}
	}
	v.Measures = [][3]string{
		{"agreement", calPtr(rep.Kappa.Agreement, units.Pct), "share of labels the judge agreed with" + rateNote},
		{"Cohen's κ", kappa, kdetail},
		{"TPR (sensitivity)", calRate(rep.TPR), "of the outputs people passed, the share the judge passed" + rateNote},
		{"TNR (specificity)", calRate(rep.TNR), "of the outputs people failed, the share the judge failed" + rateNote},
		{"Youden's J", calPtr(rep.Youden, units.Ratio), "TPR + TNR − 1: 0 for a judge no better than chance"},
		{"pass rate, labels", calRate(rep.Human), "people's verdicts on the labeled outputs" + rateNote},
		{"pass rate, judge (raw)", calRate(rep.Raw), "the judge's verdicts on every output of the run it judged"},
		{"pass rate, corrected", corrected, cdetail},
	}
	n := rep.Needed
	width := units.Points(rep.Thresholds.Width)
	switch {
	case n.Why != "":
		v.Needed = n.Why
	case n.Reached:
		v.Needed = "the corrected rate's interval is already within " + width
	default:
		v.Needed = fmt.Sprintf("for an interval %s wide: %s more labels of outputs people pass and %s of outputs they fail, or %s more drawn at random from the run",
			width, units.Count(n.Pass), units.Count(n.Fail), units.Count(n.Random))
		switch n.More {
		case "pass":
			v.Needed += "; the cheapest way draws more of the outputs people pass than a random draw would (a queue stratified by the judge's verdict, weighted to its passes)"
		case "fail":
			v.Needed += "; the cheapest way draws more of the outputs people fail than a random draw would (a queue stratified by the judge's verdict, weighted to its fails)"
		}
	}
	th := rep.Thresholds
	v.Threshold = "κ ≥ " + units.Ratio(th.MinKappa) + ", TNR ≥ " + units.Pct(th.MinTNR) + ", TPR ≥ " + units.Pct(th.MinTPR) +
		", interval width " + width + ", level " + units.Plain(100*th.Level) + "%"
	for _, d := range rep.Disagreed {
		v.Disagreed = append(v.Disagreed, calibrationDisagreement{
			Output: fmt.Sprintf("%s · %s · epoch %d", d.CaseID, d.Target, d.Epoch),
			Human:  d.Human, Judge: d.Judge, Labeler: d.Labeler, Reason: d.Reason,
		})
	}
	if rest := rep.DisagreedTotal - len(rep.Disagreed); rest > 0 {
		v.More = "and " + units.Count(rest) + " more"
	}
	return v
}

// CalibrationText renders a calibration report as plain text.
func CalibrationText(w io.Writer, rep *calibrate.Report) error {
	v := newCalibrationView(rep)
	var b strings.Builder
	fmt.Fprintf(&b, "assay calibrate: %s\n", oneLine(v.Title))
	fmt.Fprintf(&b, "verdict: %s\n", v.Verdict)
	for _, r := range v.Reasons {
		fmt.Fprintf(&b, "  - %s\n", oneLine(r))
	}
	fmt.Fprintf(&b, "\n%s\n\n", v.Labels)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "\tjudge pass\tjudge fail\t"
	if v.Weighted != nil {
		head = "labels\tjudge pass\tjudge fail\t"
	}
	fmt.Fprintln(tw, head)
	fmt.Fprintf(tw, "human pass\t%s\t%s\t\n", v.Matrix[0][0], v.Matrix[0][1])
	fmt.Fprintf(tw, "human fail\t%s\t%s\t\n", v.Matrix[1][0], v.Matrix[1][1])
	if m := v.Weighted; m != nil {
		fmt.Fprintln(tw, "weighted\tjudge pass\tjudge fail\t")
		fmt.Fprintf(tw, "human pass\t%s\t%s\t\n", m[0][0], m[0][1])
		fmt.Fprintf(tw, "human fail\t%s\t%s\t\n", m[1][0], m[1][1])
	}
	tw.Flush()
	if v.Weighting != "" {
		fmt.Fprintf(&b, "\n%s\n", oneLine(v.Weighting))
	}
	b.WriteString("\n")
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "class\tlabels\tprecision\trecall\tF1\t")
	for _, c := range v.Classes {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t\n", c[0], c[1], c[2], c[3], c[4])
	}
	tw.Flush()
	b.WriteString("\n")
	for _, m := range v.Measures {
		fmt.Fprintf(&b, "%-24s %s\n", m[0]+":", m[1])
		if m[2] != "" {
			fmt.Fprintf(&b, "%-24s %s\n", "", oneLine(m[2]))
		}
	}
	fmt.Fprintf(&b, "\nlabels needed: %s\n", oneLine(v.Needed))
	fmt.Fprintf(&b, "thresholds: %s\n", v.Threshold)
	if len(v.Disagreed) > 0 {
		b.WriteString("\nlabeled outputs the judge got wrong:\n")
		for _, d := range v.Disagreed {
			fmt.Fprintf(&b, "  %s: people %s, judge %s (%s)", oneLine(d.Output), d.Human, d.Judge, oneLine(d.Labeler))
			if d.Reason != "" {
				fmt.Fprintf(&b, ": %s", oneLine(d.Reason))
			}
			b.WriteString("\n")
		}
		if v.More != "" {
			fmt.Fprintf(&b, "  %s\n", v.More)
		}
	}
	if len(v.Notes) > 0 {
		b.WriteString("\nnotes:\n")
		for _, n := range v.Notes {
			fmt.Fprintf(&b, "  - %s\n", oneLine(n))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// CalibrationMarkdown renders a calibration report as markdown.
func CalibrationMarkdown(w io.Writer, rep *calibrate.Report) error {
	v := newCalibrationView(rep)
	var b strings.Builder
	fmt.Fprintf(&b, "## Calibration: %s\n\n**Verdict: %s**\n\n", mdText(v.Title), mdText(v.Verdict))
	for _, r := range v.Reasons {
		fmt.Fprintf(&b, "- %s\n", mdText(r))
	}
	fmt.Fprintf(&b, "\n%s\n\n", mdText(v.Labels))
	if v.Weighted != nil {
		b.WriteString("| labels | judge pass | judge fail |\n|:--|--:|--:|\n")
	} else {
		b.WriteString("| | judge pass | judge fail |\n|:--|--:|--:|\n")
	}
	fmt.Fprintf(&b, "| human pass | %s | %s |\n| human fail | %s | %s |\n\n", v.Matrix[0][0], v.Matrix[0][1], v.Matrix[1][0], v.Matrix[1][1])
	if m := v.Weighted; m != nil {
		b.WriteString("| weighted | judge pass | judge fail |\n|:--|--:|--:|\n")
		fmt.Fprintf(&b, "| human pass | %s | %s |\n| human fail | %s | %s |\n\n", m[0][0], m[0][1], m[1][0], m[1][1])
		fmt.Fprintf(&b, "%s\n\n", mdText(v.Weighting))
	}
	b.WriteString("| class | labels | precision | recall | F1 |\n|:--|--:|--:|--:|--:|\n")
	for _, c := range v.Classes {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", c[0], c[1], c[2], c[3], c[4])
	}
	b.WriteString("\n| measure | value | |\n|:--|--:|:--|\n")
	for _, m := range v.Measures {
		// The value is units' own text; the detail may quote a reason.
		fmt.Fprintf(&b, "| %s | %s | %s |\n", m[0], m[1], mdText(m[2]))
	}
	fmt.Fprintf(&b, "\n**Labels needed:** %s\n\nThresholds: %s\n", mdText(v.Needed), mdText(v.Threshold))
	if len(v.Disagreed) > 0 {
		b.WriteString("\n### Labeled outputs the judge got wrong\n\n| output | people | judge | labeler | reason |\n|:--|:--|:--|:--|:--|\n")
		for _, d := range v.Disagreed {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", mdText(d.Output), d.Human, d.Judge, mdText(d.Labeler), mdText(d.Reason))
		}
		if v.More != "" {
			fmt.Fprintf(&b, "\n%s\n", v.More)
		}
	}
	if len(v.Notes) > 0 {
		b.WriteString("\n")
		for _, n := range v.Notes {
			fmt.Fprintf(&b, "> %s\n", mdText(n))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
