package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/calibrate"
	"github.com/assay-eval/assay/internal/labels"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store/sqlite"
)

// calibrationStore stores run id: one output per case, each with a truth
// (what the labeler says) and the "grader" judge's verdict, laid out as tp
// outputs both pass, fn people pass and the judge fails, fp, tn; then rest
// more outputs (unlabeled), restTenths of every ten of which the judge
// passes. It labels the first tp+fn+fp+tn
// outputs and returns the labels (also stored).
func calibrationStore(t *testing.T, db, id string, tp, fn, fp, tn, rest, restTenths int) []record.Label {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	at := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	n := tp + fn + fp + tn + rest
	cfg := `{"name":"cal","scorers":[{"name":"grader","type":"judge"},{"name":"exact","type":"equals","primary":true}],"calibration":{"min_kappa":0.6,"min_tnr":0.8,"min_tpr":0.8,"width":0.1,"level":0.95}}`
	if err := st.CreateRun(ctx, &record.Run{ID: id, Spec: "cal", Targets: []string{"m"}, Cases: n, Epochs: 1,
		Status: record.StatusComplete, Started: at, Ended: at.Add(time.Minute), Config: []byte(cfg)}); err != nil {
		t.Fatal(err)
	}
	var cases []record.Case
	var results []record.Result
	var scores []record.Score
	var ls []record.Label
	for i := range n {
		cid := fmt.Sprintf("c%04d", i)
		labeled := tp + fn + fp + tn
		truth, judge := i < tp+fn, i < tp || (i >= tp+fn && i < tp+fn+fp) || (i >= labeled && (i-labeled)%10 < restTenths)
		cases = append(cases, record.Case{RunID: id, ID: cid, Line: i + 1})
		r := record.Result{RunID: id, CaseID: cid, Target: "m", Epoch: 1, Raw: "answer " + cid + " <img src=x onerror=alert(1)>", Attempts: 1, CreatedAt: at}
		results = append(results, r)
		scores = append(scores, record.Score{RunID: id, Scoring: 1, CaseID: cid, Target: "m", Epoch: 1, Scorer: "grader", Pass: judge, Shape: "pass"},
			record.Score{RunID: id, Scoring: 1, CaseID: cid, Target: "m", Epoch: 1, Scorer: "exact", Primary: true, Pass: true, Shape: "pass"})
		if i < tp+fn+fp+tn {
			l := record.Label{RunID: id, CaseID: cid, Target: "m", Epoch: 1, OutputHash: record.LabelOutputHash(&r),
				Queue: "q", Labeler: "ann", Verdict: record.LabelPass, Created: at.Add(time.Duration(i) * time.Second)}
			if !truth {
				l.Verdict, l.Reason = record.LabelFail, "misses the point <script>alert(2)</script>"
			}
			ls = append(ls, l)
		}
	}
	if err := st.PutCases(ctx, cases); err != nil {
		t.Fatal(err)
	}
	if err := st.PutResults(ctx, results, scores); err != nil {
		t.Fatal(err)
	}
	if _, err := st.PutLabels(ctx, ls); err != nil {
		t.Fatal(err)
	}
	return ls
}

// A judge that passes everything agrees with 45 of the 50 labels, and
// assay calibrate says it is not fit and exits 3.
func TestCalibrateJudgeThatPassesEverything(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "a.db")
	calibrationStore(t, db, "run-all", 45, 0, 5, 0, 950, 10)
	inv := runCLI(t, cliEnv{}, "calibrate", "run-all", "--judge", "grader", "--db", db)
	if inv.code != ExitFailed {
		t.Fatalf("exit %d, want 3 (not fit): %s\n%s", inv.code, inv.stderr, inv.stdout)
	}
	for _, want := range []string{"verdict: not fit", "agreement:               90.0%", "TNR 0.0% is below 80.0%", "Youden's J"} {
		if !strings.Contains(inv.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, inv.stdout)
		}
	}
	if !strings.Contains(inv.stderr, "calibrate: judge grader is not fit") {
		t.Errorf("stderr: %s", inv.stderr)
	}
}

