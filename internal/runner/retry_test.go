package runner

import (
	"context"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store/sqlite"
)

// --retry-errors: only the results given in Retry are called again; each
// replaces the stored failure (Retries one more) together with its
// scoring-1 score, and the results that were fine are neither called nor
// touched.
func TestRunRetryReplacesOnlyFailures(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "assay.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.CreateRun(ctx, &record.Run{ID: "r", Targets: []string{"t"}, Cases: 10, Epochs: 1, Status: record.StatusRunning}); err != nil {
		t.Fatal(err)
	}
	var limited atomic.Bool
	limited.Store(true)
	calls := map[string]*atomic.Int64{}
	for i := 1; i <= 10; i++ {
		calls[strconv.Itoa(i)] = &atomic.Int64{}
	}
	p := provider.Func(func(ctx context.Context, req *provider.Request) (*provider.Response, error) {
		calls[req.CaseID].Add(1)
		if limited.Load() && (req.CaseID == "3" || req.CaseID == "7") {
			return nil, &provider.Error{Kind: provider.KindRateLimited, Status: 429, Msg: "slow down"}
		}
		return &provider.Response{Text: "ok " + req.CaseID, Attempts: 1}, nil
	})
	score := func(_ context.Context, c *dataset.Case, r *record.Result) []record.Score {
		return []record.Score{{CaseID: r.CaseID, Target: r.Target, Epoch: r.Epoch, Scorer: "ok", Primary: true, Pass: r.ErrorKind == ""}}
	}
	o := Options{RunID: "r", Targets: []Target{target("t", p, 4)}, Cases: cases(10), Render: render, Score: score, Store: st}
	sum, err := Run(ctx, o)
	if err != nil || sum.Errors != 2 {
		t.Fatalf("first run: %+v, %v; want 2 errors", sum, err)
	}

	// The retry: what failed, as the CLI selects it.
	done, err := st.DoneKeys(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	retry := map[record.Key]int{}
	for _, id := range []string{"3", "7"} {
		k := record.Key{CaseID: id, Target: "t", Epoch: 1}
		delete(done, k)
		retry[k] = 0
	}
	limited.Store(false)
	o.Done, o.Retry = done, retry
	sum, err = Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Stored != 2 || sum.Retried != 2 || sum.RetriedErrors != 0 || sum.Skipped != 8 {
		t.Errorf("retry summary %+v; want 2 stored, 2 retried, none failing again, 8 skipped", sum)
	}
	for id, n := range calls {
		want := int64(1)
		if id == "3" || id == "7" {
			want = 2
		}
		if n.Load() != want {
			t.Errorf("case %s called %d times, want %d", id, n.Load(), want)
		}
	}
	passes := 0
	if err := st.Scores(ctx, "r", 1, func(s record.Score) error {
		if s.Pass {
			passes++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if passes != 10 {
		t.Errorf("scoring 1 has %d passes after the retry, want 10 (the failures' verdicts replaced)", passes)
	}
	n := 0
	if err := st.Results(ctx, "r", func(r record.Result) error {
		n++
		wantRetries := 0
		if r.CaseID == "3" || r.CaseID == "7" {
			wantRetries = 1
		}
		if r.ErrorKind != "" || r.Retries != wantRetries || r.Raw != "ok "+r.CaseID {
			t.Errorf("result %s: kind %q, retries %d, raw %q", r.CaseID, r.ErrorKind, r.Retries, r.Raw)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n != 10 {
		t.Errorf("%d results after the retry, want 10", n)
	}
}
