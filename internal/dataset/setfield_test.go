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

func TestSetFieldOnlyThatLine(t *testing.T) {
	// A BOM, CRLF line ends, odd spacing, a blank line and no final
	// newline: all kept byte for byte; the value's JSON type is the
	// caller's (a number stays a number, a string a string).
	content := "\xef\xbb\xbf{\"id\": \"a\", \"q\": \"2+2\", \"difficulty\": 1}\r\n\n{ \"q\" : \"<b>&</b>\" , \"id\":\"b\" }  \r\n{\"id\":\"c\",\"q\":\"x\"}"
	p := writeSet(t, "d.jsonl", content)
	got, err := SetField(p, "id", "b", "difficulty", json.RawMessage(" 2.5 "))
	if err != nil {
		t.Fatal(err)
	}
	want := `{ "q" : "<b>&</b>" , "id":"b" ,"difficulty":2.5}  ` + "\r"
	after, _ := os.ReadFile(p)
	onlyLineChanged(t, []byte(content), after, 3, want)
	if got.Line != 3 || got.Record != strings.TrimSuffix(want, "\r") || got.Path != p {
		t.Errorf("got %+v", got)
	}
	if _, err := SetField(p, "id", "c", "tier <&>", json.RawMessage(`"hard <&>"`)); err != nil {
		t.Fatal(err)
	}
	after2, _ := os.ReadFile(p)
	onlyLineChanged(t, after, after2, 4, `{"id":"c","q":"x","tier <&>":"hard <&>"}`)
	// By line number, into an empty object.
	q := writeSet(t, "e.jsonl", "{\"q\":1}\n{}\n")
	if _, err := SetField(q, "line", "2", "d", json.RawMessage(`3`)); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(q); string(b) != "{\"q\":1}\n{\"d\":3}\n" {
		t.Errorf("by line: %q", b)
	}
}

func TestSetFieldRefusals(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "d.csv")
	os.WriteFile(csv, []byte("id,q\n1,x\n"), 0o644)
	for _, c := range []struct {
		name, content, id, value string
		is                       error
		msg                      string
	}{
		{"missing", "{\"id\":\"a\"}\n", "b", "1", ErrNoCase, `F has no case "b" (by id field "id"): no such case`},
		{"twice", "{\"id\":\"a\"}\n{\"id\":\"b\"}\n{\"id\":\"a\"}\n", "a", "1", ErrDuplicateID, `F: case "a" is on lines 1 and 3: the case ID is on more than one line; fix the file (each case's id is unique)`},
		{"has", "{\"id\":\"a\",\"tier\":\"easy\"}\n", "a", `"hard"`, ErrHasField, `F:1: case "a" already has "tier" = "easy": the case already has the field, never overwritten; edit the file to change it`},
		{"null", "{\"id\":\"a\",\"tier\":null}\n", "a", `"hard"`, ErrHasField, `F:1: case "a" already has "tier" = null: the case already has the field, never overwritten; edit the file to change it`},
		{"array line", "{\"id\":\"a\"}\n[1]\n", "a", "1", ErrNotJSONL, `F:2:1: the line is an array, not a JSON object: fix the file before setting field "tier" (every line of a JSONL dataset is one JSON object)`},
		{"not JSON", "{\"id\":\"a\"}\n", "a", "hard", nil, `cannot set field "tier" in F: the value is not one JSON value (invalid character 'h' looking for beginning of value)`},
		{"two values", "{\"id\":\"a\"}\n", "a", "1 2", nil, `cannot set field "tier" in F: the value is not one JSON value (more than one value)`},
		{"empty", "{\"id\":\"a\"}\n", "a", " ", nil, `cannot set field "tier" in F: the value is empty`},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := writeSet(t, "d.jsonl", c.content)
			_, err := SetField(p, "id", c.id, "tier", json.RawMessage(c.value))
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
	_, err := SetField(csv, "id", "1", "tier", json.RawMessage(`"x"`))
	if want := `cannot set field "tier" in ` + csv + ": it is CSV, and only a JSONL file's case is written to (edit a CSV file by hand)"; err == nil || err.Error() != want || !errors.Is(err, ErrNotJSONL) {
		t.Errorf("csv: %v", err)
	}
	if b, _ := os.ReadFile(csv); string(b) != "id,q\n1,x\n" {
		t.Errorf("csv changed")
	}
}

