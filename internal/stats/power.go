package stats

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// maxSampleSize bounds the sample sizes returned, far beyond any eval set,
// so that the conversion to int is exact.
const maxSampleSize = 1 << 53

// McNemarSampleSize returns the number of cases needed for a two-sided
// McNemar test at level alpha to detect, with the given power, a difference
// delta between the pass rates of two targets run on the same cases, when a
// fraction pDisc of the cases are discordant (passed by exactly one of the
// two). It is Connor's (1987, "Sample size for testing differences in
// proportions for the paired-sample design", Biometrics 43:207–211) formula,
// rounded up:
//
//	n = (z₁₋α/₂·√ψ + z_power·√(ψ − δ²))² / δ²,  ψ = pDisc, δ = |delta|.
//
// The discordance comes from a previous run of the two targets (the
// fraction of cases on which they disagreed) or from an assumption; it
// matters more than the rates themselves. Errors name the valid range:
// pDisc in (0, 1], 0 < |delta| ≤ pDisc (every discordant case would have to
// favour one side for |delta| = pDisc), alpha and power in (0, 1).
func McNemarSampleSize(pDisc, delta, alpha, power float64) (int, error) {
	if err := checkPowerArgs(alpha, power); err != nil {
		return 0, err
	}
	d := math.Abs(delta)
	if err := checkDiscordance(pDisc, d); err != nil {
		return 0, err
	}
	return ceilSampleSize(connorN(pDisc, d, alpha, power))
}

func connorN(pDisc, d, alpha, power float64) float64 {
	za := distuv.UnitNormal.Quantile(1 - alpha/2)
	zb := distuv.UnitNormal.Quantile(power)
	s := za*math.Sqrt(pDisc) + zb*math.Sqrt(pDisc-d*d)
	return s * s / (d * d)
}

// McNemarPower returns the approximate power of a two-sided McNemar test at
// level alpha on n cases to detect a difference delta when a fraction pDisc
// of cases are discordant (Connor 1987, counting both tails):
//
//	Φ((δ√n − z₁₋α/₂√ψ)/√(ψ−δ²)) + Φ((−δ√n − z₁₋α/₂√ψ)/√(ψ−δ²)).
//
// Arguments are validated as in McNemarSampleSize; n must be positive.
func McNemarPower(n int, pDisc, delta, alpha float64) (float64, error) {
	if n < 1 {
		return math.NaN(), fmt.Errorf("stats: power needs at least 1 case, got %d", n)
	}
	if err := checkPowerArgs(alpha, 0.5); err != nil {
		return math.NaN(), err
	}
	d := math.Abs(delta)
	if err := checkDiscordance(pDisc, d); err != nil {
		return math.NaN(), err
	}
	za := distuv.UnitNormal.Quantile(1 - alpha/2)
	sd := math.Sqrt(pDisc - d*d)
	if sd == 0 {
		// pDisc = δ = 1: every case favours A; the test always rejects once
		// the statistic passes the critical value.
		if d*math.Sqrt(float64(n)) > za*math.Sqrt(pDisc) {
			return 1, nil
		}
		return 0, nil
	}
	rn := math.Sqrt(float64(n))
	return distuv.UnitNormal.CDF((d*rn-za*math.Sqrt(pDisc))/sd) +
		distuv.UnitNormal.CDF((-d*rn-za*math.Sqrt(pDisc))/sd), nil
}

// MinDetectableDifference returns the smallest difference in pass rates
// that n cases detect with the given power in a two-sided McNemar test at
// level alpha, when a fraction pDisc of cases are discordant: the δ at which
// Connor's sample size equals n. Connor's equation is solved for δ in closed
// form (squaring it gives a quadratic in δ):
//
//	δ = √ψ·(a√n + b√(n + b² − a²)) / (n + b²),  a = z₁₋α/₂, b = z_power.
//
// It returns an error when no difference up to pDisc (all discordant cases
// favouring one side) is detectable with n cases, and for arguments out of
// range: n ≥ 1, pDisc in (0, 1], alpha and power in (0, 1).
func MinDetectableDifference(n int, pDisc, alpha, power float64) (float64, error) {
	if n < 1 {
		return math.NaN(), fmt.Errorf("stats: minimum detectable difference needs at least 1 case, got %d", n)
	}
	if err := checkPowerArgs(alpha, power); err != nil {
		return math.NaN(), err
	}
	if !(pDisc > 0 && pDisc <= 1) {
		return math.NaN(), fmt.Errorf("stats: discordance must be a fraction of cases in (0, 1], got %v", pDisc)
	}
	a := distuv.UnitNormal.Quantile(1 - alpha/2)
	b := distuv.UnitNormal.Quantile(power)
	nf := float64(n)
	disc := nf + b*b - a*a
	d := math.NaN()
	if disc >= 0 {
		d = math.Sqrt(pDisc) * (a*math.Sqrt(nf) + b*math.Sqrt(disc)) / (nf + b*b)
	}
	if !(d > 0 && d <= pDisc) {
		return math.NaN(), fmt.Errorf("stats: %d cases cannot detect any difference at discordance %v with power %v (alpha %v); even a difference of %v needs more cases",
			n, pDisc, power, alpha, pDisc)
	}
	return d, nil
}

