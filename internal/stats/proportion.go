// Package stats is pure math for honest numbers: intervals for proportions,
// and (as the statistics work grows) paired tests, bootstrap, multiplicity
// and power. It does no I/O and knows nothing of runs, stores or reports.
// Every function is checked against an independent implementation.
package stats

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Interval is a two-sided confidence interval.
type Interval struct {
	Lo, Hi float64
}

// Wilson returns the Wilson score interval for k successes in n trials at
// confidence 1-alpha. With n == 0 it returns [0, 1]: nothing is known.
func Wilson(k, n int, alpha float64) Interval {
	if n <= 0 {
		return Interval{0, 1}
	}
	z := distuv.UnitNormal.Quantile(1 - alpha/2)
	nf := float64(n)
	p := float64(k) / nf
	z2 := z * z
	den := 1 + z2/nf
	center := (p + z2/(2*nf)) / den
	half := z / den * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf))
	lo, hi := center-half, center+half
	// At the boundaries the exact value is 0 or 1; rounding can leave 1e-17.
	if k == 0 {
		lo = 0
	}
	if k == n {
		hi = 1
	}
	return Interval{math.Max(0, lo), math.Min(1, hi)}
}
