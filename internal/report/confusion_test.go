package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/analysis"
)

// A hostile label: a dataset's expected value can be anything.
const hostLabel = "a|b `x` [l](javascript:alert(1)) <script>window.__pwned=1</script> @team"

// classesReport is a report whose two targets classify into three labels,
// one hostile and one with a terminal escape, with hand-made matrices.
func classesReport() *analysis.Report {
	labels := []string{"billing", hostLabel, "tech\x1b[2J"}
	mk := func(m [][]int) *analysis.Classes {
		c := &analysis.Classes{Scorer: "intent", Labels: labels, Matrix: m, PRMethod: "wilson", F1Method: "bca",
			MacroF1: 0.8123, MacroF1CI: [2]float64{0.75, 0.87}}
		for i, l := range labels {
			c.PerClass = append(c.PerClass, analysis.ClassStats{Label: l, Support: 10, Predicted: 10, TP: m[i][i],
				Precision: 0.5, PrecisionCI: [2]float64{0.2, 0.8}, Recall: 0.25, RecallCI: [2]float64{0.1, 0.5},
				F1: 1.0 / 3, F1CI: [2]float64{0.15, 0.55}})
		}
		return c
	}
	return &analysis.Report{
		Run: analysis.RunInfo{ID: "r1", Spec: "intents", Cases: 30, Epochs: 1, Status: "complete"},
		Targets: []analysis.Target{
			{Name: "a", N: 30, Classes: mk([][]int{{7, 1, 1, 0, 1}, {2, 6, 1, 1, 0}, {0, 0, 9, 0, 1}})},
			{Name: "b", N: 30, Classes: mk([][]int{{9, 0, 0, 1, 0}, {0, 10, 0, 0, 0}, {3, 3, 4, 0, 0}})},
		},
		ClassComparisons: []analysis.ClassComparison{
			{A: "a", B: "b", Label: hostLabel, N: 10, RecallA: 0.6, RecallB: 1, Delta: -0.4, CI: [2]float64{-0.7, -0.1}, PValue: 0.0455, PAdjusted: 0.1365, BOnly: 4},
		},
	}
}

// The text report shows each target's matrix, row by row as stored, with
// per-class figures and macro-F1, and a terminal escape in a label as \x1b.
func TestClassesText(t *testing.T) {
	var b bytes.Buffer
	if err := Text(&b, classesReport()); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.Contains(out, "\x1b") {
		t.Errorf("a raw escape sequence reached the terminal")
	}
	for _, want := range []string{
		"confusion matrix of intent on a", "confusion matrix of intent on b", `tech\x1b[2J`,
		"macro-F1", "81.2% [75.0, 87.0]", "33.3% [15.0, 55.0]", "recall per class: a vs b", "−40.0 [−70.0, −10.0]",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the text report lacks %q:\n%s", want, out)
		}
	}
	// Target a's billing row: 7 right, 1 and 1 as the other labels, 0
	// outside them, 1 with no answer.
	found := false
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) == 6 && f[0] == "billing" {
			found = true
			if strings.Join(f[1:], " ") != "7 1 1 0 1" {
				t.Errorf("billing row of a = %q, want 7 1 1 0 1", l)
			}
			break
		}
	}
	if !found {
		t.Errorf("no billing row in:\n%s", out)
	}
}

// In Markdown a hostile label is plain text in its cell: no HTML, no link,
// no extra table cell.
func TestClassesMarkdown(t *testing.T) {
	var b strings.Builder
	if err := Markdown(&b, classesReport()); err != nil {
		t.Fatal(err)
	}
	doc := b.String()
	if strings.Contains(doc, "<script") || strings.Contains(doc, "](") || strings.Contains(doc, "\x1b") {
		t.Errorf("a hostile label reached the Markdown unescaped:\n%s", doc)
	}
	if !strings.Contains(doc, mdText(hostLabel)) {
		t.Errorf("the hostile label is not shown as text")
	}
	// Each table keeps its column count on every row (a label's | cannot
	// open a cell).
	cols := 0
	for _, l := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(l, "|") {
			cols = 0
			continue
		}
		if c := len(cells(l)); cols == 0 {
			cols = c
		} else if c != cols {
			t.Errorf("%d cells, the table has %d: %q", c, cols, l)
		}
	}
	for _, want := range []string{"### Confusion matrix: intent on a", "| **macro-F1** |", "**Recall per class: a vs b**"} {
		if !strings.Contains(doc, want) {
			t.Errorf("the Markdown lacks %q", want)
		}
	}
}

