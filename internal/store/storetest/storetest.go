// Package storetest is the conformance suite every store.Store passes: the
// behaviour the runner, resume, rescore and reports rely on. Implementations
// call Run from their own tests (the SQLite store always; a Postgres store
// when a DSN is set). It imports only internal/store and the standard
// library, never an implementation.
//
// Contract details the suite fixes, beyond the Store interface comments:
//   - Times round-trip to the microsecond (Postgres timestamptz precision), in
//     any location; the zero time round-trips as the zero time.
//   - Strings round-trip byte for byte, including text that is not valid
//     UTF-8 (an exec target may print anything); NUL bytes are not promised.
//   - A result's tool calls round-trip in order, nil when there are none;
//     their text is UTF-8, as the JSON every provider reads them from is.
//   - Results and scores stream in dataset order: by the case's line in the
//     run's cases, then case ID, target, epoch (and scorer); results of case
//     IDs without a stored case come last, by case ID.
//   - Every score given to PutResults belongs to a result of the same call;
//     scorings are numbered from 1.
//   - A streaming callback may call the store, including writes.
//   - A rescore reserves its scoring (ReserveScoring), writes it and
//     completes it; until then LatestScoring never returns it, and a scoring
//     never reserved (scoring 1, older stores) counts as complete.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store"
)

// Run runs the conformance suite. open returns a new, empty store for each
// subtest and arranges (with t.Cleanup) to close it. The subtests run in
// parallel (t.Parallel), so the stores open returns must not share data.
//
// open gets the clock the store must read the time from (the suite's: it
// starts at 2001-02-03 04:05:06 UTC and moves a millisecond each read), as assay passes
// its one clock to the store it opens.
func Run(t *testing.T, open func(t *testing.T, now func() time.Time) store.Store) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(*testing.T, store.Store)
	}{
		{"RunRoundTrip", testRunRoundTrip},
		{"CreateRunDuplicateID", testCreateRunDuplicateID},
		{"UpdateRun", testUpdateRun},
		{"ListRuns", testListRuns},
		{"Latest", testLatest},
		{"IDPrefix", testIDPrefix},
		{"Cases", testCases},
		{"PutResultsWithScores", testPutResultsWithScores},
		{"PutResultsAtomic", testPutResultsAtomic},
		{"ResultsNeverDuplicated", testResultsNeverDuplicated},
		{"ResultRoundTrip", testResultRoundTrip},
		{"ResultsOrder", testResultsOrder},
		{"DoneKeys", testDoneKeys},
		{"Scorings", testScorings},
		{"PendingScoringInvisible", testPendingScoringInvisible},
		{"ConcurrentReservations", testConcurrentReservations},
		{"ScoringScorersHash", testScoringScorersHash},
		{"ResultsWithoutCase", testResultsWithoutCase},
		{"Lease", testLease},
		{"LeaseRace", testLeaseRace},
		{"ExperimentRuns", testExperimentRuns},
		{"Twins", testTwins},
		{"Cache", testCache},
		{"CacheStatsAndClear", testCacheStatsAndClear},
		{"CachedCostSaved", testCachedCostSaved},
		{"WriteWhileStreaming", testWriteWhileStreaming},
		{"ConcurrentWritersAndReaders", testConcurrent},
		{"ContextCancelled", testContextCancelled},
		{"CallbackError", testCallbackError},
		{"DeleteRun", testDeleteRun},
		{"ReplaceResults", testReplaceResults},
		{"ScorerNames", testScorerNames},
		{"ReplaceScores", testReplaceScores},
		{"ToolCalls", testToolCalls},
		{"Turns", testTurns},
	}
	tests = append(tests, labelTests...)
	tests = append(tests, browseTests...)
	tests = append(tests, keyTests...)
	tests = append(tests, traceTests...)
	tests = append(tests, loadTests...)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, open(t, newClock().now))
		})
	}
}

// t0() is a fixed instant with sub-microsecond digits, in a non-UTC zone.
// clockStart is where the clock a store under test gets starts: far from
// the wall clock, so a store that reads time.Now instead is caught.
func clockStart() time.Time { return time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC) }

// clock is the suite's clock: clockStart, then a millisecond later at
// each read.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: clockStart()} }

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Millisecond)
	return c.t
}

func t0() time.Time {
	return time.Date(2026, 12, 2, 11, 35, 12, 123_456_789, time.FixedZone("CET", 3600))
}

func newRun(id string, started time.Time) *record.Run {
	return &record.Run{
		ID:           id,
		Spec:         "triage",
		SpecPath:     "evals/triage/assay.yaml",
		SpecHash:     "sha256:5pec",
		DatasetHash:  "sha256:da7a",
		FileHash:     "sha256:f11e",
		PromptHash:   "sha256:9r0m",
		GitCommit:    "0123abcd",
		ScorersHash:  "sha256:5c0e",
		AssayVersion: "v0.3.0",
		Experiment:   "triage-prompts",
		Targets:      []string{"gpt-small", "claude-mid"},
		Cases:        3,
		Epochs:       2,
		Status:       record.StatusRunning,
		Started:      started,
		Config:       []byte(`{"name":"triage","targets":[{"name":"gpt-small"}]}`),
		Host:         `{"cores":2}`,
	}
}

func mustCreate(t *testing.T, s store.Store, runs ...*record.Run) {
	t.Helper()
	for _, r := range runs {
		if err := s.CreateRun(context.Background(), r); err != nil {
			t.Fatalf("CreateRun(%s): %v", r.ID, err)
		}
	}
}

func result(run, caseID, target string, epoch int) record.Result {
	return record.Result{
		RunID: run, CaseID: caseID, Target: target, Epoch: epoch,
		Raw:          fmt.Sprintf("reply to %s from %s #%d", caseID, target, epoch),
		Parsed:       `{"label":"billing"}`,
		FinishReason: "stop",
		InputTokens:  120, OutputTokens: 7, CachedTokens: 64,
		CostUSD: 0.00042, LatencyMS: 812.5, FirstTokenMS: 301.25,
		Attempts: 1, Model: "gpt-small-2026-01-01", Fingerprint: "fp_1",
		CreatedAt: t0(), Retries: 1,
	}
}

func score(r record.Result, scoring int, scorer string, pass bool) record.Score {
	s := record.Score{
		RunID: r.RunID, Scoring: scoring, CaseID: r.CaseID, Target: r.Target, Epoch: r.Epoch,
		Scorer: scorer, Primary: scorer == "exact", Pass: pass, Shape: "pass",
	}
	if pass {
		s.Value = 1
	} else {
		s.Shape, s.Kind, s.Reason, s.ErrorCost = "loud", "wrong", "expected billing, got refund", 2.5
		s.ParseNote = "fenced"
		s.Fields = []record.FieldVerdict{{Field: "label", Status: "wrong"}, {Field: "a.b", Status: "ok"}}
	}
	return s
}

// batch makes results for cases [from, to) × targets × epochs 1..epochs, and
// two scores of scoring 1 for each.
func batch(run string, from, to int, targets []string, epochs int) ([]record.Result, []record.Score) {
	var rs []record.Result
	var ss []record.Score
	for i := from; i < to; i++ {
		for _, tg := range targets {
			for e := 1; e <= epochs; e++ {
				r := result(run, fmt.Sprintf("case-%04d", i), tg, e)
				rs = append(rs, r)
				ss = append(ss, score(r, 1, "exact", i%3 != 0), score(r, 1, "length", true))
			}
		}
	}
	return rs, ss
}

func mustPut(t *testing.T, s store.Store, rs []record.Result, ss []record.Score) {
	t.Helper()
	if err := s.PutResults(context.Background(), rs, ss); err != nil {
		t.Fatalf("PutResults(%d results, %d scores): %v", len(rs), len(ss), err)
	}
}

func allResults(t *testing.T, s store.Store, run string) []record.Result {
	t.Helper()
	var out []record.Result
	if err := s.Results(context.Background(), run, func(r record.Result) error {
		out = append(out, r)
		return nil
	}); err != nil {
		t.Fatalf("Results(%s): %v", run, err)
	}
	return out
}

