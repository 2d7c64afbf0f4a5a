package stats

import "math"

// Verdicts of a paired comparison of target A with target B, as they appear
// in the JSON report's "verdict" field.
const (
	VerdictABetter      = "a_better"
	VerdictBBetter      = "b_better"
	VerdictEquivalent   = "equivalent"
	VerdictInconclusive = "inconclusive"
)

// DefaultEquivalenceMargin is the default equivalence margin: differences of
// less than 2 points (0.02 as a fraction) are treated as practically nil.
const DefaultEquivalenceMargin = 0.02

// Verdict classifies the comparison of A with B from the difference
// delta = A − B, its confidence interval ci (at level 1 − alpha), the
// p-value adjusted for multiplicity pAdj, the significance level alpha and
// the equivalence margin (a fraction: 0.02 is 2 points).
//
// Rules, in order of precedence:
//
//  1. Any undefined input (NaN delta, CI bound or pAdj; a CI with Lo > Hi;
//     alpha outside (0, 1)) gives "inconclusive": nothing can be claimed.
//  2. "equivalent" when the whole CI lies strictly inside (−margin, +margin).
//     This wins even when the CI excludes 0: a difference that is
//     statistically detectable but smaller than the margin the user declared
//     negligible is not a win for either side. The delta and CI still show
//     its direction. A margin ≤ 0 (or NaN) disables equivalence.
//  3. "a_better" when the CI lies entirely above 0 and pAdj < alpha;
//     "b_better" when it lies entirely below 0 and pAdj < alpha. Both the
//     interval and the adjusted test must agree: a CI that excludes 0 with
//     an adjusted p ≥ alpha (the family of comparisons ate the evidence), or
//     a small p with a CI that touches 0, is not a win.
//  4. Otherwise "inconclusive": the data cannot tell the targets apart, nor
//     show that they are the same.
//
// Using the 1 − alpha interval for equivalence is conservative: the
// two-one-sided-tests procedure at level alpha would use a 1 − 2·alpha
// interval.
func Verdict(delta float64, ci Interval, pAdj float64, alpha, margin float64) string {
	if math.IsNaN(delta) || math.IsNaN(ci.Lo) || math.IsNaN(ci.Hi) || math.IsNaN(pAdj) ||
		ci.Lo > ci.Hi || !(alpha > 0 && alpha < 1) {
		return VerdictInconclusive
	}
	if margin > 0 && ci.Lo > -margin && ci.Hi < margin {
		return VerdictEquivalent
	}
	if pAdj < alpha {
		if ci.Lo > 0 {
			return VerdictABetter
		}
		if ci.Hi < 0 {
			return VerdictBBetter
		}
	}
	return VerdictInconclusive
}