func TestFieldOfAndValues(t *testing.T) {
	p := writeSet(t, "d.jsonl", "{\"id\":\"a\",\"d\":2}\n\n{\"id\":\"b\"}\n{\"id\":\"c\",\"d\":null}\n{\"id\":\"e\",\"d\":\"hard\"}\n{\"id\":\"a\",\"d\":9}\n{\"q\":1}\n")
	for id, want := range map[string]struct {
		v  string
		ok bool
	}{"a": {"2", true}, "b": {"", false}, "c": {"", true}, "e": {"hard", true}} {
		if id == "a" {
			if _, _, err := FieldOf(p, "id", id, "d"); !errors.Is(err, ErrDuplicateID) {
				t.Errorf("FieldOf(a) on two lines: %v", err)
			}
			continue
		}
		v, ok, err := FieldOf(p, "id", id, "d")
		if err != nil || v != want.v || ok != want.ok {
			t.Errorf("FieldOf(%s) = %q, %v, %v; want %q, %v", id, v, ok, err, want.v, want.ok)
		}
	}
	if rec, line, err := CaseFields(p, "id", "e", "d"); err != nil || line != 5 || rec["d"] != "hard" || rec["id"] != "e" || len(rec) != 2 {
		t.Errorf("CaseFields(e) = %v, %d, %v", rec, line, err)
	}
	if _, _, err := CaseFields(p, "id", "zz", "d"); !errors.Is(err, ErrNoCase) {
		t.Errorf("CaseFields of a missing case: %v", err)
	}
	fv, err := FieldValuesOf(p, "id", "d")
	if err != nil {
		t.Fatal(err)
	}
	if fv.Cases != 6 || len(fv.Values) != 2 || fv.Values["a"] != "2" || fv.Values["e"] != "hard" || !fv.Null["c"] || len(fv.Null) != 1 || len(fv.Without) != 1 || !fv.Without["b"] {
		t.Errorf("FieldValuesOf: %+v", fv)
	}
	byLine, err := FieldValuesOf(p, "line", "d")
	if err != nil || byLine.Values["1"] != "2" || byLine.Values["6"] != "9" || !byLine.Null["4"] {
		t.Errorf("by line: %+v %v", byLine, err)
	}
	bad := writeSet(t, "b.jsonl", "{\"id\":1}\n\"x\"\n")
	if _, err := FieldValuesOf(bad, "id", "d"); !errors.Is(err, ErrNotJSONL) || !strings.HasPrefix(err.Error(), bad+":2:1: ") {
		t.Errorf("not JSONL: %v", err)
	}
}

func FuzzSetField(f *testing.F) {
	f.Add("{\"id\":\"a\"}\n{\"id\":\"b\", \"x\": [1]}\r\n", "b", "3")
	f.Add("{}", "a", `"hard"`)
	f.Add("{\"id\":\"a\"}  \n\n", "a", "{\"k\": [1, 2]}")
	f.Add("{\"id\":\"a\",\"diff\":1}\n", "a", "2")
	f.Fuzz(func(t *testing.T, content, id, value string) {
		p := filepath.Join(t.TempDir(), "d.jsonl")
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := SetField(p, "id", id, "diff", json.RawMessage(value))
		after, _ := os.ReadFile(p)
		if err != nil {
			if string(after) != content {
				t.Fatalf("refused (%v) but the file changed", err)
			}
			return
		}
		// Exactly one insertion at one offset, and the line reads back as
		// an object holding the value as given.
		oneInsertion(t, content, after)
		rec, err := decodeObject([]byte(got.Record))
		if err != nil {
			t.Fatalf("line %q does not read: %v", got.Record, err)
		}
		want, err := decodeValue([]byte(value))
		if err != nil {
			t.Fatalf("accepted a value that is not JSON: %q", value)
		}
		gb, _ := json.Marshal(rec["diff"])
		wb, _ := json.Marshal(want)
		if !bytes.Equal(gb, wb) {
			t.Fatalf("diff = %s, want %s", gb, wb)
		}
		if v, ok, err := FieldOf(p, "id", id, "diff"); err != nil || !ok || v != Stringify(want) {
			t.Fatalf("FieldOf after SetField: %q %v %v", v, ok, err)
		}
	})
}
