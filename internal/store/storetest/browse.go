package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store"
)

// browseTests are the conformance tests of store.Browse: the case
// explorer's filtered, paginated list and a case's page.
var browseTests = []struct {
	name string
	fn   func(*testing.T, store.Store)
}{
	{"BrowseAll", testBrowseAll},
	{"BrowsePages", testBrowsePages},
	{"BrowseFilters", testBrowseFilters},
	{"BrowseErrors", testBrowseErrors},
	{"BrowseSparseMatches", testBrowseSparseMatches},
	{"BrowseBytes", testBrowseBytes},
	{"CaseResults", testCaseResults},
	{"CaseScores", testCaseScores},
}

// browseFixture is a run whose cases' lines do not follow their IDs (c-b
// is line 1; c-c and c-d share line 3), with results of two cases never
// recorded (u-2, u-1), a case with one result only, outputs with mixed
// case, LIKE wildcards, tool calls and a long multi-byte output; scorings
// 1 and 2 complete and 3 pending, each with its own verdicts.
type browseFixture struct {
	run     string
	cases   []record.Case
	results []record.Result // in dataset order
	// scores by scoring, then by result key and scorer.
	scores map[int]map[string]map[string]record.Score
}

func newBrowseFixture(t *testing.T, s store.Store) *browseFixture {
	t.Helper()
	ctx := context.Background()
	run := newRun("browse-1", t0())
	run.Targets, run.Epochs = []string{"t1", "t2"}, 2
	mustCreate(t, s, run)
	fx := &browseFixture{run: run.ID, scores: map[int]map[string]map[string]record.Score{}}
	fx.cases = []record.Case{
		{RunID: run.ID, ID: "c-b", Line: 1, Tags: map[string]string{"lang": "en", "size": "big"}},
		{RunID: run.ID, ID: "c-a", Line: 2, Tags: map[string]string{"lang": "fr"}},
		{RunID: run.ID, ID: "c-c", Line: 3},
		{RunID: run.ID, ID: "c-d", Line: 3, Tags: map[string]string{"lang": "en"}},
		{RunID: run.ID, ID: "c-e", Line: 5, Tags: map[string]string{"lang": "en=x"}},
	}
	if err := s.PutCases(ctx, fx.cases); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("x", store.SnippetBytes-1) + "é and more after the cut, with a Needle"
	raws := map[string]string{
		"c-b/t1/1": "The NEEDLE is here",
		"c-b/t2/2": long,
		"c-a/t1/2": "progress: 100%_done",
		"c-a/t2/1": "progress: 1000 done",
		"c-d/t2/2": "",
		"u-1/t1/1": "a needle without a case",
	}
	n := 0
	for _, c := range []string{"c-b", "c-a", "c-c", "c-d", "c-e", "u-1", "u-2"} {
		for _, tg := range []string{"t1", "t2"} {
			for e := 1; e <= 2; e++ {
				if c == "c-e" && (tg != "t1" || e != 1) {
					continue // a case with one result
				}
				r := result(run.ID, c, tg, e)
				n++
				r.LatencyMS, r.CostUSD = float64(n), float64(n)/1000
				if raw, ok := raws[keyOf(r)]; ok {
					r.Raw = raw
				}
				if keyOf(r) == "c-a/t2/2" {
					r.Raw = ""
					r.ToolCalls = []record.ToolCall{{ID: "1", Name: "lookup", Arguments: `{"q":"needle"}`}, {Name: "calc", Arguments: `{}`}}
				}
				if keyOf(r) == "c-d/t1/1" {
					r.Raw, r.ErrorKind, r.Error = "", "rate_limited", "HTTP 429"
				}
				if keyOf(r) == "c-c/t2/1" {
					r.FromCache, r.SavedUSD, r.CostUSD = true, r.CostUSD, 0
				}
				fx.results = append(fx.results, r)
			}
		}
	}
	// Verdicts: scoring 1 fails every third result, scoring 2 every
	// second, the pending scoring 3 all; the judge is the primary's
	// opposite; c-e and u-2 are not scored in scoring 2.
	verdict := func(scoring int, i int, r record.Result) []record.Score {
		pass := i%3 != 0
		if scoring == 2 {
			pass = i%2 != 0
		}
		if scoring == 3 {
			pass = false
		}
		ex := score(r, scoring, "exact", pass)
		if !pass && i%4 == 0 {
			ex.Shape, ex.Kind = "silent", "empty"
		}
		ju := score(r, scoring, "judge", !pass)
		return []record.Score{ex, ju}
	}
	add := func(ss []record.Score) {
		for _, sc := range ss {
			k := fmt.Sprintf("%s/%s/%d", sc.CaseID, sc.Target, sc.Epoch)
			if fx.scores[sc.Scoring] == nil {
				fx.scores[sc.Scoring] = map[string]map[string]record.Score{}
			}
			if fx.scores[sc.Scoring][k] == nil {
				fx.scores[sc.Scoring][k] = map[string]record.Score{}
			}
			fx.scores[sc.Scoring][k][sc.Scorer] = sc
		}
	}
	var s1 []record.Score
	for i, r := range fx.results {
		s1 = append(s1, verdict(1, i, r)...)
	}
	mustPut(t, s, fx.results, s1)
	add(s1)
	for scoring := 2; scoring <= 3; scoring++ {
		got, err := s.ReserveScoring(ctx, run.ID)
		if err != nil || got != scoring {
			t.Fatalf("ReserveScoring = %d, %v; want %d", got, err, scoring)
		}
		var ss []record.Score
		for i, r := range fx.results {
			if scoring == 2 && (r.CaseID == "c-e" || r.CaseID == "u-2") {
				continue
			}
			ss = append(ss, verdict(scoring, i, r)...)
		}
		if err := s.PutScores(ctx, ss); err != nil {
			t.Fatal(err)
		}
		add(ss)
		if scoring == 2 {
			if err := s.CompleteScoring(ctx, run.ID, scoring); err != nil {
				t.Fatal(err)
			}
		}
	}
	return fx
}

