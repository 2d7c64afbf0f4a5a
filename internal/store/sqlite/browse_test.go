package sqlite

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store"
)

// FuzzBrowseResults gives BrowseResults any cursor (the explorer's ?after=
// comes from the URL) and any search text: it answers ErrBadCursor or rows
// in the run's order after some position, each matching the text (ASCII
// letters folded, every other byte compared as it is), never more than asked.
func FuzzBrowseResults(f *testing.F) {
	d := openTemp(f)
	ctx := context.Background()
	if err := d.CreateRun(ctx, &record.Run{ID: "r", Targets: []string{"a", "b"}, Epochs: 1, Status: record.StatusComplete, Started: time.Unix(1, 0)}); err != nil {
		f.Fatal(err)
	}
	raws := []string{"Plain", "nul\x00byte", "100%_done", `back\slash`, "ÜNÏ ünï", "\xff\xfe bytes", "", "a'b\"c", "MiXeD CaSe"}
	var cases []record.Case
	var results []record.Result
	for i := range 6 {
		id := fmt.Sprintf("c%d", i)
		if i < 5 {
			cases = append(cases, record.Case{RunID: "r", ID: id, Line: 10 - i})
		}
		for j, tg := range []string{"a", "b"} {
			results = append(results, record.Result{RunID: "r", CaseID: id, Target: tg, Epoch: 1, Raw: raws[(i+j)%len(raws)]})
		}
	}
	if err := d.PutCases(ctx, cases); err != nil {
		f.Fatal(err)
	}
	if err := d.PutResults(ctx, results, nil); err != nil {
		f.Fatal(err)
	}
	var order []string
	after := ""
	for {
		rows, next, err := d.BrowseResults(ctx, "r", 0, store.ResultFilter{}, after, 1)
		if err != nil {
			f.Fatal(err)
		}
		for _, r := range rows {
			order = append(order, r.CaseID+"/"+r.Target)
		}
		if next == "" {
			break
		}
		f.Add(next, "")
		after = next
	}
	// A NUL in the text is searched for, not the end of a LIKE pattern
	// (which would match every output).
	nul, _, err := d.BrowseResults(ctx, "r", 0, store.ResultFilter{Text: "\x00"}, "", 100)
	if err != nil {
		f.Fatal(err)
	}
	want := 0
	for _, r := range results {
		if strings.Contains(r.Raw, "\x00") {
			want++
		}
	}
	if len(nul) != want || want == 0 {
		f.Fatalf("text \"\\x00\": %d rows, want the %d outputs holding a NUL", len(nul), want)
	}
	for _, seed := range [][2]string{{"", "%"}, {"", "_"}, {"", `\`}, {"", "mixed"}, {"", "ünï"}, {"e30", ""}, {"!!", "x"}, {"eyJ2IjoyLCJrIjp0cnVlLCJsIjotNSwiYyI6IiJ9", ""}} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, after, text string) {
		rows, _, err := d.BrowseResults(ctx, "r", 0, store.ResultFilter{Text: text}, after, 3)
		if err != nil {
			if !errors.Is(err, store.ErrBadCursor) {
				t.Fatalf("BrowseResults(after %q, text %q): %v, want rows or ErrBadCursor", after, text, err)
			}
			return
		}
		if len(rows) > 3 {
			t.Fatalf("%d rows, asked for 3", len(rows))
		}
		last := -1
		for _, r := range rows {
			i := slices.Index(order, r.CaseID+"/"+r.Target)
			if i <= last {
				t.Fatalf("row %s/%s out of the run's order %q", r.CaseID, r.Target, order)
			}
			last = i
			raw := results[slices.IndexFunc(results, func(x record.Result) bool { return x.CaseID == r.CaseID && x.Target == r.Target })].Raw
			if !strings.Contains(foldASCII(raw), foldASCII(text)) {
				t.Fatalf("row %s/%s (%q) does not contain %q", r.CaseID, r.Target, raw, text)
			}
		}
	})
}

// foldASCII is the test's own model of the search's case folding: ASCII
// letters folded, every other byte kept.
func foldASCII(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			c += 32
		}
		b.WriteByte(c)
	}
	return b.String()
}
