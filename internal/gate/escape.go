package gate

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Escaping of text that came from a spec, a dataset, a baseline file or a
// provider (target, scorer, case and tag names, kinds, fingerprints, file
// names). The rules are the decision report's (internal/report: visible and
// mdText), which its tests lock; they are repeated here because the report
// keeps them unexported.

// visible makes text safe to show as plain text in any format: control
// and bidirectional-override characters, and those XML 1.0 cannot carry,
// are written as \xNN or \uNNNN; a line break becomes "↵".
func visible(s string) string {
	if !strings.ContainsFunc(s, needsVisible) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == '\r' && i < len(s) && s[i] == '\n':
			b.WriteString("↵")
			i++
		case r == '\n' || r == '\r':
			b.WriteString("↵")
		case r == '\t':
			b.WriteByte(' ')
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, "\\x%02x", s[i-1])
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			fmt.Fprintf(&b, "\\x%02x", r)
		case isBidiControl(r) || r == 0x2028 || r == 0x2029 || r == 0xFEFF || r == 0xFFFE || r == 0xFFFF:
			fmt.Fprintf(&b, "\\u%04x", r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func needsVisible(r rune) bool {
	return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || isBidiControl(r) ||
		r == 0x2028 || r == 0x2029 || r == 0xFEFF || r >= 0xFFFD && r <= 0xFFFF
}

func isBidiControl(r rune) bool {
	return r == 0x200E || r == 0x200F || (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069)
}

// mdText escapes outside text for GitHub-flavoured Markdown, inline or in a
// table cell: it renders as exactly the characters given, and forms no
// link, image, emphasis, code span, HTML, table cell break or block, and
// mentions nobody.
func mdText(s string) string {
	s = visible(s)
	var b strings.Builder
	b.Grow(len(s) + len(s)/4)
	for i, r := range s {
		switch r {
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '\\', '`', '*', '_', '[', ']', '(', ')', '|', '~', '#', '!', '$':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '-', '+', '=':
			if i == 0 {
				b.WriteByte('\\')
			}
			b.WriteRune(r)
		case ' ':
			if strings.TrimLeft(s[:i], " ") == "" {
				b.WriteString("&#32;")
				continue
			}
			b.WriteRune(r)
		case '.':
			if i > 0 && isDigits(s[:i]) {
				b.WriteByte('\\')
			}
			b.WriteRune(r)
		case '@':
			// A word joiner keeps GitHub from turning @name into a mention.
			b.WriteString("@\u2060")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func isDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}