func allScores(t *testing.T, s store.Store, run string, scoring int) []record.Score {
	t.Helper()
	var out []record.Score
	if err := s.Scores(context.Background(), run, scoring, func(sc record.Score) error {
		out = append(out, sc)
		return nil
	}); err != nil {
		t.Fatalf("Scores(%s, %d): %v", run, scoring, err)
	}
	return out
}

func allCases(t *testing.T, s store.Store, run string) []record.Case {
	t.Helper()
	var out []record.Case
	if err := s.Cases(context.Background(), run, func(c record.Case) error {
		out = append(out, c)
		return nil
	}); err != nil {
		t.Fatalf("Cases(%s): %v", run, err)
	}
	return out
}

// sameTime reports whether got is want to the microsecond.
func sameTime(want, got time.Time) bool {
	if want.IsZero() || got.IsZero() {
		return want.IsZero() && got.IsZero()
	}
	d := got.Sub(want)
	return d > -time.Microsecond && d < time.Microsecond
}

// diffFields names the fields in which got differs from want; times compare
// with sameTime, long strings are not printed.
func diffFields(want, got any) []string {
	wv, gv := reflect.ValueOf(want), reflect.ValueOf(got)
	var diffs []string
	for i := range wv.NumField() {
		name := wv.Type().Field(i).Name
		w, g := wv.Field(i).Interface(), gv.Field(i).Interface()
		var same bool
		switch w := w.(type) {
		case time.Time:
			same = sameTime(w, g.(time.Time))
		case []byte:
			same = string(w) == string(g.([]byte))
		case map[string]string:
			same = maps.Equal(w, g.(map[string]string))
		case *float64:
			g := g.(*float64)
			same = (w == nil) == (g == nil) && (w == nil || *w == *g)
		default:
			same = reflect.DeepEqual(w, g)
		}
		if !same {
			diffs = append(diffs, fmt.Sprintf("%s: got %s, want %s", name, brief(g), brief(w)))
		}
	}
	return diffs
}

func brief(v any) string {
	if p, ok := v.(*float64); ok && p != nil {
		v = *p
	}
	s := fmt.Sprintf("%q", fmt.Sprint(v))
	if len(s) > 120 {
		s = s[:60] + fmt.Sprintf("…(%d bytes)…", len(s)) + s[len(s)-40:]
	}
	return s
}

func keyOf(r record.Result) string { return fmt.Sprintf("%s/%s/%d", r.CaseID, r.Target, r.Epoch) }

func scoreKey(s record.Score) string {
	return fmt.Sprintf("%s/%s/%d/%s", s.CaseID, s.Target, s.Epoch, s.Scorer)
}

func testRunRoundTrip(t *testing.T, s store.Store) {
	ctx := context.Background()
	want := newRun("20261202-113512-a1b2c3", t0())
	mustCreate(t, s, want)
	got, err := s.GetRun(ctx, want.ID)
	if err != nil {
		t.Fatalf("GetRun: %v", err)
	}
	if d := diffFields(*want, *got); d != nil {
		t.Errorf("run did not round-trip:\n%s", strings.Join(d, "\n"))
	}
	if !got.Ended.IsZero() {
		t.Errorf("Ended = %v, want the zero time for a running run", got.Ended)
	}

	// Empty and nil fields round-trip as empty.
	bare := &record.Run{ID: "bare", Status: record.StatusRunning}
	mustCreate(t, s, bare)
	got, err = s.GetRun(ctx, "bare")
	if err != nil {
		t.Fatalf("GetRun(bare): %v", err)
	}
	if len(got.Targets) != 0 || len(got.Config) != 0 || !got.Started.IsZero() || got.Spec != "" {
		t.Errorf("bare run came back with content: %+v", got)
	}

	if err := s.CreateRun(ctx, &record.Run{}); err == nil {
		t.Errorf("CreateRun of a run without an ID succeeded")
	}
}

func testCreateRunDuplicateID(t *testing.T, s store.Store) {
	ctx := context.Background()
	first := newRun("dup", t0())
	mustCreate(t, s, first)
	second := newRun("dup", t0().Add(time.Hour))
	second.Spec = "other"
	if err := s.CreateRun(ctx, second); err == nil {
		t.Fatalf("creating a second run with ID %q succeeded", "dup")
	}
	got, err := s.GetRun(ctx, "dup")
	if err != nil {
		t.Fatalf("GetRun: %v", err)
	}
	if got.Spec != "triage" || !sameTime(first.Started, got.Started) {
		t.Errorf("the failed duplicate changed the stored run: %+v", got)
	}
}

func testUpdateRun(t *testing.T, s store.Store) {
	ctx := context.Background()
	r := newRun("upd", t0())
	mustCreate(t, s, r)
	upd := *r
	upd.Status = record.StatusComplete
	upd.Ended = t0().Add(90 * time.Second)
	upd.Cases = 1319
	upd.Targets = []string{"gpt-small"}
	upd.Epochs = 5
	upd.Host = `{"cores":2,"load_max":3.5}`
	// Fields UpdateRun does not own are left as created.
	upd.Spec, upd.SpecHash, upd.Config, upd.Started = "changed", "changed", []byte("{}"), t0().Add(time.Hour)
	if err := s.UpdateRun(ctx, &upd); err != nil {
		t.Fatalf("UpdateRun: %v", err)
	}
	got, err := s.GetRun(ctx, "upd")
	if err != nil {
		t.Fatalf("GetRun: %v", err)
	}
	want := *r
	want.Status, want.Ended, want.Cases, want.Targets, want.Epochs = record.StatusComplete, upd.Ended, 1319, []string{"gpt-small"}, 5
	want.Host = upd.Host
	if d := diffFields(want, *got); d != nil {
		t.Errorf("after UpdateRun:\n%s", strings.Join(d, "\n"))
	}

	err = s.UpdateRun(ctx, &record.Run{ID: "missing", Status: record.StatusFailed})
	if !errors.Is(err, store.ErrNotFound) {
		t.Errorf("UpdateRun of a missing run: err = %v, want ErrNotFound", err)
	}
}

func testListRuns(t *testing.T, s store.Store) {
	ctx := context.Background()
	runs, err := s.ListRuns(ctx, 0)
	if err != nil || len(runs) != 0 {
		t.Fatalf("ListRuns on an empty store = %v, %v; want none", runs, err)
	}
	// Created out of start order.
	for _, r := range []struct {
		id string
		h  int
	}{{"c", 3}, {"a", 1}, {"e", 5}, {"b", 2}, {"d", 4}} {
		mustCreate(t, s, newRun(r.id, t0().Add(time.Duration(r.h)*time.Hour)))
	}
	ids := func(rs []record.Run) []string {
		var out []string
		for _, r := range rs {
			out = append(out, r.ID)
		}
		return out
	}
	for _, tc := range []struct {
		limit int
		want  []string
	}{{0, []string{"e", "d", "c", "b", "a"}}, {-1, []string{"e", "d", "c", "b", "a"}}, {2, []string{"e", "d"}}, {9, []string{"e", "d", "c", "b", "a"}}} {
		got, err := s.ListRuns(ctx, tc.limit)
		if err != nil {
			t.Fatalf("ListRuns(%d): %v", tc.limit, err)
		}
		if !slices.Equal(ids(got), tc.want) {
			t.Errorf("ListRuns(%d) = %q, want newest first %q", tc.limit, ids(got), tc.want)
		}
	}
	got, _ := s.ListRuns(ctx, 1)
	if len(got) == 1 && (got[0].Spec != "triage" || len(got[0].Targets) != 2) {
		t.Errorf("ListRuns returned a run without its fields: %+v", got[0])
	}
}

