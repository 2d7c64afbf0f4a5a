package serve

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/analysis"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/report"
	"github.com/assay-eval/assay/internal/store"
)

var t0 = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

// A run's page shows exactly what `assay report --format html` shows in
// its <main>: the one renderer, the same analysis (the CLI's defaults),
// hostile outputs escaped. The second visit is served from the cache,
// without the computing notice.
func TestRunPageIsTheHTMLReport(t *testing.T) {
	t.Parallel()
	st, _ := runsStore(t)
	run := putRun(t, st, fixtureRun{spec: "qa", started: t0, pass: map[string][]bool{
		"alpha": verdicts(40, func(i int) bool { return i%3 != 0 }),
		"beta":  verdicts(40, func(i int) bool { return i%5 != 0 }),
	}})
	rep, err := analysis.Analyze(context.Background(), st, run, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var page bytes.Buffer
	if err := report.HTML(&page, rep); err != nil {
		t.Fatal(err)
	}
	want := between(page.String(), "<main>\n", "</main>")
	if want == "" || !strings.Contains(want, "<svg") {
		t.Fatalf("the report page has no <main> with charts:\n%.500s", page.String())
	}
	s := newTestServer(t, st, "")
	code, body := get(t, s, "/runs/"+run.ID)
	if code != http.StatusOK {
		t.Fatalf("GET /runs/%s: %d\n%s", run.ID, code, body)
	}
	got := between(body, "<div class=\"report\">\n", "</div>\n</main>")
	if got != want {
		t.Errorf("the run's page does not show the HTML report's body (%d bytes, want %d)", len(got), len(want))
	}
	if strings.Contains(body, "<script>alert") || strings.Contains(body, "<img src=x") {
		t.Error("a model's output reached the page unescaped")
	}
	if !strings.Contains(body, `id="computing"`) {
		t.Error("the first visit does not say the report is being computed")
	}
	for _, link := range []string{`href="/runs/` + run.ID + `/cases"`, `href="/labels"`, `href="/assets/report.css"`} {
		if !strings.Contains(body, link) {
			t.Errorf("the run's page has no %s", link)
		}
	}
	_, again := get(t, s, "/runs/"+run.ID)
	if strings.Contains(again, `id="computing"`) {
		t.Error("the second visit computes the report again")
	}
	if between(again, "<div class=\"report\">\n", "</div>\n</main>") != want {
		t.Error("the cached report differs from the computed one")
	}
	code, css := get(t, s, "/assets/report.css")
	if style, _ := report.HTMLStyle(); code != http.StatusOK || css != style {
		t.Errorf("/assets/report.css: %d, not the report's stylesheet", code)
	}
}

// A run that does not exist is a 404; a scoring it does not have is a 400.
func TestRunPageErrors(t *testing.T) {
	t.Parallel()
	st, _ := runsStore(t)
	run := putRun(t, st, fixtureRun{spec: "qa", started: t0, pass: map[string][]bool{"alpha": {true, false}}})
	s := newTestServer(t, st, "")
	for target, want := range map[string]int{
		"/runs/nope":                       http.StatusNotFound,
		"/runs/" + run.ID + "?scoring=2":   http.StatusBadRequest,
		"/runs/" + run.ID + "?scoring=x":   http.StatusBadRequest,
		"/runs/" + run.ID + "?scoring=1":   http.StatusOK,
		"/compare?a=nope&b=" + run.ID:      http.StatusNotFound,
		"/compare?a=" + run.ID + "&b=nope": http.StatusNotFound,
		"/?after=nope":                     http.StatusBadRequest,
	} {
		if code, body := get(t, s, target); code != want {
			t.Errorf("GET %s: %d, want %d\n%.300s", target, code, want, body)
		}
	}
}

// The list filters by spec and experiment, newest first, and pages 100
// runs at a time.
func TestRunsListFiltersAndPages(t *testing.T) {
	t.Parallel()
	st, _ := runsStore(t)
	var ids []string
	for i := range 103 {
		r := putRun(t, st, fixtureRun{spec: "many", started: t0.Add(time.Duration(i) * time.Minute), pass: map[string][]bool{"m": {true}}})
		ids = append(ids, r.ID)
	}
	other := putRun(t, st, fixtureRun{spec: "other", experiment: "prompts", started: t0.Add(-time.Hour), pass: map[string][]bool{"m": {true}}})
	s := newTestServer(t, st, "")

	_, body := get(t, s, "/?spec=other")
	if !strings.Contains(body, other.ID) || strings.Contains(body, ids[0]) {
		t.Error("?spec=other does not list only the run of spec other")
	}
	_, body = get(t, s, "/?experiment=prompts")
	if !strings.Contains(body, other.ID) || strings.Count(body, `<input type="radio" name="a"`) != 1 {
		t.Error("?experiment=prompts does not list only its run")
	}
	_, body = get(t, s, "/?spec=many")
	if n := strings.Count(body, `<input type="radio" name="a"`); n != 100 {
		t.Errorf("the first page lists %d runs, want 100", n)
	}
	newest, hundredth := ids[102], ids[3]
	if !strings.Contains(body, newest) || !strings.Contains(body, hundredth) || strings.Contains(body, `href="/runs/`+ids[2]+`"`) {
		t.Error("the first page is not the 100 newest runs")
	}
	next := between(body, `<a rel="next" href="`, `"`)
	if next == "" {
		t.Fatal("the first page has no link to the next")
	}
	_, body = get(t, s, strings.ReplaceAll(next, "&amp;", "&"))
	if n := strings.Count(body, `<input type="radio" name="a"`); n != 3 {
		t.Errorf("the second page lists %d runs, want 3", n)
	}
	for _, id := range ids[:3] {
		if !strings.Contains(body, `href="/runs/`+id+`"`) {
			t.Errorf("the second page misses run %s", id)
		}
	}
	if strings.Contains(body, `rel="next"`) {
		t.Error("the last page links to a next one")
	}
}

// Two runs compared: the flipped verdicts come first, pass→fail before
// fail→pass, with both outputs escaped and links to the case pages; then
// compare's paired comparison and diff's changes.
func TestComparePageFlipsFirst(t *testing.T) {
	t.Parallel()
	st, _ := runsStore(t)
	n := 30
	before := putRun(t, st, fixtureRun{spec: "qa", started: t0, raw: "before <b>bold</b>", pass: map[string][]bool{
		"alpha": verdicts(n, func(i int) bool { return i != 4 }), // case 5 fails before
	}})
	after := putRun(t, st, fixtureRun{spec: "qa", started: t0.Add(time.Hour), pass: map[string][]bool{
		"alpha": verdicts(n, func(i int) bool { return i != 6 && i != 7 }), // 7 and 8 fail after
	}})
	s := newTestServer(t, st, "")
	code, body := get(t, s, fmt.Sprintf("/compare?a=%s&b=%s", before.ID, after.ID))
	if code != http.StatusOK {
		t.Fatalf("compare: %d\n%s", code, body)
	}
	flips, cmp, changes := strings.Index(body, `id="flips"`), strings.Index(body, `id="comparison"`), strings.Index(body, `id="changes"`)
	if flips < 0 || cmp < flips || changes < cmp {
		t.Fatalf("sections out of order: flips %d, comparison %d, changes %d", flips, cmp, changes)
	}
	sec := body[flips:cmp]
	if !strings.Contains(sec, "2 pass→fail") || !strings.Contains(sec, "1 fail→pass") {
		t.Errorf("the flip counts are wrong:\n%s", sec)
	}
	c7, c8, c5 := strings.Index(sec, `/cases/7"`), strings.Index(sec, `/cases/8"`), strings.Index(sec, `/cases/5"`)
	if c7 < 0 || c8 < c7 || c5 < c8 {
		t.Errorf("flips not listed pass→fail first (7 %d, 8 %d, 5 %d)", c7, c8, c5)
	}
	if !strings.Contains(sec, `href="/runs/`+after.ID+`/cases/7"`) {
		t.Error("a flip does not link to the after run's case page")
	}
	if !strings.Contains(sec, "before &lt;b&gt;bold&lt;/b&gt;") || !strings.Contains(sec, `&lt;script&gt;alert(1)&lt;/script&gt;`) {
		t.Error("the outputs are not shown escaped")
	}
	if strings.Contains(body, "\u202e") || strings.Contains(body, "\x1b") {
		t.Error("a bidi override or an escape character reached the page")
	}
	if !strings.Contains(body[cmp:changes], "Δ = after − before") || !strings.Contains(body[cmp:changes], "alpha") {
		t.Errorf("the paired comparison is missing:\n%s", body[cmp:changes])
	}
	if !strings.Contains(body[changes:], "dataset_hash") {
		t.Error("what changed is missing")
	}
	// Without two runs: a form listing them.
	code, body = get(t, s, "/compare?b="+after.ID)
	if code != http.StatusOK || !strings.Contains(body, `<option value="`+after.ID+`" selected>`) {
		t.Errorf("the compare form does not preselect b: %d", code)
	}
}

// gatedStore holds every read of results until its gate opens: a report
// that takes as long as the test likes to compute.
type gatedStore struct {
	store.Store
	gate chan struct{}
}

func (g gatedStore) Results(ctx context.Context, runID string, fn func(record.Result) error) error {
	select {
	case <-g.gate:
	case <-ctx.Done():
		return ctx.Err()
	}
	return g.Store.Results(ctx, runID, fn)
}

// A run's page answers before its report is computed: the status, the
// page's head, the run's links and the notice arrive while the analysis
// is still reading, and the report follows in the same response.
func TestRunPageStreamsBeforeTheReport(t *testing.T) {
	t.Parallel()
	st, _ := runsStore(t)
	run := putRun(t, st, fixtureRun{spec: "qa", started: t0, pass: map[string][]bool{"alpha": verdicts(10, func(i int) bool { return i%2 == 0 })}})
	gate := make(chan struct{})
	s := newTestServer(t, gatedStore{st, gate}, "")
	srv := httptest.NewServer(s)
	defer srv.Close()
	defer func() {
		select {
		case <-gate:
		default:
			close(gate)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/runs/"+run.ID, nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("no answer while the report computes: %v", err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("status %d", res.StatusCode)
	}
	var got []byte
	buf := make([]byte, 4096)
	for !bytes.Contains(got, []byte(`id="computing"`)) {
		n, err := res.Body.Read(buf)
		got = append(got, buf[:n]...)
		if err != nil {
			t.Fatalf("the page ended before its notice (%v):\n%s", err, got)
		}
	}
	if !bytes.Contains(got, []byte(`href="/runs/`+run.ID+`/cases"`)) || bytes.Contains(got, []byte(`class="report"`)) {
		t.Errorf("before the report: want the run's links and no report yet:\n%s", got)
	}
	close(gate)
	rest, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(rest, []byte(`<div class="report">`)) || !bytes.HasSuffix(rest, []byte("</html>\n")) {
		t.Errorf("the report did not follow:\n%s", rest)
	}
}

// A HEAD of a run's page answers without computing the report.
func TestRunPageHeadComputesNothing(t *testing.T) {
	t.Parallel()
	st, _ := runsStore(t)
	run := putRun(t, st, fixtureRun{spec: "qa", started: t0, pass: map[string][]bool{"alpha": {true, false}}})
	gate := make(chan struct{}) // never opened: a computed report would wait forever
	s := newTestServer(t, gatedStore{st, gate}, "")
	done := make(chan int, 1)
	go func() {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest(http.MethodHead, "/runs/"+run.ID, nil))
		done <- rec.Code
	}()
	select {
	case code := <-done:
		if code != http.StatusOK {
			t.Errorf("HEAD: %d", code)
		}
	case <-time.After(5 * time.Second):
		close(gate)
		t.Fatal("HEAD waited for the report")
	}
}
