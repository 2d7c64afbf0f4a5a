package dataset

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// errRowTooLong is returned by the bounded reader when one CSV record grows
// past MaxRowBytes (typically an unclosed quote in a large file).
var errRowTooLong = errors.New("row too long")

// boundedReader fails once more than MaxRowBytes are read since the last
// mark, so one runaway record cannot make the CSV reader buffer a whole file.
type boundedReader struct {
	r    io.Reader
	read int
}

func (b *boundedReader) Read(p []byte) (int, error) {
	if b.read > MaxRowBytes {
		return 0, errRowTooLong
	}
	n, err := b.r.Read(p)
	b.read += n
	return n, err
}

func (b *boundedReader) mark() { b.read = 0 }

type csvSource struct {
	cr     *csv.Reader
	br     *boundedReader
	header []string
	num    int
	// pendingQuote holds an ErrQuote problem until the next read tells
	// whether the quote ran to the end of the file (never closed).
	pendingQuote *csv.ParseError
	done         bool
	lastLine     int // where the last good record started (1: the header)
}

const csvQuoteHint = `a quoted field ends with "; a quote inside it is written ""`

// newCSV reads the header. Problems with the header are returned as such;
// the source is nil when no header could be read.
func newCSV(r io.Reader) (*csvSource, []rowProblem, error) {
	br := &boundedReader{r: r}
	cr := csv.NewReader(br)
	cr.ReuseRecord = false
	s := &csvSource{cr: cr, br: br, lastLine: 1}
	header, err := cr.Read()
	if err == io.EOF {
		return nil, []rowProblem{{line: 1, col: 1, msg: "the CSV file is empty", hint: "its first row must name the fields, e.g. question,answer"}}, nil
	}
	if err != nil {
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			return nil, []rowProblem{csvProblem(pe, false)}, nil
		}
		if errors.Is(err, errRowTooLong) {
			return nil, []rowProblem{{line: 1, col: 1, msg: fmt.Sprintf("the header row is longer than %d MiB", MaxRowBytes>>20)}}, nil
		}
		return nil, nil, err
	}
	br.mark()
	if len(header) > 0 {
		header[0] = strings.TrimPrefix(header[0], "\ufeff") // UTF-8 BOM
	}
	var probs []rowProblem
	seen := map[string]int{}
	for i, h := range header {
		line, col := cr.FieldPos(i)
		switch {
		case strings.TrimSpace(h) == "":
			probs = append(probs, rowProblem{line: line, col: col, msg: fmt.Sprintf("column %d of the header has no name", i+1), hint: "the first row names every column"})
		default:
			if j, dup := seen[h]; dup {
				probs = append(probs, rowProblem{line: line, col: col, msg: fmt.Sprintf("duplicate column name %q in the header (columns %d and %d)", h, j+1, i+1), hint: "column names must be unique"})
			} else {
				seen[h] = i
			}
		}
	}
	s.header = header
	cr.FieldsPerRecord = len(header)
	return s, probs, nil
}

func csvProblem(pe *csv.ParseError, unclosed bool) rowProblem {
	switch {
	case unclosed:
		return rowProblem{line: pe.StartLine, col: 1, msg: "a quoted field in the row starting here is never closed", hint: csvQuoteHint}
	case errors.Is(pe.Err, csv.ErrQuote):
		return rowProblem{line: pe.Line, col: pe.Column, msg: `extraneous or missing " in a quoted field`, hint: csvQuoteHint}
	case errors.Is(pe.Err, csv.ErrBareQuote):
		return rowProblem{line: pe.Line, col: pe.Column, msg: `bare " in an unquoted field`, hint: `quote the whole field and double the quote inside it, e.g. "5"" screen"`}
	}
	return rowProblem{line: pe.Line, col: pe.Column, msg: "invalid CSV: " + pe.Err.Error()}
}

func (s *csvSource) next() (*row, []rowProblem, error) {
	if s.done {
		return nil, nil, io.EOF
	}
	rec, err := s.cr.Read()
	s.br.mark()
	var probs []rowProblem
	if s.pendingQuote != nil {
		probs = append(probs, csvProblem(s.pendingQuote, err == io.EOF))
		s.pendingQuote = nil
	}
	if err == io.EOF {
		s.done = true
		if len(probs) > 0 {
			return nil, probs, nil
		}
		return nil, nil, io.EOF
	}
	if err != nil {
		var pe *csv.ParseError
		if !errors.As(err, &pe) {
			if errors.Is(err, errRowTooLong) {
				s.done = true
				return nil, append(probs, rowProblem{line: s.lastLine, col: 1, msg: fmt.Sprintf("a row after this one is longer than %d MiB (an unclosed quote?); reading stopped", MaxRowBytes>>20), hint: csvQuoteHint}), nil
			}
			return nil, probs, err
		}
		s.num++
		switch {
		case errors.Is(pe.Err, csv.ErrFieldCount):
			probs = append(probs, rowProblem{line: pe.StartLine, col: 1, msg: fmt.Sprintf("row has %d fields, the header has %d", len(rec), len(s.header)), hint: "quote fields that contain commas"})
		case errors.Is(pe.Err, csv.ErrQuote):
			s.pendingQuote = pe
		default:
			probs = append(probs, csvProblem(pe, false))
		}
		return nil, probs, nil
	}
	s.num++
	line, _ := s.cr.FieldPos(0)
	s.lastLine = line
	r := &row{line: line, num: s.num, fields: make(map[string]any, len(rec)), order: s.header, cols: make(map[string]int, len(rec))}
	for i, v := range rec {
		name := s.header[i]
		if _, dup := r.fields[name]; dup {
			continue // duplicate header: the first column wins (reported on the header)
		}
		r.fields[name] = v
		_, r.cols[name] = s.cr.FieldPos(i)
		if r.badUTF8 == 0 && !utf8.ValidString(v) {
			r.badUTF8 = r.cols[name] + invalidUTF8Col([]byte(v)) - 1
		}
	}
	return r, probs, nil
}
