package storetest

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store"
)

// `assay runs rm`: a deleted run leaves nothing behind — no case, result,
// score, scoring or lease — while other runs and the response cache are
// untouched; an unknown ID deletes nothing.
func testDeleteRun(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustCreate(t, s, newRun("gone", t0()), newRun("kept", t0().Add(time.Second)))
	for _, run := range []string{"gone", "kept"} {
		if err := s.PutCases(ctx, []record.Case{{RunID: run, ID: "case-0000", Line: 1}, {RunID: run, ID: "case-0001", Line: 2}}); err != nil {
			t.Fatal(err)
		}
		rs, ss := batch(run, 0, 2, []string{"a", "b"}, 1) // 4 results, 8 scores of scoring 1
		mustPut(t, s, rs, ss)
		n, err := s.ReserveScoring(ctx, run)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.PutScores(ctx, []record.Score{score(rs[0], n, "exact", true)}); err != nil {
			t.Fatal(err)
		}
		if err := s.CompleteScoring(ctx, run, n); err != nil {
			t.Fatal(err)
		}
	}
	now := t0()
	if err := s.AcquireLease(ctx, store.Lease{RunID: "gone", Holder: "h", PID: 1, Host: "x", Acquired: now, Heartbeat: now}, now.Add(-time.Minute), false); err != nil {
		t.Fatal(err)
	}
	if err := s.CachePut(ctx, "cache-key", "", []byte(`{"text":"kept"}`)); err != nil {
		t.Fatal(err)
	}

	if _, err := s.DeleteRun(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("DeleteRun of an unknown run: %v; want ErrNotFound", err)
	}
	if _, err := s.DeleteRun(ctx, "gon"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("DeleteRun of an ID prefix: %v; want ErrNotFound (deletion takes exact IDs)", err)
	}
	if _, err := s.GetRun(ctx, "gone"); err != nil {
		t.Fatalf("a failed DeleteRun deleted the run: %v", err)
	}

	del, err := s.DeleteRun(ctx, "gone")
	if err != nil {
		t.Fatalf("DeleteRun: %v", err)
	}
	want := store.Deleted{Cases: 2, Results: 4, Scores: 9, Scorings: 2, Lease: true}
	if del != want {
		t.Errorf("DeleteRun counted %+v; want %+v", del, want)
	}
	if _, err := s.GetRun(ctx, "gone"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetRun after DeleteRun: %v; want ErrNotFound", err)
	}
	if got := allCases(t, s, "gone"); len(got) != 0 {
		t.Errorf("%d cases left", len(got))
	}
	if got := allResults(t, s, "gone"); len(got) != 0 {
		t.Errorf("%d results left", len(got))
	}
	for _, n := range []int{1, 2} {
		if got := allScores(t, s, "gone", n); len(got) != 0 {
			t.Errorf("%d scores of scoring %d left", len(got), n)
		}
	}
	if n, err := s.LatestScoring(ctx, "gone"); err != nil || n != 0 {
		t.Errorf("LatestScoring after DeleteRun = %d, %v; want 0", n, err)
	}
	if l, err := s.GetLease(ctx, "gone"); err != nil || l != nil {
		t.Errorf("lease after DeleteRun = %+v, %v; want none", l, err)
	}
	if runs, err := s.ListRuns(ctx, 0); err != nil || len(runs) != 1 || runs[0].ID != "kept" {
		t.Errorf("ListRuns after DeleteRun = %v, %v; want only kept", runs, err)
	}
	// The other run and the cache are as they were.
	if got := allResults(t, s, "kept"); len(got) != 4 {
		t.Errorf("the other run has %d results, want 4", len(got))
	}
	if got := allScores(t, s, "kept", 2); len(got) != 1 {
		t.Errorf("the other run's scoring 2 has %d scores, want 1", len(got))
	}
	if b, ok, err := s.CacheGet(ctx, "cache-key"); err != nil || !ok || string(b) != `{"text":"kept"}` {
		t.Errorf("cache entry after DeleteRun = %q, %v, %v; want it kept", b, ok, err)
	}
	// The ID can be used again.
	mustCreate(t, s, newRun("gone", t0()))
	if got := allResults(t, s, "gone"); len(got) != 0 {
		t.Errorf("a new run with a deleted run's ID has %d results", len(got))
	}
}