// TwoProportionSampleSize returns the number of cases per group needed for a
// two-sided test at level alpha to detect, with the given power, the
// difference between pass rates p1 and p2 measured on independent samples.
// It is statsmodels' NormalIndPower().solve_power(effect_size=
// proportion_effectsize(p1, p2), ratio=1, alternative="two-sided"), rounded
// up: Cohen's h = 2·asin√p1 − 2·asin√p2 and the normal power function with
// both tails, solved for n numerically.
//
// Use it when only assumed rates are known. Two targets run on the same
// cases are paired, and their positive correlation makes McNemarSampleSize
// (from an observed discordance) smaller; this is the conservative bound.
// Errors: p1 and p2 must be in [0, 1] and differ; alpha and power in (0, 1)
// with power > alpha.
func TwoProportionSampleSize(p1, p2, alpha, power float64) (int, error) {
	n, err := twoProportionN(p1, p2, alpha, power)
	if err != nil {
		return 0, err
	}
	return ceilSampleSize(n)
}

func twoProportionN(p1, p2, alpha, power float64) (float64, error) {
	if err := checkPowerArgs(alpha, power); err != nil {
		return math.NaN(), err
	}
	if !(p1 >= 0 && p1 <= 1 && p2 >= 0 && p2 <= 1) {
		return math.NaN(), fmt.Errorf("stats: pass rates must be in [0, 1], got %v and %v", p1, p2)
	}
	if p1 == p2 {
		return math.NaN(), fmt.Errorf("stats: pass rates %v and %v are equal: no sample size detects a zero difference", p1, p2)
	}
	if power <= alpha {
		return math.NaN(), fmt.Errorf("stats: power %v must exceed alpha %v (a test has power alpha with no data)", power, alpha)
	}
	h := math.Abs(2*math.Asin(math.Sqrt(p1)) - 2*math.Asin(math.Sqrt(p2)))
	crit := distuv.UnitNormal.Quantile(1 - alpha/2)
	achieved := func(n1 float64) float64 {
		shift := h * math.Sqrt(n1/2) // two groups of n1: effective n is n1/2
		return distuv.UnitNormal.Survival(crit-shift) + distuv.UnitNormal.CDF(-crit-shift)
	}
	// Ignoring the far tail gives a closed form that is an upper bound.
	zb := distuv.UnitNormal.Quantile(power)
	hi := 2 * math.Pow((crit+zb)/h, 2)
	lo := 0.0
	for range 200 {
		mid := (lo + hi) / 2
		if achieved(mid) < power {
			lo = mid
		} else {
			hi = mid
		}
		if hi-lo <= 1e-14*hi {
			break
		}
	}
	return (lo + hi) / 2, nil
}

func checkPowerArgs(alpha, power float64) error {
	if !(alpha > 0 && alpha < 1) {
		return fmt.Errorf("stats: alpha must be in (0, 1) (0.05 for a 5%% two-sided test), got %v", alpha)
	}
	if !(power > 0 && power < 1) {
		return fmt.Errorf("stats: power must be in (0, 1) (0.8 for 80%%), got %v", power)
	}
	return nil
}

func checkDiscordance(pDisc, d float64) error {
	if !(pDisc > 0 && pDisc <= 1) {
		return fmt.Errorf("stats: discordance must be a fraction of cases in (0, 1], got %v", pDisc)
	}
	if !(d > 0) {
		return fmt.Errorf("stats: the difference to detect must be non-zero, got %v", d)
	}
	if d > pDisc {
		return fmt.Errorf("stats: a difference of %v is impossible when only %v of cases are discordant (|delta| ≤ discordance)", d, pDisc)
	}
	return nil
}