// want is the fixture's results that f selects in scoring, in dataset
// order, as the rows BrowseResults must return: computed from the
// fixture, not read from the store.
func (fx *browseFixture) want(f store.ResultFilter, scoring int) []store.ResultRow {
	cases := map[string]record.Case{}
	for _, c := range fx.cases {
		cases[c.ID] = c
	}
	var out []store.ResultRow
	for _, r := range fx.results {
		k := keyOf(r)
		c, known := cases[r.CaseID]
		prim, scored := fx.scores[scoring][k]["exact"]
		if f.Target != "" && r.Target != f.Target {
			continue
		}
		if f.Tag != "" {
			key, val, _ := strings.Cut(f.Tag, "=")
			if v, ok := c.Tags[key]; !ok || v != val {
				continue
			}
		}
		if f.Scorer != "" {
			sc, ok := fx.scores[scoring][k][f.Scorer]
			if !ok || (f.Verdict != "" && sc.Pass != (f.Verdict == "pass")) {
				continue
			}
		} else if f.Verdict != "" && (!scored || prim.Pass != (f.Verdict == "pass")) {
			continue
		}
		if f.Shape != "" && (!scored || prim.Shape != f.Shape) {
			continue
		}
		if f.Kind != "" && (!scored || prim.Kind != f.Kind) {
			continue
		}
		if f.Text != "" {
			hay := r.Raw
			for _, tc := range r.ToolCalls {
				hay += "\x00" + tc.Name + "\x00" + tc.Arguments
			}
			if !strings.Contains(strings.ToLower(hay), strings.ToLower(f.Text)) && !slices.Contains(f.TextCases, r.CaseID) {
				continue
			}
		}
		if f.CaseIDs != nil && !slices.Contains(f.CaseIDs, r.CaseID) {
			continue
		}
		row := store.ResultRow{CaseID: r.CaseID, Target: r.Target, Epoch: r.Epoch, RawBytes: len(r.Raw), ToolCalls: len(r.ToolCalls),
			LatencyMS: r.LatencyMS, CostUSD: r.CostUSD, FromCache: r.FromCache, ErrorKind: r.ErrorKind}
		if known {
			row.Line = c.Line
		}
		row.Snippet = r.Raw
		if len(row.Snippet) > store.SnippetBytes {
			row.Snippet = row.Snippet[:store.SnippetBytes]
			for !utf8.ValidString(row.Snippet) {
				row.Snippet = row.Snippet[:len(row.Snippet)-1]
			}
		}
		if scored {
			row.Scored, row.Scorer, row.Pass, row.Value, row.Shape, row.Kind = true, "exact", prim.Pass, prim.Value, prim.Shape, prim.Kind
		}
		out = append(out, row)
	}
	return out
}

