package analysis

import (
	"slices"

	"github.com/assay-eval/assay/internal/runview"
)

// caseIndex numbers cases densely and keeps their tags as small
// integers, so per-case work over a large run is array indexing rather than
// string-keyed maps. The report's and assay compare's index is the run's
// view's (casesOf: the view's cases in its order, its tag columns as they
// are); diff and the selection ledger number the union of several runs'
// case IDs with add, without tags.
type caseIndex struct {
	ids   map[string]int // add's lookup (nil in an index of a view)
	names []string       // add's cases (nil in an index of a view)
	cases []runview.Case // a view's cases
	keys  []string       // tag keys
	keyOf map[string]int // tag key → index in keys
	vals  [][]string     // per key: value names
	// tagOf holds per key each case's value: 0 for none, else 1 + an
	// index into vals; a column may end before the last case (the cases
	// after it have none). It is the view's runview.View.TagColumn.
	tagOf [][]int32
}

func newCaseIndex() *caseIndex {
	return &caseIndex{ids: map[string]int{}, keyOf: map[string]int{}}
}

// casesOf is the case index of a run's view: its cases in the view's
// order, with the view's tag columns.
func casesOf(v *runview.View) *caseIndex {
	ci := &caseIndex{cases: v.Cases, keyOf: map[string]int{}}
	for _, k := range v.TagKeys() {
		vals, idx := v.TagColumn(k)
		ci.keyOf[k] = len(ci.keys)
		ci.keys = append(ci.keys, k)
		ci.vals = append(ci.vals, vals)
		ci.tagOf = append(ci.tagOf, idx)
	}
	return ci
}

// add numbers a case (once) and records its tags, in an index made by
// newCaseIndex.
func (ci *caseIndex) add(id string, tags map[string]string) int {
	if i, ok := ci.ids[id]; ok {
		return i
	}
	i := len(ci.names)
	ci.ids[id] = i
	ci.names = append(ci.names, id)
	for k, v := range tags {
		ki, ok := ci.keyOf[k]
		if !ok {
			ki = len(ci.keys)
			ci.keyOf[k] = ki
			ci.keys = append(ci.keys, k)
			ci.vals = append(ci.vals, nil)
			ci.tagOf = append(ci.tagOf, nil)
		}
		vi := slices.Index(ci.vals[ki], v)
		if vi < 0 {
			vi = len(ci.vals[ki])
			ci.vals[ki] = append(ci.vals[ki], v)
		}
		col := ci.tagOf[ki]
		for len(col) <= i {
			col = append(col, 0)
		}
		col[i] = int32(vi + 1)
		ci.tagOf[ki] = col
	}
	return i
}

// tag returns case i's value of tag key k, as an index into vals[k], or
// -1 when it has none.
func (ci *caseIndex) tag(k, i int) int {
	col := ci.tagOf[k]
	if i >= len(col) || col[i] == 0 {
		return -1
	}
	return int(col[i] - 1)
}

func (ci *caseIndex) len() int { return len(ci.names) + len(ci.cases) }

// id returns case i's ID.
func (ci *caseIndex) id(i int) string {
	if ci.cases != nil {
		return ci.cases[i].ID
	}
	return ci.names[i]
}

// verdicts holds one target's verdicts of one scorer: per case and epoch,
// -1 when not scored, 0 fail, 1 pass. The report's are a column of the
// run's view (runview.Target.Pass, viewColumn); a field scorer's per-field
// verdicts and the ledger's other runs are their own.
type verdicts struct {
	epochs int
	v      []int8
}

func newVerdicts(epochs int) *verdicts {
	return &verdicts{epochs: max(epochs, 1)}
}

func (vs *verdicts) set(i, epoch int, pass bool) {
	if epoch < 1 {
		epoch = 1
	}
	if epoch > vs.epochs {
		vs.grow(epoch)
	}
	need := (i + 1) * vs.epochs
	for len(vs.v) < need {
		vs.v = append(vs.v, -1)
	}
	vs.v[i*vs.epochs+epoch-1] = int8(b2f(pass))
}

// grow re-lays the values for more epochs per case.
func (vs *verdicts) grow(epochs int) {
	n := len(vs.v) / vs.epochs
	nv := make([]int8, n*epochs)
	for j := range nv {
		nv[j] = -1
	}
	for i := 0; i < n; i++ {
		copy(nv[i*epochs:], vs.v[i*vs.epochs:(i+1)*vs.epochs])
	}
	vs.v, vs.epochs = nv, epochs
}

// mean returns case i's mean verdict over its scored epochs, and how many
// epochs were scored.
func (vs *verdicts) mean(i int) (float64, int) {
	if vs == nil || (i+1)*vs.epochs > len(vs.v) {
		return 0, 0
	}
	sum, n := 0, 0
	for _, x := range vs.v[i*vs.epochs : (i+1)*vs.epochs] {
		if x >= 0 {
			sum += int(x)
			n++
		}
	}
	if n == 0 {
		return 0, 0
	}
	return float64(sum) / float64(n), n
}

// viewColumn is target t's column of scorer's verdicts in the run's view
// v, as the report reads it; nil when t has no verdict of scorer.
func viewColumn(v *runview.View, t *runview.Target, scorer string) *verdicts {
	if t == nil {
		return nil
	}
	p, ok := t.Pass[scorer]
	if !ok {
		return nil
	}
	return &verdicts{epochs: v.Epochs, v: p}
}