func ceilSampleSize(n float64) (int, error) {
	if math.IsNaN(n) || n > maxSampleSize {
		return 0, fmt.Errorf("stats: the sample size needed (%v) is beyond any feasible set", n)
	}
	return int(math.Ceil(n)), nil
}

// McNemarScorePower is the power of the two-sided McNemar score test
// (PairedBinaryTable's) at level alpha on n cases to detect a difference
// delta when a fraction pDisc of cases are discordant. Connor's (1987)
// normal approximation (McNemarPower) is the asymptotic power of exactly
// this statistic; against the test's exact power, enumerated over the
// trinomial (testdata/tango.py), it is within 3 points and at the sample
// sizes McNemarScoreSampleSize returns for 80% the test delivers 80–83%
// (exact McNemar delivers 76–78% there). Arguments as McNemarPower.
func McNemarScorePower(n int, pDisc, delta, alpha float64) (float64, error) {
	return McNemarPower(n, pDisc, delta, alpha)
}

// McNemarScoreSampleSize is the number of cases the two-sided McNemar score
// test at level alpha needs to detect delta with the given power when a
// fraction pDisc of cases are discordant. Arguments as McNemarSampleSize.
func McNemarScoreSampleSize(pDisc, delta, alpha, power float64) (int, error) {
	return McNemarSampleSize(pDisc, delta, alpha, power)
}

// NonInferiorityPower is the power of the gate's fail decision — the
// one-sided score test of H0: Δ ≥ −limit against H1: Δ < −limit at level
// alpha (Tango's statistic at d0 = −limit, PValueBelow) — to catch a true
// change delta on n paired pass/fail cases of which a fraction pDisc are
// discordant. It is the normal approximation (Nam 1997; Tango 1998 §4):
//
//	Φ((√n·(−limit − δ) − z₁₋α·√v₀) / √(ψ − δ²)),
//
// with v₀ the variance of a case's difference under H0 at the restricted
// MLE the test uses, evaluated at the true cell probabilities. It is within
// 3 points of the exact rejection probability (testdata/tango.py), and at
// delta = −limit it is alpha exactly, where the exact false-fail rate of
// the score test is 5.2–5.3% at alpha 0.05 on 100–300 cases. Errors name
// the valid range: n ≥ 1, pDisc in (0, 1], |delta| ≤ pDisc, limit in
// [0, 1), alpha in (0, 1).
func NonInferiorityPower(n int, pDisc, delta, limit, alpha float64) (float64, error) {
	if n < 1 {
		return math.NaN(), fmt.Errorf("stats: power needs at least 1 case, got %d", n)
	}
	if !(alpha > 0 && alpha < 1) {
		return math.NaN(), fmt.Errorf("stats: alpha must be in (0, 1) (0.05 for a 5%% one-sided test), got %v", alpha)
	}
	if !(pDisc > 0 && pDisc <= 1) {
		return math.NaN(), fmt.Errorf("stats: discordance must be a fraction of cases in (0, 1], got %v", pDisc)
	}
	if !(math.Abs(delta) <= pDisc) {
		return math.NaN(), fmt.Errorf("stats: a change of %v is impossible when only %v of cases are discordant (|delta| ≤ discordance)", delta, pDisc)
	}
	if !(limit >= 0 && limit < 1) {
		return math.NaN(), fmt.Errorf("stats: the worsening limit must be in [0, 1) (0.04 for 4 points), got %v", limit)
	}
	d0 := -limit
	nf := float64(n)
	// Tango's restricted MLE, per case: b/n → (ψ+δ)/2, c/n → (ψ−δ)/2.
	v0 := tangoVariance(1, (pDisc+delta)/2, (pDisc-delta)/2, d0)
	z := distuv.UnitNormal.Quantile(1 - alpha)
	shift := math.Sqrt(nf)*(d0-delta) - z*math.Sqrt(v0)
	sd := math.Sqrt(math.Max(0, pDisc-delta*delta))
	if sd == 0 {
		if shift > 0 {
			return 1, nil
		}
		return 0, nil
	}
	return distuv.UnitNormal.CDF(shift / sd), nil
}
