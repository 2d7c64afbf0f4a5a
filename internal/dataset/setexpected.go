package dataset

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
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
type ExpectedSet = FieldSet

// SetExpected writes an expected value into one case of the JSONL dataset
// at path, as SetField writes a field (that line only, every other byte
// kept, through atomicfile), with the labeler's text as the value: a JSON
// string, unless the trimmed text is one JSON number, boolean, object or
// array and another line of the file holds a value of that same kind in
// field: then that JSON (compacted) is written, so "42" stays a number in
// a dataset of numbers and a string in a dataset of strings.
//
// Refused, with nothing written: SetField's refusals (ErrNotJSONL,
// ErrNoCase, ErrDuplicateID), a case that already has field, even null
// (ErrHasExpected: an expected value is never overwritten), and an empty
// value. SetExpected does not lock the file against another process:
// callers in one process serialize it with Append.
func SetExpected(path, idField, caseID, field, value string) (*ExpectedSet, error) {
	if isCSV(path) {
		return nil, notJSONL{fmt.Sprintf("cannot set an expected value in %s: it is CSV, and only a JSONL file's case is written to (edit a CSV file by hand)", path)}
	}
	if field == "" {
		return nil, fmt.Errorf("cannot set an expected value in %s: no expected field named (set dataset.expected in the spec)", path)
	}
	if strings.TrimSpace(value) == "" {
		return nil, fmt.Errorf("cannot set an expected value in %s: the value is empty", path)
	}
	return setMember(path, idField, caseID, field, anExpectedValue, ErrHasExpected, func(kinds map[string]bool) []byte {
		if raw, ok := typedValue(value, kinds); ok {
			return raw
		}
		return JSONString(value)
	})
}

// JSONString is s as a JSON string, as SetExpected and SetField write
// text: <, > and & unescaped.
func JSONString(s string) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes (invalid UTF-8 as U+FFFD)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
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
