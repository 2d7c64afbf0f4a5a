package scorer

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// clip keeps the first n characters (runes, never a split byte sequence)
// and marks a cut with an ellipsis.
func TestClip(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"", 3, ""},
		{"abc", 3, "abc"},
		{"abcd", 3, "abc…"},
		{"héllo wörld", 5, "héllo…"},
		{"日本語テキスト", 3, "日本語…"},
		{"日本語", 3, "日本語"},
		{"abc", 0, "…"},
	} {
		if got := clip(c.in, c.n); got != c.want {
			t.Errorf("clip(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
	long := strings.Repeat("ü", 1<<20)
	if got := clip(long, 80); utf8.RuneCountInString(got) != 81 || !utf8.ValidString(got) {
		t.Errorf("clip of 1 Mi runes: %d runes, valid %v", utf8.RuneCountInString(got), utf8.ValidString(got))
	}
}
