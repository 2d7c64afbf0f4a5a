package lines

import (
	"errors"
	"strings"
	"testing"
	"testing/iotest"
)

type seen struct {
	no      int
	off     int64
	body    string
	tooLong bool
}

func collect(t *testing.T, in string, max int) []seen {
	t.Helper()
	var out []seen
	err := Each(strings.NewReader(in), "f.jsonl", max, func(l Line) error {
		out = append(out, seen{l.No, l.Off, string(l.Body), l.TooLong})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestEachLineWithItsOffset(t *testing.T) {
	in := "\xef\xbb\xbf{\"a\":1}\r\n\n{\"b\":2}\n" + strings.Repeat("x", 20) + "\nlast"
	got := collect(t, in, 10)
	want := []seen{
		{1, 3, `{"a":1}`, false}, // the byte-order mark dropped, the offset past it
		{2, 12, "", false},       // a blank line
		{3, 13, `{"b":2}`, false},
		{4, 21, "", true}, // 20 bytes over a bound of 10: skipped
		{5, 42, "last", false},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d: %+v, want %+v", i+1, got[i], want[i])
		}
	}
	// Each offset points at its line in the input.
	for _, s := range got {
		if !s.tooLong && s.body != "" && !strings.HasPrefix(in[s.off:], s.body) {
			t.Errorf("line %d: offset %d does not start %q", s.no, s.off, s.body)
		}
	}
	// A line of exactly the bound is read; a CRLF does not count.
	if got := collect(t, "0123456789\r\n", 10); len(got) != 1 || got[0].tooLong || got[0].body != "0123456789" {
		t.Errorf("a line at the bound: %+v", got)
	}
	if got := collect(t, "", 10); len(got) != 0 {
		t.Errorf("an empty file: %+v", got)
	}
	// A line far longer than the reader's buffer is skipped in pieces.
	if got := collect(t, strings.Repeat("y", 300<<10)+"\nok\n", 1<<10); len(got) != 2 || !got[0].tooLong || got[1].body != "ok" || got[1].off != 300<<10+1 {
		t.Errorf("a 300 KiB line: %+v", got)
	}
}

func TestEachStopsAtErrors(t *testing.T) {
	stop := errors.New("stop")
	n := 0
	err := Each(strings.NewReader("a\nb\nc\n"), "f", 10, func(Line) error {
		n++
		if n == 2 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != 2 {
		t.Errorf("fn's error: %v after %d lines, want stop after 2", err, n)
	}
	err = Each(iotest.TimeoutReader(strings.NewReader(strings.Repeat("z", 100<<10))), "f.jsonl", 1<<20, func(Line) error { return nil })
	if err == nil || !strings.HasPrefix(err.Error(), "reading f.jsonl at line 1: ") || !errors.Is(err, iotest.ErrTimeout) {
		t.Errorf("a read error: %v", err)
	}
}

func FuzzEach(f *testing.F) {
	f.Add("a\r\nbb\n\xef\xbb\xbfc", 2)
	f.Fuzz(func(t *testing.T, in string, max int) {
		if max < 0 || max > 1<<16 {
			return
		}
		_ = Each(strings.NewReader(in), "f", max, func(l Line) error {
			if len(l.Body) > max || l.TooLong && l.Body != nil {
				t.Fatalf("line %d: %d bytes against the bound %d (too long %v)", l.No, len(l.Body), max, l.TooLong)
			}
			if !l.TooLong && !strings.HasPrefix(in[l.Off:], string(l.Body)) {
				t.Fatalf("line %d: offset %d does not hold its body", l.No, l.Off)
			}
			return nil
		})
	})
}
