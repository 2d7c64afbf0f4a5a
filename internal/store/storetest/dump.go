package storetest

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store"
)

// DumpStore is a store that can be copied whole (store.Dump).
type DumpStore interface {
	store.Store
	store.Dump
}

// RunDump runs the conformance tests of store.Dump; open is as for Run.
func RunDump(t *testing.T, open func(t *testing.T, now func() time.Time) DumpStore) {
	t.Helper()
	for _, tc := range []struct {
		name string
		fn   func(*testing.T, DumpStore)
	}{
		{"Scorings", testDumpScorings},
		{"PutScoring", testDumpPutScoring},
		{"CacheEntries", testDumpCacheEntries},
		{"TwinSets", testDumpTwinSets},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, open(t, newClock().now))
		})
	}
}

// Scorings lists scoring 1 (scores, no row), a complete rescore, a pending
// one and a reserved one without scores, with status, hash and counts.
func testDumpScorings(t *testing.T, s DumpStore) {
	ctx := context.Background()
	mustCreate(t, s, newRun("r1", t0()))
	rs, ss := batch("r1", 0, 2, []string{"a"}, 1)
	mustPut(t, s, rs, ss)
	for n := range 3 {
		got, err := s.ReserveScoring(ctx, "r1")
		if err != nil || got != n+2 {
			t.Fatalf("ReserveScoring = %d, %v; want %d", got, err, n+2)
		}
	}
	if err := s.SetScoringScorersHash(ctx, "r1", 2, "h2"); err != nil {
		t.Fatal(err)
	}
	if err := s.PutScores(ctx, []record.Score{score(rs[0], 2, "exact", true), score(rs[1], 2, "exact", false), score(rs[0], 3, "exact", true)}); err != nil {
		t.Fatal(err)
	}
	if err := s.CompleteScoring(ctx, "r1", 2); err != nil {
		t.Fatal(err)
	}
	got, err := s.Scorings(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		if got[i].Recorded && (got[i].Created.IsZero() || got[i].Created.Location() != time.UTC) {
			t.Errorf("scoring %d: created %v; want the reservation's time, in UTC", got[i].Scoring, got[i].Created)
		}
		got[i].Created = time.Time{}
	}
	want := []store.Scoring{
		{Scoring: 1, Scores: 4},
		{Scoring: 2, Recorded: true, ScorersHash: "h2", Scores: 2},
		{Scoring: 3, Recorded: true, Pending: true, Scores: 1},
		{Scoring: 4, Recorded: true, Pending: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Scorings =\n%+v\nwant\n%+v", got, want)
	}
	if none, err := s.Scorings(ctx, "absent"); err != nil || len(none) != 0 {
		t.Errorf("Scorings of no run = %v, %v; want none", none, err)
	}
}

// PutScoring stores a row by number once, leaves one there as it is, is
// then seen by LatestScoring and ReserveScoring, and refuses a run that
// does not exist.
func testDumpPutScoring(t *testing.T, s DumpStore) {
	ctx := context.Background()
	mustCreate(t, s, newRun("r1", t0()))
	rs, ss := batch("r1", 0, 1, []string{"a"}, 1)
	mustPut(t, s, rs, ss)
	created := time.Date(2026, 5, 6, 7, 8, 9, 123456000, time.UTC)
	ok, err := s.PutScoring(ctx, "r1", store.Scoring{Scoring: 5, Pending: true, ScorersHash: "h5", Created: created})
	if err != nil || !ok {
		t.Fatalf("PutScoring(5) = %v, %v; want stored", ok, err)
	}
	ok, err = s.PutScoring(ctx, "r1", store.Scoring{Scoring: 5, ScorersHash: "other"})
	if err != nil || ok {
		t.Fatalf("PutScoring(5) again = %v, %v; want left as it was", ok, err)
	}
	if err := s.PutScores(ctx, []record.Score{score(rs[0], 5, "exact", true)}); err != nil {
		t.Fatal(err)
	}
	if n, err := s.LatestScoring(ctx, "r1"); err != nil || n != 1 {
		t.Errorf("LatestScoring with scoring 5 pending = %d, %v; want 1", n, err)
	}
	if h, err := s.ScoringScorersHash(ctx, "r1", 5); err != nil || h != "h5" {
		t.Errorf("ScoringScorersHash(5) = %q, %v; want h5", h, err)
	}
	if err := s.CompleteScoring(ctx, "r1", 5); err != nil {
		t.Fatal(err)
	}
	if n, err := s.LatestScoring(ctx, "r1"); err != nil || n != 5 {
		t.Errorf("LatestScoring = %d, %v; want 5", n, err)
	}
	if n, err := s.ReserveScoring(ctx, "r1"); err != nil || n != 6 {
		t.Errorf("ReserveScoring after scoring 5 = %d, %v; want 6", n, err)
	}
	got, err := s.Scorings(ctx, "r1")
	if err != nil || len(got) != 3 || !got[1].Created.Equal(created) || got[1].Pending {
		t.Errorf("Scorings = %+v, %v; want scoring 5 complete, created %v", got, err, created)
	}
	if _, err := s.PutScoring(ctx, "absent", store.Scoring{Scoring: 2}); err == nil {
		t.Error("PutScoring on a run that does not exist succeeded")
	}
	if _, err := s.PutScoring(ctx, "r1", store.Scoring{Scoring: 0}); err == nil {
		t.Error("PutScoring(0) succeeded; scorings are numbered from 1")
	}
}

// CacheEntries streams entries in key order with their targets, replies
// (byte for byte) and times; PutCacheEntries keeps those times and leaves
// a stored key as it is.
func testDumpCacheEntries(t *testing.T, s DumpStore) {
	ctx := context.Background()
	if err := s.CachePut(ctx, "b", "t1", []byte("stored \x00\xff")); err != nil {
		t.Fatal(err)
	}
	in := []store.CacheEntry{
		{Key: "a", Target: "t\xfe2", Response: []byte(`{"x":1}`), Created: time.Date(2020, 1, 2, 3, 4, 5, 6000, time.UTC)},
		{Key: "b", Target: "t9", Response: []byte("other"), Created: time.Date(2021, 1, 1, 0, 0, 0, 0, time.UTC)},
		{Key: "c", Target: "", Response: []byte{}, Created: time.Date(2019, 1, 1, 0, 0, 0, 0, time.UTC)},
	}
	n, err := s.PutCacheEntries(ctx, in)
	if err != nil || n != 2 {
		t.Fatalf("PutCacheEntries = %d, %v; want 2 new (b is stored)", n, err)
	}
	var got []store.CacheEntry
	if err := s.CacheEntries(ctx, func(e store.CacheEntry) error { got = append(got, e); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[1].Target != "t1" || string(got[1].Response) != "stored \x00\xff" {
		t.Fatalf("CacheEntries = %+v; want a, the stored b, c", got)
	}
	got[1] = in[1]
	if !reflect.DeepEqual(got, in) {
		t.Errorf("CacheEntries =\n%+v\nwant\n%+v", got, in)
	}
	if b, ok, err := s.CacheGet(ctx, "a"); err != nil || !ok || string(b) != `{"x":1}` {
		t.Errorf("CacheGet(a) = %q, %v, %v", b, ok, err)
	}
}

// TwinSets lists each set once, in byte order.
func testDumpTwinSets(t *testing.T, s DumpStore) {
	ctx := context.Background()
	if sets, err := s.TwinSets(ctx); err != nil || len(sets) != 0 {
		t.Fatalf("TwinSets of an empty store = %q, %v", sets, err)
	}
	if err := s.PutTwins(ctx, []record.Twin{{Set: "b", CaseID: "1"}, {Set: "B", CaseID: "1"}, {Set: "b", CaseID: "2"}, {Set: "a\xff", CaseID: "1"}}); err != nil {
		t.Fatal(err)
	}
	sets, err := s.TwinSets(ctx)
	if want := []string{"B", "a\xff", "b"}; err != nil || !reflect.DeepEqual(sets, want) {
		t.Errorf("TwinSets = %q, %v; want %q", sets, err, want)
	}
}
