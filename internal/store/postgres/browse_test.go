package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store"
	"github.com/assay-eval/assay/internal/store/sqlite"
)

// hostileRun is a run whose outputs, case IDs and tags hold what the
// PostgreSQL store's filters must read as SQLite's do: NUL and bytes that
// are not UTF-8, literal backslashes before octal digits (BYTEA's escape
// form of a byte), non-ASCII capitals, a tag value holding a NUL and one
// holding the text of another tag pair; case IDs whose bytewise order is
// not a collation's.
type hostileRun struct {
	run     *record.Run
	cases   []record.Case
	results []record.Result // in dataset order
}

func newHostileRun() *hostileRun {
	run := &record.Run{ID: "hostile", Targets: []string{"t"}, Epochs: 1, Status: record.StatusRunning}
	h := &hostileRun{run: run}
	known := []struct {
		id, raw string
		tags    map[string]string
	}{
		{"k-1", "Answer: 72", map[string]string{"lang": "en"}},
		{"k-2", `\200 is a literal backslash and 200`, map[string]string{"note": `x","lang":"en`}},
		{"k-3", "\x80%_d after a byte of 128", map[string]string{"lang": "en", "nul": "a\x00b"}},
		{"k-4", "NUL\x00Byte", map[string]string{"lang": "fr", "q": `say "hi", {ok}`}},
		{"k-5", "Émile ÉCOLE", nil},
		{"k-6", "\xff\xfeABC not UTF-8", map[string]string{"lang": "en=x"}},
	}
	for i, k := range known {
		h.cases = append(h.cases, record.Case{RunID: run.ID, ID: k.id, Line: i + 1, Tags: k.tags})
		h.results = append(h.results, record.Result{RunID: run.ID, CaseID: k.id, Target: "t", Epoch: 1, Raw: k.raw})
	}
	// Cases never recorded, in bytewise order (a collation would put
	// "a" before "Z" or fold "é" next to "e").
	for _, id := range []string{"Z", "a", "~", "é", "ÿ", "Ā"} {
		h.results = append(h.results, record.Result{RunID: run.ID, CaseID: id, Target: "t", Epoch: 1, Raw: "unknown " + id + ` \\ 0 \x00`})
	}
	return h
}

func (h *hostileRun) store(t *testing.T, s store.Store) {
	t.Helper()
	ctx := context.Background()
	if err := s.CreateRun(ctx, h.run); err != nil {
		t.Fatal(err)
	}
	if err := s.PutCases(ctx, h.cases); err != nil {
		t.Fatal(err)
	}
	var scores []record.Score
	for i, r := range h.results {
		scores = append(scores, record.Score{RunID: r.RunID, Scoring: 1, CaseID: r.CaseID, Target: r.Target, Epoch: r.Epoch,
			Scorer: "exact", Primary: true, Pass: i%2 == 0, Shape: "pass"})
	}
	if err := s.PutResults(ctx, h.results, scores); err != nil {
		t.Fatal(err)
	}
}

// want is the keys of the results f selects (Text and Tag only), computed
// from the fixture: Text found in the output's bytes with ASCII letters
// folded, Tag a key whose value is the text after the first '='.
func (h *hostileRun) want(f store.ResultFilter) []string {
	tags := map[string]map[string]string{}
	for _, c := range h.cases {
		tags[c.ID] = c.Tags
	}
	var out []string
	for _, r := range h.results {
		if f.Text != "" && !instr(asciiLower(r.Raw), asciiLower(f.Text)) {
			continue
		}
		if f.Tag != "" {
			k, v, _ := strings.Cut(f.Tag, "=")
			if got, ok := tags[r.CaseID][k]; !ok || got != v {
				continue
			}
		}
		out = append(out, r.CaseID)
	}
	return out
}

// instr reports whether needle is in hay at its start or at the start of
// one of its characters (a byte that is not a UTF-8 continuation byte), as
// SQLite's instr() looks.
func instr(hay, needle string) bool {
	for i := 0; i+len(needle) <= len(hay); i++ {
		if (i == 0 || hay[i] < 0x80 || hay[i] >= 0xc0) && hay[i:i+len(needle)] == needle {
			return true
		}
	}
	return false
}

// page is one BrowseResults call's answer.
type page struct {
	Rows []store.ResultRow
	Next string
}

func pages(t *testing.T, s store.Store, f store.ResultFilter, limit int) []page {
	t.Helper()
	var out []page
	after := ""
	for range 1000 {
		rows, next, err := s.BrowseResults(context.Background(), "hostile", 0, f, after, limit)
		if err != nil {
			t.Fatalf("BrowseResults(%+v, after %q, limit %d): %v", f, after, limit, err)
		}
		out = append(out, page{rows, next})
		if next == "" {
			return out
		}
		after = next
	}
	t.Fatalf("BrowseResults(%+v, limit %d): not done after 1000 pages", f, limit)
	return nil
}

