package serve_test

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/record"
)

// A promoted case (no expected value in the run or the file) gets the
// "set the expected value" form; its POST writes the value into that
// case's line only, and is refused without the CSRF token and once the
// value exists.
func TestSetExpectedValue(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fx := newLabelFixture(t)
	file := filepath.Join(fx.dir, "promoted.jsonl")
	content := "{\"id\":\"c01\",\"question\":\"q1\",\"answer\":\"a1\"}\n{\"id\":\"p1\",\"question\":\"q <b>2</b>\",\"label_reason\":\"not JSON\"}\n{\"id\":\"c02\",\"question\":\"q3\",\"answer\":\"a3\"}\n"
	if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	run := *fx.run
	run.ID = "run-promoted"
	run.Config = []byte(strings.Replace(string(fx.run.Config), `"path":"data.jsonl"`, `"path":"promoted.jsonl"`, 1))
	if string(run.Config) == string(fx.run.Config) {
		t.Fatal("the run's config is the fixture's")
	}
	if err := fx.st.CreateRun(ctx, &run); err != nil {
		t.Fatal(err)
	}
	cases := []record.Case{{RunID: run.ID, ID: "c01", Line: 1, Expected: []byte(`"a1"`)}, {RunID: run.ID, ID: "p1", Line: 2}}
	if err := fx.st.PutCases(ctx, cases); err != nil {
		t.Fatal(err)
	}
	var results []record.Result
	var scores []record.Score
	for _, c := range cases {
		results = append(results, record.Result{RunID: run.ID, CaseID: c.ID, Target: targetB, Epoch: 1, Raw: "out"})
		scores = append(scores, record.Score{RunID: run.ID, Scoring: 1, CaseID: c.ID, Target: targetB, Epoch: 1, Scorer: "exact", Primary: true, Shape: "silent"})
	}
	if err := fx.st.PutResults(ctx, results, scores); err != nil {
		t.Fatal(err)
	}
	c := newClient(t, fx.srv)
	if code, body := c.get("/runs/run-promoted/cases/c01"); code != http.StatusOK || strings.Contains(body, `id="set-expected"`) {
		t.Errorf("a case with an expected value: %d, form shown: %v", code, strings.Contains(body, `id="set-expected"`))
	}
	code, body := c.get("/runs/run-promoted/cases/p1")
	if code != http.StatusOK || !strings.Contains(body, `id="set-expected"`) || !strings.Contains(body, `action="/runs/run-promoted/cases/p1/expected"`) {
		t.Fatalf("the promoted case's page: %d, no form:\n%.3000s", code, body)
	}

	// Without the CSRF token: refused, nothing written.
	resp, err := c.hc.PostForm(c.base+"/runs/run-promoted/cases/p1/expected", url.Values{"expected": {"x"}})
	if err != nil {
		t.Fatal(err)
	}
	if code, _ := c.read(resp); code != http.StatusForbidden {
		t.Errorf("POST without CSRF: %d, want 403", code)
	}
	if b, _ := os.ReadFile(file); string(b) != content {
		t.Fatalf("a refused POST changed the file: %q", b)
	}

	code, body = c.post("/runs/run-promoted/cases/p1/expected", url.Values{"expected": {"{\"ok\": <true>}\r\n"}})
	if code != http.StatusOK || !strings.Contains(body, `id="expected-set"`) || !strings.Contains(body, "at line 2 of") || !strings.Contains(body, "run the spec again") {
		t.Fatalf("set: %d\n%.3000s", code, body)
	}
	if strings.Contains(body, "<b>2</b>") || strings.Contains(body, "<true>") {
		t.Errorf("the record is shown unescaped")
	}
	after, _ := os.ReadFile(file)
	lines := bytes.Split([]byte(content), []byte("\n"))
	lines[1] = []byte(`{"id":"p1","question":"q <b>2</b>","label_reason":"not JSON","answer":"{\"ok\": <true>}\n"}`)
	if want := bytes.Join(lines, []byte("\n")); !bytes.Equal(after, want) {
		t.Errorf("file:\n%s\nwant\n%s", after, want)
	}

	// A second value is refused: the first is never overwritten.
	code, body = c.post("/runs/run-promoted/cases/p1/expected", url.Values{"expected": {"y"}})
	want := file + `:2: case "p1" already has "answer" = "{\"ok\": \u003ctrue\u003e}\n": the case already has an expected value, never overwritten; edit the file to change it` + "\n"
	if code != http.StatusBadRequest || body != want {
		t.Errorf("second POST: %d %q\nwant 400 %q", code, body, want)
	}
	if b, _ := os.ReadFile(file); !bytes.Equal(b, after) {
		t.Errorf("the refused second POST changed the file")
	}
	// The page no longer offers the form: the file's line has the field.
	if _, body := c.get("/runs/run-promoted/cases/p1"); strings.Contains(body, `id="set-expected"`) {
		t.Errorf("the form is still shown once the line has a value")
	}
}
