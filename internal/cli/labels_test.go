package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store"
	"github.com/assay-eval/assay/internal/store/sqlite"
)

// labeledRun stores run id in the store db: cases c00..c09 tagged
// lang en/fr, targets a and b, one epoch, outputs "out cNN t" (c09/b a
// failed call), and a "judge" scorer that fails every third case.
func labeledRun(t *testing.T, db, id string) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	started := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	if err := st.CreateRun(ctx, &record.Run{ID: id, Spec: "triage", Targets: []string{"a", "b"}, Cases: 10, Epochs: 1,
		Status: record.StatusComplete, Started: started, Ended: started.Add(time.Minute), Config: []byte(`{"name":"triage"}`)}); err != nil {
		t.Fatal(err)
	}
	var cases []record.Case
	var results []record.Result
	var scores []record.Score
	for i := range 10 {
		cid := fmt.Sprintf("c%02d", i)
		cases = append(cases, record.Case{RunID: id, ID: cid, Line: i + 1, Tags: map[string]string{"lang": []string{"en", "fr"}[i%2]}})
		for _, tg := range []string{"a", "b"} {
			r := record.Result{RunID: id, CaseID: cid, Target: tg, Epoch: 1, Raw: fmt.Sprintf("out %s %s <script>alert(1)</script>", cid, tg), Attempts: 1, CreatedAt: started}
			if i == 9 && tg == "b" {
				r.Raw, r.ErrorKind, r.Error = "", "timeout", "the call timed out"
			}
			results = append(results, r)
			scores = append(scores, record.Score{RunID: id, Scoring: 1, CaseID: cid, Target: tg, Epoch: 1, Scorer: "judge", Pass: i%3 != 0, Shape: "pass"},
				record.Score{RunID: id, Scoring: 1, CaseID: cid, Target: tg, Epoch: 1, Scorer: "exact", Primary: true, Pass: true, Shape: "pass"})
		}
	}
	if err := st.PutCases(ctx, cases); err != nil {
		t.Fatal(err)
	}
	if err := st.PutResults(ctx, results, scores); err != nil {
		t.Fatal(err)
	}
}

// labelOf is a label of run's result case/target with the stored output's
// hash.
func labelOf(run, caseID, target, queue, labeler, verdict string, at time.Time) record.Label {
	r := record.Result{Raw: fmt.Sprintf("out %s %s <script>alert(1)</script>", caseID, target)}
	l := record.Label{RunID: run, CaseID: caseID, Target: target, Epoch: 1, OutputHash: record.LabelOutputHash(&r),
		Queue: queue, Labeler: labeler, Verdict: verdict, Created: at}
	if verdict == record.LabelFail {
		l.Reason, l.Corrected = "wrong label\n\"quoted\" <b>bold</b> \u202eRLO", "billing"
	}
	return l
}

func putLabelsDB(t *testing.T, db string, ls ...record.Label) {
	t.Helper()
	st, err := sqlite.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.PutLabels(context.Background(), ls); err != nil {
		t.Fatal(err)
	}
}