func testLatest(t *testing.T, s store.Store) {
	ctx := context.Background()
	if _, err := s.GetRun(ctx, "latest"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf(`GetRun("latest") on an empty store: err = %v, want ErrNotFound`, err)
	}
	latest := func() string {
		t.Helper()
		r, err := s.GetRun(ctx, "latest")
		if err != nil {
			t.Fatalf(`GetRun("latest"): %v`, err)
		}
		return r.ID
	}
	mustCreate(t, s, newRun("20260101-000000-aaaaaa", t0().Add(time.Hour)))
	if got := latest(); got != "20260101-000000-aaaaaa" {
		t.Errorf("latest = %s, want the only run", got)
	}
	// Created later but started earlier: not the latest. Its ID sorts
	// after the other's, so an implementation ordering by ID fails here.
	mustCreate(t, s, newRun("20260101-000000-ffffff", t0()))
	if got := latest(); got != "20260101-000000-aaaaaa" {
		t.Errorf("latest = %s, want the run that started last (20260101-000000-aaaaaa)", got)
	}
	// The same start: the one created last wins.
	mustCreate(t, s, newRun("20260101-000000-000000", t0().Add(time.Hour)))
	if got := latest(); got != "20260101-000000-000000" {
		t.Errorf("latest = %s, want the run created last among those that started last (20260101-000000-000000)", got)
	}
}

func testIDPrefix(t *testing.T, s store.Store) {
	ctx := context.Background()
	for _, id := range []string{"20260101-000000-aaaaaa", "20260101-000000-aaaabb", "20260102-093000-c0ffee", "abc", "abcd", "run_1", "runx2", "Run%3"} {
		mustCreate(t, s, newRun(id, t0()))
	}
	for _, tc := range []struct {
		arg, want string
	}{
		{"20260102", "20260102-093000-c0ffee"},
		{"20260101-000000-aaaab", "20260101-000000-aaaabb"},
		{"20260101-000000-aaaaaa", "20260101-000000-aaaaaa"},
		{"abc", "abc"},    // an exact ID wins over the longer IDs it begins
		{"run_", "run_1"}, // '_' is not a wildcard
		{"Run%", "Run%3"}, // nor is '%'
	} {
		got, err := s.GetRun(ctx, tc.arg)
		if err != nil {
			t.Errorf("GetRun(%q): %v, want %s", tc.arg, err, tc.want)
			continue
		}
		if got.ID != tc.want {
			t.Errorf("GetRun(%q) = %s, want %s", tc.arg, got.ID, tc.want)
		}
	}
	for _, arg := range []string{"2026", "20260101-000000-aaaa", "ab"} {
		_, err := s.GetRun(ctx, arg)
		if !errors.Is(err, store.ErrAmbiguousID) {
			t.Errorf("GetRun(%q): err = %v, want ErrAmbiguousID", arg, err)
		} else if !strings.Contains(err.Error(), arg) {
			t.Errorf("GetRun(%q): error %q does not name the prefix", arg, err)
		}
	}
	for _, arg := range []string{"2027", "20260101-000000-aaaaaa0", "ABC", "run%", "RUN_1", " abc", "latest-run"} {
		_, err := s.GetRun(ctx, arg)
		if !errors.Is(err, store.ErrNotFound) {
			t.Errorf("GetRun(%q): err = %v, want ErrNotFound", arg, err)
		} else if !strings.Contains(err.Error(), arg) {
			t.Errorf("GetRun(%q): error %q does not name the ID", arg, err)
		}
	}
	if _, err := s.GetRun(ctx, ""); err == nil {
		t.Errorf(`GetRun("") succeeded; an empty ID names no run`)
	}
}

func testCases(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustCreate(t, s, newRun("r", t0()), newRun("other", t0()))
	w0, w15 := 0.0, 1.5
	cases := []record.Case{
		{RunID: "r", ID: "q-10", Line: 3, Expected: []byte(`"billing"`), Tags: map[string]string{"lang": "de", "tier": "pro"}, Weight: &w15},
		{RunID: "r", ID: "q-2", Line: 1, Expected: []byte(`{"label":"refund","amount":12.5}`), Weight: &w0},
		{RunID: "r", ID: "q-1", Line: 2},
		{RunID: "r", ID: "ünï", Line: 4, Expected: []byte(`"日本語"`), Tags: map[string]string{}},
	}
	if err := s.PutCases(ctx, cases); err != nil {
		t.Fatalf("PutCases: %v", err)
	}
	// Idempotent: the same cases again, and an overlapping set, add nothing.
	if err := s.PutCases(ctx, cases); err != nil {
		t.Fatalf("PutCases again: %v", err)
	}
	if err := s.PutCases(ctx, cases[2:]); err != nil {
		t.Fatalf("PutCases overlapping: %v", err)
	}
	if err := s.PutCases(ctx, []record.Case{{RunID: "other", ID: "q-1", Line: 1}}); err != nil {
		t.Fatalf("PutCases(other run): %v", err)
	}
	got := allCases(t, s, "r")
	wantOrder := []record.Case{cases[1], cases[2], cases[0], cases[3]} // by line
	if len(got) != len(wantOrder) {
		t.Fatalf("Cases returned %d cases, want %d (each case once): %+v", len(got), len(wantOrder), got)
	}
	for i := range got {
		if d := diffFields(wantOrder[i], got[i]); d != nil {
			t.Errorf("case %d (%s):\n%s", i, wantOrder[i].ID, strings.Join(d, "\n"))
		}
	}
	if got := allCases(t, s, "none"); len(got) != 0 {
		t.Errorf("Cases of an unknown run = %+v, want none", got)
	}
	if err := s.PutCases(ctx, []record.Case{{RunID: "no-such-run", ID: "x", Line: 1}}); err == nil {
		t.Errorf("PutCases for a run that does not exist succeeded")
	}
}

func testPutResultsWithScores(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustCreate(t, s, newRun("r", t0()))
	rs, ss := batch("r", 0, 10, []string{"a", "b"}, 2)
	mustPut(t, s, rs, ss)
	if got := allResults(t, s, "r"); len(got) != len(rs) {
		t.Fatalf("Results: %d, want %d", len(got), len(rs))
	}
	got := allScores(t, s, "r", 1)
	if len(got) != len(ss) {
		t.Fatalf("Scores: %d, want %d", len(got), len(ss))
	}
	want := map[string]record.Score{}
	for _, sc := range ss {
		want[scoreKey(sc)] = sc
	}
	for _, sc := range got {
		if d := diffFields(want[scoreKey(sc)], sc); d != nil {
			t.Errorf("score %s:\n%s", scoreKey(sc), strings.Join(d, "\n"))
		}
	}
	if n, err := s.LatestScoring(ctx, "r"); err != nil || n != 1 {
		t.Errorf("LatestScoring = %d, %v; want 1", n, err)
	}
	// Results alone, no scores.
	rs2, _ := batch("r", 10, 11, []string{"a"}, 1)
	mustPut(t, s, rs2, nil)
	if got := allResults(t, s, "r"); len(got) != len(rs)+1 {
		t.Errorf("Results after a scoreless put: %d, want %d", len(got), len(rs)+1)
	}
	if err := s.PutResults(ctx, nil, nil); err != nil {
		t.Errorf("PutResults of nothing: %v", err)
	}
}

func testPutResultsAtomic(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustCreate(t, s, newRun("r", t0()))
	check := func(what string) {
		t.Helper()
		if got := allResults(t, s, "r"); len(got) != 0 {
			t.Errorf("%s: %d results stored from a failed call, want none", what, len(got))
		}
		if got := allScores(t, s, "r", 1); len(got) != 0 {
			t.Errorf("%s: %d scores stored from a failed call, want none", what, len(got))
		}
	}

	// The last result names a run that does not exist.
	rs, ss := batch("r", 0, 20, []string{"a"}, 1)
	bad := result("no-such-run", "case-0000", "a", 1)
	if err := s.PutResults(ctx, append(slices.Clone(rs), bad), ss); err == nil {
		t.Fatalf("PutResults with a result of a missing run succeeded")
	}
	check("result of a missing run")

	// The last score belongs to no result of the call.
	orphan := score(result("r", "case-9999", "a", 1), 1, "exact", true)
	if err := s.PutResults(ctx, rs, append(slices.Clone(ss), orphan)); err == nil {
		t.Fatalf("PutResults with a score of a result outside the call succeeded")
	}
	check("score outside the call")

	// Scoring 0 is not a scoring.
	zero := score(rs[5], 0, "exact", true)
	if err := s.PutResults(ctx, rs, append(slices.Clone(ss), zero)); err == nil {
		t.Fatalf("PutResults with a score of scoring 0 succeeded")
	}
	check("scoring 0")

	// After the failures, the same batch goes in whole.
	mustPut(t, s, rs, ss)
	if got := allResults(t, s, "r"); len(got) != len(rs) {
		t.Errorf("Results after a good put: %d, want %d", len(got), len(rs))
	}
}

