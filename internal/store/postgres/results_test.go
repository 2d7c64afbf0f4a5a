package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store"
)

// Workers on several machines may store the same unit (a job retried after
// its worker was killed mid-commit): every PutResults succeeds, each result
// is stored once, and it keeps the scores of the call that stored it, never
// a mix of two writers' scores.
func TestConcurrentPutResultsOfTheSameKeys(t *testing.T) {
	ctx := context.Background()
	d := openTemp(t)
	if err := d.CreateRun(ctx, &record.Run{ID: "r", Status: record.StatusRunning, Started: time.Now()}); err != nil {
		t.Fatal(err)
	}
	const writers, cases, per = 6, 300, 50
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Each writer goes through the cases from its own starting point.
			for b := 0; b < cases; b += per {
				var rs []record.Result
				var ss []record.Score
				for i := b; i < b+per; i++ {
					c := (i + w*cases/writers) % cases
					r := record.Result{RunID: "r", CaseID: fmt.Sprintf("case-%04d", c), Target: "t", Epoch: 1, Raw: fmt.Sprintf("writer %d", w), Attempts: 1}
					rs = append(rs, r)
					for _, sc := range []string{"exact", "length"} {
						ss = append(ss, record.Score{RunID: "r", Scoring: 1, CaseID: r.CaseID, Target: "t", Epoch: 1, Scorer: sc, Pass: true, Value: 1, Shape: "pass", Reason: r.Raw})
					}
				}
				if err := d.PutResults(ctx, rs, ss); err != nil {
					errs <- fmt.Errorf("writer %d: %w", w, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	raw := map[string]string{}
	if err := d.Results(ctx, "r", func(r record.Result) error {
		if _, dup := raw[r.CaseID]; dup {
			t.Errorf("result %s stored twice", r.CaseID)
		}
		raw[r.CaseID] = r.Raw
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(raw) != cases {
		t.Errorf("%d results stored, want %d", len(raw), cases)
	}
	n := map[string]int{}
	if err := d.Scores(ctx, "r", 1, func(s record.Score) error {
		n[s.CaseID+"/"+s.Scorer]++
		if s.Reason != raw[s.CaseID] {
			t.Errorf("score %s/%s came from %q, but the stored result from %q", s.CaseID, s.Scorer, s.Reason, raw[s.CaseID])
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(n) != 2*cases {
		t.Errorf("%d scores stored, want %d", len(n), 2*cases)
	}
	for k, c := range n {
		if c != 1 {
			t.Errorf("score %s stored %d times", k, c)
		}
	}
}

// One score given twice in a call: PutScores keeps the first (as it keeps
// a stored one), ReplaceScores the last (as it overwrites a stored one).
func TestScoreGivenTwiceInACall(t *testing.T) {
	ctx := context.Background()
	d := openTemp(t)
	if err := d.CreateRun(ctx, &record.Run{ID: "r", Status: record.StatusRunning, Started: time.Now()}); err != nil {
		t.Fatal(err)
	}
	r := record.Result{RunID: "r", CaseID: "a", Target: "t", Epoch: 1}
	if err := d.PutResults(ctx, []record.Result{r}, nil); err != nil {
		t.Fatal(err)
	}
	verdict := func(scoring int, reason string) record.Score {
		return record.Score{RunID: "r", Scoring: scoring, CaseID: "a", Target: "t", Epoch: 1, Scorer: "exact", Shape: "pass", Reason: reason}
	}
	reasons := func(scoring int) []string {
		var out []string
		if err := d.Scores(ctx, "r", scoring, func(s record.Score) error { out = append(out, s.Reason); return nil }); err != nil {
			t.Fatal(err)
		}
		return out
	}
	if err := d.PutScores(ctx, []record.Score{verdict(2, "first"), verdict(2, "second")}); err != nil {
		t.Fatal(err)
	}
	if got := reasons(2); len(got) != 1 || got[0] != "first" {
		t.Errorf("PutScores with one key twice stored %q, want [first]", got)
	}
	if err := d.ReplaceScores(ctx, []record.Score{verdict(3, "first"), verdict(3, "second"), verdict(2, "new")}); err != nil {
		t.Fatal(err)
	}
	if got := reasons(3); len(got) != 1 || got[0] != "second" {
		t.Errorf("ReplaceScores with one key twice stored %q, want [second]", got)
	}
	if got := reasons(2); len(got) != 1 || got[0] != "new" {
		t.Errorf("ReplaceScores left scoring 2 at %q, want [new]", got)
	}
}

// A run ID typed by a user that PostgreSQL's TEXT cannot hold (invalid
// UTF-8, a NUL byte) names no run, as in the SQLite store: not found, not
// a query error.
func TestUnstorableRunIDIsNotFound(t *testing.T) {
	ctx := context.Background()
	d := openTemp(t)
	if err := d.CreateRun(ctx, &record.Run{ID: "abc", Status: record.StatusRunning, Started: time.Now()}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"ab\xff", "a\x00"} {
		if _, err := d.GetRun(ctx, id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("GetRun(%q): %v, want ErrNotFound", id, err)
		}
		if _, err := d.DeleteRun(ctx, id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("DeleteRun(%q): %v, want ErrNotFound", id, err)
		}
	}
}

// A run stored without a start time sorts as SQLite sorts NULL, below
// every time: last in ListRuns (newest first), never "latest" while a
// started run exists, first in ExperimentRuns (oldest first).
func TestRunWithoutStartSortsAsSQLite(t *testing.T) {
	ctx := context.Background()
	d := openTemp(t)
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, r := range []*record.Run{
		{ID: "unstarted", Status: record.StatusRunning, Experiment: "x"},
		{ID: "early", Status: record.StatusRunning, Experiment: "x", Started: t0},
		{ID: "late", Status: record.StatusRunning, Experiment: "x", Started: t0.Add(time.Hour)},
	} {
		if err := d.CreateRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	ids := func(runs []record.Run) string {
		var out []string
		for _, r := range runs {
			out = append(out, r.ID)
		}
		return fmt.Sprint(out)
	}
	if runs, err := d.ListRuns(ctx, 0); err != nil || ids(runs) != "[late early unstarted]" {
		t.Errorf("ListRuns = %s, %v; want [late early unstarted]", ids(runs), err)
	}
	if r, err := d.GetRun(ctx, "latest"); err != nil || r.ID != "late" {
		t.Errorf("latest = %v, %v; want late", r, err)
	}
	if runs, err := d.ExperimentRuns(ctx, "x"); err != nil || ids(runs) != "[unstarted early late]" {
		t.Errorf("ExperimentRuns = %s, %v; want [unstarted early late]", ids(runs), err)
	}
}