func storedLabels(t *testing.T, db, run string) []record.Label {
	t.Helper()
	st, err := sqlite.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var out []record.Label
	if err := st.Labels(context.Background(), run, func(l record.Label) error { out = append(out, l); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

// Labels exported from one store and imported into a fresh store holding
// the same runs are the same labels: the second export is byte for byte
// the first; importing again stores nothing.
func TestLabelsExportImportRoundTrip(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db, fresh := filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db")
	for _, d := range []string{db, fresh} {
		labeledRun(t, d, "run-one")
		labeledRun(t, d, "run-two")
	}
	at := time.Date(2026, 12, 3, 9, 0, 0, 123456000, time.UTC)
	putLabelsDB(t, db,
		labelOf("run-one", "c01", "a", "first", "ann", record.LabelPass, at),
		labelOf("run-one", "c03", "b", "first", "ann", record.LabelFail, at.Add(time.Second)),
		labelOf("run-one", "c03", "b", "first", "bob", record.LabelSkip, at.Add(2*time.Second)),
		labelOf("run-one", "c04", "a", "", "ann", record.LabelPass, at.Add(3*time.Second)),
		labelOf("run-two", "c00", "a", "q", "ann", record.LabelFail, at))

	out := filepath.Join(dir, "labels.jsonl")
	if inv := runCLI(t, cliEnv{}, "labels", "export", "--all", "-o", out, "--db", db); inv.code != 0 {
		t.Fatalf("labels export: exit %d, %s", inv.code, inv.stderr)
	}
	first := readFileT(t, out)
	if n := strings.Count(first, "\n"); n != 5 {
		t.Fatalf("export --all wrote %d lines; want 5 labels:\n%s", n, first)
	}
	inv := runCLI(t, cliEnv{}, "labels", "import", out, "--db", fresh)
	if inv.code != 0 || inv.stdout != "imported 5 labels: 5 new or changed, 0 already stored\n" {
		t.Fatalf("labels import: exit %d, stdout %q, stderr %s", inv.code, inv.stdout, inv.stderr)
	}
	inv = runCLI(t, cliEnv{}, "labels", "import", out, "--db", fresh)
	if inv.code != 0 || inv.stdout != "imported 5 labels: 0 new or changed, 5 already stored\n" {
		t.Errorf("second labels import: exit %d, stdout %q, stderr %s", inv.code, inv.stdout, inv.stderr)
	}
	inv = runCLI(t, cliEnv{}, "labels", "import", out, "--db", fresh, "--format", "json")
	var counts labelsImported
	if err := json.Unmarshal([]byte(inv.stdout), &counts); err != nil || inv.code != 0 || counts != (labelsImported{Labels: 5, Same: 5}) {
		t.Errorf("labels import --format json: exit %d, %+v, %v: %s", inv.code, counts, err, inv.stdout)
	}
	inv = runCLI(t, cliEnv{}, "labels", "export", "--all", "--db", fresh)
	if inv.code != 0 || inv.stdout != first {
		t.Errorf("export of the fresh store differs (exit %d, %s):\n%s\nwant:\n%s", inv.code, inv.stderr, inv.stdout, first)
	}
	// One run's labels: that run's lines of the full export, in order.
	inv = runCLI(t, cliEnv{}, "labels", "export", "run-two", "--db", fresh)
	var want []string
	for _, line := range strings.SplitAfter(first, "\n") {
		if strings.Contains(line, `"run_id":"run-two"`) {
			want = append(want, line)
		}
	}
	if inv.code != 0 || inv.stdout != strings.Join(want, "") {
		t.Errorf("export run-two: exit %d %s\n%s\nwant\n%s", inv.code, inv.stderr, inv.stdout, strings.Join(want, ""))
	}
	// The lines are the labels: what the store holds, read independently.
	var got []record.Label
	for _, line := range strings.Split(strings.TrimSpace(first), "\n") {
		var l record.Label
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatal(err)
		}
		got = append(got, l)
	}
	stored := storedLabels(t, fresh, "")
	if len(stored) != len(got) {
		t.Fatalf("%d labels stored; want %d", len(stored), len(got))
	}
	for i := range got {
		if !got[i].Created.Equal(stored[i].Created) {
			t.Errorf("label %d created %v; stored %v", i, got[i].Created, stored[i].Created)
		}
		got[i].Created, stored[i].Created = time.Time{}, time.Time{}
		if got[i] != stored[i] {
			t.Errorf("label %d exported as %+v; stored %+v", i, got[i], stored[i])
		}
	}
}

// A file with any bad label stores nothing: every problem is listed at
// FILE:LINE (and column for the label's own fields) — a run not in the
// store, a result the run does not have, a bad verdict — and the exit
// code is 1.
func TestLabelsImportRefusesBadFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "assay.db")
	labeledRun(t, db, "run-one")
	at := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	good := filepath.Join(dir, "good.jsonl")
	bad := filepath.Join(dir, "bad.jsonl")
	var b strings.Builder
	for _, l := range []record.Label{
		labelOf("run-one", "c01", "a", "q", "ann", record.LabelPass, at),
		labelOf("run-nine", "c01", "a", "q", "ann", record.LabelPass, at),
		labelOf("run-one", "c99", "a", "q", "ann", record.LabelPass, at),
		labelOf("run-one", "c01", "a", "q", "bob", record.LabelPass, at),
		labelOf("run", "c01", "a", "q", "ann", record.LabelPass, at), // a prefix of run-one is not its ID
	} {
		line, err := json.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	writeFile(t, good, b.String()[:strings.Index(b.String(), "\n")+1])
	badLine := `{"run_id":"run-one","case_id":"c02","target":"a","epoch":1,"output_hash":"00ff00ff00ff00ff","labeler":"ann","verdict":"bad"}`
	writeFile(t, bad, b.String()+badLine+"\n")

	inv := runCLI(t, cliEnv{}, "labels", "import", good, bad, "--db", db)
	want := "assay: labels import: nothing was stored:\n" +
		"  " + bad + `:2: run "run-nine" is not in the store ` + db + " (labels are imported into the store that holds their run: --db)\n" +
		"  " + bad + `:3: run run-one has no result for case "c99", target "a", epoch 1` + "\n" +
		"  " + bad + `:5: run "run" is not in the store ` + db + " (labels are imported into the store that holds their run: --db)\n" +
		"  " + bad + `:6:119: "verdict" is "bad"; valid verdicts are: pass, fail, skip` + "\n"
	if inv.code != 1 || inv.stderr != want || inv.stdout != "" {
		t.Errorf("import of a bad file: exit %d\nstderr:\n%s\nwant:\n%s\nstdout: %q", inv.code, inv.stderr, want, inv.stdout)
	}
	if n := len(storedLabels(t, db, "")); n != 0 {
		t.Errorf("%d labels stored from a refused import; want none", n)
	}
	if inv := runCLI(t, cliEnv{}, "labels", "import", filepath.Join(dir, "missing.jsonl"), "--db", db); inv.code != 1 || !strings.Contains(inv.stderr, "missing.jsonl: no such file") {
		t.Errorf("import of a missing file: exit %d, %s", inv.code, inv.stderr)
	}
}

// A label of an output since replaced (its hash is not the stored
// output's) is stored and reported.
func TestLabelsImportStaleHash(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "assay.db")
	labeledRun(t, db, "run-one")
	l := labelOf("run-one", "c01", "a", "q", "ann", record.LabelPass, time.Time{})
	l.OutputHash = "0000000000000000"
	line, _ := json.Marshal(l)
	file := filepath.Join(dir, "l.jsonl")
	writeFile(t, file, string(line)+"\n")
	inv := runCLI(t, cliEnv{}, "labels", "import", file, "--db", db)
	if inv.code != 0 || !strings.HasPrefix(inv.stderr, "1 label judged an output that has changed since") {
		t.Errorf("import: exit %d, stderr %q", inv.code, inv.stderr)
	}
	if n := len(storedLabels(t, db, "run-one")); n != 1 {
		t.Errorf("%d labels stored; want 1", n)
	}
}

