package stats

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// TangoZ is Tango's score statistic for H0: δ = d0, where δ = (b − c)/n is
// the difference between A's and B's pass rates on the same cases (b cases
// passed by A only, c by B only, n cases in all):
//
//	T(d0) = (b − c − n·d0) / √(n·(2·q̂ + d0·(1 − d0)))
//
// with q̂ the maximum-likelihood estimate of the B-only probability under
// the constraint δ = d0, the positive root of 2n·q² + B·q + C = 0 with
// B = −b − c + (2n − b + c)·d0 and C = −c·d0·(1 − d0) (Tango 1998,
// "Equivalence test and confidence interval for the difference in
// proportions for the paired-sample design", Stat Med 17:891–908). At
// d0 = 0 it is the McNemar score statistic (b − c)/√(b + c). It is positive
// when the observed δ is above d0. When the numerator is 0 it is 0 (also for
// b = c = 0 at d0 = 0); at d0 = ±1, where the variance under H0 vanishes,
// and beyond, it is ±Inf unless the data sit exactly there. NaN for an empty
// table, negative counts or a NaN d0.
func TangoZ(t PairTable, d0 float64) float64 {
	if t.Both < 0 || t.AOnly < 0 || t.BOnly < 0 || t.Neither < 0 || t.N() <= 0 || math.IsNaN(d0) {
		return math.NaN()
	}
	nf := float64(t.Both) + float64(t.AOnly) + float64(t.BOnly) + float64(t.Neither)
	b, c := float64(t.AOnly), float64(t.BOnly)
	num := b - c - nf*d0
	if num == 0 {
		return 0
	}
	v := 0.0
	if d0 > -1 && d0 < 1 {
		v = nf * tangoVariance(nf, b, c, d0)
	}
	if !(v > 0) {
		return math.Copysign(math.Inf(1), num)
	}
	return num / math.Sqrt(v)
}

// tangoVariance is 2·q̂ + d0·(1 − d0), the variance of a case's difference
// (+1, −1 or 0) under H0: δ = d0 at the restricted MLE.
func tangoVariance(n, b, c, d0 float64) float64 {
	qa := 2 * n
	qb := -b - c + (2*n-b+c)*d0
	qc := -c * d0 * (1 - d0)
	disc := math.Sqrt(math.Max(0, qb*qb-4*qa*qc))
	// The positive root, in the form that avoids cancellation.
	var q float64
	if qb > 0 {
		q = -2 * qc / (qb + disc)
	} else {
		q = (disc - qb) / (2 * qa)
	}
	// The constraints of the model: q ≥ max(0, −d0), 2q + d0 ≤ 1.
	q = math.Min(math.Max(q, math.Max(0, -d0)), (1-d0)/2)
	return math.Max(0, 2*q+d0*(1-d0))
}

// TangoInterval is Tango's two-sided 1 − alpha score interval for the
// paired difference δ = (b − c)/n: every d0 in [−1, 1] that the score test
// of H0: δ = d0 does not reject, |TangoZ(t, d0)| ≤ z₁₋α/₂. T decreases in d0
// (from +Inf at −1 to −Inf at +1), so each bound is the one root of
// T(d0) = ±z on its side of the estimate, found by bisection to the last
// bits. It is never empty and never a point: with no discordant case on n
// cases it is ±z²/(n + z²); it reaches 1 only when every case passed A only
// (and −1 when every case passed B only). NaN for an empty table, negative
// counts or alpha outside (0, 1).
func TangoInterval(t PairTable, alpha float64) Interval {
	if t.Both < 0 || t.AOnly < 0 || t.BOnly < 0 || t.Neither < 0 || t.N() <= 0 || !validAlpha(alpha) {
		return nanInterval()
	}
	z := distuv.UnitNormal.Quantile(1 - alpha/2)
	n := t.N()
	est := float64(t.AOnly-t.BOnly) / float64(n)
	iv := Interval{-1, 1}
	if t.BOnly < n {
		// T > z (rejected) at −1; T = 0 (accepted) at est.
		iv.Lo = bisectAccept(func(d float64) bool { return TangoZ(t, d) <= z }, -1, est)
	}
	if t.AOnly < n {
		iv.Hi = bisectAccept(func(d float64) bool { return TangoZ(t, d) >= -z }, 1, est)
	}
	return iv
}

