package labels

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/assay-eval/assay/internal/lines"
	"github.com/assay-eval/assay/internal/record"
)

// MaxLineBytes bounds one line of a labels file (a label with its reason
// and corrected output).
const MaxLineBytes = 4 << 20

// maxProblems is how many problems Read reports before it stops.
const maxProblems = 50

// fields are a label's JSON fields, in the order Write writes them.
var fields = []string{"run_id", "case_id", "target", "epoch", "output_hash", "queue", "labeler", "verdict", "reason", "corrected", "created"}

// Error is a problem at a place in a labels file. Col counts characters
// from 1.
type Error struct {
	File      string
	Line, Col int
	Msg       string
}

func (e *Error) Error() string { return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg) }

// Write writes labels as JSONL, one record.Label per line (its json tags,
// in the struct's order).
func Write(w io.Writer, labels []record.Label) error {
	bw := bufio.NewWriter(w)
	for i := range labels {
		b, err := json.Marshal(&labels[i])
		if err != nil {
			return fmt.Errorf("writing the label of %s/%s/%d: %w", labels[i].CaseID, labels[i].Target, labels[i].Epoch, err)
		}
		bw.Write(b)
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// Read reads JSONL labels, one JSON object per line (blank lines are
// skipped), and calls fn with each good label in file order until the
// first bad one. It checks every line strictly — an unknown or repeated
// field, a value of the wrong type, and every problem Check finds — and
// returns them all (up to 50), each an *Error at NAME:LINE:COL saying what
// would be valid. An error from fn stops the reading and is returned.
func Read(r io.Reader, name string, fn func(record.Label) error) error {
	return ReadLines(r, name, func(_ int, l record.Label) error { return fn(l) })
}

// ReadLines is Read with each label's line number (from 1), for a caller
// whose own checks of a label (against the store) name its line.
func ReadLines(r io.Reader, name string, fn func(line int, l record.Label) error) error {
	var errs []error
	errStop := errors.New("stop")
	err := lines.Each(r, name, MaxLineBytes, func(ln lines.Line) error {
		if ln.TooLong {
			errs = append(errs, &Error{name, ln.No, 1, fmt.Sprintf("the line is longer than %d MiB; a label is one line", MaxLineBytes>>20)})
		} else if len(bytes.TrimSpace(ln.Body)) > 0 {
			l, probs := parseLine(ln.Body)
			for _, p := range probs {
				errs = append(errs, &Error{name, ln.No, column(ln.Body, p.off), p.msg})
			}
			if len(errs) == 0 {
				if err := fn(ln.No, l); err != nil {
					return err
				}
			}
		}
		if len(errs) >= maxProblems {
			return errStop
		}
		return nil
	})
	if errors.Is(err, errStop) {
		errs = append(errs, fmt.Errorf("%s: stopped after %d problems", name, maxProblems))
	} else if err != nil {
		return err
	}
	return errors.Join(errs...)
}

// column is the character column (from 1) of byte offset off in line.
func column(line []byte, off int) int {
	off = max(0, min(off, len(line)))
	return utf8.RuneCount(line[:off]) + 1
}

// problem is a problem at a byte offset of a line.
type problem struct {
	off int
	msg string
}

// parseLine decodes one line into a label, strictly, and checks it.
func parseLine(line []byte) (record.Label, []problem) {
	var l record.Label
	dec := json.NewDecoder(bytes.NewReader(line))
	at := map[string]int{}   // a field's value's offset
	bad := map[string]bool{} // fields whose value could not be decoded
	tok, err := dec.Token()
	if err != nil {
		return l, []problem{syntaxProblem(line, err)}
	}
	if tok != json.Delim('{') {
		return l, []problem{{skipSpace(line, 0), fmt.Sprintf("want a JSON object (one label per line), got %s", jsonKind(line[skipSpace(line, 0):]))}}
	}
	var probs []problem
	for dec.More() {
		keyOff := skipSpace(line, int(dec.InputOffset()))
		tok, err := dec.Token()
		if err != nil {
			return l, append(probs, syntaxProblem(line, err))
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		valOff := int(dec.InputOffset())
		if err := dec.Decode(&raw); err != nil {
			return l, append(probs, syntaxProblem(line, err))
		}
		valOff = skipSpace(line, valOff)
		if _, dup := at[key]; dup {
			probs = append(probs, problem{keyOff, fmt.Sprintf("%q is given twice", clip(key))})
			continue
		}
		at[key] = valOff
		if !slices.Contains(fields, key) {
			probs = append(probs, problem{keyOff, fmt.Sprintf("unknown field %q; a label's fields are: %s", clip(key), strings.Join(fields, ", "))})
			continue
		}
		if msg := decodeField(&l, key, raw); msg != "" {
			probs = append(probs, problem{valOff, msg})
			bad[key] = true
		}
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return l, append(probs, syntaxProblem(line, err))
	}
	if off := skipSpace(line, int(dec.InputOffset())); off < len(line) {
		return l, append(probs, problem{off, "unexpected data after the label's object (one label per line)"})
	}
	for _, p := range check(&l) {
		if bad[p.field] {
			continue // its value was refused: what check sees is not what the line says
		}
		probs = append(probs, problem{at[p.field], p.msg}) // a missing field: the line's start
	}
	slices.SortStableFunc(probs, func(a, b problem) int { return cmp.Compare(a.off, b.off) })
	return l, probs
}

// decodeField sets the field key of l from its JSON value; it returns what
// is wrong, "" when nothing is.
func decodeField(l *record.Label, key string, raw json.RawMessage) string {
	str := map[string]*string{
		"run_id": &l.RunID, "case_id": &l.CaseID, "target": &l.Target, "output_hash": &l.OutputHash, "queue": &l.Queue,
		"labeler": &l.Labeler, "verdict": &l.Verdict, "reason": &l.Reason, "corrected": &l.Corrected,
	}
	isNull := string(raw) == "null"
	switch {
	case str[key] != nil:
		if isNull || json.Unmarshal(raw, str[key]) != nil {
			return fmt.Sprintf("%q: want a string, got %s", key, jsonKind(raw))
		}
	case key == "epoch":
		if isNull || json.Unmarshal(raw, &l.Epoch) != nil {
			return fmt.Sprintf(`"epoch": want a whole number, got %s`, jsonKind(raw))
		}
	case key == "created":
		var s string
		if isNull || json.Unmarshal(raw, &s) != nil {
			return fmt.Sprintf(`"created": want a time as a string such as "2026-12-03T15:04:05Z", got %s`, jsonKind(raw))
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return fmt.Sprintf(`"created": want an RFC 3339 time such as "2026-12-03T15:04:05Z", got %q`, clip(s))
		}
		l.Created = t
	}
	return ""
}

// jsonKind names the JSON value that begins raw: "a JSON number 1.5",
// "a JSON array", "null".
func jsonKind(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "a JSON object"
	case '[':
		return "a JSON array"
	case '"':
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return fmt.Sprintf("the string %q", clip(s))
		}
		return "a JSON string"
	case 't', 'f':
		return "a JSON boolean"
	case 'n':
		return "null"
	default:
		return "the number " + clip(string(raw))
	}
}

// syntaxProblem locates a JSON syntax error in line.
func syntaxProblem(line []byte, err error) problem {
	// A Decoder's offsets inside a value are not the line's: the whole
	// line decoded at once says where its first syntax error is.
	var v any
	if e := json.Unmarshal(line, &v); e != nil {
		err = e
	}
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se) && int(se.Offset) >= len(line):
		return problem{len(line), "invalid JSON: the line ends before the label's object does"}
	case errors.As(err, &se):
		return problem{int(se.Offset) - 1, "invalid JSON: " + se.Error()}
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return problem{len(line), "invalid JSON: the line ends before the label's object does"}
	}
	return problem{0, "invalid JSON: " + err.Error()}
}

