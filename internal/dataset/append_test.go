package dataset

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/spec"
)

const appendData = `{"id":"q1","question":"What is 6 × 7?","answer":42}
{"id":"q2","question":"Capital of France?","answer":"Paris","bucket":"geo"}
`

// appendSpec is a spec reading path as a JSONL dataset with the given id
// field and "answer" as the expected value.
func appendSpec(path, id string) *spec.Spec {
	return &spec.Spec{Dir: filepath.Dir(path), Dataset: spec.Dataset{Path: filepath.Base(path), Format: "jsonl", ID: id, Expected: "answer"}}
}

// caseOf reads the case with this ID from the dataset.
func caseOf(t *testing.T, sp *spec.Spec, id string) *Case {
	t.Helper()
	var got *Case
	if err := Each(sp, func(c *Case) error {
		if c.ID == id {
			got = c
		}
		return nil
	}); err != nil {
		t.Fatalf("reading %s: %v", sp.Dataset.Path, err)
	}
	if got == nil {
		t.Fatalf("no case %q in %s", id, sp.Dataset.Path)
	}
	return got
}

// A labeled failure becomes a case: its input fields, the corrected output
// as the expected answer, the reason in label_reason, a new ID. The
// dataset's version hash changes, so the next run is a new version, and
// the reader reads the added case as the spec reads every case.
func TestAppendAddsACaseAndChangesTheVersion(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "data.jsonl")
	if err := os.WriteFile(path, []byte(appendData), 0o644); err != nil {
		t.Fatal(err)
	}
	sp := appendSpec(path, "id")
	before, err := Scan(sp)
	if err != nil {
		t.Fatal(err)
	}
	orig := caseOf(t, sp, "q1")
	got, err := Append(path, Addition{Fields: orig.Vars, BaseID: orig.ID, IDField: "id", ExpectedField: "answer",
		Corrected: "41", Reason: "off by one </textarea><script>x</script>"})
	if err != nil {
		t.Fatal(err)
	}
	if !got.Added || got.Line != 3 || !strings.HasPrefix(got.ID, "q1-added-") || len(got.ID) != len("q1-added-")+8 {
		t.Fatalf("Append = %+v, want an added case at line 3 with ID q1-added-XXXXXXXX", got)
	}
	after, err := Scan(sp)
	if err != nil {
		t.Fatalf("the dataset no longer reads after the append: %v", err)
	}
	if after.Hash == before.Hash {
		t.Errorf("the dataset's version hash did not change after adding a case (%s)", after.Hash)
	}
	if after.Cases != before.Cases+1 {
		t.Errorf("%d cases after the append, want %d", after.Cases, before.Cases+1)
	}
	added := caseOf(t, sp, got.ID)
	// The corrected output replaced the numeric answer with the number 41.
	if n, ok := added.Expected.(json.Number); !ok || n.String() != "41" {
		t.Errorf("expected = %#v, want the number 41", added.Expected)
	}
	if added.Vars["question"] != "What is 6 × 7?" {
		t.Errorf("question = %#v, want the original's", added.Vars["question"])
	}
	if added.Vars[ReasonField] != "off by one </textarea><script>x</script>" {
		t.Errorf("%s = %#v", ReasonField, added.Vars[ReasonField])
	}
	// The original case is untouched.
	if c := caseOf(t, sp, "q1"); c.Expected.(json.Number).String() != "42" {
		t.Errorf("the original case changed: %#v", c.Expected)
	}
	if !strings.Contains(got.Record, `"label_reason":"off by one </textarea><script>x</script>"`) {
		t.Errorf("the record is written with its text as it is (no HTML escaping in a data file): %s", got.Record)
	}
}