// bisectAccept narrows [reject, accept] (in either order) to the boundary
// of the acceptance region of a monotone test and returns the end that is
// accepted, so the interval it bounds never holds a rejected value.
func bisectAccept(accepted func(float64) bool, reject, accept float64) float64 {
	for range 200 {
		mid := reject + (accept-reject)/2
		if mid == reject || mid == accept {
			break
		}
		if accepted(mid) {
			accept = mid
		} else {
			reject = mid
		}
	}
	return accept
}

// tangoConsistent is TangoInterval made to agree with the decision on p
// (the two-sided score p-value) to the last bit: the interval excludes 0
// exactly when p < alpha. They agree by construction; this settles values
// of the statistic within rounding of the critical value.
func tangoConsistent(t PairTable, alpha, p float64) Interval {
	iv := TangoInterval(t, alpha)
	holds0 := iv.Lo <= 0 && 0 <= iv.Hi
	switch {
	case p < alpha && holds0 && t.AOnly > t.BOnly:
		iv.Lo = math.SmallestNonzeroFloat64
	case p < alpha && holds0 && t.AOnly < t.BOnly:
		iv.Hi = -math.SmallestNonzeroFloat64
	case p >= alpha && iv.Lo > 0:
		iv.Lo = 0
	case p >= alpha && iv.Hi < 0:
		iv.Hi = 0
	}
	return iv
}

// McNemarScoreP is the two-sided p-value of the McNemar score test
// (z = (b − c)/√(b + c), without continuity correction; statsmodels'
// mcnemar(exact=False, correction=False)): 1 when b = c (also b = c = 0).
// NaN for negative counts.
func McNemarScoreP(b, c int) float64 {
	if b < 0 || c < 0 {
		return math.NaN()
	}
	if b == c {
		return 1
	}
	return twoSidedNormalP(TangoZ(PairTable{AOnly: b, BOnly: c}, 0))
}

// twoSidedNormalP is 2·Φ(−|z|), accurate far into the tail.
func twoSidedNormalP(z float64) float64 {
	if math.IsNaN(z) {
		return math.NaN()
	}
	return math.Erfc(math.Abs(z) / math.Sqrt2)
}

// normalCDF is Φ(z), accurate far into both tails.
func normalCDF(z float64) float64 {
	return 0.5 * math.Erfc(-z/math.Sqrt2)
}

// PValueBelow is the one-sided p-value for H0: Δ ≥ d0 against H1: Δ < d0,
// under the comparison's own test: for pass/fail (score or exact), Tango's
// score statistic with the restricted MLE at d0, Φ(TangoZ(d0)); for means
// and clustered comparisons, Student's t with DF degrees of freedom on
// (Delta − d0)/SE. With SE = 0 it is 0 when Delta < d0 and 1 otherwise.
// NaN when the comparison has no standard error (one case, one cluster) or
// d0 is NaN.
func (p Paired) PValueBelow(d0 float64) float64 {
	if p.binary {
		return normalCDF(TangoZ(p.table, d0))
	}
	return p.tTail(d0, true)
}

// PValueAbove is the one-sided p-value for H0: Δ ≤ d0 against H1: Δ > d0,
// the mirror of PValueBelow.
func (p Paired) PValueAbove(d0 float64) float64 {
	if p.binary {
		return normalCDF(-TangoZ(p.table, d0))
	}
	return p.tTail(d0, false)
}

func (p Paired) tTail(d0 float64, below bool) float64 {
	if math.IsNaN(d0) || math.IsNaN(p.Delta) || !(p.SE >= 0) || !(p.DF > 0) {
		return math.NaN()
	}
	if p.SE == 0 {
		if (below && p.Delta < d0) || (!below && p.Delta > d0) {
			return 0
		}
		return 1
	}
	tstat := (p.Delta - d0) / p.SE
	if !below {
		tstat = -tstat
	}
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: p.DF}.CDF(tstat)
}
