package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/calibrate"
	"github.com/assay-eval/assay/internal/units"
)

func calF64(x float64) *float64 { return &x }

const calHostile = "<script>alert(1)</script>\u202e|*x*|\x1b[31m"

// calibrationFixture is a report as calibrate makes one, with outside text
// (case IDs, labeler, reason, scorer name) that tries to break out.
func calibrationFixture() *calibrate.Report {
	return &calibrate.Report{
		RunID: "r1", Judge: "grader" + calHostile, Scoring: 2, JudgeType: "judge",
		Thresholds: calibrate.DefaultThresholds(),
		Counts:     calibrate.Counts{Labels: 52, Used: 50, Skipped: 1, Stale: 1},
		Confusion:  calibrate.Confusion{TP: 33, FN: 3, FP: 2, TN: 12},
		Classes: []calibrate.Class{
			{Name: "pass", Support: 36, Judged: 35, Precision: calF64(33.0 / 35), Recall: calF64(33.0 / 36), F1: calF64(0.9295774647887324)},
			{Name: "fail", Support: 14, Judged: 15, Precision: calF64(0.8), Recall: calF64(12.0 / 14), F1: calF64(0.8275862068965517)},
		},
		TPR:    calibrate.Rate{Count: 33, Of: 36, Value: calF64(33.0 / 36)},
		TNR:    calibrate.Rate{Count: 12, Of: 14, Value: calF64(12.0 / 14)},
		Youden: calF64(0.7738095238095237),
		Kappa:  calibrate.Kappa{Value: calF64(0.7572815533980582), SE: calF64(0.1), CI: &calibrate.Interval{Low: 0.56, High: 0.95}, Agreement: calF64(0.9)},
		Human:  calibrate.Rate{Count: 36, Of: 50, Value: calF64(0.72)},
		Raw:    calibrate.Rate{Count: 525, Of: 750, Value: calF64(0.7)},
		Corrected: calibrate.Corrected{Value: calF64(0.7199), SE: calF64(0.07), CI: &calibrate.Interval{Low: 0.571, High: 0.862},
			Bootstrap: &calibrate.Interval{Low: 0.56, High: 0.87}},
		Verdict: calibrate.Fit, Reasons: []string{"κ 0.76, TNR 85.7% and TPR 91.7% meet the thresholds"},
		Needed: calibrate.Needed{Pass: 826, Fail: 542, Random: 1456, More: "pass"},
		Disagreed: []calibrate.Disagreement{
			{CaseID: "c" + calHostile, Target: "m", Human: "fail", Judge: "pass", Labeler: "ann" + calHostile, Reason: "line one\n" + calHostile},
		},
		DisagreedTotal: 5,
		Notes:          []string{`scorer "x` + calHostile + `" is of type equals`},
	}
}

