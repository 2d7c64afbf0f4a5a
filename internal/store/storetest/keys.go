package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store"
)

// keyTests are the conformance tests of store.Keys: the light streams of
// result keys and one scorer's verdicts.
var keyTests = []struct {
	name string
	fn   func(*testing.T, store.Store)
}{
	{"ResultKeys", testResultKeys},
	{"Verdicts", testVerdicts},
	{"KeysCallbackError", testKeysCallbackError},
}

func allResultKeys(t *testing.T, s store.Store, run string) []string {
	t.Helper()
	var out []string
	if err := s.ResultKeys(context.Background(), run, func(k record.Key, failed bool) error {
		out = append(out, fmt.Sprintf("%s/%s/%d failed=%t", k.CaseID, k.Target, k.Epoch, failed))
		return nil
	}); err != nil {
		t.Fatalf("ResultKeys(%q): %v", run, err)
	}
	return out
}

func allVerdicts(t *testing.T, s store.Store, run string, scoring int, scorer string) []string {
	t.Helper()
	var out []string
	if err := s.Verdicts(context.Background(), run, scoring, scorer, func(k record.Key, pass bool, kind string) error {
		out = append(out, fmt.Sprintf("%s/%s/%d pass=%t", k.CaseID, k.Target, k.Epoch, pass))
		if kind != "" {
			out[len(out)-1] += " kind=" + kind
		}
		return nil
	}); err != nil {
		t.Fatalf("Verdicts(%q, %d, %q): %v", run, scoring, scorer, err)
	}
	return out
}

func testResultKeys(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustCreate(t, s, newRun("r", t0()), newRun("other", t0()), newRun("empty", t0()))
	// Line order differs from ID order ("c10" < "c2" < "c9" as strings).
	if err := s.PutCases(ctx, []record.Case{
		{RunID: "r", ID: "c9", Line: 1},
		{RunID: "r", ID: "c10", Line: 2},
		{RunID: "r", ID: "c2", Line: 3},
	}); err != nil {
		t.Fatalf("PutCases: %v", err)
	}
	// The order of Results, written out: cases by line, targets by name,
	// epochs numerically, then case IDs with no stored case by ID. Every
	// third result is a failed call.
	var keys []string
	for _, c := range []string{"c9", "c10", "c2"} {
		for _, tg := range []string{"alpha", "beta"} {
			for _, e := range []int{1, 2, 10} {
				keys = append(keys, fmt.Sprintf("%s/%s/%d", c, tg, e))
			}
		}
	}
	keys = append(keys, "aa-orphan/alpha/1", "zz-orphan/alpha/1")
	failed := func(i int) bool { return i%3 == 1 }
	var want []string
	for i, k := range keys {
		want = append(want, fmt.Sprintf("%s failed=%t", k, failed(i)))
	}

	// Stored in scrambled order, over two calls.
	perm := []int{17, 3, 12, 0, 19, 8, 5, 14, 1, 10, 6, 15, 2, 11, 18, 4, 9, 16, 7, 13}
	var rs []record.Result
	for _, i := range perm {
		var c, tg string
		var e int
		fmt.Sscanf(strings.ReplaceAll(keys[i], "/", " "), "%s %s %d", &c, &tg, &e)
		r := result("r", c, tg, e)
		if failed(i) {
			r.Raw, r.ErrorKind, r.Error = "", "timeout", "deadline exceeded after 60s"
		}
		rs = append(rs, r)
	}
	mustPut(t, s, rs[:9], nil)
	mustPut(t, s, rs[9:], nil)
	other, otherScores := batch("other", 0, 3, []string{"alpha"}, 1)
	mustPut(t, s, other, otherScores)

	got := allResultKeys(t, s, "r")
	if !slices.Equal(got, want) {
		t.Errorf("ResultKeys:\n got %q\nwant %q", got, want)
	}
	// The same order and failures as Results, whatever that streams.
	var fromResults []string
	for _, r := range allResults(t, s, "r") {
		fromResults = append(fromResults, fmt.Sprintf("%s failed=%t", keyOf(r), r.ErrorKind != ""))
	}
	if !slices.Equal(got, fromResults) {
		t.Errorf("ResultKeys differs from Results:\n keys    %q\n results %q", got, fromResults)
	}

	// A run with no results, and no run at all, stream nothing (as Results).
	for _, run := range []string{"empty", "no-such-run"} {
		if got := allResultKeys(t, s, run); len(got) != 0 {
			t.Errorf("ResultKeys(%q) = %q; want nothing", run, got)
		}
	}

	// A replaced result's failure is the new call's.
	fixed := result("r", "c10", "alpha", 2)
	if err := s.ReplaceResults(ctx, []record.Result{fixed}, nil); err != nil {
		t.Fatalf("ReplaceResults: %v", err)
	}
	got = allResultKeys(t, s, "r")
	if i := slices.Index(keys, "c10/alpha/2"); !failed(i) || got[i] != "c10/alpha/2 failed=false" {
		t.Errorf("after replacing failed c10/alpha/2 with an output, ResultKeys has %q", got[i])
	}
}

