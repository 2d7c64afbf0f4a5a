package report

import (
	"fmt"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/assay-eval/assay/internal/analysis"
	"github.com/assay-eval/assay/internal/units"
)

func TestMdText(t *testing.T) {
	cases := []struct{ in, want string }{
		{"gpt-4o-mini", "gpt-4o-mini"},
		{"a|b", `a\|b`},
		{"`rm -rf`", "\\`rm -rf\\`"},
		{"<script>alert(1)</script>", `&lt;script&gt;alert\(1\)&lt;/script&gt;`},
		{"[click](javascript:alert(1))", `\[click\]\(javascript:alert\(1\)\)`},
		{"![x](https://e.x/t.png)", "\\!\\[x\\]\\(https:\u2060//e.x/t.png\\)"},
		{"line1\nline2\r\nline3", "line1↵line2↵line3"},
		{"*bold* _em_ ~~gone~~", `\*bold\* \_em\_ \~\~gone\~\~`},
		{"# heading", `\# heading`},
		{"- item", `\- item`},
		{"+ item", `\+ item`},
		{"===", `\===`},
		{"12. item", `12\. item`},
		{"3) item", `3\) item`},
		{"  - nested", "&#32;&#32;- nested"},
		{"version 1.2-3", "version 1.2-3"},
		{"&lt; stays literal", "&amp;lt; stays literal"},
		{"ping @octocat", "ping @\u2060octocat"},
		{`back\slash`, `back\\slash`},
		{"\x1b[31mred", `\\x1b\[31mred`},
		{"rtl\u202egnp.exe", `rtl\\u202egnp.exe`},
		{"costs $1 or $2", `costs \$1 or \$2`},
		// GitHub's extended autolinks: bare URLs, www. and e-mail addresses.
		{"see https://evil.example/x", "see https:\u2060//evil.example/x"},
		{"HTTP://EVIL.example", "HTTP:\u2060//EVIL.example"},
		{"go to www.evil.example now", "go to www\u2060.evil.example now"},
		{"WWW.evil.example", "WWW\u2060.evil.example"},
		{"mail me@evil.example", "mail me@\u2060evil.example"},
		{"ratio 3:1 at 12:00", "ratio 3:1 at 12:00"},
	}
	for _, c := range cases {
		if got := mdText(c.in); got != c.want {
			t.Errorf("mdText(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// mdDecode reads mdText's output back as a CommonMark renderer would show
// it (backslash escapes, the few character references mdText writes, the
// word joiner after @), failing on any character that would still be
// markup.
func mdDecode(s string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '\\':
			if i+1 >= len(s) || !strings.ContainsRune("\\`*_[]()|~#!$-+=.", rune(s[i+1])) {
				return "", fmt.Errorf("stray backslash at %d in %q", i, s)
			}
			b.WriteByte(s[i+1])
			i += 2
			continue
		case r == '&':
			ok := false
			for ref, lit := range map[string]string{"&amp;": "&", "&lt;": "<", "&gt;": ">", "&#32;": " "} {
				if strings.HasPrefix(s[i:], ref) {
					b.WriteString(lit)
					i += len(ref)
					ok = true
					break
				}
			}
			if !ok {
				return "", fmt.Errorf("bare & at %d in %q", i, s)
			}
			continue
		case r == ':' && strings.HasPrefix(s[i:], "://"):
			return "", fmt.Errorf("a bare URL scheme at %d in %q would autolink", i, s)
		case r == ':' && strings.HasPrefix(s[i:], ":\u2060//"):
			b.WriteString("://")
			i += len(":\u2060//")
			continue
		case (r == 'w' || r == 'W') && len(s[i:]) >= 4 && strings.EqualFold(s[i:i+4], "www."):
			return "", fmt.Errorf("a bare www. at %d in %q would autolink", i, s)
		case r == '\u2060' && i >= 3 && strings.EqualFold(s[i-3:i], "www") && strings.HasPrefix(s[i+size:], "."):
			i += size // the word joiner that breaks "www."
			continue
		case r == '@':
			if !strings.HasPrefix(s[i:], "@\u2060") {
				return "", fmt.Errorf("@ without a word joiner at %d in %q", i, s)
			}
			b.WriteByte('@')
			i += len("@\u2060")
			continue
		case strings.ContainsRune("`*_[]()|~#!<>$", r):
			return "", fmt.Errorf("unescaped %q at %d in %q", r, i, s)
		case r == '\n' || r == '\r' || unicode.IsControl(r):
			return "", fmt.Errorf("control character %q at %d in %q", r, i, s)
		}
		b.WriteRune(r)
		i += size
	}
	return b.String(), nil
}

// startsBlock reports whether a line would open a Markdown block (list,
// heading, quote, thematic break, code) instead of a paragraph.
func startsBlock(s string) bool {
	if s == "" {
		return false
	}
	if strings.HasPrefix(s, "    ") || strings.HasPrefix(s, "\t") {
		return true
	}
	t := strings.TrimLeft(s, " ")
	if t == "" {
		return false
	}
	switch t[0] {
	case '-', '+', '*', '=', '#', '>', '`', '~', '_', '<', '|':
		return true
	}
	d := strings.TrimLeft(t, "0123456789")
	return len(d) < len(t) && (strings.HasPrefix(d, ".") || strings.HasPrefix(d, ")"))
}

func FuzzMdText(f *testing.F) {
	for _, s := range []string{hostScript, hostImg, hostTextarea, hostMarkdown, "", "  - x", "1. x", "@a", "&amp;", "\\", "a\r\nb", "\x00\xff", "````"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := mdText(s)
		got, err := mdDecode(out)
		if err != nil {
			t.Fatal(err)
		}
		if want := visible(s, false); got != want {
			t.Fatalf("mdText(%q) reads back as %q, want %q", s, got, want)
		}
		// As a list item's text, a table cell or a paragraph's start, the
		// text must not open a block of its own.
		if startsBlock(out) {
			t.Fatalf("mdText(%q) = %q starts a Markdown block", s, out)
		}
		// In a fenced block, no line of the text can close the fence.
		fenced := mdFence(s)
		lines := strings.Split(fenced, "\n")
		fence := strings.TrimSuffix(lines[0], "text")
		for _, l := range lines[1 : len(lines)-1] {
			if strings.HasPrefix(strings.TrimLeft(l, " "), fence) {
				t.Fatalf("line %q closes the fence %q", l, fence)
			}
		}
		if lines[len(lines)-1] != fence {
			t.Fatalf("fenced block does not end with its fence: %q", fenced)
		}
	})
}

// mdSplit separates a Markdown document into the lines outside fenced
// code blocks and the contents of those blocks.
func mdSplit(t *testing.T, doc string) (outside []string, fenced []string) {
	t.Helper()
	var fence string
	var block strings.Builder
	for _, l := range strings.Split(doc, "\n") {
		switch {
		case fence == "" && strings.HasPrefix(l, "```"):
			fence = l[:len(l)-len(strings.TrimLeft(l, "`"))]
			block.Reset()
		case fence != "" && strings.TrimRight(l, " ") == fence:
			fenced = append(fenced, block.String())
			fence = ""
		case fence != "":
			block.WriteString(l + "\n")
		default:
			outside = append(outside, l)
		}
	}
	if fence != "" {
		t.Fatalf("a fenced block is never closed")
	}
	return outside, fenced
}

// cells splits a table row on the pipes that are not backslash-escaped.
func cells(row string) []string {
	var out []string
	var cur strings.Builder
	for i := 0; i < len(row); i++ {
		switch {
		case row[i] == '\\' && i+1 < len(row):
			cur.WriteByte(row[i])
			cur.WriteByte(row[i+1])
			i++
		case row[i] == '|':
			out = append(out, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(row[i])
		}
	}
	out = append(out, cur.String())
	// A row starts and ends with a pipe: drop the empty ends.
	return out[1 : len(out)-1]
}

// Model output, target names, slice values, kinds, reasons and warnings
// carrying HTML and Markdown cannot add markup, links or table cells to a
// pull-request comment, and still read as what they are.
func TestMarkdownHostile(t *testing.T) {
	rep := hostileReport()
	rep.Warnings = append(rep.Warnings, hostMarkdown, "pay at https://evil.example/pay or www.evil.example")
	rep.Targets[0].Redactions = 3 // its note is in the document too
	for i := range rep.Targets {
		rep.Targets[i].Slices["tier"][hostMarkdown] = analysis.Rate{Passed: 1, N: 2, Rate: 0.5, CI: [2]float64{0.1, 0.9}}
	}
	rep.Worst[0].Raw += "\n````\n</details><script>window.__pwned=1</script>"
	var b strings.Builder
	if err := Markdown(&b, rep); err != nil {
		t.Fatal(err)
	}
	doc := b.String()
	outside, fenced := mdSplit(t, doc)
	ours := map[string]bool{"<details>": true, "<summary>": true, "</summary>": true, "</details>": true}
	var text strings.Builder
	var cols int
	for n, l := range outside {
		// Raw HTML outside code blocks: only our own collapsible blocks.
		for i := strings.IndexByte(l, '<'); i >= 0; i = next(l, i) {
			rest := l[i:]
			if len(rest) > 1 && (unicode.IsLetter(rune(rest[1])) || rest[1] == '/' || rest[1] == '!' || rest[1] == '?') {
				tag := rest[:min(len(rest), 20)]
				if j := strings.IndexByte(rest, '>'); j >= 0 {
					tag = rest[:j+1]
				}
				if !ours[tag] {
					t.Errorf("line %d: raw HTML %q in %q", n+1, tag, l)
				}
			}
		}
		if strings.Contains(l, "](") {
			t.Errorf("line %d: a link or image: %q", n+1, l)
		}
		// GitHub turns bare URLs and www. into links (extended autolinks).
		if strings.Contains(l, "://") || strings.Contains(strings.ToLower(l), "www.") {
			t.Errorf("line %d: a bare URL would autolink: %q", n+1, l)
		}
		// Every row of a table has as many cells as the table's header.
		if strings.HasPrefix(l, "|") {
			if c := len(cells(l)); cols == 0 {
				cols = c
			} else if c != cols {
				t.Errorf("line %d: %d cells, the table has %d: %q", n+1, c, cols, l)
			}
		} else {
			cols = 0
		}
		text.WriteString(l + "\n")
	}
	// Each hostile string is shown as text: in a table cell, an item, or
	// the failures' code blocks.
	for _, h := range hostile {
		if !strings.Contains(text.String(), mdText(h)) {
			t.Errorf("%q is not shown as escaped text", h)
		}
		found := false
		for _, f := range fenced {
			found = found || strings.Contains(f, h)
		}
		if !found {
			t.Errorf("%q is not shown verbatim in a code block", h)
		}
	}
	// The output that tries to close its fence and the <details> stays
	// inside its block.
	if len(fenced) == 0 || !strings.Contains(fenced[0], "</details><script>") {
		t.Errorf("the first failure's output escaped its code block; blocks: %q", fenced)
	}
	if strings.Contains(doc, "@someone") {
		t.Errorf("a model's @mention would notify someone")
	}
}

func next(s string, i int) int {
	j := strings.IndexByte(s[i+1:], '<')
	if j < 0 {
		return -1
	}
	return i + 1 + j
}

// smallReport is the DESIGN.md example, with the numbers written out.
func smallReport() *analysis.Report {
	month := 150.6
	return &analysis.Report{
		Run: analysis.RunInfo{ID: "r1", Spec: "ticket-triage", SpecHash: "sha256:aa", DatasetHash: "sha256:bb",
			PromptHash: "sha256:cc", Cases: 200, Epochs: 1, Status: "complete"},
		Targets: []analysis.Target{
			{Name: "candidate-a", N: 200,
				Primary:   analysis.Rate{Scorer: "correct", Passed: 151, N: 200, Rate: 0.755, CI: [2]float64{0.6910, 0.8094}},
				Failures:  analysis.Failures{Loud: 9, Silent: 40},
				LatencyMS: analysis.Latency{P50: 820, P95: 2140, P99: 4410},
				CostUSD:   analysis.Cost{Total: 0.0151, PerCase: 0.0000753, PerMonth: &month},
				Slices: map[string]map[string]analysis.Rate{"tier": {
					"10": {Passed: 1, N: 4, Rate: 0.25, CI: [2]float64{0.0456, 0.6994}},
					"2":  {Passed: 58, N: 80, Rate: 0.725, CI: [2]float64{0.6186, 0.8108}},
					"0":  {Passed: 92, N: 116, Rate: 0.7931, CI: [2]float64{0.7103, 0.8574}},
				}}},
			{Name: "candidate-b", N: 200,
				Primary:   analysis.Rate{Scorer: "correct", Passed: 134, N: 200, Rate: 0.67, CI: [2]float64{0.6019, 0.7317}},
				Failures:  analysis.Failures{Loud: 30, Silent: 36},
				LatencyMS: analysis.Latency{P50: 400, P95: 950, P99: 1200},
				CostUSD:   analysis.Cost{Total: 2.5, PerCase: 0.0125}},
		},
		Comparisons: []analysis.Comparison{{A: "candidate-a", B: "candidate-b", Scorer: "correct", N: 200,
			Delta: 0.085, SE: 0.0291, CI: [2]float64{0.028, 0.142}, Test: "mcnemar_exact",
			PValue: 0.0049, PAdjusted: 0.0098, Verdict: "a_better",
			Slices: map[string]map[string]analysis.Comparison{"tier": {
				"2": {Delta: -0.05, CI: [2]float64{-0.2, 0.1}, Verdict: "inconclusive"},
			}}}},
		Ranking:  []analysis.RankGroup{{Rank: 1, Targets: []string{"candidate-a"}}, {Rank: 2, Targets: []string{"candidate-b"}}},
		Warnings: []string{"bucket edge has 12 cases (under 30)"},
	}
}

// The numbers a reader acts on are formatted as the DESIGN.md example
// reads: rates and intervals in percent, latency in ms, cost at any scale,
// differences in signed points, p-values with two significant digits.
func TestMarkdownNumbers(t *testing.T) {
	var b strings.Builder
	if err := Markdown(&b, smallReport()); err != nil {
		t.Fatal(err)
	}
	doc := b.String()
	for _, want := range []string{
		"| candidate-a | 75.5% [69.1, 80.9] | 151 / 200 | 9 / 40 | 2,140 ms | $0.0000753 | $151 |",
		"| candidate-b | 67.0% [60.2, 73.2] | 134 / 200 | 30 / 36 | 950 ms | $0.0125 | — |",
		"| candidate-a vs candidate-b | 200 | **+8.5 [+2.8, +14.2]** | 0.0049 | 0.0098 | candidate-a better |",
		"- bucket edge has 12 cases \\(under 30\\)",
		"1. candidate-a; 2. candidate-b",
		"| 2 | 72.5% [61.9, 81.1] (58/80) | — | −5.0 [−20.0, +10.0] |",
		"| spec hash | sha256:aa |",
		"<details><summary>What was measured</summary>",
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("missing %q in\n%s", want, doc)
		}
	}
	// Targets the comparisons cannot separate share a rank.
	tied := smallReport()
	tied.Ranking = []analysis.RankGroup{{Rank: 1, Targets: []string{"candidate-a", "candidate-b"}}}
	var tb strings.Builder
	if err := Markdown(&tb, tied); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(tb.String(), "1. candidate-a, candidate-b (tied)") {
		t.Errorf("a tie is not shown as one rank:\n%s", tb.String())
	}
	// Tiers in numeric order: 0, 2, 10 (not 0, 10, 2).
	i0, i2, i10 := strings.Index(doc, "| 0 |"), strings.Index(doc, "| 2 |"), strings.Index(doc, "| 10 |")
	if i0 < 0 || i2 < 0 || i10 < 0 || !(i0 < i2 && i2 < i10) {
		t.Errorf("tier rows out of order: 0 at %d, 2 at %d, 10 at %d", i0, i2, i10)
	}
	// The hashes are collapsed: they come after the <details> opening.
	if strings.Index(doc, "sha256:aa") < strings.Index(doc, "<details><summary>What was measured") {
		t.Errorf("hashes are not inside the collapsed block")
	}
}

func TestMarkdownGolden(t *testing.T) {
	var b strings.Builder
	if err := Markdown(&b, cleanReport()); err != nil {
		t.Fatal(err)
	}
	golden(t, "report.md.golden", []byte(b.String()))
	var h strings.Builder
	if err := Markdown(&h, hostileReport()); err != nil {
		t.Fatal(err)
	}
	golden(t, "hostile.md.golden", []byte(h.String()))
}

func TestFormatNumbers(t *testing.T) {
	for _, c := range []struct {
		got, want string
	}{
		{units.USD(0), "$0"}, {units.USD(0.0000753), "$0.0000753"}, {units.USD(0.0151), "$0.0151"}, {units.USD(0.5), "$0.50"},
		{units.USD(0.00002), "$0.00002"}, {units.USD(15.06), "$15.06"}, {units.USD(150.6), "$151"}, {units.USD(12345.4), "$12,345"},
		{units.USD(1234567), "$1,234,567"}, {units.USD(-2.5), "−$2.50"},
		{units.MS(820), "820 ms"}, {units.MS(2140.4), "2,140 ms"}, {units.MS(4.25), "4.2 ms"},
		{units.PValue(0.0049), "0.0049"}, {units.PValue(0.00004), "<0.0001"}, {units.PValue(0.62), "0.62"}, {units.PValue(1), "1"}, {units.PValue(0.031), "0.031"},
		{units.Delta(0.085), "+8.5"}, {units.Delta(-0.03), "−3.0"}, {units.Delta(0), "0.0"}, {units.Delta(-0.0001), "0.0"},
		{units.Pct(0.755), "75.5%"}, {units.PctCI([2]float64{0.6910, 0.8094}), "[69.1, 80.9]"},
		{units.Thousands(-1234), "-1,234"}, {units.Thousands(999), "999"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