func renderCalibration(t *testing.T, format string, rep *calibrate.Report) string {
	t.Helper()
	r, err := NewRegistry().Calibrate.Reporter(format, rep)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := r(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// Every format shows the numbers as units writes them, and no format lets
// text from labels or the spec out raw.
func TestCalibrationFormats(t *testing.T) {
	rep := calibrationFixture()
	numbers := []string{
		units.Pct(0.7199), units.PctCI([2]float64{0.571, 0.862}), units.PctCI([2]float64{0.56, 0.87}),
		units.Ratio(0.7572815533980582), units.Pct(33.0 / 36), units.Pct(12.0 / 14), units.Count(826), units.Count(1456),
		units.Pct(0.7) + " (525 of 750)", "fit to use", "and 4 more",
	}
	for _, format := range []string{"text", "markdown", "html"} {
		out := renderCalibration(t, format, rep)
		for _, n := range numbers {
			if format == "markdown" && strings.HasPrefix(n, "[") {
				n = `\[` + strings.TrimSuffix(n[1:], "]") + `\]` // escaped in the detail column
			}
			if !strings.Contains(out, n) {
				t.Errorf("%s lacks %q", format, n)
			}
		}
		for _, raw := range []string{"<script>", "\u202e", "\x1b"} {
			if strings.Contains(out, raw) && (format != "text" || raw != "<script>") { // plain text needs no HTML escaping
				t.Errorf("%s lets %q through", format, raw)
			}
		}
	}
	md := renderCalibration(t, "markdown", rep)
	if strings.Contains(md, "|*x*|") {
		t.Error("markdown lets a table-breaking | and emphasis through")
	}
	txt := renderCalibration(t, "text", rep)
	if !strings.Contains(txt, `\u202e`) || !strings.Contains(txt, "line one↵") {
		t.Errorf("text does not show the control characters and line break as visible marks:\n%s", txt)
	}
	var back calibrate.Report
	if err := json.Unmarshal([]byte(renderCalibration(t, "json", rep)), &back); err != nil || back.Verdict != calibrate.Fit || *back.Corrected.Value != 0.7199 {
		t.Errorf("json does not read back: %v %+v", err, back)
	}
}

// The html format's body is CalibrationHTML's fragment: the one renderer
// serve's page embeds; the fragment has no page around it.
func TestCalibrationHTMLFragmentIsThePageBody(t *testing.T) {
	rep := calibrationFixture()
	var frag bytes.Buffer
	if err := CalibrationHTML(&frag, rep); err != nil {
		t.Fatal(err)
	}
	page := renderCalibration(t, "html", rep)
	if !strings.Contains(page, frag.String()) {
		t.Error("the html page does not hold the fragment as CalibrationHTML writes it")
	}
	for _, tag := range []string{"<html", "<body", "<head", "<style", "<script"} {
		if strings.Contains(frag.String(), tag) {
			t.Errorf("the fragment holds %s", tag)
		}
	}
	if !strings.Contains(page, "Content-Security-Policy") || !strings.Contains(frag.String(), `data-verdict="fit"`) {
		t.Error("page without CSP, or fragment without its verdict")
	}
	if !strings.Contains(frag.String(), "&lt;script&gt;") {
		t.Error("the calHostile text is not shown escaped")
	}
}

// An undefined number reads "—", never NaN; the reason it is undefined
// is shown.
func TestCalibrationUndefinedNumbers(t *testing.T) {
	rep := calibrationFixture()
	rep.Verdict, rep.Reasons = calibrate.NotFit, []string{"Youden's J = TPR + TNR − 1 is 0.00"}
	rep.Youden, rep.Kappa.Value, rep.Kappa.CI = calF64(0), nil, nil
	rep.Corrected = calibrate.Corrected{Why: "the judge does not tell a pass from a fail"}
	rep.Needed = calibrate.Needed{Why: "no count of labels corrects a judge that does not tell a pass from a fail"}
	for _, format := range []string{"text", "markdown", "html"} {
		out := renderCalibration(t, format, rep)
		if strings.Contains(out, "NaN") || !strings.Contains(out, units.Missing) || !strings.Contains(out, "does not tell a pass from a fail") || !strings.Contains(out, "not fit") {
			t.Errorf("%s:\n%s", format, out)
		}
	}
}

// A weighted report shows the label counts and the weighted cells as two
// matrices in every format, says which is which, and marks the rates as
// weighted; the queue's name is outside text and escaped.
func TestCalibrationFormatsWeighted(t *testing.T) {
	rep := calibrationFixture()
	rep.Weighting = &calibrate.Weighting{
		Cells:     calibrate.WeightedCells{TP: 855, FN: 10, FP: 95, TN: 40},
		Effective: calibrate.Effective{All: 31.3, Pass: 35.5, Fail: 4.75},
		Queues:    []string{"kb" + calHostile},
	}
	for _, format := range []string{"text", "markdown", "html"} {
		out := renderCalibration(t, format, rep)
		for _, want := range []string{"855", "95", "40", "weighted", "The first matrix counts labels", "Kish", "31.3", "effective labels",
			"selection probabilities, the counts are labels"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s lacks %q", format, want)
			}
		}
		for _, raw := range []string{"\u202e", "\x1b"} {
			if strings.Contains(out, raw) {
				t.Errorf("%s lets %q through", format, raw)
			}
		}
		if format == "html" && strings.Contains(out, "<script>") {
			t.Errorf("html lets <script> through")
		}
	}
	if out := renderCalibration(t, "html", rep); !strings.Contains(out, `data-cell="weighted-fp">95<`) || !strings.Contains(out, `data-cell="fp">2<`) {
		t.Errorf("html lacks the two matrices' cells:\n%s", out)
	}
	// Unweighted reports carry no second matrix.
	rep.Weighting = nil
	if out := renderCalibration(t, "text", rep); strings.Contains(out, "The first matrix") || strings.Contains(out, "Kish") {
		t.Errorf("an unweighted report mentions weights:\n%s", out)
	}
}
