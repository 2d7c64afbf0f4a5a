package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/spec"
	"github.com/assay-eval/assay/internal/store/sqlite"
)

// Hostile text in outputs and inputs: each would run or fetch something
// if a page wrote it as markup.
const (
	hostileScript = `<script>alert("out")</script>`
	hostileImg    = `"><img src=x onerror=alert(2)>`
	hostileInput  = `<script>alert("in")</script> "><img src=y onerror=alert(3)>`
)

// casesFixture is a run of 15 cases × 2 targets × 2 epochs (60 results,
// more than a page) over a dataset file and spec beside the store: tags
// lang (en/fr) on the recorded cases, a case ID with a slash, hostile
// outputs and inputs, a word ("zebra") in one case's input and another
// case's output, tool calls and a trajectory; scoring 1 and a completed
// rescore 2 with other verdicts, and a pending scoring 3.
type casesFixture struct {
	dir, data string
	st        *sqlite.DB
	run       *record.Run
	srv       *Server
	cases     []record.Case
	results   []record.Result
	// primary and judge verdicts by scoring and result key.
	primary, judge map[int]map[string]record.Score
}

const casesFixtureN = 15

func fixtureCaseID(i int) string {
	if i == 8 {
		return "k/08 <b>"
	}
	return fmt.Sprintf("k%02d", i)
}

func fixtureKey(caseID, target string, epoch int) string {
	return fmt.Sprintf("%s|%s|%d", caseID, target, epoch)
}

