package dataset

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/assay-eval/assay/internal/lines"
	"github.com/assay-eval/assay/internal/spec"
)

// SetExpected's refusals, for errors.Is.
var (
	ErrNoCase      = errors.New("no such case")
	ErrDuplicateID = errors.New("the case ID is on more than one line")
	ErrHasExpected = errors.New("the case already has an expected value")
)

// notJSONL is a file SetExpected cannot write a case of: errors.Is
// ErrNotJSONL, with its own message.
type notJSONL struct{ msg string }

func (e notJSONL) Error() string { return e.msg }
func (e notJSONL) Unwrap() error { return ErrNotJSONL }

// ExpectedSet says what SetExpected wrote.
type ExpectedSet struct {
	Path string `json:"path"`
	// Line is the case's 1-based line.
	Line int `json:"line"`
	// Record is the case's line as written (without its line end).
	Record string `json:"record"`
}

// SetExpected writes an expected value into one case of the JSONL dataset
// at path: the case whose idField holds caseID (idField "" or "line": the
// case on line caseID) gets field set to value, added as the object's last
// member. Only that line changes: the value is inserted before the line's
// closing brace and every other byte of the file is kept, written through
// atomicfile (the file is whole before or after, never half-written).
//
// The value is the labeler's text as a JSON string, unless the trimmed text
// is one JSON number, boolean, object or array and another line of the file
// holds a value of that same kind in field: then that JSON (compacted) is
// written, so "42" stays a number in a dataset of numbers and a string in a
// dataset of strings.
//
// Refused, with nothing written: a CSV file or one with a line that is not
// a JSON object (ErrNotJSONL, FILE:LINE:COL), no such case (ErrNoCase), the
// ID on two lines (ErrDuplicateID), a case that already has field, even
// null (ErrHasExpected: an expected value is never overwritten), and an
// empty value. SetExpected does not lock the file against another process:
// callers in one process serialize it with Append.
func SetExpected(path, idField, caseID, field, value string) (*ExpectedSet, error) {
	if ext := strings.ToLower(filepath.Ext(path)); ext == ".csv" || ext == ".tsv" {
		return nil, notJSONL{fmt.Sprintf("cannot set an expected value in %s: it is CSV, and only a JSONL file's case is written to (edit a CSV file by hand)", path)}
	}
	if field == "" {
		return nil, fmt.Errorf("cannot set an expected value in %s: no expected field named (set dataset.expected in the spec)", path)
	}
	if strings.TrimSpace(value) == "" {
		return nil, fmt.Errorf("cannot set an expected value in %s: the value is empty", path)
	}
	f, st, hit, kinds, err := findCase(path, idField, caseID, field, anExpectedValue)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if v, ok := hit.fields[field]; ok {
		return nil, fmt.Errorf("%s:%d: case %q already has %q = %s: %w, never overwritten; edit the file to change it", path, hit.line, caseID, field, shortJSON(v), ErrHasExpected)
	}
	ins, err := expectedMember(field, value, kinds, len(hit.fields) == 0)
	if err != nil {
		return nil, fmt.Errorf("setting an expected value in %s: %w", path, err)
	}
	rec, err := insertMember(path, f, st.Size(), hit, ins)
	if err != nil {
		return nil, err
	}
	return &ExpectedSet{Path: path, Line: hit.line, Record: rec}, nil
}

// expectedMember is `,"field":value` (no comma when the object is empty).
func expectedMember(field, value string, kinds map[string]bool, empty bool) ([]byte, error) {
	var b bytes.Buffer
	if !empty {
		b.WriteByte(',')
	}
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(field); err != nil {
		return nil, err
	}
	b.Truncate(b.Len() - 1) // Encode's newline
	b.WriteByte(':')
	if raw, ok := typedValue(value, kinds); ok {
		b.Write(raw)
		return b.Bytes(), nil
	}
	if err := enc.Encode(value); err != nil {
		return nil, err
	}
	b.Truncate(b.Len() - 1)
	return b.Bytes(), nil
}

// typedValue is the trimmed text as compact JSON when it is one JSON
// number, boolean, object or array of a kind in kinds.
func typedValue(value string, kinds map[string]bool) ([]byte, bool) {
	t := strings.TrimSpace(value)
	v, err := decodeValue([]byte(t))
	if err != nil {
		return nil, false
	}
	k := valueKind(v)
	if k == "string" || k == "null" || !kinds[k] {
		return nil, false
	}
	var c bytes.Buffer
	if err := json.Compact(&c, []byte(t)); err != nil {
		return nil, false
	}
	return c.Bytes(), true
}

