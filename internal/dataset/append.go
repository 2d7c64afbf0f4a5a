package dataset

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/assay-eval/assay/internal/lines"
	"github.com/assay-eval/assay/internal/spec"
)

// ReasonField is the field an added case carries its failure reason in.
const ReasonField = "label_reason"

// Addition is a case to add to a JSONL dataset file: an output that failed
// becomes an eval item.
type Addition struct {
	// Fields are the case's input fields as the dataset's reader decoded
	// them (numbers as json.Number); they are not modified.
	Fields map[string]any
	// BaseID is the case's ID; with IDField set the added case gets a new
	// ID made from it.
	BaseID string
	// IDField is the field holding case IDs (dataset.id); "" or "line"
	// when cases are numbered by line (no ID is written then).
	IDField string
	// ExpectedField is the field the corrected output is written to
	// (dataset.expected; "expected" when the spec names none).
	ExpectedField string
	// Corrected, when not "", is the output as it should have been: the
	// added case's expected value.
	Corrected string
	// Reason, when not "", is what was wrong, written to ReasonField.
	Reason string
}

// Appended says what Append did.
type Appended struct {
	Path string `json:"path"`
	// Added is false when the file already held a case with the same
	// content (Line is then that case's line).
	Added bool `json:"added"`
	// Line is the 1-based line of the added (or already present) case.
	Line int `json:"line"`
	// ID is the added case's ID ("" when the dataset numbers cases by line:
	// its ID is then Line).
	ID string `json:"id,omitempty"`
	// Record is the case's JSON line as written (without its newline).
	Record string `json:"record"`
}

// ErrNotJSONL is Append's answer for a CSV file.
var ErrNotJSONL = errors.New("added cases go to a JSONL file")

// Append appends one case to the JSONL file at path (created when
// missing) as one line: the case's fields, the corrected output in the
// expected field when given, the reason in label_reason when given, and a
// new ID when the dataset's id is a field. Cases are deduplicated by
// content: when a line of the file already holds the same fields (its ID
// and label_reason aside), nothing is written and Appended.Added is false.
// A file that does not read as JSONL (a line that is not a JSON object) is
// refused with FILE:LINE:COL, before anything is written.
//
// The line is written with one write at the end of the file and synced; a
// failed write is cut back off, so the file holds the whole line or none
// of it. Append does not lock the file against another process: callers
// in one process serialize their calls.
func Append(path string, a Addition) (*Appended, error) {
	out, err := AppendAll(path, []Addition{a})
	if err != nil {
		return nil, err
	}
	return &out[0], nil
}

