package serve_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/spec"
)

// makeQueue creates a queue of 20 through the form and returns the first
// item's page.
func makeQueue(t *testing.T, fx *labelFixture, c *client, name string) string {
	t.Helper()
	code, body := c.get("/runs/" + fx.run.ID + "/queues")
	if code != http.StatusOK {
		t.Fatalf("queue form: %d\n%s", code, body)
	}
	for _, want := range []string{`<option value="judge">judge</option>`, `name="slices" value="bucket"`} {
		if !strings.Contains(body, want) {
			t.Errorf("the queue form does not offer %s", want)
		}
	}
	code, body = c.post("/runs/"+fx.run.ID+"/queues", url.Values{"name": {name}, "size": {"20"}, "seed": {"7"}, "judge": {"judge"}, "slices": {"bucket"}})
	if code != http.StatusOK {
		t.Fatalf("creating the queue: %d\n%s", code, body)
	}
	return body
}

var positionField = regexp.MustCompile(`name="position" value="(\d+)"`)

func positionOf(t *testing.T, body string) int {
	t.Helper()
	m := positionField.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no item on the page:\n%.2000s", body)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// itemPart is the blind item's part of a page (after the reveal of the
// previous item, which may name the judge).
func itemPart(t *testing.T, body string) string {
	t.Helper()
	i := strings.Index(body, `<article id="item">`)
	if i < 0 {
		t.Fatalf("no item article on the page:\n%.2000s", body)
	}
	return body[i:]
}

// The item page shows the case's input and the output, and nothing that
// names the target, the model, the judge or any scorer's verdict — not in
// text, attributes or comments; every payload arrives escaped.
func TestQueueItemsAreBlindAndEscaped(t *testing.T) {
	t.Parallel()
	fx := newLabelFixture(t)
	c := newClient(t, fx.srv)
	body := makeQueue(t, fx, c, "blind")
	if strings.Contains(strings.ToLower(body), "judge") || strings.Contains(body, "exact") {
		t.Errorf("the first item's page names the judge or a scorer before any label")
	}
	q, err := fx.st.Queue(context.Background(), fx.run.ID, "blind")
	if err != nil {
		t.Fatal(err)
	}
	if len(q.Items) != 20 {
		t.Fatalf("the queue has %d items, want 20", len(q.Items))
	}
	secrets := []string{targetA, html.EscapeString(targetA), "target-alpha", targetB, modelMarker, judgeMarker, exactMarker, `value="judge"`}
	for n := range 20 {
		part := itemPart(t, body)
		pos := positionOf(t, body)
		it := q.Items[pos]
		for _, s := range secrets {
			if strings.Contains(part, s) {
				t.Errorf("item %d's page carries %q", pos, s)
			}
		}
		for _, bad := range []string{"<script>window", "<img src=x", "<svg onload", "</textarea><script>", `href="javascript:`, "<img src=\"http", "\x1b"} {
			if strings.Contains(body, bad) {
				t.Errorf("item %d's page carries %q unescaped", pos, bad)
			}
		}
		// The input, the output and its tool calls are there, escaped.
		res, err := fx.st.Result(context.Background(), fx.run.ID, it.Key())
		if err != nil {
			t.Fatal(err)
		}
		// Control and bidi characters are shown as escapes.
		shown := strings.NewReplacer("\x1b", `\x1b`, "\u202E", `\u202e`).Replace(res.Raw)
		if !strings.Contains(part, `id="raw">`+html.EscapeString(shown)+"</pre>") {
			t.Errorf("item %d does not show its output escaped", pos)
		}
		if !strings.Contains(part, "question ") || !strings.Contains(part, `id="tool-calls"`) {
			t.Errorf("item %d shows no input question or no tool calls", pos)
		}
		code, next := c.post("/runs/"+fx.run.ID+"/queues/blind/label", url.Values{"position": {strconv.Itoa(pos)}, "hash": {it.OutputHash}, "verdict": {"skip"}})
		if code != http.StatusOK {
			t.Fatalf("labeling item %d: %d\n%.2000s", pos, code, next)
		}
		body = next
		if n == 19 {
			if !strings.Contains(body, `id="finished"`) {
				t.Errorf("after 20 labels the queue is not finished")
			}
		}
	}
}

// A fail without a reason is refused with a message, nothing is stored,
// and what was typed is kept; a pass is stored with the item's output
// hash, the labeler and the clock, and the next page reveals the judge's
// verdict on it; undo deletes it and shows that item again.
func TestLabelFailNeedsReasonRevealAndUndo(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fx := newLabelFixture(t)
	c := newClient(t, fx.srv)
	body := makeQueue(t, fx, c, "q")
	q, err := fx.st.Queue(ctx, fx.run.ID, "q")
	if err != nil {
		t.Fatal(err)
	}
	pos := positionOf(t, body)
	it := q.Items[pos]
	code, body := c.post("/runs/"+fx.run.ID+"/queues/q/label", url.Values{"position": {strconv.Itoa(pos)}, "hash": {it.OutputHash}, "verdict": {"fail"},
		"reason": {"  "}, "corrected": {"fixed </textarea><b>answer</b>"}})
	if code != http.StatusBadRequest {
		t.Errorf("a fail without reason: status %d, want 400", code)
	}
	if !strings.Contains(body, "a fail needs a reason") || !strings.Contains(body, "fixed &lt;/textarea&gt;&lt;b&gt;answer&lt;/b&gt;</textarea>") {
		t.Errorf("the refusal does not say why or loses the correction:\n%.3000s", body)
	}
	if positionOf(t, body) != pos {
		t.Errorf("the refused item is not shown again")
	}
	if n := countLabels(t, fx); n != 0 {
		t.Fatalf("%d labels stored after a refused fail", n)
	}

	code, body = c.post("/runs/"+fx.run.ID+"/queues/q/label", url.Values{"position": {strconv.Itoa(pos)}, "hash": {it.OutputHash}, "verdict": {"pass"}, "labeler": {"ann"}})
	if code != http.StatusOK {
		t.Fatalf("pass: %d", code)
	}
	var got []record.Label
	if err := fx.st.Labels(ctx, fx.run.ID, func(l record.Label) error { got = append(got, l); return nil }); err != nil {
		t.Fatal(err)
	}
	want := record.Label{RunID: fx.run.ID, CaseID: it.CaseID, Target: it.Target, Epoch: it.Epoch, OutputHash: it.OutputHash, Queue: "q", Labeler: "ann", Verdict: "pass",
		Created: fx.run.Started.Add(time.Hour)}
	if len(got) != 1 || !got[0].Created.Equal(want.Created) {
		t.Fatalf("stored %+v, want %+v", got, want)
	}
	got[0].Created = want.Created
	if got[0] != want {
		t.Errorf("stored %+v\nwant   %+v", got[0], want)
	}
	judge := "fail"
	if fx.judge[it.Key()] {
		judge = "pass"
	}
	if !strings.Contains(body, `you said <strong class="pass" id="said">pass</strong>`) || !strings.Contains(body, `id="judge-said">`+judge+`</strong>`) {
		t.Errorf("the next page does not reveal the judge's %s:\n%.3000s", judge, body)
	}
	if p := positionOf(t, body); p == pos {
		t.Errorf("the labeled item is shown again")
	}
	if !strings.Contains(body, `<span id="count">1 of 20</span>`) || !strings.Contains(body, `value="ann"`) {
		t.Errorf("progress or labeler not shown")
	}

	code, body = c.post("/runs/"+fx.run.ID+"/queues/q/undo", url.Values{})
	if code != http.StatusOK {
		t.Fatalf("undo: %d", code)
	}
	if positionOf(t, body) != pos {
		t.Errorf("undo does not show the item again (shows %d, want %d)", positionOf(t, body), pos)
	}
	if n := countLabels(t, fx); n != 0 {
		t.Errorf("%d labels after undo, want 0", n)
	}
	// Someone else's undo does not touch ann's labels.
	c.post("/runs/"+fx.run.ID+"/queues/q/label", url.Values{"position": {strconv.Itoa(pos)}, "hash": {it.OutputHash}, "verdict": {"skip"}, "labeler": {"ann"}})
	c.post("/runs/"+fx.run.ID+"/queues/q/undo", url.Values{"labeler": {"bob"}})
	if n := countLabels(t, fx); n != 1 {
		t.Errorf("bob's undo changed ann's labels: %d left", n)
	}
	// The list shows the queue's progress and links to it.
	_, list := c.get("/labels")
	if !strings.Contains(list, `href="/runs/run-hostile-1/queues/q"`) || !strings.Contains(list, `<progress value="1" max="20">`) {
		t.Errorf("/labels does not show the queue's progress:\n%s", list)
	}
}

func countLabels(t *testing.T, fx *labelFixture) int {
	t.Helper()
	n := 0
	if err := fx.st.Labels(context.Background(), fx.run.ID, func(record.Label) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

// Adding a labeled failure appends it to the dataset (the spec names no
// labels.add_to: the JSONL dataset itself), the page shows the line, the
// dataset's version hash changes; adding it again appends nothing.
func TestAddToDataset(t *testing.T) {
	t.Parallel()
	fx := newLabelFixture(t)
	c := newClient(t, fx.srv)
	c.get("/runs/" + fx.run.ID + "/queues")
	sp := &spec.Spec{Dir: fx.dir, Dataset: spec.Dataset{Path: "data.jsonl", Format: "jsonl", ID: "id", Expected: "answer", Tags: []spec.Tag{{Key: "bucket", Expr: "bucket"}}}}
	before, err := dataset.Scan(sp)
	if err != nil {
		t.Fatal(err)
	}
	path := "/runs/" + fx.run.ID + "/cases/" + url.PathEscape(caseID(3)) + "/add"
	code, body := c.post(path, url.Values{"reason": {"wrong <script>window.__pwned=9</script>"}, "corrected": {"the right answer"}, "target": {targetA}, "epoch": {"1"}})
	if code != http.StatusOK || !strings.Contains(body, `id="added"`) || !strings.Contains(body, "at line 21") {
		t.Fatalf("add: %d\n%.3000s", code, body)
	}
	if strings.Contains(body, "<script>window") {
		t.Errorf("the added record is shown unescaped")
	}
	after, err := dataset.Scan(sp)
	if err != nil {
		t.Fatalf("the dataset does not read after the add: %v", err)
	}
	if after.Hash == before.Hash || after.Cases != before.Cases+1 {
		t.Errorf("dataset %s → %s, %d → %d cases: want a new version with one more case", before.Hash, after.Hash, before.Cases, after.Cases)
	}
	code, body = c.post(path, url.Values{"reason": {"another reason"}, "corrected": {"the right answer"}})
	if code != http.StatusOK || !strings.Contains(body, `id="already"`) || !strings.Contains(body, "at line 21") {
		t.Errorf("adding again: %d\n%.3000s", code, body)
	}
	if again, _ := dataset.Scan(sp); again.Hash != after.Hash {
		t.Errorf("adding a duplicate changed the dataset")
	}
	// A spec whose labels.add_to is another file than its dataset: the case
	// goes there, and the page does not claim this spec's dataset changed.
	regRun := *fx.run
	regRun.ID = "run-regressions"
	regRun.Config = []byte(strings.Replace(string(fx.run.Config), `{`, `{"labels":{"add_to":"regressions.jsonl"},`, 1))
	if err := fx.st.CreateRun(context.Background(), &regRun); err != nil {
		t.Fatal(err)
	}
	code, body = c.post("/runs/run-regressions/cases/"+url.PathEscape(caseID(3))+"/add", url.Values{"reason": {"r"}, "corrected": {"x"}})
	if code != http.StatusOK || !strings.Contains(body, "at line 1.") || !strings.Contains(body, "not this spec's dataset") || strings.Contains(body, "The dataset's version changes") {
		t.Errorf("add to another file: %d\n%.3000s", code, body)
	}
	if b, err := os.ReadFile(filepath.Join(fx.dir, "regressions.jsonl")); err != nil || strings.Count(string(b), "\n") != 1 {
		t.Errorf("regressions.jsonl: %q, %v; want one line", b, err)
	}
	// A run over a CSV dataset without labels.add_to is refused with what
	// to do, and nothing is written.
	if err := os.WriteFile(filepath.Join(fx.dir, "data.csv"), []byte("id,question,answer\nc01,q,a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	csvRun := *fx.run
	csvRun.ID = "run-csv"
	csvRun.Config = []byte(strings.Replace(string(fx.run.Config), `"path":"data.jsonl","format":"jsonl"`, `"path":"data.csv","format":"csv"`, 1))
	if string(csvRun.Config) == string(fx.run.Config) {
		t.Fatal("the CSV run's config is the JSONL run's")
	}
	if err := fx.st.CreateRun(context.Background(), &csvRun); err != nil {
		t.Fatal(err)
	}
	code, body = c.post("/runs/run-csv/cases/c01/add", url.Values{"reason": {"r"}})
	want := "run run-csv's spec names no file to add cases to: its dataset data.csv is CSV, and added cases go to JSONL; set labels.add_to in the spec to a .jsonl file\n"
	if code != http.StatusBadRequest || body != want {
		t.Errorf("CSV: %d %q\nwant 400 %q", code, body, want)
	}
}

// An output replaced since the queue drew it (a retried failed call) is
// shown with a note and can only be skipped: a pass or fail of it would
// judge an output the queue did not draw.
func TestReplacedOutputCanOnlyBeSkipped(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fx := newLabelFixture(t)
	c := newClient(t, fx.srv)
	body := makeQueue(t, fx, c, "q")
	q, err := fx.st.Queue(ctx, fx.run.ID, "q")
	if err != nil {
		t.Fatal(err)
	}
	pos := positionOf(t, body)
	it := q.Items[pos]
	res, err := fx.st.Result(ctx, fx.run.ID, it.Key())
	if err != nil {
		t.Fatal(err)
	}
	res.Raw = "a new reply"
	if err := fx.st.ReplaceResults(ctx, []record.Result{*res}, nil); err != nil {
		t.Fatal(err)
	}
	_, body = c.get("/runs/" + fx.run.ID + "/queues/q")
	if positionOf(t, body) != pos || !strings.Contains(body, `id="replaced"`) {
		t.Fatalf("the replaced item is not shown with its note:\n%.3000s", body)
	}
	hash := record.LabelOutputHash(res)
	code, body := c.post("/runs/"+fx.run.ID+"/queues/q/label", url.Values{"position": {strconv.Itoa(pos)}, "hash": {hash}, "verdict": {"pass"}})
	if code != http.StatusBadRequest || !strings.Contains(body, "skip it") {
		t.Errorf("a pass of a replaced output: %d", code)
	}
	if code, _ := c.post("/runs/"+fx.run.ID+"/queues/q/label", url.Values{"position": {strconv.Itoa(pos)}, "hash": {hash}, "verdict": {"skip"}}); code != http.StatusOK {
		t.Errorf("a skip of a replaced output: %d", code)
	}
	if n := countLabels(t, fx); n != 1 {
		t.Errorf("%d labels, want the one skip", n)
	}
}

// The calibration page: a picker without a judge, an unknown judge or
// queue answered 404 with the run's scorers to pick from, and with a
// judge the report's verdict.
func TestCalibrationPage(t *testing.T) {
	t.Parallel()
	fx := newLabelFixture(t)
	c := newClient(t, fx.srv)
	base := "/runs/" + fx.run.ID + "/calibrate"
	code, body := c.get(base)
	if code != http.StatusOK || !strings.Contains(body, `<option value="judge">judge</option>`) || strings.Contains(body, `id="calibration"`) {
		t.Errorf("without a judge: %d, want the picker alone\n%.2000s", code, body)
	}
	code, body = c.get(base + "?judge=nope")
	if code != http.StatusNotFound || !strings.Contains(body, "the run has no scorer nope in its latest scoring") {
		t.Errorf("an unknown judge: %d\n%.2000s", code, body)
	}
	if code, _ = c.get(base + "?judge=judge&queue=nope"); code != http.StatusNotFound {
		t.Errorf("an unknown queue: %d, want 404", code)
	}
	body = makeQueue(t, fx, c, "q")
	q, err := fx.st.Queue(context.Background(), fx.run.ID, "q")
	if err != nil {
		t.Fatal(err)
	}
	// Label every item fail when the judge passed it: a judge that is
	// always wrong is not fit.
	for range 20 {
		pos := positionOf(t, body)
		it := q.Items[pos]
		v := url.Values{"position": {strconv.Itoa(pos)}, "hash": {it.OutputHash}, "verdict": {"pass"}}
		if fx.judge[it.Key()] {
			v.Set("verdict", "fail")
			v.Set("reason", "wrong")
		}
		_, body = c.post("/runs/"+fx.run.ID+"/queues/q/label", v)
	}
	code, body = c.get(base + "?judge=judge&queue=q")
	if code != http.StatusOK || !strings.Contains(body, `id="calibration"`) || !strings.Contains(body, "not fit") {
		t.Errorf("the judge against labels that always disagree: %d, want a report saying not fit\n%.3000s", code, body)
	}
	// Without ?judge= the queue's judge is taken.
	if _, body = c.get(base + "?queue=q"); !strings.Contains(body, `<option value="judge" selected>`) || !strings.Contains(body, `id="calibration"`) {
		t.Errorf("the queue's judge is not the default")
	}
}

// A case's page lists people's labels of each output — labeler, verdict,
// reason and correction escaped — and marks one whose output was replaced
// since it was given.
func TestCasePageShowsLabels(t *testing.T) {
	ctx := context.Background()
	fx := newLabelFixture(t)
	c := newClient(t, fx.srv)
	body := makeQueue(t, fx, c, "q")
	q, err := fx.st.Queue(ctx, fx.run.ID, "q")
	if err != nil {
		t.Fatal(err)
	}
	it := q.Items[positionOf(t, body)]
	code, _ := c.post("/runs/"+fx.run.ID+"/queues/q/label", url.Values{"position": {strconv.Itoa(it.Position)}, "hash": {it.OutputHash},
		"verdict": {"fail"}, "reason": {"<b id=lbl>wrong</b>"}, "corrected": {"the <i>right</i> one"}, "labeler": {"ann<script>"}})
	if code != http.StatusOK && code != http.StatusSeeOther {
		t.Fatalf("label: %d", code)
	}
	casePath := "/runs/" + fx.run.ID + "/cases/" + url.PathEscape(it.CaseID)
	_, page := c.get(casePath)
	for _, want := range []string{"<h4>Labels</h4>", "&lt;b id=lbl&gt;wrong&lt;/b&gt;", "the &lt;i&gt;right&lt;/i&gt; one", "ann&lt;script&gt;", ">q</td>"} {
		if !strings.Contains(page, want) {
			t.Errorf("the case page does not show %q", want)
		}
	}
	if strings.Contains(page, "<b id=lbl>") || strings.Contains(page, "since replaced") {
		t.Errorf("the label is shown unescaped or marked stale:\n%.4000s", page)
	}
	res, err := fx.st.Result(ctx, fx.run.ID, it.Key())
	if err != nil {
		t.Fatal(err)
	}
	res.Raw = "a new reply"
	if err := fx.st.ReplaceResults(ctx, []record.Result{*res}, nil); err != nil {
		t.Fatal(err)
	}
	if _, page = c.get(casePath); !strings.Contains(page, "(of an output since replaced)") {
		t.Errorf("a label of a replaced output is not marked")
	}
}
