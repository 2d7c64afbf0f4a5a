package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestQuantileSelect(t *testing.T) {
	for _, n := range []int{1, 2, 5, 17, 18, 100, 1001} {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = float64((i * 7919) % n) // a permutation of 0..n-1
		}
		for _, q := range []float64{0, 0.5, 0.95, 1} {
			got := Quantile(append([]float64(nil), xs...), q)
			want := q * float64(n-1) // the sorted values are 0..n-1
			if math.Abs(got-want) > 1e-9 {
				t.Errorf("n=%d q=%v: %v, want %v", n, q, got, want)
			}
		}
	}
	// Many ties.
	xs := []float64{5, 1, 5, 5, 1, 5, 5, 5, 1, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 1, 5}
	if got := Quantile(xs, 0.1); got != 1 {
		t.Errorf("ties: %v", got)
	}
}

// The rank-counting quantile of a resample equals sorting the resample's
// values and interpolating (numpy's default), whatever the ties, the number
// of values per case and the repeats of a case.
func TestRankQuantileMatchesDirectQuantile(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for trial := range 300 {
		n := 1 + rng.IntN(40)
		cases := make([][]float64, n)
		for i := range cases {
			k := 1 // every case one value (the fast path) in half the trials
			if trial%2 == 1 {
				k = rng.IntN(4) // 0 to 3 values
			}
			for range k { // ties are common
				cases[i] = append(cases[i], float64(rng.IntN(25)))
			}
		}
		rq := NewRankQuantile(cases)
		if trial%2 == 0 && rq.single == nil {
			t.Fatalf("trial %d: the one-value fast path is %v", trial, rq.single != nil)
		}
		for range 20 {
			idx := make([]int, n)
			var vals []float64
			for j := range idx {
				idx[j] = rng.IntN(n)
				vals = append(vals, cases[idx[j]]...)
			}
			for _, q := range []float64{0, 0.5, 0.95, 1} {
				got := rq.Of(idx, q)
				want := math.NaN()
				if len(vals) > 0 {
					want = Quantile(slices.Clone(vals), q)
				}
				if !(got == want || math.IsNaN(got) && math.IsNaN(want)) && math.Abs(got-want) > 1e-9 {
					t.Fatalf("trial %d: q %g of %v = %g, want %g", trial, q, vals, got, want)
				}
			}
		}
	}
}

// Quantile, QuantileSorted and RankQuantile (over every case once, one
// value each and spread over cases) agree with numpy.quantile's default,
// itself checked against Python's statistics.quantiles
// (testdata/quantile.py).
func TestQuantileGolden(t *testing.T) {
	var g []struct {
		Name string
		Xs   []float64
		Q    []float64
		Want []float64
	}
	loadGolden(t, "testdata/quantile.json", &g)
	if len(g) < 8 {
		t.Fatalf("only %d vectors", len(g))
	}
	for _, v := range g {
		sorted := slices.Sorted(slices.Values(v.Xs))
		one := make([][]float64, len(v.Xs))
		var spread [][]float64 // two values per case, the last maybe one
		for i, x := range v.Xs {
			one[i] = []float64{x}
			if i%2 == 0 {
				spread = append(spread, nil)
			}
			spread[len(spread)-1] = append(spread[len(spread)-1], x)
		}
		all := func(n int) []int {
			idx := make([]int, n)
			for i := range idx {
				idx[i] = i
			}
			return idx
		}
		r1, r2 := NewRankQuantile(one), NewRankQuantile(spread)
		for k, q := range v.Q {
			want := v.Want[k]
			for _, got := range []struct {
				how string
				x   float64
			}{
				{"Quantile", Quantile(slices.Clone(v.Xs), q)},
				{"QuantileSorted", QuantileSorted(sorted, q)},
				{"RankQuantile (one value per case)", r1.Of(all(len(one)), q)},
				{"RankQuantile (two values per case)", r2.Of(all(len(spread)), q)},
			} {
				if math.Abs(got.x-want) > 1e-12*math.Max(1, math.Abs(want)) {
					t.Errorf("%s: %s at q %g = %.17g, numpy %.17g", v.Name, got.how, q, got.x, want)
				}
			}
		}
	}
	if !math.IsNaN(Quantile(nil, 0.5)) || !math.IsNaN(QuantileSorted(nil, 0.5)) {
		t.Error("the quantile of no values is not NaN")
	}
}