func testResultsNeverDuplicated(t *testing.T, s store.Store) {
	mustCreate(t, s, newRun("r", t0()))
	rs, ss := batch("r", 0, 100, []string{"a"}, 1)
	mustPut(t, s, rs, ss)
	mustPut(t, s, rs, ss) // the same batch again (a retried commit)

	// A batch overlapping the first (cases 50-149), with different content
	// and an extra scorer: the overlap keeps what was stored first,
	// including its scores; the new cases get theirs.
	rs2, ss2 := batch("r", 50, 150, []string{"a"}, 1)
	for i := range rs2 {
		rs2[i].Raw = "second attempt"
	}
	for i := range ss2 {
		ss2[i].Pass, ss2[i].Value = false, 0
	}
	for _, r := range rs2 {
		ss2 = append(ss2, score(r, 1, "extra", true))
	}
	mustPut(t, s, rs2, ss2)

	// A batch holding the same key twice stores it once, the first.
	dupA := result("r", "case-0500", "a", 1)
	dupB := dupA
	dupB.Raw = "the second copy"
	mustPut(t, s, []record.Result{dupA, dupB}, []record.Score{score(dupA, 1, "exact", true), score(dupB, 1, "exact", true)})

	got := allResults(t, s, "r")
	if len(got) != 151 {
		t.Fatalf("Results: %d, want 151 (cases 0-149 and case-0500, once each)", len(got))
	}
	seen := map[string]bool{}
	for _, r := range got {
		k := keyOf(r)
		if seen[k] {
			t.Errorf("result %s stored twice", k)
		}
		seen[k] = true
		var n int
		fmt.Sscanf(r.CaseID, "case-%d", &n)
		switch {
		case n == 500 && r.Raw != dupA.Raw:
			t.Errorf("result %s: raw %q, want the first copy %q", k, r.Raw, dupA.Raw)
		case n < 100 && r.Raw == "second attempt":
			t.Errorf("result %s was overwritten by a later put", k)
		case n >= 100 && n < 150 && r.Raw != "second attempt":
			t.Errorf("result %s: raw %q, want the second batch's", k, r.Raw)
		}
	}

	scores := allScores(t, s, "r", 1)
	count := map[string]int{}
	for _, sc := range scores {
		count[scoreKey(sc)]++
		var n int
		fmt.Sscanf(sc.CaseID, "case-%d", &n)
		if n < 100 && sc.Scorer == "extra" {
			t.Errorf("score %s was added to a result that already existed", scoreKey(sc))
		}
		if n >= 50 && n < 100 && sc.Scorer == "exact" && sc.Pass != (n%3 != 0) {
			t.Errorf("score %s was changed by a later put", scoreKey(sc))
		}
	}
	for k, c := range count {
		if c > 1 {
			t.Errorf("score %s stored %d times", k, c)
		}
	}
	// 100 results × 2 scorers + 50 new × 3 scorers + 1 × 1.
	if len(scores) != 100*2+50*3+1 {
		t.Errorf("Scores: %d, want %d", len(scores), 100*2+50*3+1)
	}
}

func testResultRoundTrip(t *testing.T, s store.Store) {
	mustCreate(t, s, newRun("r", t0()))
	megabyte := strings.Repeat("The quick brown 🦊 jumps over the lazy dog. ", 1<<20/44+1)
	binaryish := string([]byte{0x01, 0x02, 0x7f, 0x80, 0xfe, 0xff, 0xc3, 0x28, '\t', '\r', '\n', 0x1b, '[', '3', '1', 'm'})
	var all []record.Result
	full := record.Result{
		RunID: "r", CaseID: "full", Target: "claude-mid", Epoch: 3,
		Raw: "A: 42\n", Parsed: `{"answer":42}`, ParseError: "", FinishReason: "end_turn",
		InputTokens: 1_234_567, OutputTokens: 89_012, CachedTokens: 1_000_000,
		CostUSD: 1.0000000000000002, LatencyMS: 1234.5678, FirstTokenMS: 0.001,
		Attempts: 4, ErrorKind: "", Error: "", Model: "claude-mid-20260101", Fingerprint: "fp_8c3e",
		FromCache: true, CreatedAt: t0(),
		ToolCalls: []record.ToolCall{
			{ID: "call_1", Name: "get_weather", Arguments: `{"city": "Zürich", "days": 1.50}`},
			{Name: "book", Arguments: `{"city": "Par`}, // invalid JSON, kept as written
			{ID: "toolu_2", Name: "now", Arguments: ""},
		},
		Turns: []record.Turn{
			{Text: "", ToolCalls: []record.ToolCall{{ID: "call_1", Name: "get_weather", Arguments: `{"city": "Zürich", "days": 1.50}`}},
				Results:      []record.ToolResult{{CallID: "call_1", Name: "get_weather", Content: "sunny, 21 °C\n", LatencyMS: 12.5}},
				FinishReason: "tool_calls", InputTokens: 1_000_000, OutputTokens: 80_000, CostUSD: 0.75, LatencyMS: 1000.25, FirstTokenMS: 0.001, FromCache: true},
			{Text: "", ToolCalls: []record.ToolCall{{Name: "book", Arguments: `{"city": "Par`}, {ID: "toolu_2", Name: "now", Arguments: ""}},
				Results:      []record.ToolResult{{Name: "book", Content: "error: the arguments are not a JSON object: unexpected end of JSON input"}, {CallID: "toolu_2", Name: "now", Error: "tool_timeout: killed after 30s", Content: "partial \x00"}},
				FinishReason: "tool_calls", InputTokens: 234_567, OutputTokens: 9_000, CostUSD: 0.25000000000000002, LatencyMS: 234.3178},
			{Text: "A: 42\n", FinishReason: "end_turn"},
		},
	}
	all = append(all, full)
	all = append(all, record.Result{
		RunID: "r", CaseID: "unicode ✓ 日本語 עברית e\u0301", Target: "t/with:odd chars", Epoch: 1,
		Raw: "Ответ: «да» — 😀👍🏽 \u202ertl\u202c \u200b", Parsed: `"Zürich"`, ParseError: "no line matching ^A: (\\d+)$",
		FinishReason: "length", ErrorKind: "unparseable", Error: "parse: unexpected ‘token’",
		Model: "m", CreatedAt: time.Date(2026, 1, 1, 0, 0, 0, 1_000, time.UTC),
	})
	all = append(all, record.Result{
		RunID: "r", CaseID: "binary", Target: "exec", Epoch: 1,
		Raw: binaryish, Parsed: "", Error: binaryish, ErrorKind: "provider",
		CreatedAt: time.Time{}, // the zero time
	})
	all = append(all, record.Result{
		RunID: "r", CaseID: "big", Target: "a", Epoch: 1,
		Raw: megabyte, Parsed: `"` + strings.Repeat("x", 100_000) + `"`,
		LatencyMS: math.MaxFloat64, CostUSD: math.SmallestNonzeroFloat64, Attempts: math.MaxInt32,
		CreatedAt: time.Date(1969, 7, 20, 20, 17, 40, 0, time.UTC),
	})
	all = append(all, record.Result{
		RunID: "r", CaseID: "timeout", Target: "a", Epoch: 1,
		ErrorKind: "timeout", Error: "context deadline exceeded", Attempts: 3, LatencyMS: 30000,
		CreatedAt: time.Date(2099, 12, 31, 23, 59, 59, 999_999_000, time.Local),
	})
	mustPut(t, s, all, nil)
	got := map[string]record.Result{}
	for _, r := range allResults(t, s, "r") {
		got[keyOf(r)] = r
	}
	if len(got) != len(all) {
		t.Fatalf("Results: %d, want %d", len(got), len(all))
	}
	for _, want := range all {
		g, ok := got[keyOf(want)]
		if !ok {
			t.Errorf("result %s missing", keyOf(want))
			continue
		}
		if d := diffFields(want, g); d != nil {
			t.Errorf("result %s did not round-trip:\n%s", keyOf(want), strings.Join(d, "\n"))
		}
		// One result, read by its key, is the same.
		one, err := s.Result(context.Background(), "r", want.Key())
		if err != nil {
			t.Errorf("Result(%s): %v", keyOf(want), err)
		} else if d := diffFields(want, *one); d != nil {
			t.Errorf("Result(%s) differs:\n%s", keyOf(want), strings.Join(d, "\n"))
		}
	}
	for _, k := range []record.Key{{CaseID: "full", Target: "claude-mid", Epoch: 1}, {CaseID: "nope", Target: "a", Epoch: 1}} {
		if _, err := s.Result(context.Background(), "r", k); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Result(%v) of a key never stored: err %v, want ErrNotFound", k, err)
		}
	}
	if _, err := s.Result(context.Background(), "other-run", all[0].Key()); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Result of another run's key: err %v, want ErrNotFound", err)
	}
}