// browseAll follows the cursors from the start with pages of limit rows
// and returns every row, failing on a cursor that does not move on.
func browseAll(t *testing.T, s store.Store, run string, scoring int, f store.ResultFilter, limit int) []store.ResultRow {
	t.Helper()
	var out []store.ResultRow
	after := ""
	for calls := 0; ; calls++ {
		if calls > 100_000 {
			t.Fatalf("BrowseResults(%+v, limit %d): still not done after %d calls", f, limit, calls)
		}
		rows, next, err := s.BrowseResults(context.Background(), run, scoring, f, after, limit)
		if err != nil {
			t.Fatalf("BrowseResults(%+v, after %q, limit %d): %v", f, after, limit, err)
		}
		if len(rows) > limit {
			t.Fatalf("BrowseResults(limit %d) returned %d rows", limit, len(rows))
		}
		out = append(out, rows...)
		if next == "" {
			return out
		}
		if next == after {
			t.Fatalf("BrowseResults(%+v, after %q): the cursor did not move", f, after)
		}
		after = next
	}
}

func rowKeys(rows []store.ResultRow) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = fmt.Sprintf("%s/%s/%d", r.CaseID, r.Target, r.Epoch)
	}
	return out
}

func checkRows(t *testing.T, what string, want, got []store.ResultRow) {
	t.Helper()
	if !slices.Equal(rowKeys(want), rowKeys(got)) {
		t.Fatalf("%s: rows\n%q\nwant\n%q", what, rowKeys(got), rowKeys(want))
	}
	for i := range want {
		if want[i] != got[i] {
			t.Errorf("%s: row %s differs in %v\ngot  %+v\nwant %+v", what, rowKeys(want)[i], diffFields(want[i], got[i]), got[i], want[i])
		}
	}
}

// Every result, in dataset order (line, then case ID on a shared line,
// results of unrecorded cases last by ID), with the latest complete
// scoring's primary verdict (2: 3 is pending) and a bounded snippet.
func testBrowseAll(t *testing.T, s store.Store) {
	fx := newBrowseFixture(t, s)
	got := browseAll(t, s, fx.run, 0, store.ResultFilter{}, 1000)
	want := fx.want(store.ResultFilter{}, 2)
	checkRows(t, "every result", want, got)
	order := []string{"c-b", "c-a", "c-c", "c-d", "c-e", "u-1", "u-2"}
	var seen []string
	for _, r := range got {
		if len(seen) == 0 || seen[len(seen)-1] != r.CaseID {
			seen = append(seen, r.CaseID)
		}
	}
	if !slices.Equal(seen, order) {
		t.Errorf("cases in the order %q, want %q", seen, order)
	}
	for _, r := range got {
		if len(r.Snippet) > store.SnippetBytes || !utf8.ValidString(r.Snippet) {
			t.Errorf("%s/%s/%d: snippet of %d bytes (valid UTF-8 %v), want at most %d whole runes", r.CaseID, r.Target, r.Epoch, len(r.Snippet), utf8.ValidString(r.Snippet), store.SnippetBytes)
		}
	}
	// Scoring 1 asked for by number.
	checkRows(t, "scoring 1", fx.want(store.ResultFilter{}, 1), browseAll(t, s, fx.run, 1, store.ResultFilter{}, 1000))
}