func testVerdicts(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustCreate(t, s, newRun("r", t0()), newRun("other", t0()))
	if err := s.PutCases(ctx, []record.Case{
		{RunID: "r", ID: "c9", Line: 1},
		{RunID: "r", ID: "c10", Line: 2},
	}); err != nil {
		t.Fatalf("PutCases: %v", err)
	}
	// Scoring 1: "judge" passes c9 and fails c10, and did not score the
	// orphan's epoch 2; "exact" fails everything. Scoring 2 (a rescore):
	// "judge" flips every verdict.
	var rs []record.Result
	var ss1, ss2 []record.Score
	for _, k := range []struct {
		c, tg string
		e     int
	}{{"c10", "b", 1}, {"c9", "b", 1}, {"c9", "a", 10}, {"c9", "a", 2}, {"c10", "a", 1}, {"orphan", "a", 1}, {"orphan", "a", 2}} {
		r := result("r", k.c, k.tg, k.e)
		rs = append(rs, r)
		pass := k.c == "c9" || k.c == "orphan"
		ss1 = append(ss1, score(r, 1, "exact", false))
		if !(k.c == "orphan" && k.e == 2) {
			ss1 = append(ss1, score(r, 1, "judge", pass))
		}
		ss2 = append(ss2, score(r, 2, "judge", !pass))
	}
	mustPut(t, s, rs, ss1)
	if err := s.PutScores(ctx, ss2); err != nil {
		t.Fatalf("PutScores: %v", err)
	}
	o, oScores := batch("other", 0, 3, []string{"a"}, 1)
	for i := range oScores {
		oScores[i].Scorer = "judge"
	}
	mustPut(t, s, o, oScores[:3])

	// By case ID (as strings: c10 before c9), target, epoch numerically.
	want := []string{
		"c10/a/1 pass=false kind=wrong", "c10/b/1 pass=false kind=wrong",
		"c9/a/2 pass=true", "c9/a/10 pass=true", "c9/b/1 pass=true",
		"orphan/a/1 pass=true",
	}
	if got := allVerdicts(t, s, "r", 1, "judge"); !slices.Equal(got, want) {
		t.Errorf("Verdicts(r, 1, judge):\n got %q\nwant %q", got, want)
	}
	want2 := []string{
		"c10/a/1 pass=true", "c10/b/1 pass=true",
		"c9/a/2 pass=false kind=wrong", "c9/a/10 pass=false kind=wrong", "c9/b/1 pass=false kind=wrong",
		"orphan/a/1 pass=false kind=wrong", "orphan/a/2 pass=false kind=wrong",
	}
	if got := allVerdicts(t, s, "r", 2, "judge"); !slices.Equal(got, want2) {
		t.Errorf("Verdicts(r, 2, judge):\n got %q\nwant %q", got, want2)
	}
	// The verdicts are Scores' for that scorer, whatever Scores streams.
	var fromScores []string
	for _, sc := range allScores(t, s, "r", 1) {
		if sc.Scorer == "judge" {
			fromScores = append(fromScores, fmt.Sprintf("%s/%s/%d pass=%t", sc.CaseID, sc.Target, sc.Epoch, sc.Pass))
			if sc.Kind != "" {
				fromScores[len(fromScores)-1] += " kind=" + sc.Kind
			}
		}
	}
	slices.Sort(fromScores)
	got := allVerdicts(t, s, "r", 1, "judge")
	slices.Sort(got)
	if !slices.Equal(got, fromScores) {
		t.Errorf("Verdicts differ from Scores:\n verdicts %q\n scores   %q", got, fromScores)
	}

	// Nothing for a scorer with no scores in the scoring, a scoring with
	// no scores, a scorer named by a prefix, or a run that does not exist.
	for _, tc := range []struct {
		run     string
		scoring int
		scorer  string
	}{{"r", 2, "exact"}, {"r", 1, "nobody"}, {"r", 3, "judge"}, {"r", 1, "judg"}, {"r", 1, ""}, {"no-such-run", 1, "judge"}} {
		if got := allVerdicts(t, s, tc.run, tc.scoring, tc.scorer); len(got) != 0 {
			t.Errorf("Verdicts(%q, %d, %q) = %q; want nothing", tc.run, tc.scoring, tc.scorer, got)
		}
	}
}

func testKeysCallbackError(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustCreate(t, s, newRun("r", t0()))
	rs, ss := batch("r", 0, 10, []string{"a"}, 1)
	mustPut(t, s, rs, ss)
	errStop := errors.New("stop here")
	for _, tc := range []struct {
		name   string
		stream func(f func() error) error
	}{
		{"ResultKeys", func(f func() error) error {
			return s.ResultKeys(ctx, "r", func(record.Key, bool) error { return f() })
		}},
		{"Verdicts", func(f func() error) error {
			return s.Verdicts(ctx, "r", 1, "exact", func(record.Key, bool, string) error { return f() })
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
			t.Errorf("%s: a callback's error is returned wrapped; got %v", tc.name, err)
		}
		if calls != 3 {
			t.Errorf("%s: the stream went on after the callback failed: %d calls, want 3", tc.name, calls)
		}
	}
}
