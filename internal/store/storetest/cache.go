package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store"
)

// testCacheStatsAndClear: entries are counted per target with their bytes
// and age, entries stored without a target count under "", and clearing one
// target's entries leaves the others.
func testCacheStatsAndClear(t *testing.T, s store.Store) {
	ctx := context.Background()
	if st, err := s.CacheStats(ctx, "", false); err != nil || len(st) != 0 {
		t.Fatalf("CacheStats of an empty cache = %+v, %v; want none", st, err)
	}
	// The store stamps entries with the clock it was given (the suite's).
	before := clockStart()
	put := func(key, target, resp string) {
		t.Helper()
		if err := s.CachePut(ctx, key, target, []byte(resp)); err != nil {
			t.Fatalf("CachePut(%s): %v", key, err)
		}
	}
	put("a1", "grader", "12345")
	put("a2", "grader", "1234567890")
	put("b1", "cand", "xyz")
	put("old", "", "legacy")
	// Replacing an entry keeps one entry, with the new reply and target.
	put("b1", "cand", "wxyz")
	after := clockStart().Add(time.Hour)

	all, err := s.CacheStats(ctx, "", false)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		target         string
		entries, bytes int64
	}{{"", 1, 6}, {"cand", 1, 4}, {"grader", 2, 15}}
	if len(all) != len(want) {
		t.Fatalf("CacheStats = %+v; want %d targets", all, len(want))
	}
	for i, w := range want {
		g := all[i]
		if g.Target != w.target || g.Entries != w.entries || g.Bytes != w.bytes {
			t.Errorf("CacheStats[%d] = %s %d entries %d bytes; want %s %d entries %d bytes", i, g.Target, g.Entries, g.Bytes, w.target, w.entries, w.bytes)
		}
		if g.Oldest.Before(before) || g.Newest.After(after) || g.Newest.Before(g.Oldest) {
			t.Errorf("CacheStats[%d] %s: oldest %v, newest %v; want both between %v and %v", i, g.Target, g.Oldest, g.Newest, before, after)
		}
	}
	one, err := s.CacheStats(ctx, "grader", true)
	if err != nil || len(one) != 1 || one[0].Target != "grader" || one[0].Entries != 2 {
		t.Errorf("CacheStats(grader) = %+v, %v; want grader's 2 entries alone", one, err)
	}
	if none, err := s.CacheStats(ctx, "nobody", true); err != nil || len(none) != 0 {
		t.Errorf("CacheStats(nobody) = %+v, %v; want none", none, err)
	}

	if n, err := s.CacheClear(ctx, "grader", true); err != nil || n != 2 {
		t.Errorf("CacheClear(grader) = %d, %v; want 2", n, err)
	}
	if _, ok, _ := s.CacheGet(ctx, "a1"); ok {
		t.Error("a cleared entry is still served")
	}
	if _, ok, _ := s.CacheGet(ctx, "b1"); !ok {
		t.Error("clearing grader removed cand's entry")
	}
	if n, err := s.CacheClear(ctx, "", true); err != nil || n != 1 {
		t.Errorf("CacheClear of the entries without a target = %d, %v; want 1", n, err)
	}
	if n, err := s.CacheClear(ctx, "", false); err != nil || n != 1 {
		t.Errorf("CacheClear(all) = %d, %v; want the 1 left", n, err)
	}
	if st, err := s.CacheStats(ctx, "", false); err != nil || len(st) != 0 {
		t.Errorf("CacheStats after clearing = %+v, %v; want none", st, err)
	}
}

// testCachedCostSaved: a reply served from the cache is stored with cost 0
// and its avoided cost as saved, for results and judge scores alike, and
// both read back as written.
func testCachedCostSaved(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustCreate(t, s, newRun("r-saved", t0()))
	hit := result("r-saved", "c1", "gpt-small", 1)
	hit.FromCache, hit.CostUSD, hit.SavedUSD = true, 0, 0.00042
	paid := result("r-saved", "c2", "gpt-small", 1)
	sc := score(hit, 1, "quality", true)
	sc.JudgeCost, sc.JudgeSaved = 0.25, 0.125
	if err := s.PutResults(ctx, []record.Result{hit, paid}, []record.Score{sc}); err != nil {
		t.Fatal(err)
	}
	got := map[string]record.Result{}
	if err := s.Results(ctx, "r-saved", func(r record.Result) error { got[r.CaseID] = r; return nil }); err != nil {
		t.Fatal(err)
	}
	if r := got["c1"]; !r.FromCache || r.CostUSD != 0 || r.SavedUSD != 0.00042 || r.Price() != 0.00042 {
		t.Errorf("cached result: from_cache %v cost %v saved %v; want true, 0, 0.00042", r.FromCache, r.CostUSD, r.SavedUSD)
	}
	if r := got["c2"]; r.CostUSD != 0.00042 || r.SavedUSD != 0 {
		t.Errorf("paid result: cost %v saved %v; want 0.00042, 0", r.CostUSD, r.SavedUSD)
	}
	one, err := s.Result(ctx, "r-saved", hit.Key())
	if err != nil || one.SavedUSD != 0.00042 {
		t.Errorf("Result(c1) saved = %v, %v; want 0.00042", one, err)
	}
	var scores []record.Score
	if err := s.Scores(ctx, "r-saved", 1, func(x record.Score) error { scores = append(scores, x); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(scores) != 1 || scores[0].JudgeCost != 0.25 || scores[0].JudgeSaved != 0.125 {
		t.Errorf("scores = %+v; want judge cost 0.25 and saved 0.125", scores)
	}
}
