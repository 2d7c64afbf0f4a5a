package dataset

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeSet writes content to a file in a temporary directory.
func writeSet(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// onlyLineChanged checks that after differs from before only in line no
// (1-based, split on "\n"), which must now read want.
func onlyLineChanged(t *testing.T, before, after []byte, no int, want string) {
	t.Helper()
	b, a := bytes.Split(before, []byte("\n")), bytes.Split(after, []byte("\n"))
	if len(b) != len(a) {
		t.Fatalf("line count %d -> %d:\n%s", len(b), len(a), after)
	}
	for i := range b {
		if i == no-1 {
			if string(a[i]) != want {
				t.Errorf("line %d = %q, want %q", no, a[i], want)
			}
			continue
		}
		if !bytes.Equal(a[i], b[i]) {
			t.Errorf("line %d changed: %q -> %q", i+1, b[i], a[i])
		}
	}
}

// oneInsertion checks that after is before with bytes inserted at one
// offset (what SetExpected and SetField may change of a file).
func oneInsertion(t *testing.T, before string, after []byte) {
	t.Helper()
	n := len(after) - len(before)
	i := 0
	for i < len(before) && before[i] == after[i] {
		i++
	}
	if n <= 0 || before[i:] != string(after[i+n:]) {
		t.Fatalf("more than one insertion:\n%q\n%q", before, after)
	}
}

func TestSetExpectedOnlyThatLine(t *testing.T) {
	// A BOM, CRLF line ends, odd spacing, a blank line and no final newline:
	// all kept byte for byte.
	content := "\xef\xbb\xbf{\"id\": \"a\", \"q\": \"2+2\", \"answer\": \"4\"}\r\n\n{ \"q\" : \"<b>&</b>\" , \"id\":\"b\" }  \r\n{\"id\":\"c\",\"q\":\"x\"}"
	p := writeSet(t, "d.jsonl", content)
	got, err := SetExpected(p, "id", "b", "answer", "say \"<5>\" & go\n")
	if err != nil {
		t.Fatal(err)
	}
	want := `{ "q" : "<b>&</b>" , "id":"b" ,"answer":"say \"<5>\" & go\n"}  ` + "\r"
	after, _ := os.ReadFile(p)
	onlyLineChanged(t, []byte(content), after, 3, want)
	if got.Line != 3 || got.Record != strings.TrimSuffix(want, "\r") {
		t.Errorf("got %+v", got)
	}
	// The first line (after the BOM) and the last (no newline).
	if _, err := SetExpected(p, "id", "a", "gold", "x"); err != nil {
		t.Fatal(err)
	}
	if _, err := SetExpected(p, "id", "c", "answer", "y"); err != nil {
		t.Fatal(err)
	}
	after2, _ := os.ReadFile(p)
	if !bytes.HasPrefix(after2, []byte("\xef\xbb\xbf{\"id\": \"a\", \"q\": \"2+2\", \"answer\": \"4\",\"gold\":\"x\"}\r\n")) {
		t.Errorf("line 1: %q", after2)
	}
	if !bytes.HasSuffix(after2, []byte("\n{\"id\":\"c\",\"q\":\"x\",\"answer\":\"y\"}")) {
		t.Errorf("last line: %q", after2)
	}
}

func TestSetExpectedByLineAndEmptyObject(t *testing.T) {
	content := "{\"q\":1}\n{}\n"
	p := writeSet(t, "d.jsonl", content)
	if _, err := SetExpected(p, "line", "2", "expected", "z"); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(p)
	onlyLineChanged(t, []byte(content), after, 2, `{"expected":"z"}`)
}

func TestSetExpectedTypes(t *testing.T) {
	// The text becomes a number, bool or object only when another line
	// holds that kind in the field.
	content := "{\"id\":1,\"e\":3}\n{\"id\":2,\"e\":true}\n{\"id\":3,\"e\":{\"a\":1}}\n{\"id\":4}\n{\"id\":5}\n{\"id\":6}\n{\"id\":7}\n"
	p := writeSet(t, "d.jsonl", content)
	for _, c := range []struct{ id, value, want string }{
		{"4", " 42 ", `{"id":4,"e":42}`},
		{"5", "false", `{"id":5,"e":false}`},
		{"6", `{ "b" : [1, 2] }`, `{"id":6,"e":{"b":[1,2]}}`},
		{"7", `[1]`, `{"id":7,"e":"[1]"}`}, // no array in the file: a string
	} {
		got, err := SetExpected(p, "id", c.id, "e", c.value)
		if err != nil {
			t.Fatal(err)
		}
		if got.Record != c.want {
			t.Errorf("case %s: %s, want %s", c.id, got.Record, c.want)
		}
	}
	q := writeSet(t, "s.jsonl", "{\"id\":1,\"e\":\"x\"}\n{\"id\":2}\n")
	got, err := SetExpected(q, "id", "2", "e", "42")
	if err != nil {
		t.Fatal(err)
	}
	if got.Record != `{"id":2,"e":"42"}` {
		t.Errorf("strings dataset: %s", got.Record)
	}
}

func TestSetExpectedRefusals(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "d.csv")
	os.WriteFile(csv, []byte("id,q\n1,x\n"), 0o644)
	for _, c := range []struct {
		name, content, id, value string
		is                       error
		msg                      string
	}{
		{"missing", "{\"id\":\"a\"}\n", "b", "v", ErrNoCase, `F has no case "b" (by id field "id"): no such case`},
		{"twice", "{\"id\":\"a\"}\n{\"id\":\"b\"}\n{\"id\":\"a\"}\n", "a", "v", ErrDuplicateID, `F: case "a" is on lines 1 and 3: the case ID is on more than one line; fix the file (each case's id is unique)`},
		{"has", "{\"id\":\"a\",\"e\":\"old\"}\n", "a", "v", ErrHasExpected, `F:1: case "a" already has "e" = "old": the case already has an expected value, never overwritten; edit the file to change it`},
		{"null", "{\"id\":\"a\",\"e\":null}\n", "a", "v", ErrHasExpected, `F:1: case "a" already has "e" = null: the case already has an expected value, never overwritten; edit the file to change it`},
		{"array line", "{\"id\":\"a\"}\n[1]\n", "a", "v", ErrNotJSONL, `F:2:1: the line is an array, not a JSON object: fix the file before setting an expected value (every line of a JSONL dataset is one JSON object)`},
		{"empty", "{\"id\":\"a\"}\n", "a", " \n", nil, `cannot set an expected value in F: the value is empty`},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := writeSet(t, "d.jsonl", c.content)
			_, err := SetExpected(p, "id", c.id, "e", c.value)
			if err == nil {
				t.Fatal("no error")
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("not %v: %v", c.is, err)
			}
			if want := strings.ReplaceAll(c.msg, "F", p); err.Error() != want {
				t.Errorf("got  %s\nwant %s", err, want)
			}
			if b, _ := os.ReadFile(p); string(b) != c.content {
				t.Errorf("file changed: %q", b)
			}
		})
	}
	_, err := SetExpected(csv, "id", "1", "e", "v")
	if want := "cannot set an expected value in " + csv + ": it is CSV, and only a JSONL file's case is written to (edit a CSV file by hand)"; err == nil || err.Error() != want || !errors.Is(err, ErrNotJSONL) {
		t.Errorf("csv: %v", err)
	}
}

