package stats

import (
	"errors"
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Kappa is Cohen's κ between two raters with its asymptotic standard error
// and normal interval, as statsmodels.stats.inter_rater.cohens_kappa
// computes them (kappa, std_kappa, kappa_low, kappa_upp; Fleiss, Cohen and
// Everitt 1969).
type Kappa struct {
	Kappa float64
	SE    float64
	CI    Interval
	// Observed is the share of items the raters agreed on; Expected the
	// share they would agree on by chance, from their margins.
	Observed, Expected float64
}

// ErrKappaUndefined: κ is 0/0 — no items, or both raters put every item
// in the same one class, so chance agreement is already perfect.
var ErrKappaUndefined = errors.New("κ is undefined: chance agreement is 1 (both raters put every item in one class)")

// CohensKappa computes simple (unweighted) Cohen's κ from a square table of
// counts: rows one rater's classes, columns the other's, in the same
// order. alpha is the two-sided level of the interval (0.05 for 95%).
//
// As statsmodels does, the variance is
//
//	[Σᵢ pᵢᵢ(1 − (pᵢ. + p.ᵢ)(1 − κ))² + (1 − κ)² Σᵢ≠ⱼ pᵢⱼ(p.ᵢ + pⱼ.)² − (κ − pₑ(1 − κ))²] / ((1 − pₑ)² n)
//
// and the interval κ ± z·SE (not clipped to [−1, 1]). A rater who puts
// every item in one class while the other does not gives κ = 0 with SE 0.
func CohensKappa(table [][]int, alpha float64) (Kappa, error) {
	k := len(table)
	if k == 0 || !validAlpha(alpha) {
		return Kappa{}, errors.New("κ needs a square table of counts and alpha in (0, 1)")
	}
	var n float64
	for _, row := range table {
		if len(row) != k {
			return Kappa{}, errors.New("κ needs a square table of counts")
		}
		for _, c := range row {
			if c < 0 {
				return Kappa{}, errors.New("κ needs counts that are not negative")
			}
			n += float64(c)
		}
	}
	if n == 0 {
		return Kappa{}, ErrKappaUndefined
	}
	p := make([][]float64, k)
	for i := range table {
		p[i] = make([]float64, k)
		for j, c := range table[i] {
			p[i][j] = float64(c) / n
		}
	}
	return kappaOf(p, n, alpha)
}

// kappaOf is CohensKappa of a table of proportions p (summing to 1) over n
// items (n need not be whole: WeightedKappa's is an effective size).
func kappaOf(p [][]float64, n, alpha float64) (Kappa, error) {
	k := len(p)
	rowM := make([]float64, k) // pᵢ.
	colM := make([]float64, k) // p.ⱼ
	for i := range p {
		for j := range p[i] {
			rowM[i] += p[i][j]
			colM[j] += p[i][j]
		}
	}
	var po, pe float64
	for i := range k {
		po += p[i][i]
		pe += rowM[i] * colM[i]
	}
	if pe >= 1-1e-15 {
		return Kappa{Observed: po, Expected: pe}, ErrKappaUndefined
	}
	kappa := (po - pe) / (1 - pe)
	var a, b float64
	for i := range k {
		d := 1 - (rowM[i]+colM[i])*(1-kappa)
		a += p[i][i] * d * d
		for j := range k {
			if i != j {
				s := colM[i] + rowM[j]
				b += p[i][j] * s * s
			}
		}
	}
	b *= (1 - kappa) * (1 - kappa)
	c := kappa - pe*(1-kappa)
	v := (a + b - c*c) / ((1 - pe) * (1 - pe) * n)
	if v < 0 { // rounding, when the true variance is 0
		v = 0
	}
	se := math.Sqrt(v)
	z := distuv.UnitNormal.Quantile(1 - alpha/2)
	return Kappa{Kappa: kappa, SE: se, CI: Interval{kappa - z*se, kappa + z*se}, Observed: po, Expected: pe}, nil
}
