package dataset

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxRowBytes bounds one row (a JSONL line or a CSV record), so a malformed
// file cannot make the reader hold more than this in memory.
const MaxRowBytes = 64 << 20

// row is one record as read from the file, before it becomes a Case.
type row struct {
	line   int            // 1-based line where the row starts
	num    int            // 1-based row number (data rows only)
	fields map[string]any // JSON values (numbers as json.Number) or CSV strings
	order  []string       // field names in written order (CSV header order)
	text   []byte         // JSONL: the line, to locate a field's column
	cols   map[string]int // CSV: the column where each field starts
	// badUTF8 is the column (1-based, in characters) of the first byte that
	// is not UTF-8, 0 when the row is valid; such bytes read as U+FFFD.
	badUTF8 int
}

// invalidUTF8Col returns the 1-based column, counted in runes, of the first
// byte of b that is not valid UTF-8, or 0 when b is valid.
func invalidUTF8Col(b []byte) int {
	if utf8.Valid(b) {
		return 0
	}
	col := 1
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size <= 1 {
			return col
		}
		b = b[size:]
		col++
	}
	return 0
}

// rowProblem is a problem with one row, before it is given a file.
type rowProblem struct {
	line, col int
	msg, hint string
}

// source yields rows. next returns io.EOF at the end; a malformed row comes
// back as problems with a nil row, and reading may continue.
type source interface {
	next() (*row, []rowProblem, error)
}

const jsonlHint = `each line must be one JSON object, like {"question": "…", "answer": "…"}`

type jsonlSource struct {
	br   *bufio.Reader
	line int
	num  int
	buf  []byte
}

func newJSONL(r io.Reader) *jsonlSource {
	return &jsonlSource{br: bufio.NewReaderSize(r, 64<<10)}
}