// Pages of any size yield every result exactly once, in the same order;
// each cursor stands at the case of the page's last row.
func testBrowsePages(t *testing.T, s store.Store) {
	fx := newBrowseFixture(t, s)
	want := fx.want(store.ResultFilter{}, 2)
	after := ""
	for {
		rows, next, err := s.BrowseResults(context.Background(), fx.run, 0, store.ResultFilter{}, after, 3)
		if err != nil {
			t.Fatal(err)
		}
		if next == "" {
			break
		}
		last := rows[len(rows)-1]
		if id, line, ok := s.CursorPosition(next); !ok || id != last.CaseID || line != last.Line {
			t.Errorf("CursorPosition after %s/%s/%d = %q, %d, %v; want %q, %d", last.CaseID, last.Target, last.Epoch, id, line, ok, last.CaseID, last.Line)
		}
		after = next
	}
	for _, bad := range []string{"", "garbage!", "e30"} {
		if _, _, ok := s.CursorPosition(bad); ok {
			t.Errorf("CursorPosition(%q): ok, want not a cursor", bad)
		}
	}
	for _, limit := range []int{1, 2, 3, 4, 5, 7, len(want) - 1, len(want), len(want) + 1} {
		checkRows(t, fmt.Sprintf("pages of %d", limit), want, browseAll(t, s, fx.run, 0, store.ResultFilter{}, limit))
	}
	f := store.ResultFilter{Verdict: "fail"}
	for _, limit := range []int{1, 2, 3} {
		checkRows(t, fmt.Sprintf("failures in pages of %d", limit), fx.want(f, 2), browseAll(t, s, fx.run, 0, f, limit))
	}
}

// Each filter, alone and together, selects exactly the results it names.
func testBrowseFilters(t *testing.T, s store.Store) {
	fx := newBrowseFixture(t, s)
	filters := []store.ResultFilter{
		{Target: "t2"},
		{Target: "nobody"},
		{Tag: "lang=en"},
		{Tag: "lang=en=x"},
		{Tag: "size=big"},
		{Tag: "lang=de"},
		{Verdict: "pass"},
		{Verdict: "fail"},
		{Scorer: "judge", Verdict: "pass"},
		{Scorer: "judge", Verdict: "fail"},
		{Scorer: "judge"},
		{Scorer: "nope", Verdict: "pass"},
		{Shape: "silent"},
		{Shape: "loud"},
		{Shape: "pass"},
		{Kind: "empty"},
		{Kind: "wrong", Target: "t1"},
		{Text: "needle"}, // mixed case, tool call arguments, a case never recorded
		{Text: "0%_d"},   // wildcards taken literally
		{Text: "%"},      // likewise
		{Text: "nowhere at all"},
		{Text: "nowhere at all", TextCases: []string{"c-c", "u-2"}},
		{Text: "needle", TextCases: []string{"c-e"}},
		{CaseIDs: []string{"c-d", "u-1", "c-b"}},
		{CaseIDs: []string{}},
		{Tag: "lang=en", Verdict: "fail", Target: "t1"},
		{Scorer: "exact", Verdict: "fail", Shape: "loud", Text: "reply"},
	}
	for _, f := range filters {
		for _, scoring := range []int{0, 1} {
			sc := scoring
			if sc == 0 {
				sc = 2
			}
			checkRows(t, fmt.Sprintf("filter %+v scoring %d", f, scoring), fx.want(f, sc), browseAll(t, s, fx.run, scoring, f, 3))
		}
	}
}