// In HTML a hostile label adds no element or attribute and reads back as
// itself.
func TestClassesHTML(t *testing.T) {
	doc := renderPage(t, classesReport(), htmlOptions{csp: true})
	_, text, err := scanHTML(doc)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(doc, `<section id="classes">`) {
		t.Fatalf("no classes section")
	}
	for _, want := range []string{hostLabel, visible("tech\x1b[2J", false), "Confusion matrix of intent on b", "81.2% [75.0, 87.0]", "Recall per class: a vs b"} {
		if !strings.Contains(text, want) {
			t.Errorf("the page does not show %q", want)
		}
	}
}

// More than maxShownClasses classes: the most frequent are shown and the
// rest summed into one row and one column, with a note saying so.
func TestClassesBounded(t *testing.T) {
	K := maxShownClasses + 5
	c := &analysis.Classes{Scorer: "intent", PRMethod: "wilson", F1Method: "bca"}
	for i := range K {
		l := fmt.Sprintf("l%02d", i)
		c.Labels = append(c.Labels, l)
		c.PerClass = append(c.PerClass, analysis.ClassStats{Label: l})
		row := make([]int, K+2)
		row[i] = 2       // right
		row[(i+1)%K] = 1 // the next label
		row[K+1] = 1     // no answer
		c.Matrix = append(c.Matrix, row)
	}
	rep := &analysis.Report{Targets: []analysis.Target{{Name: "a", Classes: c}}}
	v := classViews(rep)[0]
	if len(v.Columns) != maxShownClasses+3 || len(v.Rows) != maxShownClasses+1 {
		t.Fatalf("%d columns and %d rows, want %d and %d", len(v.Columns), len(v.Rows), maxShownClasses+3, maxShownClasses+1)
	}
	if v.Columns[maxShownClasses] != "(5 more)" || !strings.Contains(v.Note, "the other 5 summed") {
		t.Errorf("rest column %q, note %q", v.Columns[maxShownClasses], v.Note)
	}
	// The rest row: 5 labels × (2 right + 1 next) land in the rest column,
	// except l24's next label, l00, which is shown; each has 1 with no answer.
	rest := v.Rows[maxShownClasses]
	if rest[0] != "(5 more)" || rest[1] != "1" || rest[1+maxShownClasses] != "14" || rest[len(rest)-1] != "5" {
		t.Errorf("rest row = %v", rest)
	}
	// Label l19's next label, l20, is in the rest column.
	if r := v.Rows[19]; r[1+maxShownClasses] != "1" || r[1+19] != "2" {
		t.Errorf("row l19 = %v", r)
	}
	if len(v.Stats) != maxShownClasses {
		t.Errorf("%d per-class rows, want %d", len(v.Stats), maxShownClasses)
	}
}

// Whatever a label holds, the Markdown tables keep their cells and no raw
// HTML or link appears, and the HTML page adds no element.
func FuzzClassLabels(f *testing.F) {
	for _, s := range []string{hostLabel, "a|b", "<script>x</script>", "`", "\\|", "line\nbreak", "\x1b[2J", "](x)", "@x", "https://e.example", "-", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, label string) {
		rep := classesReport()
		for i := range rep.Targets {
			rep.Targets[i].Classes.Labels[0] = label
			rep.Targets[i].Classes.PerClass[0].Label = label
		}
		rep.ClassComparisons[0].Label = label
		var b strings.Builder
		if err := Markdown(&b, rep); err != nil {
			t.Fatal(err)
		}
		cols := 0
		for _, l := range strings.Split(b.String(), "\n") {
			if strings.Contains(l, "<script") || strings.Contains(l, "](") {
				t.Fatalf("label %q: raw HTML or a link in %q", label, l)
			}
			if !strings.HasPrefix(l, "|") {
				cols = 0
				continue
			}
			if c := len(cells(l)); cols == 0 {
				cols = c
			} else if c != cols {
				t.Fatalf("label %q: %d cells, the table has %d: %q", label, c, cols, l)
			}
		}
		var h bytes.Buffer
		if err := renderHTML(&h, rep, htmlOptions{csp: true}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := scanHTML(h.String()); err != nil {
			t.Fatalf("label %q: %v", label, err)
		}
	})
}