// `run --retry-errors`: a replaced result takes the new call's fields, its
// scores in every scoring are replaced by the given scoring-1 scores, other
// results keep theirs, a result not yet stored is inserted, and a failing
// call changes nothing.
func testReplaceResults(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustCreate(t, s, newRun("r", t0()))
	rs, ss := batch("r", 0, 3, []string{"a"}, 1)
	rs[1].Raw, rs[1].ErrorKind, rs[1].Error, rs[1].Attempts, rs[1].Retries = "", "rate_limited", "rate_limited (HTTP 429)", 5, 0
	mustPut(t, s, rs, ss)
	n, err := s.ReserveScoring(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	var s2 []record.Score
	for _, r := range rs {
		s2 = append(s2, score(r, n, "exact", false))
	}
	if err := s.PutScores(ctx, s2); err != nil {
		t.Fatal(err)
	}
	if err := s.CompleteScoring(ctx, "r", n); err != nil {
		t.Fatal(err)
	}

	// A call with a score of a result it does not carry fails whole.
	retried := result("r", rs[1].CaseID, "a", 1)
	retried.Raw, retried.Attempts, retried.Retries = "A: 42", 2, 1
	bad := []record.Score{score(retried, 1, "exact", true), score(rs[0], 1, "exact", true)}
	if err := s.ReplaceResults(ctx, []record.Result{retried}, bad); err == nil {
		t.Errorf("ReplaceResults with a score of another result succeeded")
	}
	if err := s.ReplaceResults(ctx, []record.Result{retried, retried}, nil); err == nil {
		t.Errorf("ReplaceResults with one key twice succeeded")
	}
	if got, err := s.Result(ctx, "r", rs[1].Key()); err != nil || got.ErrorKind != "rate_limited" {
		t.Fatalf("after failed replacements the result is %+v, %v; want the old one", got, err)
	}

	fresh := result("r", "case-0009", "a", 1)
	newScores := []record.Score{score(retried, 1, "exact", true), score(retried, 1, "length", true), score(fresh, 1, "exact", true)}
	if err := s.ReplaceResults(ctx, []record.Result{retried, fresh}, newScores); err != nil {
		t.Fatalf("ReplaceResults: %v", err)
	}
	got, err := s.Result(ctx, "r", rs[1].Key())
	if err != nil {
		t.Fatal(err)
	}
	if d := diffFields(retried, *got); d != nil {
		t.Errorf("replaced result:\n%s", strings.Join(d, "\n"))
	}
	if _, err := s.Result(ctx, "r", fresh.Key()); err != nil {
		t.Errorf("a result not stored before was not inserted: %v", err)
	}
	if got := allResults(t, s, "r"); len(got) != 4 {
		t.Errorf("%d results after replacing one and adding one, want 4", len(got))
	}
	byKey := func(scs []record.Score) map[string][]string {
		m := map[string][]string{}
		for _, sc := range scs {
			k := scoreKey(sc)
			m[k[:strings.LastIndex(k, "/")]] = append(m[k[:strings.LastIndex(k, "/")]], sc.Scorer)
		}
		return m
	}
	s1 := allScores(t, s, "r", 1)
	for _, sc := range s1 {
		if sc.CaseID == rs[1].CaseID && !sc.Pass {
			t.Errorf("scoring 1 of the replaced result still holds the old verdict %+v", sc)
		}
	}
	if m := byKey(s1); len(s1) != 2*3+1 || !slices.Equal(m[keyOf(rs[0])], []string{"exact", "length"}) {
		t.Errorf("scoring 1 after replacing: %v", m)
	}
	later := allScores(t, s, "r", n)
	for _, sc := range later {
		if sc.CaseID == rs[1].CaseID {
			t.Errorf("scoring %d still judges the replaced output: %+v", n, sc)
		}
	}
	if len(later) != 2 {
		t.Errorf("scoring %d has %d scores after replacing one result, want the other 2", n, len(later))
	}
}

// ScorerNames lists the scorers of one scoring, sorted.
func testScorerNames(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustCreate(t, s, newRun("r", t0()))
	if names, err := s.ScorerNames(ctx, "r", 1); err != nil || len(names) != 0 {
		t.Errorf("ScorerNames of an unscored run = %v, %v; want none", names, err)
	}
	rs, ss := batch("r", 0, 2, []string{"a"}, 1)
	mustPut(t, s, rs, ss)
	if err := s.PutScores(ctx, []record.Score{score(rs[0], 2, "judge", true)}); err != nil {
		t.Fatal(err)
	}
	if names, err := s.ScorerNames(ctx, "r", 1); err != nil || !slices.Equal(names, []string{"exact", "length"}) {
		t.Errorf("ScorerNames(1) = %v, %v; want [exact length]", names, err)
	}
	if names, err := s.ScorerNames(ctx, "r", 2); err != nil || !slices.Equal(names, []string{"judge"}) {
		t.Errorf("ScorerNames(2) = %v, %v; want [judge]", names, err)
	}
}
