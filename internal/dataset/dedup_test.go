package dataset

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/spec"
)

// AppendAll writes a batch in one go: cases already in the file and
// repeats within the batch are not written again (each says where its
// content already is), the new ones follow the file's last line in order
// with IDs unique among the file's and the batch's.
func TestAppendAllBatch(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "data.jsonl")
	// The last line lacks its newline: the batch starts on a line of its own.
	if err := os.WriteFile(path, []byte(strings.TrimSuffix(appendData, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	sp := appendSpec(path, "id")
	q2 := caseOf(t, sp, "q2")
	adds := []Addition{
		{Fields: map[string]any{"question": "Largest planet?"}, BaseID: "t", IDField: "id", Reason: "wrong"},
		{Fields: q2.Vars, BaseID: "q2", IDField: "id"}, // in the file already
		{Fields: map[string]any{"question": "Smallest planet?"}, BaseID: "t", IDField: "id"},
		{Fields: map[string]any{"question": "Largest planet?"}, BaseID: "t", IDField: "id", Reason: "again"}, // the batch's first
	}
	got, err := AppendAll(path, adds)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		added bool
		line  int
	}{{true, 3}, {false, 2}, {true, 4}, {false, 3}}
	for i, w := range want {
		if got[i].Added != w.added || got[i].Line != w.line {
			t.Errorf("addition %d: added %v at line %d, want added %v at line %d", i, got[i].Added, got[i].Line, w.added, w.line)
		}
	}
	if got[0].ID == got[2].ID || got[0].ID == "" || got[3].ID != got[0].ID {
		t.Errorf("IDs %q, %q, %q: want two distinct new IDs, the repeat naming the first", got[0].ID, got[2].ID, got[3].ID)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != 4 || !strings.HasSuffix(string(b), "\n") {
		t.Fatalf("file has %d lines:\n%s", len(lines), b)
	}
	if lines[2] != got[0].Record || lines[3] != got[2].Record || !strings.Contains(lines[2], `"label_reason":"wrong"`) {
		t.Errorf("lines 3-4:\n%s\n%s\nwant the records AppendAll returned", lines[2], lines[3])
	}
	var ids []string
	if err := Each(sp, func(c *Case) error { ids = append(ids, c.ID); return nil }); err != nil {
		t.Fatalf("the file no longer reads: %v", err)
	}
	if len(ids) != 4 {
		t.Errorf("cases %v", ids)
	}
	// A batch of repeats only writes nothing.
	again, err := AppendAll(path, adds[:1])
	if err != nil || again[0].Added {
		t.Fatalf("repeat: %+v, %v", again, err)
	}
	if b2, _ := os.ReadFile(path); string(b2) != string(b) {
		t.Error("a batch of repeats changed the file")
	}
}

// The Deduper finds exactly the near-duplicates CheckHealth reports: for
// every case, the best match among the cases before it is at least the
// threshold exactly when health pairs it with one of them.
func TestDeduperAgreesWithHealth(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields("the a refund invoice march charged twice please export button firefox dark mode dashboard login password reset")
	var b strings.Builder
	var texts []string
	for i := range 120 {
		n := 3 + rng.IntN(6)
		var ws []string
		for range n {
			ws = append(ws, words[rng.IntN(len(words))])
		}
		if i > 0 && rng.IntN(4) == 0 {
			// A variant of an earlier text: often near, sometimes exact.
			ws = strings.Fields(texts[rng.IntN(len(texts))])
			if rng.IntN(2) == 0 {
				ws[rng.IntN(len(ws))] = words[rng.IntN(len(words))]
			}
		}
		text := strings.Join(ws, " ")
		texts = append(texts, text)
		fmt.Fprintf(&b, "{\"id\":\"c%d\",\"input\":%q}\n", i, text)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "d.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	sp := &spec.Spec{Dir: dir, Dataset: spec.Dataset{Path: "d.jsonl", Format: "jsonl", ID: "id"}}
	const threshold = 0.6
	h, err := CheckHealth(sp, HealthOptions{TextFields: []string{"input"}, DupThreshold: threshold, MaxListed: 100000})
	if err != nil {
		t.Fatal(err)
	}
	// Health: which cases pair with an earlier one (near, or exact).
	healthHas := map[int]bool{}
	for _, p := range h.Near.List {
		healthHas[p.B.Line] = true
	}
	for _, g := range h.Exact.List {
		for _, c := range g.Cases[1:] {
			healthHas[c.Line] = true
		}
	}
	dd, err := NewDeduper(threshold)
	if err != nil {
		t.Fatal(err)
	}
	var mismatch []string
	for i, text := range texts {
		line := i + 1
		_, found := dd.Find(text)
		// Health lists a near pair once per distinct text: a case whose
		// text repeats an earlier one is in an exact group instead, and a
		// text near only to such a repeat is near its first too.
		if found != healthHas[line] {
			mismatch = append(mismatch, fmt.Sprintf("line %d (%q): deduper %v, health %v", line, text, found, healthHas[line]))
		}
		dd.Add(CaseRef{ID: fmt.Sprintf("c%d", i), Line: line}, text)
	}
	if len(mismatch) > 0 {
		t.Errorf("%d disagreements:\n%s", len(mismatch), strings.Join(mismatch, "\n"))
	}
	if h.Near.Pairs == 0 || h.Exact.Groups == 0 {
		t.Fatalf("the data has %d near pairs and %d exact groups: the test needs both", h.Near.Pairs, h.Exact.Groups)
	}
	// And the similarity reported is the pair's.
	dd2, _ := NewDeduper(threshold)
	dd2.Add(CaseRef{ID: "a", Line: 1}, "Please reset my password now")
	d, ok := dd2.Find("please, reset my PASSWORD")
	if !ok || d.Exact || d.Similarity != 0.8 || d.Of.ID != "a" {
		t.Errorf("near: %+v %v; want a, similarity 4/5", d, ok)
	}
	d, ok = dd2.Find("  please RESET my password now!! ")
	if !ok || !d.Exact || d.Similarity != 1 {
		t.Errorf("exact after normalisation: %+v %v", d, ok)
	}
	if _, ok := dd2.Find("dark mode on the dashboard"); ok {
		t.Error("an unrelated input is a duplicate")
	}
	if _, err := NewDeduper(1.5); err == nil {
		t.Error("threshold 1.5 accepted")
	}
}

// A batch over a hostile file: AppendAll never panics; when it accepts the
// file, the lines it says it wrote are the file's new lines, in order, each
// decoding as an object; repeats (in the file or the batch) name a line
// holding the same content; the same batch again writes nothing.
func FuzzAppendAllBatch(f *testing.F) {
	f.Add([]byte(appendData), "a\nb\na\nq1")
	f.Add([]byte("{\"id\":\"added-1\"}\n{\"q\":\"x\"}"), "x\nx\n\xff")
	f.Add([]byte(""), "")
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte, batch string) {
		path := filepath.Join(dir, "f.jsonl")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		var adds []Addition
		for _, q := range strings.Split(batch, "\n") {
			adds = append(adds, Addition{Fields: map[string]any{"q": q}, BaseID: q, IDField: "id", Reason: "r"})
		}
		got, err := AppendAll(path, adds)
		if err != nil {
			if b, _ := os.ReadFile(path); string(b) != string(data) {
				t.Fatalf("a refused file changed: %v", err)
			}
			return
		}
		b, _ := os.ReadFile(path)
		lines := strings.Split(string(b), "\n")
		ids := map[string]bool{}
		for i, a := range got {
			if a.Line < 1 || a.Line > len(lines) || strings.TrimSpace(lines[a.Line-1]) != a.Record {
				t.Fatalf("addition %d says line %d holds %q; the file has %q", i, a.Line, a.Record, lines[min(max(a.Line-1, 0), len(lines)-1)])
			}
			if a.Added {
				if ids[a.ID] {
					t.Fatalf("ID %q written twice", a.ID)
				}
				ids[a.ID] = true
				if _, err := decodeObject([]byte(a.Record)); err != nil {
					t.Fatalf("written line %q: %v", a.Record, err)
				}
			}
		}
		again, err := AppendAll(path, adds)
		if err != nil {
			t.Fatalf("the file AppendAll wrote is refused: %v", err)
		}
		for i, a := range again {
			if a.Added {
				t.Fatalf("addition %d added again at line %d", i, a.Line)
			}
		}
		if b2, _ := os.ReadFile(path); string(b2) != string(b) {
			t.Fatal("the same batch again changed the file")
		}
	})
}