func FuzzSetExpected(f *testing.F) {
	f.Add("{\"id\":\"a\"}\n{\"id\":\"b\", \"x\": [1]}\r\n", "b", "v")
	f.Add("{}", "a", "1")
	f.Add("{\"id\":\"a\"}  \n\n", "a", "{\"k\":1}")
	f.Fuzz(func(t *testing.T, content, id, value string) {
		p := filepath.Join(t.TempDir(), "d.jsonl")
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := SetExpected(p, "id", id, "exp", value)
		after, _ := os.ReadFile(p)
		if err != nil {
			if string(after) != content {
				t.Fatalf("refused (%v) but the file changed", err)
			}
			return
		}
		// Exactly one insertion at one offset, and the line reads back as
		// an object holding the value.
		oneInsertion(t, content, after)
		rec, err := decodeObject([]byte(got.Record))
		if err != nil {
			t.Fatalf("line %q does not read: %v", got.Record, err)
		}
		if _, ok := rec["exp"]; !ok {
			t.Fatalf("no exp in %q", got.Record)
		}
		if s, ok := rec["exp"].(string); ok {
			var want string
			b, _ := json.Marshal(value) // text that is not UTF-8 reads back as U+FFFD
			_ = json.Unmarshal(b, &want)
			if s != want {
				t.Fatalf("exp = %q, want %q", s, want)
			}
		}
	})
}

// FieldOf's ok says whether SetExpected would refuse the case (the
// expected-value form is offered only when it would not).
func TestFieldOfSaysWhetherTheCaseHasTheField(t *testing.T) {
	p := writeSet(t, "d.jsonl", "{\"id\":\"a\",\"e\":1}\n{\"id\":\"b\"}\n")
	for id, want := range map[string]bool{"a": true, "b": false} {
		_, got, err := FieldOf(p, "id", id, "e")
		if err != nil || got != want {
			t.Errorf("FieldOf(%s) has = %v, %v; want %v", id, got, err, want)
		}
	}
	if _, _, err := FieldOf(p, "id", "z", "e"); !errors.Is(err, ErrNoCase) {
		t.Errorf("missing case: %v", err)
	}
}
