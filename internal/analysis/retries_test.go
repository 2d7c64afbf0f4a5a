package analysis

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store/sqlite"
)

// Calls that failed on rate limits after every retry are the harness's
// problem: the report counts the attempts and warns per target, naming
// the fix and how to call them again; a target without them gets no
// warning.
func TestRateLimitWarning(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "assay.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	run := &record.Run{ID: "r1", Spec: "s", SpecPath: "evals/assay.yaml", Targets: []string{"fast", "calm"}, Cases: 10, Epochs: 1,
		Status: record.StatusComplete, Started: time.Now()}
	if err := st.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	var cases []record.Case
	var results []record.Result
	var scores []record.Score
	for c := range 10 {
		id := fmt.Sprintf("c%d", c)
		cases = append(cases, record.Case{RunID: "r1", ID: id, Line: c + 1})
		for _, tg := range run.Targets {
			r := record.Result{RunID: "r1", CaseID: id, Target: tg, Epoch: 1, Raw: "x", Attempts: 1}
			s := record.Score{RunID: "r1", Scoring: 1, CaseID: id, Target: tg, Epoch: 1, Scorer: "ok", Primary: true, Pass: true, Value: 1, Shape: "pass"}
			if tg == "fast" && c < 3 {
				r.Raw, r.ErrorKind, r.Attempts = "", "rate_limited", 7
				s.Pass, s.Value, s.Shape, s.Kind = false, 0, "loud", "rate_limited"
			}
			if tg == "calm" && c == 0 {
				r.Retries, r.Attempts = 1, 2 // failed once, retried by --retry-errors
			}
			results = append(results, r)
			scores = append(scores, s)
		}
	}
	if err := st.PutCases(ctx, cases); err != nil {
		t.Fatal(err)
	}
	if err := st.PutResults(ctx, results, scores); err != nil {
		t.Fatal(err)
	}
	rep, err := Analyze(ctx, st, run, Options{})
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]Target{}
	for _, tg := range rep.Targets {
		by[tg.Name] = tg
	}
	if f := by["fast"]; f.Attempts != 3*7+7 || f.RateLimited != 3 || f.Retried != 0 {
		t.Errorf("fast: attempts %d, rate limited %d, retried %d; want 28, 3, 0", f.Attempts, f.RateLimited, f.Retried)
	}
	if c := by["calm"]; c.Attempts != 11 || c.RateLimited != 0 || c.Retried != 1 {
		t.Errorf("calm: attempts %d, rate limited %d, retried %d; want 11, 0, 1", c.Attempts, c.RateLimited, c.Retried)
	}
	var warned []string
	for _, w := range rep.Warnings {
		if strings.Contains(w, "rate limits") {
			warned = append(warned, w)
		}
	}
	if len(warned) != 1 || !strings.HasPrefix(warned[0], "3 calls to fast failed after exhausting retries on rate limits: raise limits.rpm or lower concurrency") ||
		!strings.Contains(warned[0], "not the model's failure") || !strings.Contains(warned[0], "--resume r1 --retry-errors") {
		t.Errorf("rate-limit warnings %q; want one, for fast, with the fix and the retry command", warned)
	}
}
