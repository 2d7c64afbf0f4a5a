package runview

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// compactJSON is a written baseline file with its layout removed.
func compactJSON(t *testing.T, b []byte) string {
	t.Helper()
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	return out.String()
}

func writeBaselineT(t *testing.T, s *View) string {
	t.Helper()
	var b bytes.Buffer
	if err := WriteBaseline(&b, s); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestCompareCaseIDs(t *testing.T) {
	want := []string{"", "a", "a01", "a1", "a2", "a10", "a10b", "a10b2", "a10b10", "b", "c0", "c000", "c1", "c9", "c10", "c99", "c100", "case-2", "case-10", "x99999999999999999999", "x100000000000000000000"}
	got := slices.Clone(want)
	slices.Reverse(got)
	slices.SortFunc(got, compareCaseIDs)
	if !slices.Equal(got, want) {
		t.Errorf("natural order:\n got %q\nwant %q", got, want)
	}
	for _, a := range want {
		for _, b := range want {
			if (compareCaseIDs(a, b) == 0) != (a == b) || sign(compareCaseIDs(a, b)) != -sign(compareCaseIDs(b, a)) {
				t.Errorf("compareCaseIDs(%q, %q) = %d, (%q, %q) = %d: not a total order", a, b, compareCaseIDs(a, b), b, a, compareCaseIDs(b, a))
			}
		}
	}
}

func sign(x int) int {
	switch {
	case x < 0:
		return -1
	case x > 0:
		return 1
	}
	return 0
}

// shuffled is s with its cases in another order (every per-result column
// moved with them) and its targets reversed: the same run, as a store might
// list it.
func shuffled(s *View) *View {
	n := len(s.Cases)
	order := make([]int, n)
	for k := range order {
		order[k] = (k*7 + 3) % n // a permutation when n is not a multiple of 7
	}
	out := *s
	out.Cases = make([]Case, n)
	out.tags = nil
	for k, i := range order {
		out.Cases[k] = s.Cases[i]
		for key, v := range s.CaseTags(i) {
			out.SetTag(k, key, v)
		}
	}
	out.Targets = nil
	for _, t := range slices.Backward(s.Targets) {
		u := *t
		u.Pass = map[string][]int8{}
		for sc, col := range t.Pass {
			u.Pass[sc] = permuteResults(col, order, s.Epochs)
		}
		u.Shape, u.Kind = permuteResults(t.Shape, order, s.Epochs), permuteResults(t.Kind, order, s.Epochs)
		u.CostUSD, u.LatencyMS = permuteResults(t.CostUSD, order, s.Epochs), permuteResults(t.LatencyMS, order, s.Epochs)
		u.FirstTokenMS, u.OutputHash = permuteResults(t.FirstTokenMS, order, s.Epochs), permuteResults(t.OutputHash, order, s.Epochs)
		u.Errored, u.Cached = permuteResults(t.Errored, order, s.Epochs), permuteResults(t.Cached, order, s.Epochs)
		out.Targets = append(out.Targets, &u)
	}
	return &out
}

// The same run writes the same file whatever order its cases and targets
// come in: cases by ID in natural order, targets by name, one list entry a
// line; the snapshot given is not changed.
func TestBaselineFileIsStable(t *testing.T) {
	s := realisticSnap(200)
	want := writeBaselineT(t, s)
	sh := shuffled(s)
	firstID := sh.Cases[0].ID
	if got := writeBaselineT(t, sh); got != want {
		t.Fatalf("the same run in another case and target order writes another file")
	}
	if sh.Cases[0].ID != firstID || sh.Targets[0].Name != "claude-haiku" {
		t.Errorf("WriteBaseline reordered the snapshot it was given")
	}
	var f struct {
		Cases   struct{ ID []string }
		Targets []struct{ Name string }
	}
	if err := json.Unmarshal([]byte(want), &f); err != nil {
		t.Fatal(err)
	}
	if f.Cases.ID[0] != "c1" || f.Cases.ID[1] != "c2" || f.Cases.ID[9] != "c10" || f.Cases.ID[199] != "c200" {
		t.Errorf("cases are not in natural ID order: %q …", f.Cases.ID[:12])
	}
	if len(f.Targets) != 2 || f.Targets[0].Name != "claude-haiku" || f.Targets[1].Name != "gpt-4o-mini" {
		t.Errorf("targets are not sorted by name: %+v", f.Targets)
	}
	// A line per entry: at least a line per case per column.
	if lines := strings.Count(want, "\n"); lines < 200*9 {
		t.Errorf("the file has %d lines for 200 cases × 2 targets; want a line per list entry", lines)
	}

	// What the shuffled run reads back as is the sorted run, result for result.
	got, err := ReadBaseline("b.json", strings.NewReader(want))
	if err != nil {
		t.Fatal(err)
	}
	for k, c := range got.Cases {
		i := slices.IndexFunc(sh.Cases, func(x Case) bool { return x.ID == c.ID })
		if !reflect.DeepEqual(got.CaseTags(k), sh.CaseTags(i)) {
			t.Fatalf("case %s: tags %v, wrote %v", c.ID, got.CaseTags(k), sh.CaseTags(i))
		}
		for _, wt := range sh.Targets {
			gt := got.Target(wt.Name)
			if gt.Pass["correct"][k] != wt.Pass["correct"][i] || gt.Shape[k] != wt.Shape[i] || gt.KindAt(k) != wt.KindAt(i) ||
				gt.OutputHash[k] != wt.OutputHash[i] || gt.Errored[k] != wt.Errored[i] {
				t.Fatalf("case %s, target %s: a result moved to another case", c.ID, wt.Name)
			}
		}
	}
}

// changedLines counts the lines a line diff of a and b removes and adds
// (by their longest common subsequence).
func changedLines(a, b string) (removed, added []string) {
	x, y := strings.Split(a, "\n"), strings.Split(b, "\n")
	l := make([][]int32, len(x)+1)
	for i := range l {
		l[i] = make([]int32, len(y)+1)
	}
	for i := len(x) - 1; i >= 0; i-- {
		for j := len(y) - 1; j >= 0; j-- {
			if x[i] == y[j] {
				l[i][j] = l[i+1][j+1] + 1
			} else {
				l[i][j] = max(l[i+1][j], l[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for i < len(x) && j < len(y) {
		switch {
		case x[i] == y[j]:
			i, j = i+1, j+1
		case l[i+1][j] >= l[i][j+1]:
			removed = append(removed, x[i])
			i++
		default:
			added = append(added, y[j])
			j++
		}
	}
	return append(removed, x[i:]...), append(added, y[j:]...)
}

// A change to one case's result is a few short lines of the file's diff
// (its kind, output hash and latency entries) besides the pass and shape
// strings of the target: a reviewer sees what changed.
func TestBaselineOneCaseChangeIsAFewLineDiff(t *testing.T) {
	s := realisticSnap(300)
	before := writeBaselineT(t, s)
	tg := s.Target("gpt-4o-mini")
	const j = 41 // case c42, which passed
	if tg.Shape[j] != ShapePass {
		t.Fatalf("case c42 should pass in realisticSnap")
	}
	tg.Pass["correct"][j], tg.Shape[j] = 0, ShapeSilent
	tg.SetKind(j, "wrong")
	tg.OutputHash[j] = OutputSum("another answer")
	tg.LatencyMS[j] += 250
	after := writeBaselineT(t, s)

	removed, added := changedLines(before, after)
	t.Logf("removed %d, added %d lines of %d", len(removed), len(added), strings.Count(after, "\n"))
	if len(removed) > 5 || len(added) > 5 {
		t.Errorf("one case's change removes %d and adds %d lines; want at most 5 each (pass, shape, kind, output hash, latency):\n-%s\n+%s",
			len(removed), len(added), strings.Join(removed, "\n-"), strings.Join(added, "\n+"))
	}
	short := 0
	for _, line := range added {
		if len(line) < 40 {
			short++
		}
	}
	if short != 3 {
		t.Errorf("want 3 short changed lines (the kind, output hash and latency entries), got %d: %q", short, added)
	}
	for _, want := range []string{`"` + hashStrings(tg)[j] + `"`} {
		if !slices.ContainsFunc(added, func(l string) bool { return strings.Contains(l, want) }) {
			t.Errorf("the diff does not show the new output hash %s: %q", want, added)
		}
	}
}

// sortedForFile moves every per-result column of a target with its case:
// a column added to Target must be added there too (or listed here as not
// per result).
func TestSortedForFileKnowsEveryTargetField(t *testing.T) {
	perResult := []string{"Pass", "Shape", "Kind", "CostUSD", "LatencyMS", "FirstTokenMS", "OutputHash", "Errored", "Cached"}
	other := []string{"Name", "Fingerprints", "Kinds", "Temperature", "TemperatureKnown", "ConfigHash"}
	typ := reflect.TypeFor[Target]()
	for i := range typ.NumField() {
		name := typ.Field(i).Name
		if !slices.Contains(perResult, name) && !slices.Contains(other, name) {
			t.Errorf("Target.%s is new: if it holds a value per result, sortedForFile must permute it (then list it here)", name)
		}
	}
}