// A good judge: exit 0; the JSON's numbers are the hand-computed ones,
// and the same labels from a JSONL file give the same report.
func TestCalibrateFitJudgeFromStoreAndFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "a.db")
	ls := calibrationStore(t, db, "run-fit", 33, 3, 2, 12, 700, 7)
	inv := runCLI(t, cliEnv{}, "calibrate", "run-fit", "--judge", "grader", "--format", "json", "--db", db)
	if inv.code != 0 {
		t.Fatalf("exit %d: %s", inv.code, inv.stderr)
	}
	var rep calibrate.Report
	if err := json.Unmarshal([]byte(inv.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	q, tpr, tnr := (35.0+490)/750, 33.0/36, 12.0/14
	if rep.Verdict != calibrate.Fit || rep.Raw.Count != 525 || rep.Raw.Of != 750 || rep.Counts.Used != 50 {
		t.Errorf("verdict %s raw %+v counts %+v", rep.Verdict, rep.Raw, rep.Counts)
	}
	if want := (q + tnr - 1) / (tpr + tnr - 1); rep.Corrected.Value == nil || math.Abs(*rep.Corrected.Value-want) > 1e-12 {
		t.Errorf("corrected %v, want %v", rep.Corrected.Value, want)
	}
	if rep.Kappa.Value == nil || math.Abs(*rep.Kappa.Value-0.312/0.412) > 1e-12 {
		t.Errorf("κ %v, want %v", rep.Kappa.Value, 0.312/0.412)
	}

	file := filepath.Join(dir, "labels.jsonl")
	var b bytes.Buffer
	if err := labels.Write(&b, ls); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	fromFile := runCLI(t, cliEnv{}, "calibrate", "run-fit", "--judge", "grader", "--labels", file, "--format", "json", "--db", db)
	if fromFile.code != 0 || fromFile.stdout != inv.stdout {
		t.Errorf("from the file: exit %d, %s\nreport differs from the store's:\n%s", fromFile.code, fromFile.stderr, fromFile.stdout)
	}

	// --queue: only the labels given in that queue (every one of the
	// store's is in q; the file's first ten are moved to "other").
	if inq := runCLI(t, cliEnv{}, "calibrate", "run-fit", "--judge", "grader", "--queue", "q", "--format", "json", "--db", db); inq.code != 0 || inq.stdout != inv.stdout {
		t.Errorf("--queue q over the store: exit %d %s; want the report of every label", inq.code, inq.stderr)
	}
	moved := slices.Clone(ls)
	for i := range 10 {
		moved[i].Queue = "other"
	}
	b.Reset()
	if err := labels.Write(&b, moved); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	other := runCLI(t, cliEnv{}, "calibrate", "run-fit", "--judge", "grader", "--labels", file, "--queue", "other", "--format", "json", "--db", db)
	var orep calibrate.Report
	if err := json.Unmarshal([]byte(other.stdout), &orep); err != nil || other.code == 1 || orep.Counts.Labels != 10 {
		t.Errorf("--queue other over the file: exit %d %s, %d labels; want the 10 given in it", other.code, other.stderr, orep.Counts.Labels)
	}

	out := filepath.Join(dir, "cal.html")
	page := runCLI(t, cliEnv{}, "calibrate", "run-fit", "--judge", "grader", "--format", "html", "-o", out, "--db", db)
	html := readFileT(t, out)
	if page.code != 0 || page.stdout != "" || !strings.Contains(html, `data-verdict="fit"`) || strings.Contains(html, "<script>alert") {
		t.Errorf("html: exit %d %s; page:\n%s", page.code, page.stderr, html)
	}
}

func TestCalibrateErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "a.db")
	calibrationStore(t, db, "run-e", 5, 1, 1, 3, 0, 0)
	bad := filepath.Join(dir, "bad.jsonl")
	if err := os.WriteFile(bad, []byte("{\"run_id\": \"run-e\",\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"run-e", "--judge", "gradr"}, ExitUsage, `scorer "gradr" has no verdicts in the run's scoring 1 (scorers are: exact, grader)`},
		{[]string{"run-e"}, ExitUsage, "--judge is required"},
		{[]string{"run-e", "--judge", "grader", "--format", "csv"}, ExitUsage, `--format "csv": formats are text, markdown, json, html`},
		{[]string{"nope", "--judge", "grader"}, ExitErr, "calibrate: "},
		{[]string{"run-e", "--judge", "grader", "--labels", bad}, ExitErr, bad + ":1:"},
		{[]string{"run-e", "--judge", "grader", "--queue", "nope"}, ExitUsage, "calibrate: --queue nope: no label of run run-e was given in that queue (the labels' queues are q)"},
	} {
		inv := runCLI(t, cliEnv{}, append(append([]string{"calibrate"}, c.args...), "--db", db)...)
		if inv.code != c.code || !strings.Contains(inv.stderr, c.msg) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.args, inv.code, inv.stderr, c.code, c.msg)
		}
	}
}