func testBrowseErrors(t *testing.T, s store.Store) {
	fx := newBrowseFixture(t, s)
	ctx := context.Background()
	if _, _, err := s.BrowseResults(ctx, "no-such-run", 0, store.ResultFilter{}, "", 10); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("BrowseResults of a run that does not exist: %v, want ErrNotFound", err)
	}
	for _, bad := range []string{"garbage!", "e30", "%%%"} {
		if _, _, err := s.BrowseResults(ctx, fx.run, 0, store.ResultFilter{}, bad, 10); !errors.Is(err, store.ErrBadCursor) {
			t.Errorf("BrowseResults(after %q): %v, want ErrBadCursor", bad, err)
		}
	}
	if _, _, err := s.BrowseResults(ctx, fx.run, 0, store.ResultFilter{Verdict: "maybe"}, "", 10); err == nil {
		t.Error("BrowseResults(verdict maybe): no error")
	}
	if _, _, err := s.BrowseResults(ctx, fx.run, 0, store.ResultFilter{Tag: "lang"}, "", 10); err == nil {
		t.Error("BrowseResults(tag without =): no error")
	}
	// A run without scores lists its results unscored.
	run := newRun("browse-unscored", t0())
	mustCreate(t, s, run)
	mustPut(t, s, []record.Result{result(run.ID, "a", "gpt-small", 1)}, nil)
	rows := browseAll(t, s, run.ID, 0, store.ResultFilter{}, 10)
	if len(rows) != 1 || rows[0].Scored {
		t.Errorf("a run without scores: %+v, want one unscored row", rows)
	}
}

// A filter that matches a few results among many finds each of them once,
// however the store bounds the work of one call.
func testBrowseSparseMatches(t *testing.T, s store.Store) {
	if testing.Short() {
		t.Skip("stores 30,000 results")
	}
	run := newRun("browse-sparse", t0())
	run.Targets, run.Epochs = []string{"a", "b", "c"}, 2
	mustCreate(t, s, run)
	const cases = 5000
	var cs []record.Case
	var rs []record.Result
	var want []string
	for i := range cases {
		id := fmt.Sprintf("k%05d", i)
		cs = append(cs, record.Case{RunID: run.ID, ID: id, Line: i + 1})
		for _, tg := range run.Targets {
			for e := 1; e <= 2; e++ {
				r := record.Result{RunID: run.ID, CaseID: id, Target: tg, Epoch: e, Raw: "plain"}
				if i%1700 == 3 && tg == "b" {
					r.Raw = "a rare find"
					want = append(want, keyOf(r))
				}
				rs = append(rs, r)
			}
		}
	}
	// An unrecorded case after all of them.
	rs = append(rs, record.Result{RunID: run.ID, CaseID: "zzz", Target: "a", Epoch: 1, Raw: "rare too"})
	want = append(want, "zzz/a/1")
	if err := s.PutCases(context.Background(), cs); err != nil {
		t.Fatal(err)
	}
	mustPut(t, s, rs, nil)
	for _, limit := range []int{1, 50} {
		got := rowKeys(browseAll(t, s, run.ID, 0, store.ResultFilter{Text: "RARE"}, limit))
		if !slices.Equal(got, want) {
			t.Errorf("pages of %d: %q, want %q", limit, got, want)
		}
	}
	if n := len(browseAll(t, s, run.ID, 0, store.ResultFilter{}, 1000)); n != len(rs) {
		t.Errorf("every result in pages of 1000: %d rows, want %d", n, len(rs))
	}
}

func testCaseResults(t *testing.T, s store.Store) {
	fx := newBrowseFixture(t, s)
	ctx := context.Background()
	c, rs, err := s.CaseResults(ctx, fx.run, "c-b")
	if err != nil {
		t.Fatal(err)
	}
	if c == nil || c.ID != "c-b" || c.Line != 1 || c.Tags["size"] != "big" {
		t.Errorf("case c-b: %+v", c)
	}
	var want []record.Result
	for _, r := range fx.results {
		if r.CaseID == "c-b" {
			want = append(want, r)
		}
	}
	if len(rs) != len(want) {
		t.Fatalf("case c-b: %d results, want %d", len(rs), len(want))
	}
	for i := range want {
		if d := diffFields(want[i], rs[i]); len(d) > 0 {
			t.Errorf("case c-b result %d (%s): differs in %v", i, keyOf(want[i]), d)
		}
	}
	// A case never recorded: its results, no case.
	c, rs, err = s.CaseResults(ctx, fx.run, "u-1")
	if err != nil || c != nil || len(rs) != 4 {
		t.Errorf("case u-1 (never recorded): %+v, %d results, %v; want no case, 4 results", c, len(rs), err)
	}
	if _, _, err := s.CaseResults(ctx, fx.run, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a case the run does not have: %v, want ErrNotFound", err)
	}
	if _, _, err := s.CaseResults(ctx, "no-run", "c-b"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a run that does not exist: %v, want ErrNotFound", err)
	}
}