func testResultsOrder(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustCreate(t, s, newRun("r", t0()), newRun("other", t0()))
	// Line order differs from ID order ("c10" < "c2" < "c9" as strings).
	if err := s.PutCases(ctx, []record.Case{
		{RunID: "r", ID: "c9", Line: 1},
		{RunID: "r", ID: "c10", Line: 2},
		{RunID: "r", ID: "c2", Line: 3},
	}); err != nil {
		t.Fatalf("PutCases: %v", err)
	}
	// Expected order, written out: cases by line, targets by name, epochs
	// numerically (2 before 10), then case IDs with no stored case by ID.
	var want []string
	for _, c := range []string{"c9", "c10", "c2"} {
		for _, tg := range []string{"alpha", "beta"} {
			for _, e := range []int{1, 2, 10} {
				want = append(want, fmt.Sprintf("%s/%s/%d", c, tg, e))
			}
		}
	}
	want = append(want, "aa-orphan/alpha/1", "zz-orphan/alpha/1")

	// Stored in scrambled order, over several calls, with scores.
	perm := []int{17, 3, 12, 0, 19, 8, 5, 14, 1, 10, 6, 15, 2, 11, 18, 4, 9, 16, 7, 13}
	var rs []record.Result
	var ss []record.Score
	for _, i := range perm {
		var c, tg string
		var e int
		fmt.Sscanf(strings.ReplaceAll(want[i], "/", " "), "%s %s %d", &c, &tg, &e)
		r := result("r", c, tg, e)
		rs = append(rs, r)
		ss = append(ss, score(r, 1, "zeta", true), score(r, 1, "exact", false))
	}
	mustPut(t, s, rs[:7], ss[:14])
	mustPut(t, s, rs[7:], ss[14:])
	// Another run's results are not streamed.
	other, otherScores := batch("other", 0, 3, []string{"alpha"}, 1)
	mustPut(t, s, other, otherScores)

	var got []string
	for _, r := range allResults(t, s, "r") {
		got = append(got, keyOf(r))
	}
	if !slices.Equal(got, want) {
		t.Errorf("Results order:\n got %q\nwant %q", got, want)
	}
	var gotScores []string
	for _, sc := range allScores(t, s, "r", 1) {
		gotScores = append(gotScores, scoreKey(sc))
	}
	var wantScores []string
	for _, k := range want {
		wantScores = append(wantScores, k+"/exact", k+"/zeta")
	}
	if !slices.Equal(gotScores, wantScores) {
		t.Errorf("Scores order:\n got %q\nwant %q", gotScores, wantScores)
	}
}

func testDoneKeys(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustCreate(t, s, newRun("r", t0()), newRun("other", t0()), newRun("empty", t0()))
	rs, ss := batch("r", 0, 7, []string{"a", "b"}, 3)
	mustPut(t, s, rs, ss)
	o, oScores := batch("other", 100, 105, []string{"a"}, 1)
	mustPut(t, s, o, oScores)
	got, err := s.DoneKeys(ctx, "r")
	if err != nil {
		t.Fatalf("DoneKeys: %v", err)
	}
	want := map[record.Key]struct{}{}
	for _, r := range rs {
		want[r.Key()] = struct{}{}
	}
	if !maps.Equal(got, want) {
		t.Errorf("DoneKeys = %d keys, want the %d keys stored for the run", len(got), len(want))
	}
	got, err = s.DoneKeys(ctx, "empty")
	if err != nil || len(got) != 0 {
		t.Errorf("DoneKeys of a run without results = %v, %v; want none", got, err)
	}
}

func testScorings(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustCreate(t, s, newRun("r", t0()), newRun("unscored", t0()))
	if n, err := s.LatestScoring(ctx, "unscored"); err != nil || n != 0 {
		t.Errorf("LatestScoring of a run without scores = %d, %v; want 0", n, err)
	}
	rs, ss := batch("r", 0, 5, []string{"a"}, 1)
	mustPut(t, s, rs, ss)

	// Rescore: scoring 2 of some results, with a new scorer set.
	var s2 []record.Score
	for _, r := range rs[:3] {
		s2 = append(s2, score(r, 2, "exact", false))
	}
	if err := s.PutScores(ctx, s2); err != nil {
		t.Fatalf("PutScores: %v", err)
	}
	if err := s.PutScores(ctx, s2); err != nil { // again: no duplicates
		t.Fatalf("PutScores again: %v", err)
	}
	if n, err := s.LatestScoring(ctx, "r"); err != nil || n != 2 {
		t.Errorf("LatestScoring = %d, %v; want 2", n, err)
	}
	if got := allScores(t, s, "r", 1); len(got) != len(ss) {
		t.Errorf("scoring 1 after a rescore: %d scores, want %d unchanged", len(got), len(ss))
	}
	got := allScores(t, s, "r", 2)
	if len(got) != 3 {
		t.Fatalf("scoring 2: %d scores, want 3", len(got))
	}
	for i, sc := range got {
		if d := diffFields(s2[i], sc); d != nil {
			t.Errorf("scoring 2, score %d:\n%s", i, strings.Join(d, "\n"))
		}
	}
	if got := allScores(t, s, "r", 3); len(got) != 0 {
		t.Errorf("scoring 3 (never made): %d scores, want none", len(got))
	}

	// A score of a result that is not stored fails the whole call.
	s3 := []record.Score{score(rs[0], 3, "exact", true), score(result("r", "case-7777", "a", 1), 3, "exact", true)}
	if err := s.PutScores(ctx, s3); err == nil {
		t.Errorf("PutScores of a result that is not stored succeeded")
	}
	if n, _ := s.LatestScoring(ctx, "r"); n != 2 {
		t.Errorf("LatestScoring after a failed PutScores = %d, want 2 (nothing stored)", n)
	}
	if err := s.PutScores(ctx, []record.Score{score(rs[0], 0, "exact", true)}); err == nil {
		t.Errorf("PutScores of scoring 0 succeeded")
	}
}

