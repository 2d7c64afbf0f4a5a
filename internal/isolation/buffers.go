package isolation

import (
	"fmt"
	"strconv"
	"sync"
	"unicode/utf8"
)

// boundedBuffer collects a program's stdout up to limit bytes. The first
// write past the limit calls overflow and fails, which stops the copy; the
// caller then kills the program.
type boundedBuffer struct {
	limit    int64
	overflow func()
	mu       sync.Mutex
	buf      []byte
	over     bool
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.over {
		return 0, errOutputLimit
	}
	room := b.limit - int64(len(b.buf))
	if int64(len(p)) <= room {
		b.buf = append(b.buf, p...)
		return len(p), nil
	}
	b.buf = append(b.buf, p[:room]...)
	b.over = true
	if b.overflow != nil {
		b.overflow()
	}
	return int(room), errOutputLimit
}

// Bytes returns what was collected (at most limit bytes).
func (b *boundedBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf
}

// tailBuffer keeps the last keep bytes written to it and counts the rest, so
// a program can print any amount on stderr in bounded memory.
type tailBuffer struct {
	keep  int
	mu    sync.Mutex
	buf   []byte
	total int64
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.total += int64(len(p))
	if len(p) >= t.keep {
		t.buf = append(t.buf[:0], p[len(p)-t.keep:]...)
		return len(p), nil
	}
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*t.keep {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.keep:]...)
	}
	return len(p), nil
}

// Tail returns the last keep bytes written (fewer when less was written),
// starting at a character boundary.
func (t *tailBuffer) Tail() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.buf
	if len(b) > t.keep {
		b = b[len(b)-t.keep:]
	}
	if int64(len(b)) < t.total {
		for i := 0; i < utf8.UTFMax && len(b) > 0 && !utf8.RuneStart(b[0]); i++ {
			b = b[1:]
		}
	}
	return append([]byte(nil), b...)
}

// describe renders the stderr tail for an error message ("" when stderr was
// empty), quoted so that escapes in it are shown rather than obeyed.
func (t *tailBuffer) describe() string {
	tail := t.Tail()
	if len(tail) == 0 {
		return ""
	}
	t.mu.Lock()
	total := t.total
	t.mu.Unlock()
	if int64(len(tail)) < total {
		return fmt.Sprintf("; stderr (last %d of %d bytes): %s", len(tail), total, strconv.Quote(string(tail)))
	}
	return "; stderr: " + strconv.Quote(string(tail))
}