// `labels queue` samples a queue, prints its strata, refuses a taken name
// and an unknown judge; `labels queues` shows progress.
func TestLabelsQueueCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "assay.db")
	labeledRun(t, db, "run-one")
	inv := runCLI(t, cliEnv{}, "labels", "queue", "run-one", "--name", "first", "--size", "8", "--seed", "3", "--judge", "judge", "--db", db)
	// 19 outputs (c09/b failed): a: 6 judged pass, 4 fail (c00, c03, c06,
	// c09); b: 6 pass, 3 fail. 8 items: one each, then by shortfall from
	// the shares 8·Nh/19 = 1.68 (a fail), 2.53 (a pass), 1.26 (b fail),
	// 2.53 (b pass): a pass, b pass, a fail, a pass.
	want := `created queue "first" of run run-one: 8 outputs (asked 8, seed 3), stratified by target, judge
  stratum               outputs  drawn  weight
  target=a, judge=fail        4      2       2
  target=a, judge=pass        6      3       2
  target=b, judge=fail        3      1       3
  target=b, judge=pass        6      2       3
`
	if inv.code != 0 || inv.stdout != want {
		t.Errorf("labels queue: exit %d, stderr %s\n%s\nwant:\n%s", inv.code, inv.stderr, inv.stdout, want)
	}
	st, err := sqlite.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	q, err := st.Queue(context.Background(), "run-one", "first")
	st.Close()
	if err != nil || len(q.Items) != 8 || q.Judge != "judge" || q.Seed != 3 {
		t.Fatalf("stored queue %+v, %v", q, err)
	}

	// --format json: the strata, never the items (they are for blind labeling).
	inv = runCLI(t, cliEnv{}, "labels", "queue", "run-one", "--name", "json", "--size", "8", "--seed", "3", "--judge", "judge", "--db", db, "--format", "json")
	var created queueCreated
	if err := json.Unmarshal([]byte(inv.stdout), &created); err != nil || inv.code != 0 {
		t.Fatalf("labels queue --format json: exit %d, %v: %s %s", inv.code, err, inv.stdout, inv.stderr)
	}
	wantCells := []stratumCell{{"target=a, judge=fail", 4, 2, 2}, {"target=a, judge=pass", 6, 3, 2}, {"target=b, judge=fail", 3, 1, 3}, {"target=b, judge=pass", 6, 2, 3}}
	if created.Items != 8 || created.Seed != 3 || fmt.Sprint(created.Cells) != fmt.Sprint(wantCells) || strings.Contains(inv.stdout, "case_id") {
		t.Errorf("labels queue --format json: %s", inv.stdout)
	}
	inv = runCLI(t, cliEnv{}, "labels", "queue", "run-one", "--name", "first", "--size", "4", "--db", db)
	if inv.code != 1 || !strings.Contains(inv.stderr, `run run-one already has a queue named "first"`) {
		t.Errorf("a taken name: exit %d, %s", inv.code, inv.stderr)
	}
	inv = runCLI(t, cliEnv{}, "labels", "queue", "run-one", "--name", "second", "--size", "4", "--judge", "jugde", "--db", db)
	if inv.code != 1 || inv.stderr != "assay: labels queue: run run-one has no scorer \"jugde\" in its latest scoring (1); its scorers are: exact, judge\n" {
		t.Errorf("an unknown judge: exit %d, %q", inv.code, inv.stderr)
	}
	for _, args := range [][]string{
		{"labels", "queue", "run-one", "--size", "4"},
		{"labels", "queue", "run-one", "--name", "x"},
		{"labels", "queue", "--name", "x", "--size", "3"},
		{"labels", "export"},
		{"labels", "export", "run-one", "--all"},
		{"labels", "import"},
		{"labels"},
	} {
		if inv := runCLI(t, cliEnv{}, append(args, "--db", db)...); inv.code != 2 {
			t.Errorf("%q: exit %d; want 2 (usage), %s", args, inv.code, inv.stderr)
		}
	}

	// Label two of the queue's items, one twice (two labelers).
	var ls []record.Label
	for i, it := range q.Items[:2] {
		ls = append(ls, labelOf("run-one", it.CaseID, it.Target, "first", "ann", []string{record.LabelPass, record.LabelFail}[i], time.Time{}))
	}
	ls = append(ls, labelOf("run-one", q.Items[0].CaseID, q.Items[0].Target, "first", "bob", record.LabelSkip, time.Time{}))
	putLabelsDB(t, db, ls...)
	inv = runCLI(t, cliEnv{}, "labels", "queues", "--json", "--db", db)
	var progress []store.QueueProgress
	if err := json.Unmarshal([]byte(inv.stdout), &progress); err != nil || inv.code != 0 {
		t.Fatalf("labels queues --json: exit %d, %v\n%s%s", inv.code, err, inv.stdout, inv.stderr)
	}
	wantP := []store.QueueProgress{{RunID: "run-one", Name: "first", Judge: "judge", Items: 8, Labeled: 2, Pass: 1, Fail: 1, Skip: 1},
		{RunID: "run-one", Name: "json", Judge: "judge", Items: 8}}
	if fmt.Sprint(progress) != fmt.Sprint(wantP) {
		t.Errorf("labels queues --json = %+v; want %+v", progress, wantP)
	}
	inv = runCLI(t, cliEnv{}, "labels", "queues", "run-one", "--db", db)
	wantT := "RUN      QUEUE  JUDGE  LABELED  PASS  FAIL  SKIP\nrun-one  first  judge  2/8      1     1     1\nrun-one  json   judge  0/8      0     0     0\n"
	if inv.code != 0 || inv.stdout != wantT {
		t.Errorf("labels queues:\n%s\nwant:\n%s", inv.stdout, wantT)
	}
}