// testPendingScoringInvisible is a rescore killed halfway: its scores are
// stored, its scoring was never completed, and the latest scoring stays the
// previous complete one (report, gate and baseline export read that).
func testPendingScoringInvisible(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustCreate(t, s, newRun("r", t0()), newRun("unscored", t0()))
	// Scoring 1 is the run's own, even before it stored a result.
	if n, err := s.ReserveScoring(ctx, "unscored"); err != nil || n != 2 {
		t.Errorf("ReserveScoring of a run without scores = %d, %v; want 2", n, err)
	}
	rs, ss := batch("r", 0, 6, []string{"a"}, 1)
	mustPut(t, s, rs, ss)

	n, err := s.ReserveScoring(ctx, "r")
	if err != nil || n != 2 {
		t.Fatalf("ReserveScoring = %d, %v; want 2 (above scoring 1 of the run)", n, err)
	}
	if p, err := s.ScoringPending(ctx, "r", 2); err != nil || !p {
		t.Errorf("ScoringPending(2) after reserving = %v, %v; want true", p, err)
	}
	if p, err := s.ScoringPending(ctx, "r", 1); err != nil || p {
		t.Errorf("ScoringPending(1) (never reserved) = %v, %v; want false", p, err)
	}
	var part []record.Score
	for _, r := range rs[:2] { // killed after 2 of 6 results
		part = append(part, score(r, 2, "exact", false))
	}
	if err := s.PutScores(ctx, part); err != nil {
		t.Fatalf("PutScores: %v", err)
	}
	if got, err := s.LatestScoring(ctx, "r"); err != nil || got != 1 {
		t.Errorf("LatestScoring with scoring 2 pending = %d, %v; want 1 (the last complete scoring)", got, err)
	}

	// The next rescore gets 3, not 2 again, and becomes visible on completion.
	n3, err := s.ReserveScoring(ctx, "r")
	if err != nil || n3 != 3 {
		t.Fatalf("ReserveScoring after a pending 2 = %d, %v; want 3", n3, err)
	}
	var full []record.Score
	for _, r := range rs {
		full = append(full, score(r, 3, "exact", true))
	}
	if err := s.PutScores(ctx, full); err != nil {
		t.Fatalf("PutScores: %v", err)
	}
	if got, _ := s.LatestScoring(ctx, "r"); got != 1 {
		t.Errorf("LatestScoring before CompleteScoring(3) = %d, want 1", got)
	}
	if err := s.CompleteScoring(ctx, "r", 3); err != nil {
		t.Fatalf("CompleteScoring(3): %v", err)
	}
	if got, _ := s.LatestScoring(ctx, "r"); got != 3 {
		t.Errorf("LatestScoring after CompleteScoring(3) = %d, want 3", got)
	}
	if err := s.CompleteScoring(ctx, "r", 3); err != nil {
		t.Errorf("CompleteScoring(3) again: %v (want a no-op)", err)
	}
	// Scoring 2 stays pending: a later, empty reservation does not hide 3.
	if _, err := s.ReserveScoring(ctx, "r"); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.LatestScoring(ctx, "r"); got != 3 {
		t.Errorf("LatestScoring with 4 reserved and empty = %d, want 3", got)
	}
	if err := s.CompleteScoring(ctx, "r", 9); err == nil {
		t.Errorf("CompleteScoring of a scoring never reserved succeeded")
	}
	if _, err := s.ReserveScoring(ctx, "no-such-run"); err == nil {
		t.Errorf("ReserveScoring for a run that does not exist succeeded")
	}
}

// testConcurrentReservations is two rescores of one run started at once:
// each gets its own number, and both complete.
func testConcurrentReservations(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustCreate(t, s, newRun("r", t0()))
	rs, ss := batch("r", 0, 4, []string{"a"}, 1)
	mustPut(t, s, rs, ss)
	const n = 8
	got := make([]int, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sc, err := s.ReserveScoring(ctx, "r")
			if err == nil {
				var scores []record.Score
				for _, r := range rs {
					scores = append(scores, score(r, sc, "exact", true))
				}
				err = s.PutScores(ctx, scores)
			}
			if err == nil {
				err = s.CompleteScoring(ctx, "r", sc)
			}
			got[i], errs[i] = sc, err
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(got)
	for i, sc := range got {
		if sc != i+2 {
			t.Fatalf("concurrent reservations = %v, want distinct numbers 2..%d", got, n+1)
		}
	}
	if latest, _ := s.LatestScoring(ctx, "r"); latest != n+1 {
		t.Errorf("LatestScoring = %d, want %d", latest, n+1)
	}
	for _, sc := range got {
		if k := len(allScores(t, s, "r", sc)); k != len(rs) {
			t.Errorf("scoring %d has %d scores, want %d (none lost)", sc, k, len(rs))
		}
	}
}

// testResultsWithoutCase counts results whose case was never recorded (a
// run killed before PutCases finished).
func testResultsWithoutCase(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustCreate(t, s, newRun("r", t0()), newRun("other", t0()))
	rs, ss := batch("r", 0, 5, []string{"a", "b"}, 1)
	mustPut(t, s, rs, ss)
	if n, err := s.ResultsWithoutCase(ctx, "r"); err != nil || n != 10 {
		t.Errorf("ResultsWithoutCase with no cases = %d, %v; want 10", n, err)
	}
	var cases []record.Case
	for i := range 3 {
		cases = append(cases, record.Case{RunID: "r", ID: fmt.Sprintf("case-%04d", i), Line: i + 1})
	}
	// Cases of another run do not count for this one.
	if err := s.PutCases(ctx, []record.Case{{RunID: "other", ID: "case-0004", Line: 1}}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutCases(ctx, cases); err != nil {
		t.Fatal(err)
	}
	if n, err := s.ResultsWithoutCase(ctx, "r"); err != nil || n != 4 {
		t.Errorf("ResultsWithoutCase with 3 of 5 cases = %d, %v; want 4", n, err)
	}
	cases = append(cases, record.Case{RunID: "r", ID: "case-0003", Line: 4}, record.Case{RunID: "r", ID: "case-0004", Line: 5})
	if err := s.PutCases(ctx, cases); err != nil {
		t.Fatal(err)
	}
	if n, err := s.ResultsWithoutCase(ctx, "r"); err != nil || n != 0 {
		t.Errorf("ResultsWithoutCase with every case = %d, %v; want 0", n, err)
	}
	if n, err := s.ResultsWithoutCase(ctx, "none"); err != nil || n != 0 {
		t.Errorf("ResultsWithoutCase of an unknown run = %d, %v; want 0", n, err)
	}
}

func testCache(t *testing.T, s store.Store) {
	ctx := context.Background()
	if b, ok, err := s.CacheGet(ctx, "k1"); err != nil || ok || b != nil {
		t.Fatalf("CacheGet miss = %q, %v, %v; want nil, false, nil", b, ok, err)
	}
	v1 := []byte(`{"text":"A: 42","usage":{"input":10}}`)
	if err := s.CachePut(ctx, "k1", "", v1); err != nil {
		t.Fatalf("CachePut: %v", err)
	}
	big := []byte(strings.Repeat("é", 600_000))
	if err := s.CachePut(ctx, "k2", "", big); err != nil {
		t.Fatalf("CachePut: %v", err)
	}
	if b, ok, err := s.CacheGet(ctx, "k1"); err != nil || !ok || string(b) != string(v1) {
		t.Errorf("CacheGet(k1) = %q, %v, %v; want %q", b, ok, err, v1)
	}
	if b, ok, err := s.CacheGet(ctx, "k2"); err != nil || !ok || string(b) != string(big) {
		t.Errorf("CacheGet(k2) = %d bytes, %v, %v; want %d bytes", len(b), ok, err, len(big))
	}
	v2 := []byte(`{"text":"A: 43"}`)
	if err := s.CachePut(ctx, "k1", "", v2); err != nil {
		t.Fatalf("CachePut replace: %v", err)
	}
	if b, ok, err := s.CacheGet(ctx, "k1"); err != nil || !ok || string(b) != string(v2) {
		t.Errorf("CacheGet(k1) after replace = %q, %v, %v; want %q", b, ok, err, v2)
	}
	if _, ok, _ := s.CacheGet(ctx, "K1"); ok {
		t.Errorf("CacheGet(K1) hit; keys are case-sensitive")
	}
}

// testWriteWhileStreaming: rescore streams stored results and stores a
// score for each from inside the callback; reports read cases meanwhile.
func testWriteWhileStreaming(t *testing.T, s store.Store) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	mustCreate(t, s, newRun("r", t0()))
	rs, ss := batch("r", 0, 50, []string{"a"}, 1)
	mustPut(t, s, rs, ss)
	done := make(chan error, 1)
	go func() {
		n := 0
		done <- s.Results(ctx, "r", func(r record.Result) error {
			n++
			if err := s.PutScores(ctx, []record.Score{score(r, 2, "exact", true)}); err != nil {
				return err
			}
			if n == 1 {
				// A new result, too, and a read.
				if err := s.PutResults(ctx, []record.Result{result("r", "case-9000", "a", 1)}, nil); err != nil {
					return err
				}
			}
			if _, _, err := s.CacheGet(ctx, "k"); err != nil {
				return err
			}
			_, err := s.GetRun(ctx, "r")
			return err
		})
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("writing from inside Results: %v", err)
		}
	case <-ctx.Done():
		t.Fatalf("writing from inside Results did not finish in 30s (deadlock?)")
	}
	if got := allScores(t, s, "r", 2); len(got) < 50 {
		t.Errorf("scoring 2: %d scores, want at least the 50 streamed results", len(got))
	}
}

