package analysis

// caseIndex numbers a run's cases densely (in the order the store streams
// them) and keeps their tags as small integers, so per-case work over a
// large run is array indexing rather than string-keyed maps.
type caseIndex struct {
	ids   map[string]int
	names []string
	keys  []string         // tag keys, in first-seen order
	keyOf map[string]int   // tag key → index in keys
	vals  [][]string       // per key: value names
	valOf []map[string]int // per key: value name → index in vals
	tagOf [][]int32        // per key: per case: value index, or -1
}

func newCaseIndex() *caseIndex {
	return &caseIndex{ids: map[string]int{}, keyOf: map[string]int{}}
}

// add numbers a case (once) and records its tags.
func (ci *caseIndex) add(id string, tags map[string]string) int {
	if i, ok := ci.ids[id]; ok {
		return i
	}
	i := len(ci.names)
	ci.ids[id] = i
	ci.names = append(ci.names, id)
	for k := range ci.tagOf {
		ci.tagOf[k] = append(ci.tagOf[k], -1)
	}
	for k, v := range tags {
		ki, ok := ci.keyOf[k]
		if !ok {
			ki = len(ci.keys)
			ci.keyOf[k] = ki
			ci.keys = append(ci.keys, k)
			ci.vals = append(ci.vals, nil)
			ci.valOf = append(ci.valOf, map[string]int{})
			col := make([]int32, i+1)
			for j := range col {
				col[j] = -1
			}
			ci.tagOf = append(ci.tagOf, col)
		}
		vi, ok := ci.valOf[ki][v]
		if !ok {
			vi = len(ci.vals[ki])
			ci.valOf[ki][v] = vi
			ci.vals[ki] = append(ci.vals[ki], v)
		}
		ci.tagOf[ki][i] = int32(vi)
	}
	return i
}

func (ci *caseIndex) len() int { return len(ci.names) }

// verdicts holds one target's primary verdicts: per case and epoch, -1 when
// not scored, 0 fail, 1 pass.
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
