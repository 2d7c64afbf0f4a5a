package calibrate

import (
	"context"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/record"
)

// stratifiedRun is a run of 1,000 outputs the judge passes 950 of (900
// truly pass, 50 fail) and fails 50 of (10 pass, 40 fail), with a queue
// "kb" stratified by the judge's verdict: 40 items of the 950 (weight
// 23.75 each) and 10 of the 50 (weight 5), so the judge's fails are 20% of
// the labels and 5% of the run. The labels: 36 TP and 4 FP among the
// judge's passes, 2 FN and 8 TN among its fails.
func stratifiedRun() (*fakeRun, []record.Label, *record.Queue) {
	truth, judge := cells(900, 10, 50, 40)
	f, all := build(truth, judge, len(truth))
	q := &record.Queue{RunID: "r", Name: "kb", Judge: "grader", Size: 50, Strata: []string{"target", "judge"}}
	var labels []record.Label
	pick := func(from, n int, weight float64) {
		for i := from; i < from+n; i++ {
			l := all[i]
			l.Queue = "kb"
			labels = append(labels, l)
			q.Items = append(q.Items, record.QueueItem{Position: len(q.Items), CaseID: l.CaseID, Target: l.Target, OutputHash: l.OutputHash, Weight: weight})
		}
	}
	pick(0, 36, 950.0/40)  // TP
	pick(910, 4, 950.0/40) // FP
	pick(900, 2, 5)        // FN
	pick(960, 8, 5)        // TN
	return f, labels, q
}

// Labels from a queue that over-drew the judge's fails are weighted back to
// the run: the matrix keeps the label counts, the rates are the weighted
// ones worked out by hand (TPR 855/865, TNR 40/135), and the corrected
// rate is the weighted share of passes, 865 of 1,000 (with every item of a
// stratum labeled, Rogan–Gladen over weighted rates is Σ weights of the
// labeled passes / N). Counted as a simple random sample the same labels
// give TPR 36/38, TNR 8/12 and a corrected rate of 100%.
func TestCalibrateWeighsQueueLabels(t *testing.T) {
	f, labels, q := stratifiedRun()
	rep, err := Calibrate(context.Background(), f, run, "grader", labels, DefaultThresholds(), Queues{"kb": q})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Confusion != (Confusion{TP: 36, FN: 2, FP: 4, TN: 8}) {
		t.Errorf("confusion %+v, want the label counts 36 2 4 8", rep.Confusion)
	}
	w := rep.Weighting
	if w == nil {
		t.Fatal("no weighting")
	}
	if !near(w.Cells.TP, 855) || !near(w.Cells.FP, 95) || !near(w.Cells.FN, 10) || !near(w.Cells.TN, 40) {
		t.Errorf("weighted cells %+v, want 855 10 95 40", w.Cells)
	}
	// Kish: passes 36 at 23.75 and 2 at 5: 865²/(36·23.75² + 2·5²).
	if want := 865.0 * 865 / (36*23.75*23.75 + 2*25); !near(w.Effective.Pass, want) {
		t.Errorf("effective passes %v, want %v", w.Effective.Pass, want)
	}
	if !slices.Equal(w.Queues, []string{"kb"}) || w.Unweighted != 0 {
		t.Errorf("queues %v, unweighted %d", w.Queues, w.Unweighted)
	}
	if rep.TPR.Count != 36 || rep.TPR.Of != 38 || !near(val(rep.TPR.Value), 855.0/865) {
		t.Errorf("TPR %+v (%v), want 36 of 38 labels at %v weighted", rep.TPR, val(rep.TPR.Value), 855.0/865)
	}
	if rep.TNR.Count != 8 || rep.TNR.Of != 12 || !near(val(rep.TNR.Value), 40.0/135) {
		t.Errorf("TNR %+v (%v), want 8 of 12 labels at %v weighted", rep.TNR, val(rep.TNR.Value), 40.0/135)
	}
	if !near(val(rep.Human.Value), 0.865) || !near(val(rep.Corrected.Value), 0.865) {
		t.Errorf("labels' pass rate %v, corrected %v; want 0.865 both", val(rep.Human.Value), val(rep.Corrected.Value))
	}
	pass := rep.Classes[0]
	if !near(val(pass.Precision), 855.0/950) || !near(val(pass.Recall), 855.0/865) || pass.Support != 38 {
		t.Errorf("pass class %+v: precision %v recall %v", pass, val(pass.Precision), val(pass.Recall))
	}
	if !near(val(rep.Kappa.Agreement), 895.0/1000) {
		t.Errorf("agreement %v, want weighted 0.895", val(rep.Kappa.Agreement))
	}
	// The weighted judge misses 70% of the failures: not fit, as TNR says.
	if rep.Verdict != NotFit || !strings.Contains(strings.Join(rep.Reasons, "\n"), "TNR 29.6% is below 80.0%") {
		t.Errorf("verdict %s: %v", rep.Verdict, rep.Reasons)
	}

	plain, err := Calibrate(context.Background(), f, run, "grader", labels, DefaultThresholds(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if plain.Weighting != nil || !near(val(plain.TNR.Value), 8.0/12) || val(plain.Corrected.Value) != 1 {
		t.Errorf("without the queue: weighting %v, TNR %v, corrected %v; want none, 8/12, 1", plain.Weighting, val(plain.TNR.Value), val(plain.Corrected.Value))
	}
	if !slices.ContainsFunc(plain.Notes, func(n string) bool {
		return strings.Contains(n, "50 labels name a queue the store does not have (kb)")
	}) {
		t.Errorf("notes lack the missing queue: %q", plain.Notes)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// Labels of no queue beside weighted ones weigh 1, and the report says
// the designs are mixed.
func TestCalibrateNotesMixedDesigns(t *testing.T) {
	f, labels, q := stratifiedRun()
	labels[0].Queue = ""
	rep, err := Calibrate(context.Background(), f, run, "grader", labels, DefaultThresholds(), Queues{"kb": q})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Weighting == nil || rep.Weighting.Unweighted != 1 || !near(rep.Weighting.Cells.TP, 35*23.75+1) {
		t.Fatalf("weighting %+v", rep.Weighting)
	}
	if !slices.ContainsFunc(rep.Notes, func(n string) bool { return strings.Contains(n, "the labels mix designs: 1 weigh 1") }) {
		t.Errorf("notes lack the mixed designs: %q", rep.Notes)
	}
}

// A queue whose items all weigh the same (a simple random sample) gives
// exactly the report of the same labels read with no queue.
func TestCalibrateEqualWeightsAreUnweighted(t *testing.T) {
	truth, judge := cells(30, 4, 5, 11)
	f, labels := build(truth, judge, 50)
	q := &record.Queue{RunID: "r", Name: "srs", Size: 50}
	for i := range labels {
		labels[i].Queue = "srs"
		q.Items = append(q.Items, record.QueueItem{Position: i, CaseID: labels[i].CaseID, Target: "m", Weight: 1.0})
	}
	with, err := Calibrate(context.Background(), f, run, "grader", labels, DefaultThresholds(), Queues{"srs": q})
	if err != nil {
		t.Fatal(err)
	}
	plain := slices.Clone(labels)
	for i := range plain {
		plain[i].Queue = ""
	}
	without, err := Calibrate(context.Background(), f, run, "grader", plain, DefaultThresholds(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if with.Weighting != nil || !reflect.DeepEqual(with, without) {
		t.Errorf("equal weights changed the report:\n%+v\n%+v", with, without)
	}
}
