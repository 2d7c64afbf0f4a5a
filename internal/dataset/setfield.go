package dataset

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/assay-eval/assay/internal/atomicfile"
	"github.com/assay-eval/assay/internal/lines"
	"github.com/assay-eval/assay/internal/spec"
)

// ErrHasField is SetField's refusal of a case whose line already has the
// field: a value is never overwritten.
var ErrHasField = errors.New("the case already has the field")

// FieldSet says what SetField (or SetExpected) wrote.
type FieldSet struct {
	Path string `json:"path"`
	// Line is the case's 1-based line.
	Line int `json:"line"`
	// Record is the case's line as written (without its line end).
	Record string `json:"record"`
}

// SetField writes one JSON value into one case of the JSONL dataset at
// path: the case whose idField holds caseID (idField "" or "line": the
// case on line caseID) gets field set to value (exactly one JSON value, written compacted), added as the
// object's last member. Only that line changes: the member is inserted
// before the line's closing brace, every other byte of the file is kept,
// and the file is written through atomicfile (synced, whole before or
// after, never half-written). The caller chooses the value's JSON type (a
// difficulty rating is a number on a numeric scale, a string for a level).
//
// Refused, with nothing written: a CSV file or one with a line that is not
// a JSON object (ErrNotJSONL, FILE:LINE:COL), no such case (ErrNoCase), the
// ID on two lines (ErrDuplicateID), a case whose line already has field,
// even null (ErrHasField: never overwritten), no field named, and a value
// that is not exactly one JSON value. SetField does not lock the file
// against another process: callers in one process serialize it with
// Append and SetExpected.
func SetField(path, idField, caseID, field string, value json.RawMessage) (*FieldSet, error) {
	what := "field " + strconv.Quote(field)
	if isCSV(path) {
		return nil, notJSONL{fmt.Sprintf("cannot set %s in %s: it is CSV, and only a JSONL file's case is written to (edit a CSV file by hand)", what, path)}
	}
	if field == "" {
		return nil, fmt.Errorf("cannot set a field in %s: no field named", path)
	}
	if len(bytes.TrimSpace(value)) == 0 {
		return nil, fmt.Errorf("cannot set %s in %s: the value is empty", what, path)
	}
	if _, err := decodeValue(value); err != nil {
		return nil, fmt.Errorf("cannot set %s in %s: the value is not one JSON value (%v)", what, path, err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, value); err != nil {
		return nil, fmt.Errorf("cannot set %s in %s: the value is not one JSON value (%v)", what, path, err)
	}
	return setMember(path, idField, caseID, field, what, ErrHasField, func(map[string]bool) []byte { return compact.Bytes() })
}

// setMember is SetField's and SetExpected's one mechanism: it finds the
// case's line, refuses one that has field (has, for errors.Is), and writes
// `"field":value` as the object's last member. value makes the member's
// JSON from the kinds of field's values on the file's other lines; what
// names what is set, for messages.
func setMember(path, idField, caseID, field, what string, has error, value func(kinds map[string]bool) []byte) (*FieldSet, error) {
	f, st, hit, kinds, err := findCase(path, idField, caseID, field, what)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if v, ok := hit.fields[field]; ok {
		return nil, fmt.Errorf("%s:%d: case %q already has %q = %s: %w, never overwritten; edit the file to change it", path, hit.line, caseID, field, shortJSON(v), has)
	}
	var ins bytes.Buffer
	if len(hit.fields) > 0 {
		ins.WriteByte(',')
	}
	ins.Write(JSONString(field))
	ins.WriteByte(':')
	ins.Write(value(kinds))
	rec, err := insertMember(path, f, st.Size(), hit, ins.Bytes())
	if err != nil {
		return nil, err
	}
	return &FieldSet{Path: path, Line: hit.line, Record: rec}, nil
}

// isCSV says whether the dataset at path is CSV (or TSV) by its name.
func isCSV(path string) bool {
	ext := strings.ToLower(filepath.Ext(path))
	return ext == ".csv" || ext == ".tsv"
}

// insertMember writes the file at path (open as f, size bytes) with ins
// inserted before the found line's closing brace, through atomicfile, and
// returns the line as written.
func insertMember(path string, f *os.File, size int64, hit *found, ins []byte) (string, error) {
	err := atomicfile.Write(path, func(w io.Writer) error {
		if _, err := io.Copy(w, io.NewSectionReader(f, 0, hit.at)); err != nil {
			return err
		}
		if _, err := w.Write(ins); err != nil {
			return err
		}
		_, err := io.Copy(w, io.NewSectionReader(f, hit.at, size-hit.at))
		return err
	})
	if err != nil {
		return "", err
	}
	cut := bytes.LastIndexByte(hit.body, '}')
	return string(hit.body[:cut]) + string(ins) + string(hit.body[cut:]), nil
}

// FieldOf reads one case's field from the JSONL dataset at path: its
// value (Stringify'd: a number as written, a string as is; "" for null)
// and whether the line has the field at all (ok is true for null too).
// Errors are SetField's: no such case, the ID twice, a file that is not
// JSONL.
func FieldOf(path, idField, caseID, field string) (value string, ok bool, err error) {
	what := "field " + strconv.Quote(field)
	if isCSV(path) {
		return "", false, notJSONL{fmt.Sprintf("cannot read %s of a case in %s: it is CSV", what, path)}
	}
	f, _, hit, _, err := findCase(path, idField, caseID, field, what)
	if err != nil {
		return "", false, err
	}
	f.Close()
	v, ok := hit.fields[field]
	return Stringify(v), ok, nil
}

// CaseFields reads one case's line from the JSONL dataset at path: its
// fields (numbers as json.Number) and its 1-based line. The file is read
// as it is now, whatever version a run measured. Errors are SetField's
// (field names what the caller means to set, for their messages): no such
// case, the ID twice, a file that is not JSONL.
func CaseFields(path, idField, caseID, field string) (map[string]any, int, error) {
	what := "field " + strconv.Quote(field)
	if isCSV(path) {
		return nil, 0, notJSONL{fmt.Sprintf("cannot read a case of %s: it is CSV", path)}
	}
	f, _, hit, _, err := findCase(path, idField, caseID, field, what)
	if err != nil {
		return nil, 0, err
	}
	f.Close()
	return hit.fields, hit.line, nil
}

// FieldValues is one field of every case of a JSONL dataset, as
// FieldValuesOf reads it.
type FieldValues struct {
	// Values holds, by case ID, the field's value (Stringify'd) of each
	// case whose line has it and is not null.
	Values map[string]string
	// Null are the cases whose line holds the field as null: it is there
	// (SetField refuses to write it) but says nothing.
	Null map[string]bool
	// Without are the cases whose line lacks the field (SetField writes
	// it).
	Without map[string]bool
	// Cases counts the file's cases (lines that are not blank).
	Cases int
}

// FieldValuesOf reads field from every case of the JSONL dataset at path
// in one pass (cases by idField as SetField finds them; a case whose ID
// is on two lines keeps the first). A CSV file or a line that is not one
// JSON object is refused (ErrNotJSONL, FILE:LINE:COL).
func FieldValuesOf(path, idField, field string) (*FieldValues, error) {
	if isCSV(path) {
		return nil, notJSONL{fmt.Sprintf("cannot read field %q of %s: it is CSV", field, path)}
	}
	if idField == spec.DefaultID {
		idField = ""
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading field %q of %s: %w", field, path, err)
	}
	defer f.Close()
	out := &FieldValues{Values: map[string]string{}, Null: map[string]bool{}, Without: map[string]bool{}}
	seen := map[string]bool{}
	err = lines.Each(f, path, MaxRowBytes, func(l lines.Line) error {
		if l.TooLong {
			return fmt.Errorf("%s:%d:1: the line is longer than %d MiB", path, l.No, MaxRowBytes>>20)
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
			return notJSONL{fmt.Sprintf("%s:%d:%d: %s (every line of a JSONL dataset is one JSON object)", path, l.No, p.col, p.msg)}
		}
		out.Cases++
		id := strconv.Itoa(l.No)
		if idField != "" {
			v, ok := rec[idField]
			if !ok {
				return nil
			}
			switch v.(type) {
			case map[string]any, []any, nil:
				return nil
			}
			id = Stringify(v)
		}
		if seen[id] {
			return nil
		}
		seen[id] = true
		switch v, ok := rec[field]; {
		case !ok:
			out.Without[id] = true
		case v == nil:
			out.Null[id] = true
		default:
			out.Values[id] = Stringify(v)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
