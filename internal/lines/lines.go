// Package lines reads a file line by line with each line's number and byte
// offset, every line bounded in length, for the indexes that read a JSONL
// file once and later seek to a line: the replay provider's records and an
// agent's replayed tool results. It imports nothing of assay.
package lines

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// Line is one line of a file. No counts from 1; Off is the offset of the
// line's first byte (after a byte-order mark that begins line 1, which is
// dropped); Body is the line without its "\n" or "\r\n", valid only during
// the call it is passed to. A line longer than the bound has TooLong set
// and Body nil: its bytes are skipped, never held.
type Line struct {
	No      int
	Off     int64
	Body    []byte
	TooLong bool
}

// Each calls fn for every line of r in order — blank lines too, and a
// final line without a line end — each read in at most max bytes (not
// counting its line end), and stops at fn's first error, which it returns.
// A read error is returned as "reading NAME at line N: …".
func Each(r io.Reader, name string, max int, fn func(Line) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var (
		off int64
		buf []byte
	)
	for no := 1; ; no++ {
		start := off
		tooLong := false
		buf = buf[:0]
		var err error
		for {
			var chunk []byte
			chunk, err = br.ReadSlice('\n')
			off += int64(len(chunk))
			if !tooLong {
				if len(buf)+len(chunk) > max+2 { // room for "\r\n"
					tooLong = true
					buf = buf[:0]
				} else {
					buf = append(buf, chunk...)
				}
			}
			if !errors.Is(err, bufio.ErrBufferFull) {
				break
			}
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("reading %s at line %d: %w", name, no, err)
		}
		atEOF := err != nil
		if atEOF && off == start {
			return nil // no final line
		}
		l := Line{No: no, Off: start}
		if !tooLong {
			body := bytes.TrimSuffix(buf, []byte("\n"))
			body = bytes.TrimSuffix(body, []byte("\r"))
			if no == 1 && bytes.HasPrefix(body, []byte("\xef\xbb\xbf")) {
				body = body[3:]
				l.Off += 3
			}
			if len(body) > max {
				tooLong = true
			} else {
				l.Body = body
			}
		}
		l.TooLong = tooLong
		if err := fn(l); err != nil {
			return err
		}
		if atEOF {
			return nil
		}
	}
}