// runs rm deletes a run's labels and queues with it and says how many.
func TestRunsRmDeletesLabels(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "assay.db")
	labeledRun(t, db, "run-one")
	labeledRun(t, db, "run-two")
	if inv := runCLI(t, cliEnv{}, "labels", "queue", "run-one", "--name", "q", "--size", "3", "--db", db); inv.code != 0 {
		t.Fatal(inv.stderr)
	}
	putLabelsDB(t, db, labelOf("run-one", "c01", "a", "q", "ann", record.LabelPass, time.Time{}),
		labelOf("run-one", "c02", "a", "", "ann", record.LabelSkip, time.Time{}),
		labelOf("run-two", "c02", "a", "", "ann", record.LabelSkip, time.Time{}))
	inv := runCLI(t, cliEnv{}, "runs", "rm", "run-one", "--db", db)
	if want := "removed run run-one (triage, complete): 10 cases, 20 results, 40 scores in 1 scoring, 2 labels and 1 labeling queue\n"; inv.code != 0 || inv.stdout != want {
		t.Errorf("runs rm: exit %d\n%s\nwant\n%s%s", inv.code, inv.stdout, want, inv.stderr)
	}
	if n := len(storedLabels(t, db, "")); n != 1 {
		t.Errorf("%d labels left; want run-two's 1", n)
	}
}
