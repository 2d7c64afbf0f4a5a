package serve_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/serve"
	"github.com/assay-eval/assay/internal/spec"
	"github.com/assay-eval/assay/internal/store/sqlite"
)

// payloads are hostile text put in every field a labeling page could
// show: a script, an image whose error handler runs, a textarea closed
// early, a javascript: link, an image fetched from elsewhere, an ANSI
// escape, a template action and a huge line. Each sets window.__pwned
// (or fetches) if it ever runs.
var payloads = []string{
	`<script>window.__pwned=1</script>`,
	`<img src=x onerror="window.__pwned=2">`,
	`</textarea><script>window.__pwned=3</script><textarea>`,
	`<a href="javascript:window.__pwned=4" id="jslink">click me</a>`,
	`<img src="http://127.0.0.9:9/beacon.png">`,
	`"><svg onload=window.__pwned=5>`,
	"\x1b[31mred\x1b[0m {{.CSRF}} \u202Eevil",
	strings.Repeat("huge line ", 20000),
}

func payload(i int) string { return payloads[i%len(payloads)] }

// Markers the blind page must never carry: the targets' and the model's
// names, the judge's reasons and every scorer's name.
const (
	targetA     = "target-alpha-<b>bold</b>"
	targetB     = "target-beta"
	modelMarker = "model-gamma-secret"
	judgeMarker = "judge-reason-marker"
	exactMarker = "exact-reason-marker"
)

// labelFixture is a store with one run of 20 cases × 2 targets whose
// inputs, outputs, tool calls, trajectories, tags and reasons carry the
// payloads, the dataset and spec beside it, and a server over it.
type labelFixture struct {
	dir, db  string
	st       *sqlite.DB
	run      *record.Run
	srv      *serve.Server
	dataPath string
	// judge is the judge scorer's verdict by result.
	judge map[record.Key]bool
}

const fixtureCases = 20

func caseID(i int) string {
	if i == 3 {
		return `c03<img src=x onerror="window.__pwned=6">`
	}
	return fmt.Sprintf("c%02d", i)
}

func newLabelFixture(t *testing.T) *labelFixture {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	fx := &labelFixture{dir: dir, db: filepath.Join(dir, "assay.db"), dataPath: filepath.Join(dir, "data.jsonl"), judge: map[record.Key]bool{}}
	var data strings.Builder
	for i := range fixtureCases {
		row := map[string]any{"id": caseID(i), "question": fmt.Sprintf("question %d: %s", i, payload(i)), "answer": fmt.Sprintf("answer %d %s", i, payload(i+1)), "bucket": payload(i % 3)}
		b, _ := json.Marshal(row)
		data.Write(b)
		data.WriteByte('\n')
	}
	if err := os.WriteFile(fx.dataPath, []byte(data.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	sp := &spec.Spec{Name: "hostile", Dir: dir, File: filepath.Join(dir, "assay.yaml"),
		Dataset: spec.Dataset{Path: "data.jsonl", Format: "jsonl", ID: "id", Expected: "answer", Tags: []spec.Tag{{Key: "bucket", Expr: "bucket"}}},
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
	st, err := sqlite.Open(ctx, fx.db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	fx.st = st
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	run := &record.Run{ID: "run-hostile-1", Spec: sp.Name, SpecPath: sp.File, SpecHash: "sha256:x", DatasetHash: info.Hash, FileHash: info.FileHash,
		PromptHash: "sha256:p", Targets: []string{targetA, targetB}, Cases: fixtureCases, Epochs: 1, Status: record.StatusComplete,
		Started: now, Ended: now.Add(time.Minute), Config: cfg}
	if err := st.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	fx.run = run
	var cases []record.Case
	var results []record.Result
	var scores []record.Score
	for i := range fixtureCases {
		cases = append(cases, record.Case{RunID: run.ID, ID: caseID(i), Line: i + 1, Expected: []byte(`"x"`), Tags: map[string]string{"bucket": payload(i % 3)}})
		for ti, target := range run.Targets {
			res := record.Result{RunID: run.ID, CaseID: caseID(i), Target: target, Epoch: 1,
				Raw:       fmt.Sprintf("output %d/%d %s", i, ti, payload(i+ti)),
				Model:     modelMarker,
				ToolCalls: []record.ToolCall{{ID: "call-1", Name: toolName(i), Arguments: `{"q":` + mustQuote(payload(i+3)) + `}`}},
				Turns: []record.Turn{{Text: "turn text " + payload(i+4), Results: []record.ToolResult{{Name: "lookup", Content: "tool said " + payload(i+5)}}},
					{Text: fmt.Sprintf("output %d/%d %s", i, ti, payload(i+ti))}},
				LatencyMS: 10, CreatedAt: now}
			results = append(results, res)
			pass := (i+ti)%3 != 0
			fx.judge[res.Key()] = pass
			scores = append(scores,
				record.Score{RunID: run.ID, Scoring: 1, CaseID: res.CaseID, Target: target, Epoch: 1, Scorer: "exact", Primary: true, Pass: i%2 == 0, Value: 1, Shape: "pass", Reason: exactMarker},
				record.Score{RunID: run.ID, Scoring: 1, CaseID: res.CaseID, Target: target, Epoch: 1, Scorer: "judge", Pass: pass, Value: b2f(pass), Shape: shape(pass), Reason: judgeMarker + " " + payload(i)})
		}
	}
	if err := st.PutCases(ctx, cases); err != nil {
		t.Fatal(err)
	}
	if err := st.PutResults(ctx, results, scores); err != nil {
		t.Fatal(err)
	}
	fx.srv, err = serve.New(serve.Options{Addr: "127.0.0.1:0", Store: st, Labeler: "tester", Now: func() time.Time { return now.Add(time.Hour) }})
	if err != nil {
		t.Fatal(err)
	}
	return fx
}

// toolName is a tool call's name with the start of a payload in it.
func toolName(i int) string {
	p := payload(i + 2)
	return "lookup" + p[:min(20, len(p))]
}

func mustQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func shape(pass bool) string {
	if pass {
		return "pass"
	}
	return "silent"
}

// client is a browser-like client of a test server: cookies kept,
// redirects followed, the CSRF token read from the last page.
type client struct {
	t    *testing.T
	base string
	hc   *http.Client
	csrf string
}

func newClient(t *testing.T, h http.Handler) *client {
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	jar, _ := cookiejar.New(nil)
	return &client{t: t, base: ts.URL, hc: &http.Client{Jar: jar}}
}

var csrfField = regexp.MustCompile(`name="csrf" value="([0-9a-f]{32})"`)

// get fetches a page and returns its status and body.
func (c *client) get(path string) (int, string) {
	c.t.Helper()
	resp, err := c.hc.Get(c.base + path)
	if err != nil {
		c.t.Fatal(err)
	}
	return c.read(resp)
}

func (c *client) read(resp *http.Response) (int, string) {
	c.t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	if m := csrfField.FindSubmatch(b); m != nil {
		c.csrf = string(m[1])
	}
	return resp.StatusCode, string(b)
}

// post submits a form with the CSRF token and follows the redirect.
func (c *client) post(path string, form url.Values) (int, string) {
	c.t.Helper()
	if c.csrf == "" {
		c.t.Fatal("no CSRF token yet: get a page with a form first")
	}
	form.Set("csrf", c.csrf)
	resp, err := c.hc.PostForm(c.base+path, form)
	if err != nil {
		c.t.Fatal(err)
	}
	return c.read(resp)
}