// The PostgreSQL store finds what SQLite finds among hostile bytes, and
// both return the same pages with the same cursors, byte for byte.
func TestBrowseMatchesSQLite(t *testing.T) {
	pg := openTemp(t)
	lite, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "assay.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	h := newHostileRun()
	h.store(t, pg)
	h.store(t, lite)

	filters := []store.ResultFilter{
		{},
		{Text: "answer"},
		{Text: "\x80"},      // the byte, not the text `\200`
		{Text: `\2`},        // the text, not the escape of a byte
		{Text: `\200`},      // likewise
		{Text: "0%_d"},      // not inside the escape of \x80 followed by %_d
		{Text: "\x80%"},     // the byte then the text
		{Text: "l\x00b"},    // NUL, ASCII folded around it
		{Text: "\x00"},      // NUL alone
		{Text: "école"},     // É is not é: only ASCII letters fold
		{Text: "ÉCOLE"},     // exactly
		{Text: "cole"},      // ASCII folded
		{Text: "\xfeabc"},   // bytes that are not UTF-8, then folded letters
		{Text: "\\\\ 0"},    // two backslashes
		{Text: "007"},       // an octal-looking needle found nowhere
		{Tag: "lang=en"},    // not in k-2's note, which holds `","lang":"en`
		{Tag: "nul=a\x00b"}, // a value with a NUL
		{Tag: "lang=en=x"},  // the value is what follows the first '='
		{Tag: `q=say "hi", {ok}`},
		{Tag: "note=x"},
		{Tag: "lang=\xff"}, // not UTF-8: no stored tag is
	}
	for _, f := range filters {
		got := rowKeysOf(pages(t, pg, f, 100))
		if w := h.want(f); !slices.Equal(got, w) {
			t.Errorf("PostgreSQL, filter %+q: cases %q, want %q", f, got, w)
		}
		for _, limit := range []int{1, 2, 5, 100} {
			p, l := pages(t, pg, f, limit), pages(t, lite, f, limit)
			if !slices.EqualFunc(p, l, samePage) {
				t.Errorf("filter %+q, pages of %d:\nPostgreSQL %s\nSQLite     %s", f, limit, pagesJSON(p), pagesJSON(l))
			}
		}
	}
}

func samePage(a, b page) bool { return a.Next == b.Next && slices.Equal(a.Rows, b.Rows) }

func rowKeysOf(ps []page) []string {
	var out []string
	for _, p := range ps {
		for _, r := range p.Rows {
			out = append(out, r.CaseID)
		}
	}
	return out
}

func pagesJSON(ps []page) string {
	b, _ := json.Marshal(ps)
	return string(b)
}

// The light streams and a case's page read the same from both stores.
func TestKeysAndCaseMatchSQLite(t *testing.T) {
	ctx := context.Background()
	pg := openTemp(t)
	lite, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "assay.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	h := newHostileRun()
	h.store(t, pg)
	h.store(t, lite)
	read := func(s store.Store) string {
		var b strings.Builder
		if err := s.ResultKeys(ctx, "hostile", func(k record.Key, failed bool) error {
			fmt.Fprintf(&b, "key %q %q %d %v\n", k.CaseID, k.Target, k.Epoch, failed)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if err := s.Verdicts(ctx, "hostile", 1, "exact", func(k record.Key, pass bool, kind string) error {
			fmt.Fprintf(&b, "verdict %q %v %q\n", k.CaseID, pass, kind)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{"k-3", "ÿ"} {
			c, rs, err := s.CaseResults(ctx, "hostile", id)
			if err != nil {
				t.Fatal(err)
			}
			cj, _ := json.Marshal(c)
			rj, _ := json.Marshal(rs)
			fmt.Fprintf(&b, "case %s %s\n", cj, rj)
			ss, err := s.CaseScores(ctx, "hostile", id)
			if err != nil {
				t.Fatal(err)
			}
			sj, _ := json.Marshal(ss)
			fmt.Fprintf(&b, "scores %s\n", sj)
		}
		return b.String()
	}
	if p, l := read(pg), read(lite); p != l {
		t.Errorf("PostgreSQL reads\n%s\nSQLite reads\n%s", p, l)
	}
	// Run IDs that TEXT cannot hold name no run.
	for _, id := range []string{"\xff", "a\x00b"} {
		if _, _, err := pg.BrowseResults(ctx, id, 1, store.ResultFilter{}, "", 10); !isNotFound(err) {
			t.Errorf("BrowseResults(run %q): %v, want ErrNotFound", id, err)
		}
		if _, _, err := pg.CaseResults(ctx, id, "k-1"); !isNotFound(err) {
			t.Errorf("CaseResults(run %q): %v, want ErrNotFound", id, err)
		}
		if err := pg.ResultKeys(ctx, id, func(record.Key, bool) error { return fmt.Errorf("a key") }); err != nil {
			t.Errorf("ResultKeys(run %q): %v, want none", id, err)
		}
	}
}

func isNotFound(err error) bool { return errors.Is(err, store.ErrNotFound) }
