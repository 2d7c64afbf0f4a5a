package isolation

import "testing"

func TestTailBuffer(t *testing.T) {
	tb := &tailBuffer{keep: 8}
	for _, s := range []string{"abc", "defghij", "klmnopqrstuvwxyz", "12"} {
		tb.Write([]byte(s))
	}
	if got := string(tb.Tail()); got != "uvwxyz12" {
		t.Errorf("tail %q; want the last 8 bytes %q", got, "uvwxyz12")
	}
	if tb.total != 28 {
		t.Errorf("total %d; want 28", tb.total)
	}
	if len(tb.buf) > 3*tb.keep {
		t.Errorf("buffer holds %d bytes; want at most %d", len(tb.buf), 3*tb.keep)
	}
	// A tail does not start inside a multi-byte character.
	tb = &tailBuffer{keep: 4}
	tb.Write([]byte("aé✓"))
	if got := string(tb.Tail()); got != "✓" {
		t.Errorf("tail %q; want %q", got, "✓")
	}
}