// readLine returns the next line without its end, or tooLong when it is over
// MaxRowBytes (the rest of it is consumed).
func (s *jsonlSource) readLine() (line []byte, tooLong bool, err error) {
	s.buf = s.buf[:0]
	for {
		chunk, err := s.br.ReadSlice('\n')
		if !tooLong {
			if len(s.buf)+len(chunk) > MaxRowBytes {
				tooLong = true
				s.buf = s.buf[:0]
			} else {
				s.buf = append(s.buf, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err == io.EOF && (len(s.buf) > 0 || tooLong) {
			err = nil
		} else if err == io.EOF {
			return nil, false, io.EOF
		}
		if err != nil {
			return nil, false, err
		}
		b := bytes.TrimSuffix(s.buf, []byte("\n"))
		b = bytes.TrimSuffix(b, []byte("\r"))
		return b, tooLong, nil
	}
}

func (s *jsonlSource) next() (*row, []rowProblem, error) {
	for {
		line, tooLong, err := s.readLine()
		if err != nil {
			return nil, nil, err
		}
		s.line++
		if s.line == 1 {
			line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf")) // UTF-8 BOM
		}
		if tooLong {
			s.num++
			return nil, []rowProblem{{line: s.line, col: 1, msg: fmt.Sprintf("line is longer than %d MiB", MaxRowBytes>>20), hint: jsonlHint}}, nil
		}
		// Blank lines (including a trailing one) are skipped; they are not
		// cases and do not count as rows. Line numbers still count them.
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		s.num++
		r, probs := s.parse(line)
		return r, probs, nil
	}
}

func (s *jsonlSource) parse(line []byte) (*row, []rowProblem) {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, []rowProblem{jsonProblem(s.line, line, err)}
	}
	if rest := bytes.TrimSpace(line[dec.InputOffset():]); len(rest) > 0 {
		col := runeCol(line, int(dec.InputOffset())+leadingSpace(line[dec.InputOffset():]))
		return nil, []rowProblem{{line: s.line, col: col, msg: "unexpected data after the JSON object", hint: jsonlHint}}
	}
	obj, ok := v.(map[string]any)
	if !ok {
		col := runeCol(line, leadingSpace(line))
		return nil, []rowProblem{{line: s.line, col: col, msg: fmt.Sprintf("line holds %s, not a JSON object", jsonKind(v)), hint: jsonlHint}}
	}
	if key, off, path, dup := DuplicateKey(line); dup {
		return nil, []rowProblem{{line: s.line, col: runeCol(line, off),
			msg:  DuplicateKeyMessage(key, path) + ": a reader keeping the last value would change the case silently",
			hint: "each key may appear once per object; remove or rename one"}}
	}
	text := line
	if len(text) > 1<<20 {
		text = nil // locating fields in huge lines is not worth the memory
	} else {
		text = append([]byte(nil), line...)
	}
	return &row{line: s.line, num: s.num, fields: obj, text: text, badUTF8: invalidUTF8Col(line)}, nil
}

func leadingSpace(b []byte) int {
	return len(b) - len(bytes.TrimLeft(b, " \t\r"))
}

// runeCol is the 1-based column (in characters) of byte offset off in line.
func runeCol(line []byte, off int) int {
	if off > len(line) {
		off = len(line)
	}
	if off < 0 {
		off = 0
	}
	return utf8.RuneCount(line[:off]) + 1
}

func jsonProblem(lineNo int, line []byte, err error) rowProblem {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		// Offset counts the bytes read, including the offending one.
		return rowProblem{line: lineNo, col: runeCol(line, int(se.Offset)-1), msg: "invalid JSON: " + se.Error(), hint: jsonlHint}
	case errors.Is(err, io.ErrUnexpectedEOF):
		return rowProblem{line: lineNo, col: runeCol(line, len(line)), msg: "invalid JSON: the line ends before the value is complete", hint: jsonlHint}
	case errors.As(err, &te):
		return rowProblem{line: lineNo, col: runeCol(line, int(te.Offset)), msg: "invalid JSON: " + te.Error(), hint: jsonlHint}
	}
	return rowProblem{line: lineNo, col: 1, msg: "invalid JSON: " + err.Error(), hint: jsonlHint}
}

// fieldCol locates a field's key in a JSONL line (1 when it cannot).
func (r *row) fieldCol(name string) int {
	if r.cols != nil {
		if c, ok := r.cols[name]; ok {
			return c
		}
		return 1
	}
	if r.text == nil {
		return 1
	}
	key, _ := json.Marshal(name)
	if i := bytes.Index(r.text, key); i >= 0 {
		return runeCol(r.text, i)
	}
	return 1
}

// DuplicateKey finds the first key of a JSON object in b that repeats an
// earlier key of the same object, comparing keys as decoded ("a" and
// "\u0061" are one key). b must hold valid JSON (decode it first): the scan
// only tracks strings and brackets. It returns the key, the byte offset of
// its repetition's opening quote, and the path of the object that holds it
// ("" for the top level, else e.g. items[2].address); found is false when
// every object's keys are unique. encoding/json keeps the last of repeated
// keys without a word, so the JSONL reader and the scorers' JSON parser
// call this to report them instead.
func DuplicateKey(b []byte) (key string, offset int, path string, found bool) {
	type frame struct {
		obj       bool
		expectKey bool
		key       string // the current key (objects)
		index     int    // the current element (arrays)
		keys      []string
		set       map[string]bool // once keys grows past a few
	}
	var stack []frame
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '{':
			stack = append(stack, frame{obj: true, expectKey: true})
		case '[':
			stack = append(stack, frame{})
		case '}', ']':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		case ',':
			if len(stack) > 0 {
				if top := &stack[len(stack)-1]; top.obj {
					top.expectKey = true
				} else {
					top.index++
				}
			}
		case '"':
			start, escaped := i, false
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
					escaped = true
				}
			}
			if len(stack) == 0 || !stack[len(stack)-1].obj || !stack[len(stack)-1].expectKey {
				continue
			}
			top := &stack[len(stack)-1]
			top.expectKey = false
			var k string
			if escaped && i < len(b) {
				if json.Unmarshal(b[start:i+1], &k) != nil {
					k = string(b[start+1 : i])
				}
			} else {
				k = string(b[start+1 : min(i, len(b))])
			}
			dup := false
			if top.set != nil {
				dup = top.set[k]
				top.set[k] = true
			} else {
				for _, seen := range top.keys {
					if seen == k {
						dup = true
						break
					}
				}
				top.keys = append(top.keys, k)
				if len(top.keys) > 8 {
					top.set = make(map[string]bool, 2*len(top.keys))
					for _, s := range top.keys {
						top.set[s] = true
					}
					top.keys = nil
				}
			}
			if dup {
				var p strings.Builder
				for _, f := range stack[:len(stack)-1] {
					if f.obj {
						if p.Len() > 0 {
							p.WriteByte('.')
						}
						p.WriteString(f.key)
					} else {
						fmt.Fprintf(&p, "[%d]", f.index)
					}
				}
				return k, start, p.String(), true
			}
			top.key = k
		}
	}
	return "", 0, "", false
}

// DuplicateKeyMessage describes a repeated key found by DuplicateKey.
func DuplicateKeyMessage(key, path string) string {
	msg := fmt.Sprintf("duplicate key %s", strconv.Quote(key))
	if path != "" {
		msg += " in the object at " + path
	}
	return msg
}