func skipSpace(b []byte, off int) int {
	for off < len(b) && (b[off] == ' ' || b[off] == '\t' || b[off] == '\r' || b[off] == ',' || b[off] == ':') {
		off++
	}
	return off
}

// clip shortens s for a message (it is quoted there, so no control
// character reaches a terminal).
func clip(s string) string {
	const n = 40
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

// fieldProblem is what is wrong with one field of a label.
type fieldProblem struct {
	field string
	msg   string
}

// Check says what is wrong with a label: a missing run_id, case_id,
// target, output_hash, labeler or verdict; an epoch below 1; an output
// hash that is not 16 lowercase hex digits; a verdict other than pass,
// fail or skip; a fail without a reason. Every problem is joined in the
// error; nil when there is none.
func Check(l *record.Label) error {
	var errs []error
	for _, p := range check(l) {
		errs = append(errs, errors.New(p.msg))
	}
	return errors.Join(errs...)
}

func check(l *record.Label) []fieldProblem {
	var probs []fieldProblem
	for _, f := range []struct {
		name, v string
	}{{"run_id", l.RunID}, {"case_id", l.CaseID}, {"target", l.Target}, {"output_hash", l.OutputHash}, {"labeler", l.Labeler}} {
		if strings.TrimSpace(f.v) == "" {
			probs = append(probs, fieldProblem{f.name, fmt.Sprintf("%q is required: a label names the run, case, target, epoch and output_hash it judged, and its labeler", f.name)})
		}
	}
	if l.Epoch < 1 {
		probs = append(probs, fieldProblem{"epoch", fmt.Sprintf(`"epoch" is %d; epochs are numbered from 1`, l.Epoch)})
	}
	if l.OutputHash != "" && !isHash(l.OutputHash) {
		probs = append(probs, fieldProblem{"output_hash", fmt.Sprintf(`"output_hash" is %q; want the 16 lowercase hex digits of the labeled output's hash`, clip(l.OutputHash))})
	}
	switch l.Verdict {
	case record.LabelPass, record.LabelSkip:
	case record.LabelFail:
		if strings.TrimSpace(l.Reason) == "" {
			field := "verdict"
			if l.Reason != "" {
				field = "reason"
			}
			probs = append(probs, fieldProblem{field, `a fail needs a "reason": what is wrong with the output`})
		}
	case "":
		probs = append(probs, fieldProblem{"verdict", `"verdict" is required; valid verdicts are: pass, fail, skip`})
	default:
		probs = append(probs, fieldProblem{"verdict", fmt.Sprintf(`"verdict" is %q; valid verdicts are: pass, fail, skip`, clip(l.Verdict))})
	}
	return probs
}

func isHash(s string) bool {
	if len(s) != 16 || strings.ToLower(s) != s {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}
