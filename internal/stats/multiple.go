package stats

import (
	"math"
	"slices"
)

// Holm returns Holm's step-down adjusted p-values for a family of tests (all
// pairwise comparisons of a run, say), in the order given: the i-th smallest
// p is multiplied by m−i+1 (i from 1), a running maximum keeps the adjusted
// values monotone, and values are capped at 1. It controls the family-wise
// error rate under any dependence between the tests and is assay's default.
// It equals statsmodels' multipletests(ps, method="holm").
//
// A NaN p-value (a comparison that could not be tested) still counts as a
// member of the family, as if its p-value were 1, and stays NaN in the
// result; p-values outside [0, 1] are clamped into it. An empty family gives
// an empty result.
func Holm(ps []float64) []float64 {
	m := len(ps)
	order, clean := sortedFamily(ps)
	adj := make([]float64, m)
	running := 0.0
	for i, idx := range order {
		v := float64(m-i) * clean[idx]
		running = math.Max(running, v)
		adj[idx] = math.Min(1, running)
	}
	restoreNaN(ps, adj)
	return adj
}

// BenjaminiHochberg returns Benjamini–Hochberg adjusted p-values (q-values)
// in the order given: the i-th smallest p is divided by i/m, a running
// minimum from the largest down keeps them monotone, and values are capped
// at 1. It controls the false discovery rate for independent or positively
// dependent tests. It equals statsmodels' multipletests(ps,
// method="fdr_bh"). NaN and out-of-range inputs are treated as in Holm.
func BenjaminiHochberg(ps []float64) []float64 {
	m := len(ps)
	order, clean := sortedFamily(ps)
	adj := make([]float64, m)
	running := math.Inf(1)
	for i := m - 1; i >= 0; i-- {
		idx := order[i]
		v := clean[idx] / (float64(i+1) / float64(m))
		running = math.Min(running, v)
		adj[idx] = math.Min(1, running)
	}
	restoreNaN(ps, adj)
	return adj
}

// sortedFamily returns the p-values cleaned for adjustment (NaN → 1, the rest
// clamped to [0, 1]) and the indices that sort them ascending. Ties get the
// same adjusted value whatever their order, in both procedures.
func sortedFamily(ps []float64) (order []int, clean []float64) {
	clean = make([]float64, len(ps))
	order = make([]int, len(ps))
	for i, p := range ps {
		switch {
		case math.IsNaN(p) || p > 1:
			clean[i] = 1
		case p < 0:
			clean[i] = 0
		default:
			clean[i] = p
		}
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case clean[a] < clean[b]:
			return -1
		case clean[a] > clean[b]:
			return 1
		}
		return 0
	})
	return order, clean
}

func restoreNaN(ps, adj []float64) {
	for i, p := range ps {
		if math.IsNaN(p) {
			adj[i] = math.NaN()
		}
	}
}