func testCaseScores(t *testing.T, s store.Store) {
	fx := newBrowseFixture(t, s)
	got, err := s.CaseScores(context.Background(), fx.run, "c-a")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, scoring := range []int{3, 2, 1} {
		for _, r := range fx.results {
			if r.CaseID != "c-a" {
				continue
			}
			for _, scorer := range []string{"exact", "judge"} {
				if _, ok := fx.scores[scoring][keyOf(r)][scorer]; ok {
					want = append(want, fmt.Sprintf("%d %s %s pending=%v", scoring, keyOf(r), scorer, scoring == 3))
				}
			}
		}
	}
	var keys []string
	for _, sc := range got {
		keys = append(keys, fmt.Sprintf("%d %s/%s/%d %s pending=%v", sc.Scoring, sc.CaseID, sc.Target, sc.Epoch, sc.Scorer, sc.Pending))
		w := fx.scores[sc.Scoring][fmt.Sprintf("%s/%s/%d", sc.CaseID, sc.Target, sc.Epoch)][sc.Scorer]
		if d := diffFields(w, sc.Score); len(d) > 0 {
			t.Errorf("score %s differs in %v", keys[len(keys)-1], d)
		}
	}
	if !slices.Equal(keys, want) {
		t.Errorf("scores of c-a:\n%s\nwant\n%s", strings.Join(keys, "\n"), strings.Join(want, "\n"))
	}
	if got, err := s.CaseScores(context.Background(), fx.run, "nope"); err != nil || len(got) != 0 {
		t.Errorf("scores of a case the run does not have: %v, %v; want none", got, err)
	}
}

// Case IDs and targets are bytes, not necessarily UTF-8 (a CSV dataset's
// ID column): pages of any size that end mid-case still yield every
// result exactly once, in order — a cursor keeps the bytes it stands at.
func testBrowseBytes(t *testing.T, s store.Store) {
	ctx := context.Background()
	run := newRun("browse-bytes", t0())
	run.Targets, run.Epochs = []string{"t\xff", "t\xfe"}, 2
	mustCreate(t, s, run)
	// Two recorded cases on one line (ordered by ID: \xfe-a before \xff-a)
	// and one never recorded, whose results come last.
	cases := []record.Case{{RunID: run.ID, ID: "\xff-a", Line: 1}, {RunID: run.ID, ID: "\xfe-a", Line: 1}}
	if err := s.PutCases(ctx, cases); err != nil {
		t.Fatal(err)
	}
	var want []string
	var rs []record.Result
	for _, c := range []string{"\xfe-a", "\xff-a", "\xff-u"} {
		for _, tg := range []string{"t\xfe", "t\xff"} {
			for e := 1; e <= 2; e++ {
				r := result(run.ID, c, tg, e)
				rs = append(rs, r)
				want = append(want, keyOf(r))
			}
		}
	}
	mustPut(t, s, rs, nil)
	for _, limit := range []int{1, 2, 3, 5, len(want)} {
		got := rowKeys(browseAll(t, s, run.ID, 0, store.ResultFilter{}, limit))
		if !slices.Equal(got, want) {
			t.Errorf("pages of %d: rows\n%q\nwant\n%q", limit, got, want)
		}
	}
	after := ""
	for {
		rows, next, err := s.BrowseResults(ctx, run.ID, 0, store.ResultFilter{}, after, 3)
		if err != nil || next == "" {
			break
		}
		if id, _, ok := s.CursorPosition(next); !ok || id != rows[len(rows)-1].CaseID {
			t.Errorf("CursorPosition = %q, %v; want the page's last case %q", id, ok, rows[len(rows)-1].CaseID)
		}
		after = next
	}
}
