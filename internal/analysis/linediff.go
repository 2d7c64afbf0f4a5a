package analysis

import (
	"encoding/json"
	"fmt"
	"strings"
)

// A changed prompt is shown as a line diff, unified-style: hunks of changed
// lines with diffContext lines of context around them. It is bounded: at
// most maxDiffLines lines (hunk headers and context included; the changed
// lines left out are counted), each cut at maxDiffLineRunes runes, and an
// edit script computed exactly only when the differing middle of the two
// texts is at most maxLCSCells line pairs (beyond, the middle is shown as
// removed, then added).
const (
	diffContext      = 2
	maxDiffLines     = 80
	maxDiffLineRunes = 200
	maxLCSCells      = 1 << 22
)

// DiffLine is one line of a line diff. Op is "@@" for a hunk header
// (Text "@@ -first,count +first,count @@", lines counted from 1), " " for
// a line of context, "-" for a line only before and "+" for a line only
// after. Text comes from a spec (hostile as anything a user pastes):
// renderers escape it.
type DiffLine struct {
	Op   string `json:"op"`
	Text string `json:"text"`
}

// lineDiffJSON is the line diff of two JSON strings (a spec's values), nil
// when either is not a string.
func lineDiffJSON(before, after string) ([]DiffLine, int) {
	var b, a string
	if json.Unmarshal([]byte(before), &b) != nil || json.Unmarshal([]byte(after), &a) != nil {
		return nil, 0
	}
	return LineDiff(b, a)
}

// LineDiff compares two texts line by line and returns the unified-style
// hunks (bounded as the constants above say) and how many changed lines
// were left out past the bound.
func LineDiff(before, after string) ([]DiffLine, int) {
	if before == after {
		return nil, 0
	}
	a, b := strings.Split(before, "\n"), strings.Split(after, "\n")
	ops := editScript(a, b)

	// Hunks: runs of changes, with context, merged when their contexts touch.
	var out []DiffLine
	omitted := 0
	emit := func(l DiffLine) {
		if len(out) < maxDiffLines {
			out = append(out, DiffLine{Op: l.Op, Text: cutRunes(l.Text, maxDiffLineRunes)})
		} else if l.Op == "-" || l.Op == "+" {
			omitted++
		}
	}
	for i := 0; i < len(ops); {
		if ops[i].Op == " " {
			i++
			continue
		}
		start := max(0, i-diffContext)
		end := i // one past the hunk's last op
		for j := i; j < len(ops); j++ {
			if ops[j].Op != " " {
				end = j + 1
				continue
			}
			if j-end >= 2*diffContext {
				break
			}
		}
		end = min(len(ops), end+diffContext)
		// Line numbers of the hunk on each side.
		la, lb, ca, cb := 1, 1, 0, 0
		for _, o := range ops[:start] {
			if o.Op != "+" {
				la++
			}
			if o.Op != "-" {
				lb++
			}
		}
		for _, o := range ops[start:end] {
			if o.Op != "+" {
				ca++
			}
			if o.Op != "-" {
				cb++
			}
		}
		emit(DiffLine{Op: "@@", Text: fmt.Sprintf("@@ -%s +%s @@", hunkRange(la, ca), hunkRange(lb, cb))})
		for _, o := range ops[start:end] {
			emit(o)
		}
		i = end
	}
	return out, omitted
}

// hunkRange is a unified diff's "first,count" (an empty side names the
// line before it).
func hunkRange(first, count int) string {
	if count == 0 {
		first--
	}
	if count == 1 {
		return fmt.Sprint(first)
	}
	return fmt.Sprintf("%d,%d", first, count)
}

// editScript turns a into b: the common prefix and suffix are context, the
// middle an LCS edit script (removals before additions at each change), or
// all removed then all added when it is too large to compare pairwise.
func editScript(a, b []string) []DiffLine {
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	var ops []DiffLine
	for _, l := range a[:p] {
		ops = append(ops, DiffLine{" ", l})
	}
	ma, mb := a[p:len(a)-s], b[p:len(b)-s]
	if len(ma)*len(mb) <= maxLCSCells {
		ops = append(ops, lcsScript(ma, mb)...)
	} else {
		for _, l := range ma {
			ops = append(ops, DiffLine{"-", l})
		}
		for _, l := range mb {
			ops = append(ops, DiffLine{"+", l})
		}
	}
	for _, l := range a[len(a)-s:] {
		ops = append(ops, DiffLine{" ", l})
	}
	return ops
}

// lcsScript is the edit script of a longest common subsequence of lines.
func lcsScript(a, b []string) []DiffLine {
	n, m := len(a), len(b)
	// l[i][j] is the LCS length of a[i:] and b[j:].
	l := make([]int32, (n+1)*(m+1))
	at := func(i, j int) int32 { return l[i*(m+1)+j] }
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			v := max(at(i+1, j), at(i, j+1))
			if a[i] == b[j] {
				v = at(i+1, j+1) + 1
			}
			l[i*(m+1)+j] = v
		}
	}
	var ops []DiffLine
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			ops = append(ops, DiffLine{" ", a[i]})
			i++
			j++
		case j == m || i < n && at(i+1, j) >= at(i, j+1):
			ops = append(ops, DiffLine{"-", a[i]})
			i++
		default:
			ops = append(ops, DiffLine{"+", b[j]})
			j++
		}
	}
	return ops
}

func cutRunes(s string, n int) string {
	k := 0
	for i := range s {
		if k == n {
			return s[:i] + "…"
		}
		k++
	}
	return s
}