func newCasesFixture(t *testing.T) *casesFixture {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	fx := &casesFixture{dir: dir, data: filepath.Join(dir, "data.jsonl"),
		primary: map[int]map[string]record.Score{}, judge: map[int]map[string]record.Score{}}
	var data strings.Builder
	for i := range casesFixtureN {
		q := fmt.Sprintf("question %d", i)
		switch i {
		case 4:
			q = "Where does the ZEBRA live?"
		case 5:
			q = hostileInput
		}
		b, _ := json.Marshal(map[string]any{"id": fixtureCaseID(i), "q": q, "answer": i, "lang": []string{"en", "fr"}[i%2]})
		data.Write(b)
		data.WriteByte('\n')
	}
	if err := os.WriteFile(fx.data, []byte(data.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	sp := &spec.Spec{Name: "cases", Dir: dir, File: filepath.Join(dir, "assay.yaml"),
		Dataset: spec.Dataset{Path: "data.jsonl", Format: "jsonl", ID: "id", Expected: "answer"},
		Prompt:  spec.Prompt{System: "Answer briefly.", User: "Q: {{.q}}"},
		Scorers: []spec.Scorer{{Name: "exact", Type: "exact", Primary: true}, {Name: "judge", Type: "judge"}},
	}
	info, err := dataset.Scan(sp)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := json.Marshal(sp)
	if err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(ctx, filepath.Join(dir, "assay.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	fx.st = st
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	run := &record.Run{ID: "run-cases-1", Spec: sp.Name, SpecPath: sp.File, SpecHash: "sha256:x", DatasetHash: info.Hash, FileHash: info.FileHash,
		PromptHash: "sha256:p", Targets: []string{"m1", "m2<i>"}, Cases: casesFixtureN, Epochs: 2, Status: record.StatusComplete,
		Started: now, Ended: now.Add(time.Minute), Config: cfg}
	if err := st.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	fx.run = run
	var scores1 []record.Score
	for i := range casesFixtureN {
		id := fixtureCaseID(i)
		fx.cases = append(fx.cases, record.Case{RunID: run.ID, ID: id, Line: i + 1, Expected: []byte(fmt.Sprint(i)),
			Tags: map[string]string{"lang": []string{"en", "fr"}[i%2]}})
		for ti, target := range run.Targets {
			for e := 1; e <= 2; e++ {
				res := record.Result{RunID: run.ID, CaseID: id, Target: target, Epoch: e, Raw: fmt.Sprintf("answer %d from %s, epoch %d", i, target, e),
					Model: "model-x", LatencyMS: float64(100 + i), CostUSD: 0.001, Attempts: 1, InputTokens: 10, OutputTokens: 5, CreatedAt: now}
				switch {
				case i == 2 && ti == 0 && e == 1:
					res.Raw = "I saw a Zebra " + hostileScript
				case i == 2 && ti == 1 && e == 2:
					res.Raw = hostileImg
				case i == 6 && ti == 0 && e == 1:
					res.ToolCalls = []record.ToolCall{{ID: "c1", Name: "lookup", Arguments: `{"q":"` + `</pre><script>alert(5)</script>` + `"}`}}
					res.Turns = []record.Turn{{ToolCalls: res.ToolCalls, Results: []record.ToolResult{{CallID: "c1", Name: "lookup", Content: "tool result <img src=z onerror=alert(6)>"}}},
						{Text: "final answer"}}
				case i == 7 && ti == 1 && e == 1:
					res.Raw, res.ErrorKind, res.Error = "", "rate_limited", "HTTP 429 <b>slow down</b>"
				}
				fx.results = append(fx.results, res)
				k := fixtureKey(id, target, e)
				for scoring := 1; scoring <= 3; scoring++ {
					pass := (i+ti+e)%3 != 0
					if scoring == 2 {
						pass = (i+e)%2 == 0
					}
					if scoring == 3 {
						pass = false
					}
					p := record.Score{RunID: run.ID, Scoring: scoring, CaseID: id, Target: target, Epoch: e, Scorer: "exact", Primary: true, Pass: pass, Value: b2v(pass), Shape: "pass"}
					if !pass {
						p.Shape, p.Kind, p.Reason = "silent", "wrong", fmt.Sprintf("wanted %d <em>exactly</em>", i)
						if i%4 == 1 {
							p.Shape, p.Kind = "loud", "empty"
						}
					}
					j := record.Score{RunID: run.ID, Scoring: scoring, CaseID: id, Target: target, Epoch: e, Scorer: "judge", Pass: !pass, Value: b2v(!pass), Shape: "pass",
						Reason: "judge says " + hostileImg}
					if pass {
						j.Shape, j.Kind = "silent", "wrong"
					}
					if fx.primary[scoring] == nil {
						fx.primary[scoring], fx.judge[scoring] = map[string]record.Score{}, map[string]record.Score{}
					}
					fx.primary[scoring][k], fx.judge[scoring][k] = p, j
					if scoring == 1 {
						scores1 = append(scores1, p, j)
					}
				}
			}
		}
	}
	if err := st.PutCases(ctx, fx.cases); err != nil {
		t.Fatal(err)
	}
	if err := st.PutResults(ctx, fx.results, scores1); err != nil {
		t.Fatal(err)
	}
	for scoring := 2; scoring <= 3; scoring++ {
		if n, err := st.ReserveScoring(ctx, run.ID); err != nil || n != scoring {
			t.Fatalf("ReserveScoring: %d, %v", n, err)
		}
		var ss []record.Score
		for k, p := range fx.primary[scoring] {
			ss = append(ss, p, fx.judge[scoring][k])
		}
		if err := st.PutScores(ctx, ss); err != nil {
			t.Fatal(err)
		}
		if scoring == 2 {
			if err := st.CompleteScoring(ctx, run.ID, scoring); err != nil {
				t.Fatal(err)
			}
		}
	}
	fx.srv, err = New(Options{Addr: "127.0.0.1:0", Store: st, Labeler: "tester", Now: func() time.Time { return now.Add(time.Hour) }})
	if err != nil {
		t.Fatal(err)
	}
	return fx
}

func b2v(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// fetch serves a GET and returns the status and the body's raw bytes.
func fetch(t *testing.T, h http.Handler, target string) (int, string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, target, nil)
	req.Header.Set("Accept", "text/html")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	b, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, string(b)
}

var (
	rowRE  = regexp.MustCompile(`<tr><td><a class="mono" href="/runs/[^/"]+/cases/([^"]+)">[^<]*</a></td><td>([^<]*)</td><td class="num">(\d+)</td>`)
	nextRE = regexp.MustCompile(`<a rel="next" href="([^"]+)" id="next-page">`)
)

// explore follows an explorer's pages from path and returns every row's
// key (case|target|epoch) in order, and how many pages it read.
func explore(t *testing.T, h http.Handler, path string) ([]string, int) {
	t.Helper()
	var keys []string
	pages := 0
	for path != "" {
		pages++
		if pages > 100 {
			t.Fatalf("more than 100 pages from %s", path)
		}
		code, body := fetch(t, h, path)
		if code != http.StatusOK {
			t.Fatalf("GET %s: %d\n%s", path, code, body)
		}
		if strings.Contains(body, `id="failed"`) {
			t.Fatalf("GET %s: the page failed:\n%s", path, betweenText(body, `id="failed">`, "<"))
		}
		for _, m := range rowRE.FindAllStringSubmatch(body, -1) {
			id, err := url.PathUnescape(html.UnescapeString(m[1]))
			if err != nil {
				t.Fatal(err)
			}
			keys = append(keys, id+"|"+html.UnescapeString(m[2])+"|"+m[3])
		}
		path = ""
		if m := nextRE.FindStringSubmatch(body); m != nil {
			path = html.UnescapeString(m[1])
		}
	}
	return keys, pages
}

// want is the fixture's results (dataset order) for which keep holds, as
// keys; scoring 2 is the latest complete one.
func (fx *casesFixture) want(keep func(c record.Case, r record.Result, primary, judge record.Score) bool) []string {
	var out []string
	for _, r := range fx.results {
		c := fx.cases[slices.IndexFunc(fx.cases, func(c record.Case) bool { return c.ID == r.CaseID })]
		k := fixtureKey(r.CaseID, r.Target, r.Epoch)
		if keep(c, r, fx.primary[2][k], fx.judge[2][k]) {
			out = append(out, k)
		}
	}
	return out
}

func TestCasesExplorerFilters(t *testing.T) {
	t.Parallel()
	fx := newCasesFixture(t)
	base := "/runs/" + fx.run.ID + "/cases"
	type row = func(c record.Case, r record.Result, p, j record.Score) bool
	tests := []struct {
		query string
		keep  row
	}{
		{"", func(c record.Case, r record.Result, p, j record.Score) bool { return true }},
		{"target=m2%3Ci%3E", func(c record.Case, r record.Result, p, j record.Score) bool { return r.Target == "m2<i>" }},
		{"tag=lang%3Dfr", func(c record.Case, r record.Result, p, j record.Score) bool { return c.Tags["lang"] == "fr" }},
		{"verdict=fail", func(c record.Case, r record.Result, p, j record.Score) bool { return !p.Pass }},
		{"verdict=pass&target=m1", func(c record.Case, r record.Result, p, j record.Score) bool { return p.Pass && r.Target == "m1" }},
		{"scorer=judge&verdict=fail", func(c record.Case, r record.Result, p, j record.Score) bool { return !j.Pass }},
		{"shape=loud", func(c record.Case, r record.Result, p, j record.Score) bool { return p.Shape == "loud" }},
		{"kind=wrong", func(c record.Case, r record.Result, p, j record.Score) bool { return p.Kind == "wrong" }},
		{"shape=silent&tag=lang%3Den", func(c record.Case, r record.Result, p, j record.Score) bool {
			return p.Shape == "silent" && c.Tags["lang"] == "en"
		}},
		// In outputs (case k02, any case) and inputs (case k04, every
		// result of it).
		{"q=zebra", func(c record.Case, r record.Result, p, j record.Score) bool {
			return strings.Contains(strings.ToLower(r.Raw), "zebra") || c.ID == "k04"
		}},
		{"q=nothing+like+this", func(c record.Case, r record.Result, p, j record.Score) bool { return false }},
	}
	for _, tc := range tests {
		got, _ := explore(t, fx.srv, base+"?"+tc.query)
		want := fx.want(tc.keep)
		if !slices.Equal(got, want) {
			t.Errorf("?%s: rows\n%q\nwant\n%q", tc.query, got, want)
		}
	}
	// The cases whose inputs match are linked at once.
	_, body := fetch(t, fx.srv, base+"?q=zebra")
	if got := betweenText(body, `id="inputs-matched">`, "</p>"); got != `1 case of the dataset has the text in its inputs: <a class="mono" href="/runs/run-cases-1/cases/k04">k04</a>.` {
		t.Errorf("q=zebra: the inputs' matches read %q", got)
	}
	// Scoring 1 asked for: its verdicts, not the latest's.
	got, _ := explore(t, fx.srv, base+"?verdict=fail&scoring=1")
	var want []string
	for _, r := range fx.results {
		if k := fixtureKey(r.CaseID, r.Target, r.Epoch); !fx.primary[1][k].Pass {
			want = append(want, k)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("?verdict=fail&scoring=1: rows\n%q\nwant\n%q", got, want)
	}
	for _, bad := range []struct{ query, msg string }{
		{"verdict=maybe", `verdict="maybe": want pass or fail (or nothing)`},
		{"shape=round", `shape="round": want one of pass, loud, silent (or nothing)`},
		{"tag=lang", `tag="lang": want key=value`},
		{"scoring=9", `scoring="9": the run has scorings 1 to 2`},
		{"scoring=x", `scoring="x": the run has scorings 1 to 2`},
	} {
		if code, body := fetch(t, fx.srv, base+"?"+bad.query); code != http.StatusBadRequest || strings.TrimSpace(body) != bad.msg {
			t.Errorf("?%s: %d %q, want 400 %q", bad.query, code, strings.TrimSpace(body), bad.msg)
		}
	}
}

// Pages of 50 cover every result exactly once, in dataset order.
func TestCasesExplorerPages(t *testing.T) {
	t.Parallel()
	fx := newCasesFixture(t)
	got, pages := explore(t, fx.srv, "/runs/"+fx.run.ID+"/cases")
	want := fx.want(func(record.Case, record.Result, record.Score, record.Score) bool { return true })
	if !slices.Equal(got, want) {
		t.Fatalf("rows over every page:\n%q\nwant\n%q", got, want)
	}
	if pages != 2 {
		t.Errorf("%d results in %d pages, want 2 (50 a page)", len(want), pages)
	}
	// A filtered list pages too, with its filter kept.
	f := "/runs/" + fx.run.ID + "/cases?target=m1"
	got, _ = explore(t, fx.srv, f)
	want = fx.want(func(c record.Case, r record.Result, p, j record.Score) bool { return r.Target == "m1" })
	if !slices.Equal(got, want) {
		t.Fatalf("target m1 over every page:\n%q\nwant\n%q", got, want)
	}
	if code, body := fetch(t, fx.srv, "/runs/"+fx.run.ID+"/cases?after=not-a-cursor"); code != http.StatusOK || !strings.Contains(body, `id="failed"`) {
		t.Errorf("a bad cursor: %d, want the page to say it failed", code)
	}
}

// assertEscaped fails when body holds any hostile markup as markup.
func assertEscaped(t *testing.T, what, body string) {
	t.Helper()
	for _, raw := range []string{"<script>alert", "<img src=x", "<img src=y", "<img src=z", "<b>slow", "<em>exactly", "<b>\"", "onerror=alert(2)>"} {
		if strings.Contains(body, raw) {
			i := strings.Index(body, raw)
			t.Errorf("%s: hostile markup %q written as markup: …%s…", what, raw, body[max(0, i-80):min(len(body), i+80)])
		}
	}
}

func TestCasesPagesEscapeHostileText(t *testing.T) {
	t.Parallel()
	fx := newCasesFixture(t)
	for _, path := range []string{
		"/runs/" + fx.run.ID + "/cases",
		"/runs/" + fx.run.ID + "/cases?q=" + url.QueryEscape("<script>"),
		"/runs/" + fx.run.ID + "/cases/k02",
		"/runs/" + fx.run.ID + "/cases/k05",
		"/runs/" + fx.run.ID + "/cases/k06",
		"/runs/" + fx.run.ID + "/cases/k07",
	} {
		code, body := fetch(t, fx.srv, path)
		if code != http.StatusOK {
			t.Fatalf("GET %s: %d", path, code)
		}
		assertEscaped(t, path, body)
	}
	// The text is there, escaped.
	_, body := fetch(t, fx.srv, "/runs/"+fx.run.ID+"/cases/k02")
	for _, want := range []string{`I saw a Zebra &lt;script&gt;alert(&#34;out&#34;)&lt;/script&gt;`, `&#34;&gt;&lt;img src=x onerror=alert(2)&gt;`} {
		if !strings.Contains(body, want) {
			t.Errorf("case k02: no %q", want)
		}
	}
	_, body = fetch(t, fx.srv, "/runs/"+fx.run.ID+"/cases/k05")
	if !strings.Contains(body, `&lt;script&gt;alert(&#34;in&#34;)&lt;/script&gt;`) {
		t.Error("case k05: its hostile input is not shown escaped")
	}
	// The text search finds the hostile output and input as text.
	got, _ := explore(t, fx.srv, "/runs/"+fx.run.ID+"/cases?q="+url.QueryEscape(`<script>alert("`))
	want := fx.want(func(c record.Case, r record.Result, p, j record.Score) bool {
		return strings.Contains(r.Raw, `<script>alert("`) || c.ID == "k05"
	})
	if !slices.Equal(got, want) {
		t.Errorf("q=<script>: rows %q, want %q", got, want)
	}
}

// A case's page: the inputs, the prompt rendered from the run's spec,
// every target's and epoch's output with every scoring's verdicts
// (latest first, the pending one marked), tool calls and trajectory.
func TestCasePage(t *testing.T) {
	t.Parallel()
	fx := newCasesFixture(t)
	code, body := fetch(t, fx.srv, "/runs/"+fx.run.ID+"/cases/k06")
	if code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
	for _, want := range []string{
		`<pre class="message">Answer briefly.</pre>`, `<pre class="message">Q: question 6</pre>`, // the prompt
		`<h4 class="field-name">q</h4><pre class="field">question 6</pre>`, // an input field
		`<pre id="expected">6</pre>`,
		`lookup({&#34;q&#34;:&#34;&lt;/pre&gt;&lt;script&gt;alert(5)&lt;/script&gt;&#34;})`, // a tool call
		`tool result &lt;img src=z onerror=alert(6)&gt;`,                                    // a tool's result in the trajectory
		`Scoring 3 <span class="silent">(pending`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("case k06: no %q", want)
		}
	}
	// Every target × epoch, and in each the scorings 3, 2, 1 in that order.
	for _, target := range fx.run.Targets {
		for e := 1; e <= 2; e++ {
			head := fmt.Sprintf("<h3>%s · epoch %d", html.EscapeString(target), e)
			i := strings.Index(body, head)
			if i < 0 {
				t.Fatalf("case k06: no output of %s epoch %d", target, e)
			}
			art := body[i:]
			art = art[:strings.Index(art, "</article>")]
			i3, i2, i1 := strings.Index(art, "Scoring 3"), strings.Index(art, "Scoring 2"), strings.Index(art, "Scoring 1")
			if i3 < 0 || i2 < i3 || i1 < i2 {
				t.Errorf("%s epoch %d: scorings at %d, %d, %d; want 3, 2, 1 in order", target, e, i3, i2, i1)
			}
			k := fixtureKey("k06", target, e)
			if p := fx.primary[2][k]; !p.Pass && !strings.Contains(art, "wanted 6 &lt;em&gt;exactly&lt;/em&gt;") {
				t.Errorf("%s epoch %d: the failing verdict's reason is missing", target, e)
			}
		}
	}
	// A case ID with a slash and markup has its own page.
	code, body = fetch(t, fx.srv, "/runs/"+fx.run.ID+"/cases/"+url.PathEscape(fixtureCaseID(8)))
	if code != http.StatusOK || !strings.Contains(body, "Q: question 8") {
		t.Errorf("case %q: %d, or its prompt is missing", fixtureCaseID(8), code)
	}
	// An error result shows its kind and message.
	_, body = fetch(t, fx.srv, "/runs/"+fx.run.ID+"/cases/k07")
	if !strings.Contains(body, "rate_limited: HTTP 429 &lt;b&gt;slow down&lt;/b&gt;") {
		t.Error("case k07: the failed call's error is not shown")
	}
}

func TestCasesNotFound(t *testing.T) {
	t.Parallel()
	fx := newCasesFixture(t)
	for _, path := range []string{"/runs/nope/cases", "/runs/nope/cases/k01", "/runs/" + fx.run.ID + "/cases/nope"} {
		if code, _ := fetch(t, fx.srv, path); code != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", path, code)
		}
	}
}

// A dataset edited since the run: the pages say so, the search covers
// outputs only, the case page shows the outputs without inputs.
func TestCasesDatasetChanged(t *testing.T) {
	t.Parallel()
	fx := newCasesFixture(t)
	base := "/runs/" + fx.run.ID + "/cases"
	// Index it first, so the change is seen through the cache too.
	if got, _ := explore(t, fx.srv, base+"?q=zebra"); len(got) != 5 {
		t.Fatalf("before the change, q=zebra: %d rows, want 5 (1 output, 4 of case k04's inputs)", len(got))
	}
	if err := os.WriteFile(fx.data, []byte(`{"id":"k00","q":"zebra everywhere","answer":1,"lang":"en"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, body := fetch(t, fx.srv, base+"?q=zebra")
	if code != http.StatusOK || !strings.Contains(body, `id="inputs-note"`) || !strings.Contains(body, "the dataset changed since the run") {
		t.Fatalf("after the change, q=zebra: %d, the page does not say the inputs cannot be read:\n%s", code, betweenText(body, `id="cases"`, "</table>"))
	}
	got, _ := explore(t, fx.srv, base+"?q=zebra")
	if want := []string{fixtureKey("k02", "m1", 1)}; !slices.Equal(got, want) {
		t.Errorf("after the change, q=zebra: %q, want the output match only %q", got, want)
	}
	code, body = fetch(t, fx.srv, base+"/k04")
	if code != http.StatusOK || !strings.Contains(body, "the dataset changed since the run") || !strings.Contains(body, "answer 4 from m1, epoch 1") {
		t.Errorf("case k04 after the change: %d; want the note and the outputs", code)
	}
	if strings.Contains(body, `class="message"`) {
		t.Error("case k04 after the change: a prompt rendered from another dataset's inputs")
	}
	// Gone altogether: the same.
	if err := os.Remove(fx.data); err != nil {
		t.Fatal(err)
	}
	code, body = fetch(t, fx.srv, base+"?q=zebra")
	if code != http.StatusOK || !strings.Contains(body, `id="inputs-note"`) {
		t.Errorf("dataset gone, q=zebra: %d, no note", code)
	}
}

// betweenText returns the text of s between the first from and the next to.
func betweenText(s, from, to string) string {
	_, rest, ok := strings.Cut(s, from)
	if !ok {
		return ""
	}
	in, _, _ := strings.Cut(rest, to)
	return in
}

// searchTextModel is the search text of a case's fields by another road:
// decoded, every value (nested ones in their order, keys left out)
// written one a line, lowercased.
func searchTextModel(t *testing.T, fields []byte) string {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(string(fields)))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(v)) {
				walk(v[k])
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		case string:
			b.WriteString(v + "\n")
		case nil:
			b.WriteString("null\n")
		default:
			fmt.Fprintf(&b, "%v\n", v)
		}
	}
	walk(v)
	return strings.ToLower(b.String())
}

func TestSearchText(t *testing.T) {
	t.Parallel()
	for _, fields := range []map[string]any{
		{"q": "Plain"},
		{"q": `<script>"quoted" \ back`, "n": json.Number("-1.5e3"), "ok": true, "none": nil},
		{"nested": map[string]any{"Key": "Value", "list": []any{"A", map[string]any{"deep": "ÜBER"}, json.Number("7"), []any{}}}, "z": "last"},
		{"empty": "", "obj": map[string]any{}, "arr": []any{"x,y", "}{][", ":"}},
		{"emoji": "😀 \u2028 \x00 ΣΑΣ"},
	} {
		b, err := json.Marshal(fields)
		if err != nil {
			t.Fatal(err)
		}
		got, want := string(appendSearchText([]byte("kept|"), b)), "kept|"+searchTextModel(t, b)
		if got != want {
			t.Errorf("search text of %s:\n%q\nwant\n%q", b, got, want)
		}
	}
}

func FuzzSearchText(f *testing.F) {
	for _, seed := range [][2]string{{"q", "Plain"}, {`"k"`, `"v"\`}, {"}", "{"}, {"ÄÖ", "ü\u2028"}, {"", "\x00\xff"}} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, k, v string) {
		b, err := json.Marshal(map[string]any{k: v, "n": []any{v, map[string]any{v: k}}})
		if err != nil {
			t.Skip()
		}
		if got, want := string(appendSearchText(nil, b)), searchTextModel(t, b); got != want {
			t.Errorf("search text of %s:\n%q\nwant\n%q", b, got, want)
		}
	})
}

// A search that matches little stops each page after its time and links
// "search on" from where it stopped: following the links finds every
// match once, in order. (24,000 results: more than one store call
// examines; the clock moves 2 s a read, so each page stops after one.)
func TestCasesSearchOnAfterTime(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("stores 24,000 results")
	}
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "assay.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	run := &record.Run{ID: "run-big", Spec: "big", Targets: []string{"a", "b", "c", "d"}, Epochs: 1, Cases: 6000, Status: record.StatusComplete,
		Started: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
	if err := st.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	var cases []record.Case
	var results []record.Result
	var want []string
	for i := range 6000 {
		id := fmt.Sprintf("c%05d", i)
		cases = append(cases, record.Case{RunID: run.ID, ID: id, Line: i + 1})
		for _, tg := range run.Targets {
			r := record.Result{RunID: run.ID, CaseID: id, Target: tg, Epoch: 1, Raw: "plain"}
			if i%2500 == 7 && tg == "c" {
				r.Raw = "a Needle"
				want = append(want, fixtureKey(id, tg, 1))
			}
			results = append(results, r)
		}
	}
	if err := st.PutCases(ctx, cases); err != nil {
		t.Fatal(err)
	}
	if err := st.PutResults(ctx, results, nil); err != nil {
		t.Fatal(err)
	}
	now := run.Started
	srv, err := New(Options{Addr: "127.0.0.1:0", Store: st, Now: func() time.Time { now = now.Add(2 * time.Second); return now }})
	if err != nil {
		t.Fatal(err)
	}
	got, pages := explore(t, srv, "/runs/run-big/cases?q=needle")
	if !slices.Equal(got, want) {
		t.Errorf("every page of q=needle: %q, want %q", got, want)
	}
	if pages < 2 {
		t.Errorf("%d pages: want the search to stop and go on", pages)
	}
	_, body := fetch(t, srv, "/runs/run-big/cases?q=nothing")
	if !strings.Contains(body, `id="stopped"`) || !strings.Contains(body, `search on →`) {
		t.Errorf("q=nothing over 24,000 results: the first page does not say it stopped and offer to search on")
	}
	// It says how far it got: the case where the store's cursor stands,
	// case cNNNNN being line NNNNN+1.
	stop := betweenText(body, `id="stopped">`, "</p>")
	m := regexp.MustCompile(`^Searched for a second \(up to case c(\d{5}), line ([\d,]+) of 6,000\): more results are left to search\.$`).FindStringSubmatch(stop)
	if m == nil {
		t.Fatalf("q=nothing: the stop reads %q", stop)
	}
	n, _ := strconv.Atoi(m[1])
	if ln, _ := strconv.Atoi(strings.ReplaceAll(m[2], ",", "")); ln != n+1 {
		t.Errorf("q=nothing: the stop reads %q: case c%05d is line %d", stop, n, n+1)
	}
}
