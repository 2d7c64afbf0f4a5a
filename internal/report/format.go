package report

import (
	"fmt"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/assay-eval/assay/internal/analysis"
	"github.com/assay-eval/assay/internal/units"
)

// Number formats shared by the markdown and HTML reports. Rates are shown
// as percentages with one decimal, differences as percentage points.

// rateCI formats a rate with its interval: "75.5% [69.1, 80.9]".
func rateCI(r analysis.Rate) string {
	if r.N == 0 {
		return "—"
	}
	return units.Pct(r.Rate) + " " + units.PctCI(r.CI)
}

// deltaCI formats a paired difference: "+8.5 [+2.8, +14.2]".
func deltaCI(c analysis.Comparison) string {
	return units.Delta(c.Delta) + " [" + units.Delta(c.CI[0]) + ", " + units.Delta(c.CI[1]) + "]"
}

// usdPtr formats an optional amount; absent is "—".
func usdPtr(x *float64) string {
	if x == nil {
		return "—"
	}
	return units.USD(*x)
}

// verdictWords says a comparison's verdict in words a reader acts on.
func verdictWords(c analysis.Comparison) string {
	switch c.Verdict {
	case "a_better":
		return c.A + " better"
	case "b_better":
		return c.B + " better"
	case "equivalent":
		return "equivalent (difference inside the margin)"
	case "inconclusive":
		return "inconclusive (no difference shown)"
	case "":
		return "—"
	default:
		return c.Verdict
	}
}

// decisive reports whether a comparison's verdict names a winner.
func decisive(v string) bool { return v == "a_better" || v == "b_better" }

// visible makes text from a model or a dataset safe to show as plain text
// in any format: control characters and bidirectional-override characters
// (which can make text read differently from what it is), and the
// characters XML 1.0 cannot carry, are written as \xNN or \uNNNN. With keepLines, newlines and tabs stay (for <pre> blocks);
// without, a line break becomes "↵" so one value stays on one line.
func visible(s string, keepLines bool) string {
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
			// \r\n is one line break.
			if keepLines {
				b.WriteByte('\n')
			} else {
				b.WriteString("↵")
			}
			i++
		case r == '\n' || r == '\r':
			if keepLines {
				b.WriteByte('\n')
			} else {
				b.WriteString("↵")
			}
		case r == '\t':
			if keepLines {
				b.WriteByte('\t')
			} else {
				b.WriteByte(' ')
			}
		case r == 0xFFFD && size == 1:
			// An invalid UTF-8 byte: show it, never pass it on.
			fmt.Fprintf(&b, "\\x%02x", s[i-1])
		case isControl(r):
			fmt.Fprintf(&b, "\\x%02x", r)
		case isBidiControl(r) || r == 0x2028 || r == 0x2029 || r == 0xFEFF || r == 0xFFFE || r == 0xFFFF:
			fmt.Fprintf(&b, "\\u%04x", r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Visible is visible for pages that show outside text beside the report
// (assay serve's): control and bidirectional-override characters written
// as escapes, line breaks kept when keepLines (for <pre>), else "↵". It
// does not escape HTML; html/template does that.
func Visible(s string, keepLines bool) string { return visible(s, keepLines) }

// oneLine makes short outside text (a name, an ID, a rule, a reason, a
// fingerprint) safe on one line of any format: visible, line breaks as ↵.
func oneLine(s string) string { return visible(s, false) }

func needsVisible(r rune) bool {
	return isControl(r) || isBidiControl(r) || r == 0x2028 || r == 0x2029 || r == 0xFEFF || r >= 0xFFFD && r <= 0xFFFF
}

// isBidiControl reports the Unicode bidirectional embedding, override and
// isolate controls (and the marks), which reorder how text is displayed.
func isBidiControl(r rune) bool {
	return r == 0x200E || r == 0x200F || (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069)
}

// textTable writes a plain-text table, its columns aligned left two spaces
// apart: the head (none when nil), then the rows, every cell made visible
// by oneLine. Writing to a strings.Builder cannot fail.
func textTable(b *strings.Builder, head []string, rows [][]string) {
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	if head != nil {
		fmt.Fprintln(tw, strings.Join(visibleAll(head), "\t"))
	}
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(visibleAll(r), "\t"))
	}
	tw.Flush()
}

// visibleAll is oneLine of each of ss.
func visibleAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = oneLine(s)
	}
	return out
}
