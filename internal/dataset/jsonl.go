package dataset

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
