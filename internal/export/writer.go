package export

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/assay-eval/assay/internal/atomicfile"
)

// Formats are the export formats.
var Formats = []string{"jsonl", "csv", "parquet"}

// Writer writes rows in one format. Write must not keep the row; Close
// finishes the format (a Parquet footer) but does not close the
// underlying writer.
type Writer interface {
	Write(*Row) error
	Close() error
}

// NewWriter returns a writer of format ("jsonl", "csv" or "parquet") to w.
func NewWriter(w io.Writer, format string, c Columns) (Writer, error) {
	switch format {
	case "jsonl":
		return newJSONL(w, c), nil
	case "csv":
		return newCSV(w, c)
	case "parquet":
		return newParquet(w, c)
	}
	return nil, fmt.Errorf("unknown export format %q (formats are: %s)", format, strings.Join(Formats, ", "))
}

// WriteFile writes an export to path whole or not at all
// (atomicfile.Write): fill writes the rows, and path changes only once
// every row is written and the file is synced.
func WriteFile(path, format string, c Columns, fill func(Writer) error) error {
	if !slices.Contains(Formats, format) {
		return fmt.Errorf("unknown export format %q (formats are: %s)", format, strings.Join(Formats, ", "))
	}
	return atomicfile.Write(path, func(f io.Writer) error {
		bw := bufio.NewWriterSize(f, 1<<16)
		w, err := NewWriter(bw, format, c)
		if err != nil {
			return err
		}
		if err := fill(w); err != nil {
			return err
		}
		if err := w.Close(); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
		if err := bw.Flush(); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
		return nil
	})
}

// jsonlWriter writes one JSON object per line, keys in column order; JSON
// columns (inputs, expected, tags, parsed) are nested values.
type jsonlWriter struct {
	w    io.Writer
	cols []column
	keys [][]byte
	buf  []byte
}

func newJSONL(w io.Writer, c Columns) *jsonlWriter {
	j := &jsonlWriter{w: w, cols: c.columns()}
	for _, col := range j.cols {
		k, _ := json.Marshal(col.name)
		j.keys = append(j.keys, append(k, ':'))
	}
	return j
}

func (j *jsonlWriter) Write(r *Row) error {
	b := append(j.buf[:0], '{')
	for i, col := range j.cols {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, j.keys[i]...)
		v := col.get(r)
		switch v := v.(type) {
		case nil:
			b = append(b, "null"...)
		case json.RawMessage:
			b = append(b, v...)
		case float64:
			if math.IsNaN(v) || math.IsInf(v, 0) {
				b = append(b, "null"...)
				break
			}
			b = append(b, text(v)...)
		case int64, bool:
			b = append(b, text(v)...)
		case string:
			s, err := json.Marshal(v)
			if err != nil {
				return err
			}
			b = append(b, s...)
		}
	}
	b = append(b, '}', '\n')
	j.buf = b
	_, err := j.w.Write(b)
	return err
}

func (j *jsonlWriter) Close() error { return nil }

// csvWriter writes RFC 4180 CSV with a header row; a null is an empty cell
// and a JSON column holds its JSON text.
type csvWriter struct {
	w    *csv.Writer
	cols []column
	rec  []string
}

func newCSV(w io.Writer, c Columns) (*csvWriter, error) {
	cw := &csvWriter{w: csv.NewWriter(w), cols: c.columns()}
	header := make([]string, len(cw.cols))
	for i, col := range cw.cols {
		header[i] = col.name
	}
	if err := cw.w.Write(header); err != nil {
		return nil, err
	}
	cw.rec = make([]string, len(cw.cols))
	return cw, nil
}

func (c *csvWriter) Write(r *Row) error {
	for i, col := range c.cols {
		c.rec[i] = text(col.get(r))
	}
	return c.w.Write(c.rec)
}

func (c *csvWriter) Close() error {
	c.w.Flush()
	return c.w.Error()
}
