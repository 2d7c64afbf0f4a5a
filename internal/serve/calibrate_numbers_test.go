package serve_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/calibrate"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/report"
	"github.com/assay-eval/assay/internal/store/sqlite"
)

// cliCalibration is what `assay calibrate --format json` prints, the
// fields the page's numbers are checked against.
type cliCalibration struct {
	Verdict string `json:"verdict"`
	Counts  struct {
		Labels, Used, Skipped int
	} `json:"counts"`
	Confusion struct {
		TP int `json:"human_pass_judge_pass"`
		FN int `json:"human_pass_judge_fail"`
		FP int `json:"human_fail_judge_pass"`
		TN int `json:"human_fail_judge_fail"`
	} `json:"confusion"`
	TPR, TNR, Raw, Human struct {
		Count, Of int
		Value     *float64
	}
	Kappa struct {
		Value     *float64
		CI        *struct{ Low, High float64 }
		Agreement *float64
	}
	Corrected struct {
		Value *float64
		CI    *struct{ Low, High float64 }
	}
}

// checkCalibrationNumbers computes the calibration `assay calibrate RUN
// --judge judge --format json` prints — the same calls on the fixture's
// store (its labels, the run's thresholds and queues, calibrate.Calibrate)
// rendered by the same JSON reporter, without linking the whole CLI into
// this test binary — and asserts the page's text shows its numbers
// (formatted here, independently of the renderer: percentages to one
// decimal, κ to two).
func checkCalibrationNumbers(t *testing.T, fx *labelFixture, pageText string) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.OpenExisting(ctx, fx.db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	run, err := st.GetRun(ctx, fx.run.ID)
	if err != nil {
		t.Fatal(err)
	}
	var ls []record.Label
	if err := st.Labels(ctx, run.ID, func(l record.Label) error {
		ls = append(ls, l)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	th, err := calibrate.ThresholdsOf(run)
	if err != nil {
		t.Fatal(err)
	}
	queues, err := calibrate.ReadQueues(ctx, st, run.ID, ls, record.ErrNotFound)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := calibrate.Calibrate(ctx, st, run, "judge", ls, th, queues)
	if err != nil {
		t.Fatal(err)
	}
	render, err := report.NewRegistry().Calibrate.Reporter("json", rep)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	var c cliCalibration
	if err := render(&out); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(out.Bytes(), &c); err != nil {
		t.Fatalf("the calibration as JSON: %v\n%s", err, out.String())
	}
	if c.Kappa.Value == nil || c.Kappa.CI == nil || c.TPR.Value == nil || c.TNR.Value == nil || c.Raw.Value == nil {
		t.Fatalf("the fixture's labels leave a number undefined: %s", out.String())
	}
	pct := func(v float64) string { return fmt.Sprintf("%.1f%%", 100*v) }
	// The page's table cells are tab-separated in innerText.
	want := []string{
		fmt.Sprintf("%d of %d labels used (%d skipped)", c.Counts.Used, c.Counts.Labels, c.Counts.Skipped),
		fmt.Sprintf("human pass\t%d\t%d", c.Confusion.TP, c.Confusion.FN),
		fmt.Sprintf("human fail\t%d\t%d", c.Confusion.FP, c.Confusion.TN),
		fmt.Sprintf("Cohen's κ\t%.2f\t95%% interval [%.2f, %.2f]", *c.Kappa.Value, c.Kappa.CI.Low, c.Kappa.CI.High),
		fmt.Sprintf("TPR (sensitivity)\t%s (%d of %d)", pct(*c.TPR.Value), c.TPR.Count, c.TPR.Of),
		fmt.Sprintf("TNR (specificity)\t%s (%d of %d)", pct(*c.TNR.Value), c.TNR.Count, c.TNR.Of),
		fmt.Sprintf("pass rate, judge (raw)\t%s (%d of %d)", pct(*c.Raw.Value), c.Raw.Count, c.Raw.Of),
		fmt.Sprintf("agreement\t%s", pct(*c.Kappa.Agreement)),
		strings.ReplaceAll(c.Verdict, "_", " "),
	}
	if c.Corrected.Value != nil && c.Corrected.CI != nil {
		want = append(want, fmt.Sprintf("pass rate, corrected\t%s\t95%% interval [%.1f, %.1f]", pct(*c.Corrected.Value), 100*c.Corrected.CI.Low, 100*c.Corrected.CI.High))
	}
	for _, w := range want {
		if !strings.Contains(pageText, w) {
			t.Errorf("the calibration page does not show %q (assay calibrate's)", w)
		}
	}
	// The fixture's labels were pressed: 20, the skips among them left out.
	if c.Counts.Labels != 20 || c.Counts.Used+c.Counts.Skipped != 20 {
		t.Errorf("assay calibrate counts %+v, want the 20 labels pressed", c.Counts)
	}
	if t.Failed() {
		t.Logf("the page:\n%s\nassay calibrate:\n%s", pageText, out.String())
	}
}
