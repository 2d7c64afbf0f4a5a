package analysis

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

func renderDiff(ls []DiffLine) string {
	var b strings.Builder
	for _, l := range ls {
		if l.Op == "@@" {
			b.WriteString(l.Text + "\n")
		} else {
			b.WriteString(l.Op + l.Text + "\n")
		}
	}
	return b.String()
}

// Two changes six lines apart are two hunks with two lines of context,
// numbered as GNU `diff -U2` numbers them (its output for these texts);
// an added line and a removed one are hunks of their own kind.
func TestLineDiffUnified(t *testing.T) {
	before := "a\nb\nc\nd\ne\nf\ng\nh\ni\nj"
	after := "a\nB\nc\nd\ne\nf\ng\nh\nI\nj"
	want := "@@ -1,4 +1,4 @@\n a\n-b\n+B\n c\n d\n@@ -7,4 +7,4 @@\n g\n h\n-i\n+I\n j\n"
	if got, omitted := LineDiff(before, after); renderDiff(got) != want || omitted != 0 {
		t.Errorf("got (%d omitted)\n%s\nwant\n%s", omitted, renderDiff(got), want)
	}
	// Changes four lines apart share a hunk (their contexts touch).
	after = "a\nB\nc\nd\ne\nf\nG\nh\ni\nj"
	want = "@@ -1,9 +1,9 @@\n a\n-b\n+B\n c\n d\n e\n f\n-g\n+G\n h\n i\n"
	if got, _ := LineDiff(before, after); renderDiff(got) != want {
		t.Errorf("got\n%s\nwant\n%s", renderDiff(got), want)
	}
	// A line inserted at the top; a line removed at the end.
	if got, _ := LineDiff("x\ny", "new\nx\ny"); renderDiff(got) != "@@ -1,2 +1,3 @@\n+new\n x\n y\n" {
		t.Errorf("insert at top:\n%s", renderDiff(got))
	}
	if got, _ := LineDiff("x\ny\nz", "x\ny"); renderDiff(got) != "@@ -1,3 +1,2 @@\n x\n y\n-z\n" {
		t.Errorf("remove at end:\n%s", renderDiff(got))
	}
	if got, _ := LineDiff("same", "same"); got != nil {
		t.Errorf("no change: %v", got)
	}
}

// A prompt rewritten whole shows at most maxDiffLines lines, each cut, and
// counts the changed lines it left out.
func TestLineDiffBounded(t *testing.T) {
	var b, a strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&b, "old line %d %s\n", i, strings.Repeat("x", 500))
		fmt.Fprintf(&a, "new line %d\n", i)
	}
	got, omitted := LineDiff(b.String(), a.String())
	if len(got) != maxDiffLines {
		t.Fatalf("%d lines shown, want %d", len(got), maxDiffLines)
	}
	shown := 0
	for _, l := range got {
		if l.Op == "-" || l.Op == "+" {
			shown++
		}
		if n := len([]rune(l.Text)); n > maxDiffLineRunes+1 {
			t.Errorf("a line of %d runes", n)
		}
	}
	if shown+omitted != 2000 {
		t.Errorf("%d changed lines shown + %d omitted, want 2000 in all", shown, omitted)
	}
}

// applyDiff rebuilds the after text from the before text and the hunks.
func applyDiff(t *testing.T, before string, ls []DiffLine) string {
	a := strings.Split(before, "\n")
	var out []string
	next := 0 // the next before line not yet copied (0-based)
	for _, l := range ls {
		switch l.Op {
		case "@@":
			f := strings.Fields(l.Text) // @@ -first,count +first,count @@
			first, _, _ := strings.Cut(strings.TrimPrefix(f[1], "-"), ",")
			n, err := strconv.Atoi(first)
			if err != nil {
				t.Fatalf("hunk header %q", l.Text)
			}
			if _, count, _ := strings.Cut(f[1], ","); count == "0" {
				n++ // an empty side names the line before it
			}
			out = append(out, a[next:n-1]...)
			next = n - 1
		case " ", "-":
			if a[next] != l.Text {
				t.Fatalf("line %d is %q, the diff says %q", next+1, a[next], l.Text)
			}
			if l.Op == " " {
				out = append(out, l.Text)
			}
			next++
		case "+":
			out = append(out, l.Text)
		}
	}
	return strings.Join(append(out, a[next:]...), "\n")
}

// FuzzLineDiff: the hunks, applied to the before text, give the after text
// whenever nothing was left out or cut.
func FuzzLineDiff(f *testing.F) {
	f.Add("a\nb\nc\nd\ne\nf\ng\nh\ni\nj", "a\nB\nc\nd\ne\nf\ng\nh\nI\nj")
	f.Add("x\ny", "new\nx\ny")
	f.Add("", "a\n\nb")
	f.Add("a\nb\na\nb", "b\na\nb\na")
	f.Fuzz(func(t *testing.T, before, after string) {
		if len(before) > 4<<10 || len(after) > 4<<10 {
			return
		}
		ls, omitted := LineDiff(before, after)
		if before == after {
			if ls != nil {
				t.Fatal("a diff of equal texts")
			}
			return
		}
		if omitted > 0 || len(ls) == maxDiffLines {
			return
		}
		for _, l := range ls {
			if strings.HasSuffix(l.Text, "…") && len([]rune(l.Text)) == maxDiffLineRunes+1 {
				return
			}
		}
		if got := applyDiff(t, before, ls); got != after {
			t.Fatalf("applied diff gives %q, want %q\n%s", got, after, renderDiff(ls))
		}
	})
}
