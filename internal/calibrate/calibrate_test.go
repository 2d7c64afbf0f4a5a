package calibrate

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/record"
)

// fakeRun is a run in memory: the record.Reader methods Calibrate reads.
type fakeRun struct {
	record.Reader
	results []record.Result
	scores  []record.Score
}

func (f *fakeRun) LatestScoring(context.Context, string) (int, error) {
	if len(f.scores) == 0 {
		return 0, nil
	}
	return 1, nil
}

func (f *fakeRun) ScorerNames(context.Context, string, int) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	for _, s := range f.scores {
		if !seen[s.Scorer] {
			seen[s.Scorer] = true
			out = append(out, s.Scorer)
		}
	}
	return out, nil
}

func (f *fakeRun) Results(_ context.Context, _ string, fn func(record.Result) error) error {
	for _, r := range f.results {
		if err := fn(r); err != nil {
			return err
		}
	}
	return nil
}

func (f *fakeRun) Scores(_ context.Context, _ string, _ int, fn func(record.Score) error) error {
	for _, s := range f.scores {
		if err := fn(s); err != nil {
			return err
		}
	}
	return nil
}

var cfg = []byte(`{"scorers":[{"name":"grader","type":"judge"},{"name":"exact","type":"equals"}]}`)

// build makes a run of len(truth) outputs "c0", "c1"…: judge[i] is the
// grader's verdict; every output is also scored by "exact" (always pass).
// It labels the first `labeled` outputs with their truth.
func build(truth, judge []bool, labeled int) (*fakeRun, []record.Label) {
	f := &fakeRun{}
	var labels []record.Label
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range truth {
		res := record.Result{RunID: "r", CaseID: fmt.Sprintf("c%d", i), Target: "m", Raw: fmt.Sprintf("output %d", i)}
		f.results = append(f.results, res)
		f.scores = append(f.scores,
			record.Score{RunID: "r", Scoring: 1, CaseID: res.CaseID, Target: "m", Scorer: "grader", Pass: judge[i]},
			record.Score{RunID: "r", Scoring: 1, CaseID: res.CaseID, Target: "m", Scorer: "exact", Pass: true})
		if i < labeled {
			v := record.LabelFail
			if truth[i] {
				v = record.LabelPass
			}
			labels = append(labels, record.Label{RunID: "r", CaseID: res.CaseID, Target: "m", OutputHash: record.LabelOutputHash(&res),
				Labeler: "ann", Verdict: v, Reason: "r", Created: t0.Add(time.Duration(i) * time.Minute)})
		}
	}
	return f, labels
}

// cells lays out outputs: tp judge and truth pass, fn, fp, tn, in that
// order.
func cells(tp, fn, fp, tn int) (truth, judge []bool) {
	add := func(n int, t, j bool) {
		for range n {
			truth = append(truth, t)
			judge = append(judge, j)
		}
	}
	add(tp, true, true)
	add(fn, true, false)
	add(fp, false, true)
	add(tn, false, false)
	return truth, judge
}

var run = &record.Run{ID: "r", Config: cfg}