// Deduplicated by content: adding the same case twice writes it once, and
// adding a case unchanged (no correction) finds the original; the reason
// alone does not make a new case.
func TestAppendDeduplicatesByContent(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "data.jsonl")
	if err := os.WriteFile(path, []byte(appendData), 0o644); err != nil {
		t.Fatal(err)
	}
	sp := appendSpec(path, "id")
	orig := caseOf(t, sp, "q2")
	add := Addition{Fields: orig.Vars, BaseID: orig.ID, IDField: "id", ExpectedField: "answer", Corrected: "Paris, France", Reason: "too short"}
	first, err := Append(path, add)
	if err != nil || !first.Added {
		t.Fatalf("first Append = %+v, %v", first, err)
	}
	bytesAfterFirst, _ := os.ReadFile(path)
	add.Reason = "another reason, same case"
	second, err := Append(path, add)
	if err != nil {
		t.Fatal(err)
	}
	if second.Added || second.Line != first.Line || second.ID != first.ID {
		t.Errorf("second Append = %+v, want the first's line %d and ID %s, not added", second, first.Line, first.ID)
	}
	if b, _ := os.ReadFile(path); string(b) != string(bytesAfterFirst) {
		t.Errorf("a duplicate changed the file:\n%s", b)
	}
	unchanged, err := Append(path, Addition{Fields: orig.Vars, BaseID: orig.ID, IDField: "id", ExpectedField: "answer", Reason: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if unchanged.Added || unchanged.Line != 2 || unchanged.ID != "q2" {
		t.Errorf("adding the case unchanged = %+v, want the original at line 2 (q2)", unchanged)
	}
}

// A dataset numbered by line gets no ID field; a file whose last line has
// no line end gets one before the case, so both lines still read.
func TestAppendLineIDsAndMissingFinalNewline(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "data.jsonl")
	if err := os.WriteFile(path, []byte(`{"question":"a","answer":"b"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := Append(path, Addition{Fields: map[string]any{"question": "a", "answer": "b"}, BaseID: "1", IDField: "line", ExpectedField: "answer", Corrected: "c"})
	if err != nil {
		t.Fatal(err)
	}
	if !got.Added || got.Line != 2 || got.ID != "" {
		t.Fatalf("Append = %+v, want line 2 without an ID", got)
	}
	b, _ := os.ReadFile(path)
	if want := `{"question":"a","answer":"b"}` + "\n" + `{"answer":"c","question":"a"}` + "\n"; string(b) != want {
		t.Errorf("file =\n%q\nwant\n%q", b, want)
	}
	c := caseOf(t, appendSpec(path, "line"), "2")
	if c.Expected != "c" {
		t.Errorf("the added case's expected = %#v", c.Expected)
	}
}

// A missing file is created; a corrected output for a spec without an
// expected field goes to "expected".
func TestAppendCreatesTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "added.jsonl")
	got, err := Append(path, Addition{Fields: map[string]any{"id": "7", "q": "x"}, BaseID: "7", IDField: "id", Corrected: "y"})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if !got.Added || got.Line != 1 || string(b) != got.Record+"\n" || !strings.Contains(got.Record, `"expected":"y"`) {
		t.Errorf("Append = %+v; file %q", got, b)
	}
}

// What Append refuses, with the message a person reads, and the file as
// it was.
func TestAppendRefuses(t *testing.T) {
	dir := t.TempDir()
	csvPath := filepath.Join(dir, "cases.csv")
	_, err := Append(csvPath, Addition{Fields: map[string]any{"q": "x"}})
	want := "cannot add a case to " + csvPath + ": added cases go to a JSONL file (a CSV row has no room for new fields such as label_reason and its values lose their types); set labels.add_to in the spec to a .jsonl file"
	if err == nil || err.Error() != want || !errors.Is(err, ErrNotJSONL) {
		t.Errorf("CSV: err = %v\nwant %s", err, want)
	}
	if _, serr := os.Stat(csvPath); serr == nil {
		t.Error("a CSV file was created")
	}
	for _, c := range []struct{ name, text, want string }{
		{"not JSON", "{\"q\":\"a\"}\nnot json\n", "bad.jsonl:2:2: invalid JSON: invalid character 'o' in literal null (expecting 'u'): fix the file before adding cases to it (every line of a JSONL dataset is one JSON object)"},
		{"an array", "[1,2]\n", "bad.jsonl:1:1: the line is an array, not a JSON object: fix the file before adding cases to it (every line of a JSONL dataset is one JSON object)"},
		{"two objects", "{\"q\":1} {\"q\":2}\n", "bad.jsonl:1:9: more after the object's closing brace: fix the file before adding cases to it (every line of a JSONL dataset is one JSON object)"},
		{"cut short", "{\"q\":\"a\"}\n\n{\"q\":\n", "bad.jsonl:3:6: invalid JSON: the line ends before the value is complete: fix the file before adding cases to it (every line of a JSONL dataset is one JSON object)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, "bad.jsonl")
			if err := os.WriteFile(path, []byte(c.text), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Append(path, Addition{Fields: map[string]any{"q": "new"}})
			if err == nil || err.Error() != filepath.Join(dir, c.want) {
				t.Errorf("err = %v\nwant %s", err, filepath.Join(dir, c.want))
			}
			if b, _ := os.ReadFile(path); string(b) != c.text {
				t.Errorf("the refused file changed: %q", b)
			}
		})
	}
}

// The reader Append dedupes with, over a hostile file: it never panics;
// when it accepts the file, Append adds the case once (a second Append
// finds it at the line the first wrote) and every line it accepted still
// decodes as an object.
func FuzzAppendDedupe(f *testing.F) {
	f.Add([]byte(appendData), "q1")
	f.Add([]byte("\xef\xbb\xbf{\"id\":\"1\"}\r\n{\"id\":\"1\",\"a\":[1,{\"b\":null}]}"), "1")
	f.Add([]byte("{\"id\":1e999}\n{\"id\":\"x\",\"id\":\"y\"}\n\n   \n"), "x")
	f.Add([]byte("{}\n{\"label_reason\":\"r\"}\n"), "")
	f.Add([]byte("\x00\xff{\n"), "z")
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte, base string) {
		path := filepath.Join(dir, "f.jsonl")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		add := Addition{Fields: map[string]any{"q": base, "n": json.Number("1")}, BaseID: base, IDField: "id", ExpectedField: "a", Corrected: "fixed", Reason: "why"}
		first, err := Append(path, add)
		if err != nil {
			if b, _ := os.ReadFile(path); string(b) != string(data) {
				t.Fatalf("a refused file changed: %v", err)
			}
			return
		}
		second, err := Append(path, add)
		if err != nil {
			t.Fatalf("the file Append wrote is refused: %v", err)
		}
		if second.Added || second.Line != first.Line {
			t.Fatalf("first %+v, second %+v: the second is not the first's duplicate", first, second)
		}
		fh, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer fh.Close()
		s, err := scanForAppend(fh, path, "id", "none")
		if err != nil {
			t.Fatal(err)
		}
		if first.Added && (!s.endsWithNewline || s.lines != first.Line) {
			t.Fatalf("after an append the file ends with a newline: %v, has %d lines, the case at %d", s.endsWithNewline, s.lines, first.Line)
		}
	})
}