// decodeValue decodes exactly one JSON value.
func decodeValue(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(b[dec.InputOffset():])) > 0 {
		return nil, errors.New("more than one value")
	}
	return v, nil
}

// valueKind is a decoded JSON value's kind.
func valueKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "bool"
	case json.Number, float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	default:
		return "object"
	}
}

// shortJSON is a value as JSON, cut to 60 bytes.
func shortJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "?"
	}
	if len(b) > 60 {
		return string(b[:57]) + "..."
	}
	return string(b)
}

// found is the case's line in the file.
type found struct {
	line   int
	at     int64 // offset of the closing brace in the file
	body   []byte
	fields map[string]any
}

// anExpectedValue is what SetExpected's messages say it sets.
const anExpectedValue = "an expected value"

// findCase reads the JSONL file for the case's line, and the JSON kinds of
// field's values on the other lines. The file is returned open on success.
// what names what is being set in the messages ("an expected value").
func findCase(path, idField, caseID, field, what string) (f *os.File, st os.FileInfo, hit *found, kinds map[string]bool, err error) {
	fail := func(err error) (*os.File, os.FileInfo, *found, map[string]bool, error) {
		if f != nil {
			f.Close()
		}
		return nil, nil, nil, nil, err
	}
	if idField == spec.DefaultID {
		idField = ""
	}
	f, err = os.Open(path)
	if err != nil {
		return fail(fmt.Errorf("setting %s in %s: %w", what, path, err))
	}
	st, err = f.Stat()
	if err != nil {
		return fail(fmt.Errorf("setting %s in %s: %w", what, path, err))
	}
	if !st.Mode().IsRegular() {
		return fail(fmt.Errorf("cannot set %s in %s: not a regular file", what, path))
	}
	kinds = map[string]bool{} // JSON kinds of field's values on other lines
	err = lines.Each(f, path, MaxRowBytes, func(l lines.Line) error {
		if l.TooLong {
			return fmt.Errorf("%s:%d:1: the line is longer than %d MiB: fix the file before setting %s", path, l.No, MaxRowBytes>>20, what)
		}
		if len(bytes.TrimSpace(l.Body)) == 0 {
			return nil
		}
		rec, err := decodeObject(l.Body)
		if err != nil {
			p := jsonProblem(l.No, l.Body, err)
			if se, ok := err.(*shapeError); ok {
				p.col, p.msg = runeCol(l.Body, se.off), se.msg
			}
			return notJSONL{fmt.Sprintf("%s:%d:%d: %s: fix the file before setting %s (every line of a JSONL dataset is one JSON object)", path, l.No, p.col, p.msg, what)}
		}
		match := false
		if idField == "" {
			match = strconv.Itoa(l.No) == caseID
		} else if v, ok := rec[idField]; ok {
			switch v.(type) {
			case map[string]any, []any, nil:
			default:
				match = Stringify(v) == caseID
			}
		}
		if !match {
			if v, ok := rec[field]; ok {
				kinds[valueKind(v)] = true
			}
			return nil
		}
		if hit != nil {
			return fmt.Errorf("%s: case %q is on lines %d and %d: %w; fix the file (each case's %s is unique)", path, caseID, hit.line, l.No, ErrDuplicateID, idField)
		}
		hit = &found{line: l.No, at: l.Off + int64(bytes.LastIndexByte(l.Body, '}')), body: append([]byte(nil), l.Body...), fields: rec}
		return nil
	})
	if err != nil {
		return fail(err)
	}
	if hit == nil {
		by := "line"
		if idField != "" {
			by = "id field " + strconv.Quote(idField)
		}
		return fail(fmt.Errorf("%s has no case %q (by %s): %w", path, caseID, by, ErrNoCase))
	}
	return f, st, hit, kinds, nil
}

// HasField says whether the case's line in the JSONL dataset at path has
// field (SetExpected refuses then). Errors are SetExpected's: no such case,
// the ID twice, a file that is not JSONL.
func HasField(path, idField, caseID, field string) (bool, error) {
	if ext := strings.ToLower(filepath.Ext(path)); ext == ".csv" || ext == ".tsv" {
		return false, notJSONL{path + " is CSV"}
	}
	f, _, hit, _, err := findCase(path, idField, caseID, field, anExpectedValue)
	if err != nil {
		return false, err
	}
	f.Close()
	_, ok := hit.fields[field]
	return ok, nil
}