func calibrate(t *testing.T, f *fakeRun, labels []record.Label, th Thresholds) *Report {
	t.Helper()
	rep, err := Calibrate(context.Background(), f, run, "grader", labels, th, nil)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func val(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

// A judge that passes everything agrees with 45 of 50 labels (90%) and
// is not fit: κ 0, TNR 0, J 0, no corrected rate.
func TestJudgeThatPassesEverythingIsNotFit(t *testing.T) {
	truth, judge := cells(45, 0, 5, 0)
	f, labels := build(truth, judge, 50)
	rep := calibrate(t, f, labels, DefaultThresholds())
	if rep.Verdict != NotFit {
		t.Fatalf("verdict %s, want not_fit: %v", rep.Verdict, rep.Reasons)
	}
	if val(rep.Kappa.Agreement) != 0.9 || val(rep.Kappa.Value) != 0 || val(rep.TNR.Value) != 0 || val(rep.Youden) != 0 {
		t.Errorf("agreement %v κ %v TNR %v J %v, want 0.9 0 0 0", val(rep.Kappa.Agreement), val(rep.Kappa.Value), val(rep.TNR.Value), val(rep.Youden))
	}
	if rep.Corrected.Value != nil || rep.Corrected.Why == "" {
		t.Errorf("corrected %v (%q): want none, with why", val(rep.Corrected.Value), rep.Corrected.Why)
	}
	all := strings.Join(rep.Reasons, "\n")
	for _, w := range []string{"κ 0.00 is below 0.60", "TNR 0.0% is below 80.0%: the judge passes 5 of the 5 outputs people failed", "Youden's J"} {
		if !strings.Contains(all, w) {
			t.Errorf("reasons lack %q:\n%s", w, all)
		}
	}
	// Even with every threshold at 0, J = 0 is not fit.
	rep = calibrate(t, f, labels, Thresholds{Width: 0.1, Level: 0.95})
	if rep.Verdict != NotFit || !strings.Contains(strings.Join(rep.Reasons, "\n"), "Youden's J") {
		t.Errorf("with no thresholds: %s %v", rep.Verdict, rep.Reasons)
	}
}

func TestJudgeThatFailsEverythingIsNotFit(t *testing.T) {
	truth, judge := cells(0, 40, 0, 10)
	f, labels := build(truth, judge, 50)
	rep := calibrate(t, f, labels, DefaultThresholds())
	if rep.Verdict != NotFit || val(rep.TPR.Value) != 0 || val(rep.Raw.Value) != 0 || rep.Corrected.Value != nil {
		t.Errorf("verdict %s TPR %v raw %v corrected %v", rep.Verdict, val(rep.TPR.Value), val(rep.Raw.Value), val(rep.Corrected.Value))
	}
}

// A good judge labeled on a random-looking sample: the numbers by hand.
// Labels: 36 passes (33 judged pass), 14 fails (12 judged fail). TPR
// 33/36, TNR 12/14; κ = (0.9 − pe)/(1 − pe), pe = 0.72·0.70 + 0.28·0.30
// = 0.588, κ = 0.312/0.412.
func TestFitJudgeByHand(t *testing.T) {
	truth, judge := cells(33, 3, 2, 12)
	// The rest of the run, not labeled: 700 outputs the judge passes 490 of.
	for i := range 700 {
		truth = append(truth, true)
		judge = append(judge, i < 490)
	}
	f, labels := build(truth, judge, 50)
	rep := calibrate(t, f, labels, DefaultThresholds())
	if rep.Confusion != (Confusion{TP: 33, FN: 3, FP: 2, TN: 12}) {
		t.Fatalf("confusion %+v", rep.Confusion)
	}
	if math.Abs(val(rep.Kappa.Value)-0.312/0.412) > 1e-12 {
		t.Errorf("κ %v, want %v", val(rep.Kappa.Value), 0.312/0.412)
	}
	if rep.TPR.Count != 33 || rep.TPR.Of != 36 || rep.TNR.Count != 12 || rep.TNR.Of != 14 {
		t.Errorf("TPR %+v TNR %+v", rep.TPR, rep.TNR)
	}
	// Raw: over every judged output of the run, 35 + 490 of 750.
	if rep.Raw.Count != 525 || rep.Raw.Of != 750 {
		t.Errorf("raw %+v, want 525 of 750", rep.Raw)
	}
	q, tpr, tnr := 525.0/750, 33.0/36, 12.0/14
	if want := (q + tnr - 1) / (tpr + tnr - 1); math.Abs(val(rep.Corrected.Value)-want) > 1e-12 {
		t.Errorf("corrected %v, want %v", val(rep.Corrected.Value), want)
	}
	if rep.Corrected.CI == nil || rep.Corrected.Bootstrap == nil {
		t.Fatal("no intervals")
	}
	if rep.Verdict != Fit {
		t.Errorf("verdict %s: %v", rep.Verdict, rep.Reasons)
	}
	pass := rep.Classes[0]
	if pass.Name != "pass" || val(pass.Precision) != 33.0/35 || val(pass.Recall) != tpr {
		t.Errorf("pass class %+v", pass)
	}
	// Labels needed for 10 points, by hand: V* = (0.10/2z)²J² − q(1−q)/750
	// = 1.0966e-4; a = p²·t̃(1−t̃) with t̃ = 33.5/37, b = (1−p)²·s̃(1−s̃)
	// with s̃ = 12.5/15; n₊ = √a(√a+√b)/V* = 605.5, n₋ = 300.0: 570 more
	// passes and 286 more fails. Fails are a third of that split but 28% of
	// the labels: draw more fails than a random sample would.
	if rep.Needed.Reached || rep.Needed.Pass != 570 || rep.Needed.Fail != 286 || rep.Needed.More != "fail" {
		t.Errorf("labels needed %+v, want 570 passes and 286 fails, more fails", rep.Needed)
	}
}

// A lenient judge that meets loose thresholds but passes a third of the
// failures: its raw rate sits above the corrected interval → biased.
func TestLenientJudgeIsBiased(t *testing.T) {
	truth, judge := cells(300, 10, 60, 130)
	_, labels := build(truth, judge, 500)
	// The unlabeled rest of the run keeps the labeled mix 10 times over.
	for range 10 {
		tr, ju := cells(300, 10, 60, 130)
		truth, judge = append(truth, tr...), append(judge, ju...)
	}
	f, _ := build(truth, judge, 0)
	rep := calibrate(t, f, labels, Thresholds{MinKappa: 0.5, MinTNR: 0.6, MinTPR: 0.8, Width: 0.1, Level: 0.95})
	if rep.Verdict != Biased {
		t.Fatalf("verdict %s, want biased: %v (raw %v, corrected %v %+v)", rep.Verdict, rep.Reasons, val(rep.Raw.Value), val(rep.Corrected.Value), rep.Corrected.CI)
	}
	// Raw 360/500 = 72%; truth 310/500 = 62%.
	if val(rep.Raw.Value) != 0.72 || math.Abs(val(rep.Corrected.Value)-0.62) > 1e-9 {
		t.Errorf("raw %v corrected %v, want 0.72 and 0.62", val(rep.Raw.Value), val(rep.Corrected.Value))
	}
	if !strings.Contains(rep.Reasons[0], "72.0%") || !strings.Contains(rep.Reasons[0], "62.0%") {
		t.Errorf("reason %q", rep.Reasons[0])
	}
}

// One label per result: the most recent counts; skips, stale hashes,
// labels of results not in the run, failed calls and judge errors are
// counted apart.
func TestLabelBookkeeping(t *testing.T) {
	truth, judge := cells(4, 0, 0, 2)
	f, labels := build(truth, judge, 6)
	t0 := labels[0].Created
	// c0: a later fail by another labeler (disagreement; the fail counts).
	later := labels[0]
	later.Labeler, later.Verdict, later.Created = "bob", record.LabelFail, t0.Add(time.Hour)
	// c1: a skip; c2: a stale label (output replaced).
	skip := labels[1]
	skip.Verdict = record.LabelSkip
	stale := labels[2]
	stale.OutputHash = "0000000000000000"
	labels[2] = stale
	gone := labels[3]
	gone.CaseID = "nope"
	other := labels[3]
	other.RunID, other.OutputHash = "elsewhere", "1111111111111111" // another run's label of another output
	// c4: the call failed; c5: the judge erred.
	f.results[4].ErrorKind = "timeout"
	for i := range f.scores {
		if f.scores[i].CaseID == "c5" && f.scores[i].Scorer == "grader" {
			f.scores[i].Kind = kindJudgeError
		}
	}
	labels = append(labels, later, skip, gone, other)
	rep := calibrate(t, f, labels, DefaultThresholds())
	want := Counts{Labels: 10, Used: 3, Skipped: 1, Stale: 1, Missing: 2, Unjudged: 2, Superseded: 1, Disagreements: 1}
	c := rep.Counts
	if c.Used+c.Skipped+c.Stale+c.Missing+c.Unjudged+c.Superseded != c.Labels {
		t.Errorf("counts %+v do not add up to the labels", c)
	}
	if rep.Counts != want {
		t.Errorf("counts %+v\nwant   %+v", rep.Counts, want)
	}
	// c0 counted as a fail (the later label), c1 (its pass beside the
	// skip) and c3 as passes; every label is accounted for once.
	if rep.Confusion != (Confusion{TP: 2, FP: 1}) {
		t.Errorf("confusion %+v", rep.Confusion)
	}
	// The raw rate leaves out the failed call and the judge error.
	if rep.Raw.Of != 4 {
		t.Errorf("raw %+v, want 4 judged", rep.Raw)
	}
}

func TestUnknownJudgeAndOtherScorers(t *testing.T) {
	truth, judge := cells(30, 3, 3, 14)
	f, labels := build(truth, judge, 50)
	_, err := Calibrate(context.Background(), f, run, "gradr", labels, DefaultThresholds(), nil)
	var uj *UnknownJudgeError
	if !errors.As(err, &uj) || err.Error() != `scorer "gradr" has no verdicts in the run's scoring 1 (scorers are: grader, exact)` {
		t.Errorf("error %v", err)
	}
	rep, err := Calibrate(context.Background(), f, run, "exact", labels, DefaultThresholds(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Notes) == 0 || !strings.Contains(rep.Notes[0], `scorer "exact" is of type equals, not a model judge`) {
		t.Errorf("notes %q", rep.Notes)
	}
	if _, err := Calibrate(context.Background(), &fakeRun{}, run, "grader", nil, DefaultThresholds(), nil); !errors.Is(err, ErrNoScoring) {
		t.Errorf("no scoring: %v", err)
	}
}

func TestThresholdsOf(t *testing.T) {
	th, err := ThresholdsOf(&record.Run{Config: []byte(`{"calibration":{"min_kappa":0.7,"min_tnr":0.9,"min_tpr":0.85,"width":0.05,"level":0.9}}`)})
	if err != nil || th != (Thresholds{MinKappa: 0.7, MinTNR: 0.9, MinTPR: 0.85, Width: 0.05, Level: 0.9}) {
		t.Errorf("%+v %v", th, err)
	}
	th, _ = ThresholdsOf(&record.Run{Config: cfg})
	if th != DefaultThresholds() || th.MinKappa != 0.6 || th.MinTNR != 0.8 || th.Width != 0.1 || th.Level != 0.95 {
		t.Errorf("defaults %+v", th)
	}
}

// BenchmarkCalibrateMillion calibrates against a run of a million judged
// outputs with 50 labels: one pass over the results and the scores.
func BenchmarkCalibrateMillion(b *testing.B) {
	truth, judge := cells(33, 3, 2, 12)
	for i := range 1_000_000 - 50 {
		truth = append(truth, true)
		judge = append(judge, i%10 < 7)
	}
	f, labels := build(truth, judge, 50)
	b.ResetTimer()
	for range b.N {
		if _, err := Calibrate(context.Background(), f, run, "grader", labels, DefaultThresholds(), nil); err != nil {
			b.Fatal(err)
		}
	}
}

// With 4 fails labeled, some bootstrap resamples hold no fail (J is then
// unknown): the report says how many the interval left out.
func TestFewLabelsNoteTheBootstrapsDroppedResamples(t *testing.T) {
	truth, judge := cells(8, 1, 1, 3)
	f, labels := build(truth, judge, 13)
	rep := calibrate(t, f, labels, DefaultThresholds())
	if !strings.Contains(strings.Join(rep.Notes, "\n"), "the bootstrap interval leaves out") {
		t.Errorf("notes %q", rep.Notes)
	}
	truth, judge = cells(33, 3, 2, 12)
	f, labels = build(truth, judge, 50)
	if rep := calibrate(t, f, labels, DefaultThresholds()); strings.Contains(strings.Join(rep.Notes, "\n"), "bootstrap") {
		t.Errorf("50 labels: notes %q", rep.Notes)
	}
}

// queueReader serves queues by run and name.
type queueReader map[[2]string]*record.Queue

func (q queueReader) Queue(_ context.Context, runID, name string) (*record.Queue, error) {
	if x, ok := q[[2]string{runID, name}]; ok {
		return x, nil
	}
	return nil, record.ErrNotFound
}

// Labels given on another run (a file committed beside the spec) count
// for this run's outputs they judged — same case, target, epoch and output
// hash — and weigh their own run's queue items, not a same-named queue of
// this run; labels of other outputs are missing, and a note says which.
func TestLabelsOfAnotherRunCountByOutput(t *testing.T) {
	truth, judge := cells(3, 1, 1, 3)
	f, labels := build(truth, judge, 8)
	for i := range labels {
		labels[i].RunID, labels[i].Queue = "old", "q"
	}
	labels[7].OutputHash = "2222222222222222" // the old run's c7 said something else
	oldQ := &record.Queue{RunID: "old", Name: "q"}
	thisQ := &record.Queue{RunID: "r", Name: "q"}
	for i, l := range labels {
		oldQ.Items = append(oldQ.Items, record.QueueItem{Position: i, CaseID: l.CaseID, Target: l.Target, Epoch: l.Epoch, OutputHash: l.OutputHash, Weight: float64(1 + i%2)})
		thisQ.Items = append(thisQ.Items, record.QueueItem{Position: i, CaseID: l.CaseID, Target: l.Target, Epoch: l.Epoch, OutputHash: l.OutputHash, Weight: 5})
	}
	ctx := context.Background()
	qs, err := ReadQueues(ctx, queueReader{{"old", "q"}: oldQ, {"r", "q"}: thisQ}, "r", labels, record.ErrNotFound)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Calibrate(ctx, f, run, "grader", labels, DefaultThresholds(), qs)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Counts.Used != 7 || rep.Counts.Missing != 1 || rep.Counts.Stale != 0 {
		t.Errorf("counts %+v; want 7 used, 1 missing (another output), none stale", rep.Counts)
	}
	if rep.Weighting == nil || !slices.Equal(rep.Weighting.Queues, []string{"q (run old)"}) {
		t.Fatalf("weighting %+v; want the old run's queue q", rep.Weighting)
	}
	// The old queue's weights (1, 2, 1, 2, …): TP c0 c1 c2 weigh 1+2+1,
	// FN c3 2, FP c4 1, TN c5 c6 2+1 (c7 not used).
	if c := rep.Weighting.Cells; c.TP != 4 || c.FN != 2 || c.FP != 1 || c.TN != 3 {
		t.Errorf("weighted cells %+v; want TP 4, FN 2, FP 1, TN 3 (the old run's queue's weights)", c)
	}
	found := false
	for _, n := range rep.Notes {
		if strings.Contains(n, "labels given on run old: 7 of them judged this run's very outputs") && strings.Contains(n, "1 judged other outputs") {
			found = true
		}
	}
	if !found {
		t.Errorf("no note on the carried labels: %q", rep.Notes)
	}
}