// Labels given in a queue stratified by the judge's verdict weigh its
// items' inverse selection probabilities, from the store and from a
// labels file alike: the run's 990 judged passes gave 40 items (weight
// 24.75) and its 10 judged fails all 10 (weight 1), so the judge misses 4
// of 12 labeled fails but, weighted, 99 of 107 of the run's.
func TestCalibrateWeighsQueueLabels(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "a.db")
	ls := calibrationStore(t, db, "run-w", 36, 2, 4, 8, 950, 10)
	ctx := context.Background()
	st, err := sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	q := &record.Queue{RunID: "run-w", Name: "q", Judge: "grader", Size: 50, Strata: []string{"target", "judge"}, Created: time.Now()}
	for i, l := range ls {
		w := 990.0 / 40
		if i >= 36 && i < 38 || i >= 42 { // the FN and TN labels: judged fail
			w = 1
		}
		q.Items = append(q.Items, record.QueueItem{Position: i, CaseID: l.CaseID, Target: l.Target, Epoch: l.Epoch, OutputHash: l.OutputHash, Weight: w})
	}
	if err := st.CreateQueue(ctx, q); err != nil {
		t.Fatal(err)
	}
	st.Close()

	inv := runCLI(t, cliEnv{}, "calibrate", "run-w", "--judge", "grader", "--format", "json", "--db", db)
	var rep calibrate.Report
	if err := json.Unmarshal([]byte(inv.stdout), &rep); err != nil {
		t.Fatalf("exit %d %s: %v", inv.code, inv.stderr, err)
	}
	if rep.Weighting == nil || rep.TNR.Count != 8 || rep.TNR.Of != 12 || rep.TNR.Value == nil || math.Abs(*rep.TNR.Value-8.0/107) > 1e-12 {
		t.Errorf("weighting %+v, TNR %+v; want 8 of 12 labels at 8/107 weighted", rep.Weighting, rep.TNR)
	}
	if rep.Confusion != (calibrate.Confusion{TP: 36, FN: 2, FP: 4, TN: 8}) {
		t.Errorf("confusion %+v, want the label counts", rep.Confusion)
	}

	file := filepath.Join(dir, "labels.jsonl")
	var b bytes.Buffer
	if err := labels.Write(&b, ls); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	fromFile := runCLI(t, cliEnv{}, "calibrate", "run-w", "--judge", "grader", "--labels", file, "--format", "json", "--db", db)
	if fromFile.stdout != inv.stdout {
		t.Errorf("from the file (exit %d, %s) the report differs from the store's:\n%s", fromFile.code, fromFile.stderr, fromFile.stdout)
	}

	// A file whose queue the store lacks: unweighted, and said so.
	for i := range ls {
		ls[i].Queue = "elsewhere"
	}
	b.Reset()
	if err := labels.Write(&b, ls); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	text := runCLI(t, cliEnv{}, "calibrate", "run-w", "--judge", "grader", "--labels", file, "--db", db)
	if !strings.Contains(text.stdout, "50 labels name a queue the store does not have (elsewhere)") || strings.Contains(text.stdout, "Kish") {
		t.Errorf("labels of an unknown queue:\n%s", text.stdout)
	}
	text = runCLI(t, cliEnv{}, "calibrate", "run-w", "--judge", "grader", "--db", db)
	for _, want := range []string{"labels  judge pass  judge fail", "weighted  judge pass  judge fail", "The first matrix counts labels"} {
		if !strings.Contains(text.stdout, want) {
			t.Errorf("text lacks %q:\n%s", want, text.stdout)
		}
	}
}