// AppendAll is Append for several cases at once: each is made as Append
// makes it and deduplicated by content against the file and the cases
// before it in as, and every case added is written in one write at the end
// of the file, synced (cut back off on failure: the file holds every new
// line or none). It returns what became of each addition, in order.
func AppendAll(path string, as []Addition) ([]Appended, error) {
	if isCSV(path) {
		return nil, fmt.Errorf("cannot add a case to %s: %w (a CSV row has no room for new fields such as %s and its values lose their types); set labels.add_to in the spec to a .jsonl file", path, ErrNotJSONL, ReasonField)
	}
	type prepared struct {
		rec     map[string]any
		key     string
		idField string
	}
	preps := make([]prepared, len(as))
	keys := make([]string, len(as))
	for i, a := range as {
		idField := a.IDField
		if idField == spec.DefaultID {
			idField = ""
		}
		expField := a.ExpectedField
		if expField == "" {
			expField = "expected"
		}
		rec := make(map[string]any, len(a.Fields)+2)
		for k, v := range a.Fields {
			rec[k] = v
		}
		delete(rec, ReasonField)
		if a.Corrected != "" {
			rec[expField] = correctedValue(a.Fields[expField], a.Corrected)
		}
		// The record as it will read back from the file (text that is not
		// UTF-8 becomes U+FFFD when written), so its key is the one a later
		// Append computes from the line.
		line, err := marshalLine(rec)
		if err != nil {
			return nil, fmt.Errorf("adding a case to %s: %w", path, err)
		}
		if rec, err = decodeObject(line); err != nil {
			return nil, fmt.Errorf("adding a case to %s: %w", path, err)
		}
		preps[i] = prepared{rec: rec, key: contentKey(rec, idField), idField: idField}
		keys[i] = preps[i].key
	}

	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("adding a case to %s: %w", path, err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil {
		return nil, fmt.Errorf("adding a case to %s: %w", path, err)
	} else if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("cannot add a case to %s: not a regular file", path)
	}
	// The ID field of the first addition is the file's (one dataset's
	// additions share it).
	idField := ""
	if len(preps) > 0 {
		idField = preps[0].idField
	}
	seen, err := scanForAppend(f, path, idField, keys...)
	if err != nil {
		return nil, err
	}
	results := make([]Appended, len(as))
	var out []byte
	if seen.size > 0 && !seen.endsWithNewline {
		out = append(out, '\n')
	}
	next := seen.lines + 1
	for i, p := range preps {
		if d, ok := seen.dups[p.key]; ok {
			results[i] = Appended{Path: path, Line: d.line, ID: d.id, Record: d.record}
			continue
		}
		rec, a := p.rec, as[i]
		id := ""
		if p.idField != "" {
			id = newID(strings.ToValidUTF8(a.BaseID, "\uFFFD"), p.key, seen.ids)
			rec[p.idField] = id
			seen.ids[id] = true
		}
		if a.Reason != "" {
			rec[ReasonField] = a.Reason
		}
		line, err := marshalLine(rec)
		if err != nil {
			return nil, fmt.Errorf("adding a case to %s: %w", path, err)
		}
		out = append(append(out, line...), '\n')
		// A final line without its "\n" got one first: the case is the
		// next line either way.
		results[i] = Appended{Path: path, Added: true, Line: next, ID: id, Record: string(line)}
		seen.dups[p.key] = dupAt{line: next, id: id, record: string(line)}
		next++
	}
	if next == seen.lines+1 {
		return results, nil // nothing new
	}
	if _, err := f.Write(out); err != nil {
		// Leave no partial line behind.
		_ = f.Truncate(seen.size)
		return nil, fmt.Errorf("adding a case to %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return nil, fmt.Errorf("adding a case to %s: syncing: %w", path, err)
	}
	return results, nil
}

// appendScan is what Append learns of the file before writing.
type appendScan struct {
	size            int64
	lines           int // lines in the file (a last line without "\n" counts; nothing after a final "\n")
	endsWithNewline bool
	ids             map[string]bool
	// dups are the first lines whose content key is one of the keys
	// looked for.
	dups map[string]dupAt
}

// dupAt is a line holding a case already: its line, ID and JSON.
type dupAt struct {
	line   int
	id     string
	record string
}

// scanForAppend reads the file once: its case IDs, and the first line
// whose content key is each of keys.
func scanForAppend(r io.ReadSeeker, path, idField string, keys ...string) (*appendScan, error) {
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	want := make(map[string]bool, len(keys))
	for _, k := range keys {
		want[k] = true
	}
	s := &appendScan{ids: map[string]bool{}, dups: map[string]dupAt{}}
	err := lines.Each(r, path, MaxRowBytes, func(l lines.Line) error {
		s.lines = l.No
		if l.TooLong {
			return fmt.Errorf("%s:%d:1: the line is longer than %d MiB: fix the file before adding cases to it", path, l.No, MaxRowBytes>>20)
		}
		body := bytes.TrimSpace(l.Body)
		if len(body) == 0 {
			return nil
		}
		rec, err := decodeObject(l.Body)
		if err != nil {
			p := jsonProblem(l.No, l.Body, err)
			if se, ok := err.(*shapeError); ok {
				p.col, p.msg = runeCol(l.Body, se.off), se.msg
			}
			return fmt.Errorf("%s:%d:%d: %s: fix the file before adding cases to it (every line of a JSONL dataset is one JSON object)", path, l.No, p.col, p.msg)
		}
		if idField != "" {
			if v, ok := rec[idField]; ok {
				s.ids[Stringify(v)] = true
			}
		}
		if k := contentKey(rec, idField); want[k] {
			if _, found := s.dups[k]; !found {
				d := dupAt{line: l.No, record: string(body)}
				if v, ok := rec[idField]; ok && idField != "" {
					d.id = Stringify(v)
				}
				s.dups[k] = d
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	end, err := r.Seek(0, io.SeekEnd)
	if err != nil {
		return nil, err
	}
	s.size = end
	if end > 0 {
		if _, err := r.Seek(end-1, io.SeekStart); err != nil {
			return nil, err
		}
		b := []byte{0}
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, err
		}
		s.endsWithNewline = b[0] == '\n'
	}
	return s, nil
}

// decodeObject decodes one JSON object with numbers as written; anything
// else (another value, trailing data) is an error: a *shapeError (with the
// byte offset it is at) when the line is JSON but not one object.
func decodeObject(b []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, &shapeError{off: leadingSpace(b), msg: "the line is " + jsonKind(v) + ", not a JSON object"}
	}
	off := int(dec.InputOffset())
	if rest := b[off:]; len(bytes.TrimSpace(rest)) > 0 {
		return nil, &shapeError{off: off + leadingSpace(rest), msg: "more after the object's closing brace"}
	}
	return m, nil
}

// shapeError is a line that is JSON but not one object.
type shapeError struct {
	off int
	msg string
}

func (e *shapeError) Error() string { return e.msg }

// contentKey is the canonical encoding of a record's fields without its ID
// and its label_reason: two cases with the same key ask the same thing and
// expect the same answer.
func contentKey(rec map[string]any, idField string) string {
	m := make(map[string]any, len(rec))
	for k, v := range rec {
		if k == ReasonField || (idField != "" && k == idField) {
			continue
		}
		m[k] = v
	}
	return string(appendValue(nil, m))
}

// newID is the added case's ID: the case's own with a short hash of the
// added content, made unique among the file's IDs.
func newID(base, key string, taken map[string]bool) string {
	sum := sha256.Sum256([]byte(key))
	id := base + "-added-" + hex.EncodeToString(sum[:4])
	if base == "" {
		id = "added-" + hex.EncodeToString(sum[:4])
	}
	for n, try := 2, id; ; n++ {
		if !taken[try] {
			return try
		}
		try = id + "-" + strconv.Itoa(n)
	}
}

// correctedValue is the corrected output as the expected field's value: a
// number when the field held a number and the correction is one, the text
// otherwise.
func correctedValue(was any, corrected string) any {
	if _, ok := was.(json.Number); ok {
		t := strings.TrimSpace(corrected)
		var n json.Number
		if err := json.Unmarshal([]byte(t), &n); err == nil && t != "" {
			return n
		}
	}
	return corrected
}

// marshalLine encodes a record as one JSON line, keys sorted, without
// HTML escaping (the file is data, not a page).
func marshalLine(rec map[string]any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(rec); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}
