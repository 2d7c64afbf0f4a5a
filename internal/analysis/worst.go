package analysis

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"unicode/utf8"

	"github.com/assay-eval/assay/internal/record"
)

// maxRawShown bounds an output kept for display.
const maxRawShown = 4000

// worstList keeps the failures most worth reading: the costliest first (the
// expected cost of the error, from the spec's error_costs and the case's
// weight), then silent ones (confidently wrong) before loud ones, and then
// in the order they were stored. It holds at most n (all of them when n is
// negative), so memory does not grow with a run unless asked to; next
// counts every failure offered.
type worstList struct {
	n     int // -1: keep all
	items []FailureExample
	seq   []int
	next  int
}

// DefaultWorst is how many failures a report lists when not told.
const DefaultWorst = 20

func newWorstList(n int) *worstList {
	switch {
	case n < 0:
		n = -1
	case n == 0:
		n = DefaultWorst
	}
	return &worstList{n: n}
}

// worse orders failures by expected error cost, then by shape: a silent
// failure is worse than a loud one of the same cost.
func worse(a, b FailureExample) bool {
	if a.ErrorCost != b.ErrorCost {
		return a.ErrorCost > b.ErrorCost
	}
	return a.Shape == "silent" && b.Shape != "silent"
}

func (w *worstList) offer(f FailureExample) {
	w.next++
	if w.n < 0 || len(w.items) < w.n {
		w.items = append(w.items, f)
		w.seq = append(w.seq, w.next)
		return
	}
	// Replace the least bad kept item when f is worse than it.
	least := 0
	for i := 1; i < len(w.items); i++ {
		if worse(w.items[least], w.items[i]) || (!worse(w.items[i], w.items[least]) && w.seq[i] > w.seq[least]) {
			least = i
		}
	}
	if worse(f, w.items[least]) {
		w.items[least] = f
		w.seq[least] = w.next
	}
}

// streamAbove is the number of kept failures above which their outputs are
// read in one pass over the run's results rather than one lookup each.
const streamAbove = 200

// fillResults reads the stored output of every kept failure.
func (w *worstList) fillResults(ctx context.Context, st record.Reader, runID string) error {
	if len(w.items) > streamAbove {
		want := make(map[record.Key][]int, len(w.items))
		for i, f := range w.items {
			k := record.Key{CaseID: f.CaseID, Target: f.Target, Epoch: f.Epoch}
			want[k] = append(want[k], i)
		}
		return st.Results(ctx, runID, func(r record.Result) error {
			for _, i := range want[r.Key()] {
				w.setRaw(i, &r)
			}
			return nil
		})
	}
	for i, f := range w.items {
		r, err := st.Result(ctx, runID, record.Key{CaseID: f.CaseID, Target: f.Target, Epoch: f.Epoch})
		if errors.Is(err, record.ErrNotFound) {
			continue // a score whose result is gone: nothing to show
		}
		if err != nil {
			return err
		}
		w.setRaw(i, r)
	}
	return nil
}

// setRaw attaches a kept failure's output, bounded for display.
func (w *worstList) setRaw(i int, r *record.Result) {
	raw := r.Raw
	if r.ErrorKind != "" && raw == "" {
		raw = r.Error
	}
	if len(raw) > maxRawShown {
		cut := maxRawShown
		for cut > 0 && !utf8.RuneStart(raw[cut]) {
			cut--
		}
		raw = raw[:cut] + "…"
	}
	w.items[i].Raw = raw
	w.items[i].Calls = shownCalls(r.ToolCalls)
}

func (w *worstList) list() []FailureExample {
	idx := make([]int, len(w.items))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		x, y := w.items[idx[a]], w.items[idx[b]]
		if worse(x, y) != worse(y, x) {
			return worse(x, y)
		}
		return w.seq[idx[a]] < w.seq[idx[b]]
	})
	out := make([]FailureExample, len(idx))
	for i, j := range idx {
		out[i] = w.items[j]
	}
	return out
}

// fillExpected attaches the cases' expected values to the kept failures.
func (w *worstList) fillExpected(ctx context.Context, st record.Reader, runID string) error {
	if len(w.items) == 0 {
		return nil
	}
	want := map[string][]int{}
	for i, f := range w.items {
		want[f.CaseID] = append(want[f.CaseID], i)
	}
	return st.Cases(ctx, runID, func(c record.Case) error {
		for _, i := range want[c.ID] {
			e := string(c.Expected)
			var s string
			if json.Unmarshal(c.Expected, &s) == nil {
				e = s
			}
			if e != "null" {
				w.items[i].Expected = e
			}
		}
		return nil
	})
}
