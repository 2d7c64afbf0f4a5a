package stats

import (
	"cmp"
	"math"
	"slices"
)

// RankQuantile finds q-quantiles of resamples of cases, each case holding
// one or more values. The values are sorted once; a resample's quantile is
// then read from how many of its values fall at each rank, which needs no
// copy of the values and visits memory in order.
type RankQuantile struct {
	sorted []float64 // every value, ascending
	off    []int     // case i's values have ranks ranks[off[i]:off[i+1]]
	ranks  []int32
	// single, when every case holds exactly one value, is case i's rank
	// (ranks itself, without the offsets: one memory read fewer per draw).
	single []int32
	counts []int32 // scratch: resampled values per rank
}

// NewRankQuantile prepares the quantiles of resamples of cases: cases[i]
// holds case i's values (none, one, or several: a case's epochs).
func NewRankQuantile(cases [][]float64) *RankQuantile {
	r := &RankQuantile{off: make([]int, len(cases)+1)}
	var vals []float64
	for i, c := range cases {
		vals = append(vals, c...)
		r.off[i+1] = len(vals)
	}
	order := make([]int32, len(vals))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int { return cmp.Compare(vals[a], vals[b]) })
	r.sorted = make([]float64, len(vals))
	r.ranks = make([]int32, len(vals))
	for k, i := range order {
		r.sorted[k] = vals[i]
		r.ranks[i] = int32(k)
	}
	r.counts = make([]int32, len(vals))
	if len(vals) == len(cases) && !slices.ContainsFunc(cases, func(c []float64) bool { return len(c) != 1 }) {
		r.single = r.ranks
	}
	return r
}

// Of is the q-quantile (Quantile's: numpy's default) of the values of the
// cases idx names, a case named twice counting twice. NaN when they hold
// no value.
func (r *RankQuantile) Of(idx []int, q float64) float64 {
	clear(r.counts)
	m := 0
	if r.single != nil {
		for _, i := range idx {
			r.counts[r.single[i]]++
		}
		m = len(idx)
	} else {
		r.countSpread(idx, &m)
	}
	if m == 0 {
		return math.NaN()
	}
	lo, t := position(m, q)
	x, next := r.orderStat(lo, m)
	if t == 0 {
		return x
	}
	return lerp(x, next, t)
}

// countSpread counts the values of cases holding any number of them.
func (r *RankQuantile) countSpread(idx []int, m *int) {
	for _, i := range idx {
		for _, k := range r.ranks[r.off[i]:r.off[i+1]] {
			r.counts[k]++
		}
		*m += r.off[i+1] - r.off[i]
	}
}

// orderStat returns the k-th and (k+1)-th smallest resampled values (the
// k-th twice when k is the last) from the counts, walking from whichever
// end is nearer: a p95 visits only the top twentieth of the ranks.
func (r *RankQuantile) orderStat(k, m int) (x, next float64) {
	if k+1 >= m {
		next = math.NaN()
	}
	found := false
	if k < m/2 {
		cum := 0
		for rank, c := range r.counts {
			if c == 0 {
				continue
			}
			cum += int(c)
			switch {
			case !found && cum > k+1:
				return r.sorted[rank], r.sorted[rank]
			case !found && cum > k:
				x, found = r.sorted[rank], true
				if k+1 >= m {
					return x, x
				}
			case found:
				return x, r.sorted[rank]
			}
		}
		return x, x
	}
	// From the top: the k-th smallest is the (m-1-k)-th largest.
	above := 0 // values at higher ranks than the current one
	for rank := len(r.counts) - 1; rank >= 0; rank-- {
		c := int(r.counts[rank])
		if c == 0 {
			continue
		}
		// This rank holds the ascending positions m-above-c .. m-above-1.
		first, last := m-above-c, m-above-1
		if k+1 <= last && k+1 >= first {
			next = r.sorted[rank]
		}
		if k <= last && k >= first {
			x = r.sorted[rank]
			if k+1 >= m {
				next = x
			}
			return x, next
		}
		above += c
	}
	return x, next
}

// Quantile is the q-quantile (q in [0, 1]) of xs, interpolated linearly
// between order statistics: numpy.quantile's default ("linear", Hyndman and
// Fan type 7), to the last bit. NaN when xs is empty. It reorders xs (a
// selection, not a sort: O(len(xs))). It is the one quantile of assay: the
// report's percentiles, the gate's p95 (through RankQuantile), the
// bootstrap's percentile intervals and the HTML charts all read it, so two
// commands cannot compute the same percentile two ways.
func Quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	lo, t := position(len(xs), q)
	x := selectK(xs, lo)
	if t == 0 {
		return x
	}
	return lerp(x, slices.Min(xs[lo+1:]), t)
}

// QuantileSorted is Quantile of data already sorted ascending, which it
// does not modify.
func QuantileSorted(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	lo, t := position(len(sorted), q)
	if t == 0 {
		return sorted[lo]
	}
	return lerp(sorted[lo], sorted[lo+1], t)
}

// position is where the q-quantile of n values falls: between the lo-th
// and (lo+1)-th smallest (0-based), at fraction t of the way; t is 0 when
// it falls on the lo-th exactly or past the last (q is clamped to [0, 1]).
func position(n int, q float64) (lo int, t float64) {
	h := q * float64(n-1)
	switch {
	case !(h > 0): // q ≤ 0 (or NaN)
		return 0, 0
	case h >= float64(n-1):
		return n - 1, 0
	}
	f := math.Floor(h)
	return int(f), h - f
}

// lerp interpolates from a to b at fraction t in (0, 1) as numpy does
// (numpy.lib.function_base._lerp): from the upper neighbour when t is at
// least one half, which keeps the result within [a, b] and exact at the
// ends.
func lerp(a, b, t float64) float64 {
	d := b - a
	if t >= 0.5 {
		return b - d*(1-t)
	}
	return a + d*t
}

// selectK reorders xs so that xs[k] is the k-th smallest, everything before
// it no larger and everything after no smaller, and returns it
// (Hoare's selection with a middle pivot; sorting when the range is small).
func selectK(xs []float64, k int) float64 {
	lo, hi := 0, len(xs)-1
	for hi-lo > 16 {
		a, b, c := xs[lo], xs[(lo+hi)/2], xs[hi]
		pivot := max(min(a, b), min(max(a, b), c))
		i, j := lo, hi
		for i <= j {
			for xs[i] < pivot {
				i++
			}
			for xs[j] > pivot {
				j--
			}
			if i <= j {
				xs[i], xs[j] = xs[j], xs[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return xs[k]
		}
	}
	slices.Sort(xs[lo : hi+1])
	return xs[k]
}
