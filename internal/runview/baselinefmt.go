package runview

import (
	"slices"
	"strings"
)

// A baseline file is committed beside the spec and refreshed when a change
// is accepted, so its git diff is what a reviewer reads. WriteBaseline
// therefore writes it stable and line-oriented: cases sorted by ID
// (compareCaseIDs), targets sorted by name, and the JSON indented with every
// list entry on a line of its own (a case's ID, kind, cost, latency and
// output hash are each one line), so that a change to one case changes a few
// short lines and the pass and shape strings. The format is unchanged: a file
// written before reads as before.

// compareCaseIDs orders case IDs naturally: runs of digits compare as
// numbers ("c2" before "c10"), everything else byte by byte; IDs that
// compare equal so ("c01", "c1") fall back to their bytes, so the order is
// total and the same on every machine.
func compareCaseIDs(a, b string) int {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if isDigit(a[i]) && isDigit(b[j]) {
			ei, ej := i, j
			for ei < len(a) && isDigit(a[ei]) {
				ei++
			}
			for ej < len(b) && isDigit(b[ej]) {
				ej++
			}
			na, nb := strings.TrimLeft(a[i:ei], "0"), strings.TrimLeft(b[j:ej], "0")
			if c := len(na) - len(nb); c != 0 {
				return c
			}
			if c := strings.Compare(na, nb); c != 0 {
				return c
			}
			i, j = ei, ej
			continue
		}
		if a[i] != b[j] {
			return int(a[i]) - int(b[j])
		}
		i, j = i+1, j+1
	}
	if c := (len(a) - i) - (len(b) - j); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// sortedForFile returns s with its cases in compareCaseIDs order and its
// targets by name, every per-result column permuted to match; s itself is
// not changed (s is returned as it is when already in that order).
func (s *View) sortedForFile() *View {
	nc := len(s.Cases)
	order := make([]int, nc) // order[k] is the case written k-th
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(x, y int) int { return compareCaseIDs(s.Cases[x].ID, s.Cases[y].ID) })
	casesSorted := true
	for k, i := range order {
		if k != i {
			casesSorted = false
			break
		}
	}
	targets := slices.Clone(s.Targets)
	slices.SortStableFunc(targets, func(a, b *Target) int { return strings.Compare(a.Name, b.Name) })
	if casesSorted && slices.Equal(targets, s.Targets) {
		return s
	}
	out := *s
	out.Targets = targets
	if casesSorted {
		return &out
	}
	out.Cases = make([]Case, nc)
	out.expected, out.weights = nil, nil
	for k, i := range order {
		out.Cases[k] = s.Cases[i]
		out.setCaseRecord(k, s.Expected(i), s.Weight(i))
	}
	out.tags = nil
	for _, key := range s.TagKeys() {
		for k, i := range order {
			if v, ok := s.Tag(i, key); ok {
				out.SetTag(k, key, v)
			}
		}
	}
	e := s.Epochs
	for ti, t := range targets {
		u := *t
		u.Pass = make(map[string][]int8, len(t.Pass))
		for sc, col := range t.Pass {
			u.Pass[sc] = permuteResults(col, order, e)
		}
		u.Shape = permuteResults(t.Shape, order, e)
		u.Kind = permuteResults(t.Kind, order, e)
		u.CostUSD = permuteResults(t.CostUSD, order, e)
		u.LatencyMS = permuteResults(t.LatencyMS, order, e)
		u.FirstTokenMS = permuteResults(t.FirstTokenMS, order, e)
		u.OutputHash = permuteResults(t.OutputHash, order, e)
		u.Errored = permuteResults(t.Errored, order, e)
		u.Cached = permuteResults(t.Cached, order, e)
		targets[ti] = &u
	}
	return &out
}

// permuteResults reorders a per-result column (case-major, epochs results
// per case) so that case order[k] comes k-th; nil stays nil.
func permuteResults[T any](col []T, order []int, epochs int) []T {
	if col == nil {
		return nil
	}
	out := make([]T, len(col))
	for k, i := range order {
		copy(out[k*epochs:(k+1)*epochs], col[i*epochs:(i+1)*epochs])
	}
	return out
}