func testConcurrent(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustCreate(t, s, newRun("r", t0()))
	const writers, batches, per = 4, 15, 20
	var wg sync.WaitGroup
	errs := make(chan error, writers*batches+64)
	stop := make(chan struct{})
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range batches {
				from := (w*batches + b) * per
				rs, ss := batch("r", from, from+per, []string{"a"}, 1)
				if err := s.PutResults(ctx, rs, ss); err != nil {
					errs <- fmt.Errorf("writer %d batch %d: %w", w, b, err)
					return
				}
				if err := s.CachePut(ctx, fmt.Sprintf("w%d-%d", w, b), "", []byte("x")); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	var readers sync.WaitGroup
	for range 3 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				// Each stream is a snapshot of whole commits: a count that
				// is not a multiple of the batch size saw half a commit.
				var n int
				var prev string
				err := s.Results(ctx, "r", func(r record.Result) error {
					if r.CaseID <= prev {
						return fmt.Errorf("results out of order: %s after %s", r.CaseID, prev)
					}
					prev = r.CaseID
					n++
					return nil
				})
				if err == nil && n%per != 0 {
					err = fmt.Errorf("a reader saw %d results, not a whole number of %d-result commits", n, per)
				}
				if err == nil {
					_, err = s.DoneKeys(ctx, "r")
				}
				if err == nil {
					_, err = s.GetRun(ctx, "latest")
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	readers.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := allResults(t, s, "r"); len(got) != writers*batches*per {
		t.Errorf("Results after concurrent writes: %d, want %d", len(got), writers*batches*per)
	}
	if got := allScores(t, s, "r", 1); len(got) != 2*writers*batches*per {
		t.Errorf("Scores after concurrent writes: %d, want %d", len(got), 2*writers*batches*per)
	}
}

func testContextCancelled(t *testing.T, s store.Store) {
	mustCreate(t, s, newRun("r", t0()))
	rs, ss := batch("r", 0, 20, []string{"a"}, 1)

	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.PutResults(cancelled, rs, ss); !errors.Is(err, context.Canceled) {
		t.Errorf("PutResults with a cancelled context: err = %v, want context.Canceled", err)
	}
	if got := allResults(t, s, "r"); len(got) != 0 {
		t.Fatalf("PutResults with a cancelled context stored %d results", len(got))
	}
	// A cancelled context is not "not found".
	if _, err := s.GetRun(cancelled, "r"); !errors.Is(err, context.Canceled) {
		t.Errorf("GetRun with a cancelled context: err = %v, want context.Canceled", err)
	}
	if _, err := s.GetRun(cancelled, "latest"); !errors.Is(err, context.Canceled) {
		t.Errorf(`GetRun("latest") with a cancelled context: err = %v, want context.Canceled`, err)
	}
	if err := s.CreateRun(cancelled, newRun("r2", t0())); !errors.Is(err, context.Canceled) {
		t.Errorf("CreateRun with a cancelled context: err = %v, want context.Canceled", err)
	}
	if _, err := s.GetRun(context.Background(), "r2"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("CreateRun with a cancelled context stored the run (GetRun: %v)", err)
	}

	mustPut(t, s, rs, ss)
	// Cancelled mid-stream: the stream stops and says why.
	for _, tc := range []struct {
		name   string
		stream func(ctx context.Context, f func()) error
	}{
		{"Results", func(ctx context.Context, f func()) error {
			return s.Results(ctx, "r", func(record.Result) error { f(); return nil })
		}},
		{"Scores", func(ctx context.Context, f func()) error {
			return s.Scores(ctx, "r", 1, func(record.Score) error { f(); return nil })
		}},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		calls := 0
		err := tc.stream(ctx, func() {
			calls++
			cancel()
		})
		cancel()
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s cancelled in the first callback: err = %v, want context.Canceled", tc.name, err)
		}
		if calls != 1 {
			t.Errorf("%s called back %d times after the context was cancelled in the first call, want 1", tc.name, calls)
		}
	}
}

func testCallbackError(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustCreate(t, s, newRun("r", t0()))
	rs, ss := batch("r", 0, 10, []string{"a"}, 1)
	mustPut(t, s, rs, ss)
	var cases []record.Case
	for i := range 10 {
		cases = append(cases, record.Case{RunID: "r", ID: fmt.Sprintf("case-%04d", i), Line: i + 1})
	}
	if err := s.PutCases(ctx, cases); err != nil {
		t.Fatalf("PutCases: %v", err)
	}
	errStop := errors.New("stop here")
	for _, tc := range []struct {
		name   string
		stream func(f func() error) error
	}{
		{"Results", func(f func() error) error {
			return s.Results(ctx, "r", func(record.Result) error { return f() })
		}},
		{"Scores", func(f func() error) error {
			return s.Scores(ctx, "r", 1, func(record.Score) error { return f() })
		}},
		{"Cases", func(f func() error) error {
			return s.Cases(ctx, "r", func(record.Case) error { return f() })
		}},
	} {
		calls := 0
		err := tc.stream(func() error {
			calls++
			if calls == 3 {
				return errStop
			}
			return nil
		})
		if !errors.Is(err, errStop) {
			t.Errorf("%s: err = %v, want the callback's error", tc.name, err)
		}
		if calls != 3 {
			t.Errorf("%s called back %d times, want 3 (it stops at the callback's error)", tc.name, calls)
		}
	}
	// The store is still usable after streams were abandoned.
	if got := allResults(t, s, "r"); len(got) != len(rs) {
		t.Errorf("Results after abandoned streams: %d, want %d", len(got), len(rs))
	}
}

func testExperimentRuns(t *testing.T, s store.Store) {
	ctx := context.Background()
	a := newRun("exp-a", t0())
	b := newRun("exp-b", t0().Add(time.Minute))
	c := newRun("exp-c", t0().Add(-time.Minute)) // started first
	other := newRun("other", t0())
	other.Experiment = "something-else"
	none := newRun("none", t0())
	none.Experiment = ""
	mustCreate(t, s, b, a, other, c, none)
	runs, err := s.ExperimentRuns(ctx, "triage-prompts")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range runs {
		ids = append(ids, r.ID)
	}
	if want := "exp-c exp-a exp-b"; strings.Join(ids, " ") != want {
		t.Errorf("ExperimentRuns = %v, want oldest first: %s", ids, want)
	}
	if runs, err := s.ExperimentRuns(ctx, "no-such"); err != nil || len(runs) != 0 {
		t.Errorf("ExperimentRuns(no-such) = %v, %v; want none", runs, err)
	}
}

func testTwins(t *testing.T, s store.Store) {
	ctx := context.Background()
	in := []record.Twin{
		{Set: "sha256:set1", CaseID: "b", Source: "file:twins.jsonl", Fields: []byte(`{"q":"B twin"}`), CreatedAt: t0()},
		{Set: "sha256:set1", CaseID: "a", Source: "file:twins.jsonl", Fields: []byte(`{"q":"A twin"}`), CreatedAt: t0()},
		{Set: "sha256:set2", CaseID: "a", Source: "rewriter:para", Fields: []byte(`{"q":"A para"}`)},
	}
	if err := s.PutTwins(ctx, in); err != nil {
		t.Fatal(err)
	}
	// A second put of the same set and case keeps the first twin.
	if err := s.PutTwins(ctx, []record.Twin{{Set: "sha256:set1", CaseID: "a", Source: "file:x", Fields: []byte(`{"q":"changed"}`)}}); err != nil {
		t.Fatal(err)
	}
	var got []record.Twin
	if err := s.Twins(ctx, "sha256:set1", func(tw record.Twin) error { got = append(got, tw); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].CaseID != "a" || got[1].CaseID != "b" {
		t.Fatalf("Twins(set1) = %+v, want cases a, b in order", got)
	}
	if string(got[0].Fields) != `{"q":"A twin"}` || got[0].Source != "file:twins.jsonl" || !sameTime(t0(), got[0].CreatedAt) {
		t.Errorf("twin a = %+v, want the first stored twin kept", got[0])
	}
	n := 0
	if err := s.Twins(ctx, "sha256:none", func(record.Twin) error { n++; return nil }); err != nil || n != 0 {
		t.Errorf("Twins(unknown set) streamed %d twins, err %v; want none", n, err)
	}
	if err := s.PutTwins(ctx, []record.Twin{{CaseID: "x"}}); err == nil {
		t.Errorf("PutTwins accepted a twin without a set")
	}
}

// ReplaceScores overwrites a stored verdict (PutScores keeps it) and leaves
// every other verdict as it was.
func testReplaceScores(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustCreate(t, s, newRun("rs", t0()))
	rs, ss := batch("rs", 0, 2, []string{"gpt-small"}, 1)
	mustPut(t, s, rs, ss)
	before := allScores(t, s, "rs", 1)

	// case-0000 failed "exact" (0 % 3 == 0); the new verdict passes it.
	fresh := score(rs[0], 1, "exact", true)
	if err := s.PutScores(ctx, []record.Score{fresh}); err != nil {
		t.Fatalf("PutScores: %v", err)
	}
	for i, sc := range allScores(t, s, "rs", 1) {
		if d := diffFields(before[i], sc); d != nil {
			t.Fatalf("PutScores overwrote a stored verdict:\n%s", strings.Join(d, "\n"))
		}
	}
	if err := s.ReplaceScores(ctx, []record.Score{fresh}); err != nil {
		t.Fatalf("ReplaceScores: %v", err)
	}
	after := allScores(t, s, "rs", 1)
	if len(after) != len(before) {
		t.Fatalf("%d scores after ReplaceScores, want %d", len(after), len(before))
	}
	for i, sc := range after {
		want := before[i]
		if scoreKey(sc) == scoreKey(fresh) {
			want = fresh
		}
		if d := diffFields(want, sc); d != nil {
			t.Errorf("score %s:\n%s", scoreKey(sc), strings.Join(d, "\n"))
		}
	}
	// A score of a result that is not stored is an error, as for PutScores.
	ghost := fresh
	ghost.CaseID = "nope"
	if err := s.ReplaceScores(ctx, []record.Score{ghost}); err == nil {
		t.Errorf("ReplaceScores of a score without a result succeeded")
	}
}

// A result's tool calls round-trip in order with their arguments byte for
// byte (invalid JSON and non-ASCII text too), a result without calls reads
// back nil, and a replaced result keeps the new result's calls.
func testToolCalls(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustCreate(t, s, newRun("r", t0()))
	calls := []record.ToolCall{
		{ID: "c2", Name: "second_in_id_order_first_in_call_order", Arguments: `{"b":1,"a":2}`},
		{ID: "c1", Name: "lookup", Arguments: "{\"q\": \"naïve \u00e9 \\\"quoted\\\"\"}"},
		{Name: "broken", Arguments: `{"q": `},
		{Name: "not_json_at_all", Arguments: "city=Paris\x00?"},
	}
	with := result("r", "a", "t", 1)
	with.ToolCalls = calls
	without := result("r", "b", "t", 1)
	mustPut(t, s, []record.Result{with, without}, nil)
	got := allResults(t, s, "r")
	if len(got) != 2 {
		t.Fatalf("Results: %d, want 2", len(got))
	}
	for _, r := range got {
		want := []record.ToolCall(nil)
		if r.CaseID == "a" {
			want = calls
		}
		if !reflect.DeepEqual(r.ToolCalls, want) {
			t.Errorf("result %s: tool calls %+v, want %+v", keyOf(r), r.ToolCalls, want)
		}
	}
	one, err := s.Result(ctx, "r", with.Key())
	if err != nil || !reflect.DeepEqual(one.ToolCalls, calls) {
		t.Fatalf("Result: %v, tool calls %+v", err, one)
	}
	again := with
	again.ToolCalls = []record.ToolCall{{ID: "c9", Name: "retry", Arguments: "{}"}}
	again.Retries = 2
	if err := s.ReplaceResults(ctx, []record.Result{again}, nil); err != nil {
		t.Fatal(err)
	}
	one, err = s.Result(ctx, "r", with.Key())
	if err != nil || !reflect.DeepEqual(one.ToolCalls, again.ToolCalls) {
		t.Fatalf("after ReplaceResults: %v, tool calls %+v", err, one)
	}
}

// An agent loop's trajectory round-trips whole: every turn in order with
// its text, calls, tool results (errors and odd bytes too), tokens, cost
// and latency; a result of a single call reads back nil turns; a replaced
// result keeps the new result's turns, and one replaced by a single call
// none.
func testTurns(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustCreate(t, s, newRun("r", t0()))
	turns := []record.Turn{
		{ToolCalls: []record.ToolCall{{ID: "c1", Name: "lookup", Arguments: `{"id": 42}`}, {ID: "c2", Name: "broken", Arguments: `{"id": `}},
			Results: []record.ToolResult{
				{CallID: "c1", Name: "lookup", Content: "{\"status\": \"shipped\", \"note\": \"naïve ✓\"}", LatencyMS: 3.25},
				{CallID: "c2", Name: "broken", Content: "error: the arguments are not a JSON object: unexpected end of JSON input"},
			},
			FinishReason: "tool_calls", InputTokens: 120, OutputTokens: 30, CostUSD: 0.0012, LatencyMS: 20.5, FirstTokenMS: 4},
		{Text: "thinking\x00\u202e", ToolCalls: []record.ToolCall{{ID: "c3", Name: "refund", Arguments: `{}`}},
			Results:      []record.ToolResult{{CallID: "c3", Name: "refund", Content: "half a line", Error: "tool_timeout: refund did not answer within 2s", LatencyMS: 2000}},
			FinishReason: "tool_calls", InputTokens: 200, OutputTokens: 10, FromCache: true, LatencyMS: 0.5},
	}
	with := result("r", "a", "t", 1)
	with.Turns = turns
	with.ErrorKind, with.Error = "tool_timeout", "refund did not answer within 2s"
	without := result("r", "b", "t", 1)
	mustPut(t, s, []record.Result{with, without}, nil)
	for _, r := range allResults(t, s, "r") {
		want := []record.Turn(nil)
		if r.CaseID == "a" {
			want = turns
		}
		if !reflect.DeepEqual(r.Turns, want) {
			t.Errorf("result %s: turns %+v, want %+v", keyOf(r), r.Turns, want)
		}
	}
	one, err := s.Result(ctx, "r", with.Key())
	if err != nil || !reflect.DeepEqual(one.Turns, turns) {
		t.Fatalf("Result: %v, turns %+v", err, one)
	}
	again := with
	again.Turns = []record.Turn{{Text: "done", FinishReason: "stop", InputTokens: 1, OutputTokens: 1}}
	again.ErrorKind, again.Error, again.Retries = "", "", 1
	if err := s.ReplaceResults(ctx, []record.Result{again}, nil); err != nil {
		t.Fatal(err)
	}
	one, err = s.Result(ctx, "r", with.Key())
	if err != nil || !reflect.DeepEqual(one.Turns, again.Turns) {
		t.Fatalf("after ReplaceResults: %v, turns %+v", err, one)
	}
	single := with
	single.Turns, single.Retries = nil, 2
	if err := s.ReplaceResults(ctx, []record.Result{single}, nil); err != nil {
		t.Fatal(err)
	}
	if one, err = s.Result(ctx, "r", with.Key()); err != nil || one.Turns != nil {
		t.Fatalf("replaced by a single call: %v, turns %+v", err, one)
	}
}
