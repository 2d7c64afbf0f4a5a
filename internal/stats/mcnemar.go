package stats

import "math"

// McNemarExact returns the two-sided exact McNemar p-value for a paired
// pass/fail comparison with b cases passed by A only and c cases passed by B
// only: under the null each discordant case is a fair coin, so the p-value
// is 2·P(X ≤ min(b, c)) for X ~ Binomial(b+c, 1/2), capped at 1. This is
// statsmodels' mcnemar(table, exact=True). With no discordant case it is 1
// (no evidence of a difference); with a negative count, or b+c beyond 2⁵³,
// it is NaN.
//
// The tail is summed from an accurate point probability (Loader's
// saddle-point binomial, no factorials), so b+c in the hundreds of
// thousands is exact to a few units in the last place; p-values below
// ~1e-308 underflow to 0.
func McNemarExact(b, c int) float64 {
	if !validDiscordantCounts(b, c) {
		return math.NaN()
	}
	n, k := b+c, min(b, c)
	if 2*k == n { // includes n == 0
		return 1
	}
	below, point := halfBinomialTail(k, n)
	return math.Min(1, 2*(below+point))
}

// McNemarMidP returns the two-sided mid-p McNemar p-value: the exact p-value
// minus the probability of the observed split, 2·P(X < k) + P(X = k) with
// k = min(b, c) (Fagerland, Lydersen & Laake 2013, "The McNemar test for
// binary matched-pairs data: mid-p and asymptotic are better than exact
// conditional", BMC Med Res Methodol 13:91). It holds its nominal level
// closely while the exact test is conservative. With b == c it is 1; with a
// negative count, or b+c beyond 2⁵³, it is NaN.
func McNemarMidP(b, c int) float64 {
	if !validDiscordantCounts(b, c) {
		return math.NaN()
	}
	n, k := b+c, min(b, c)
	if 2*k == n {
		return 1
	}
	below, point := halfBinomialTail(k, n)
	return math.Min(1, 2*below+point)
}

// maxDiscordant bounds b+c so that counts stay exact in float64 and the sum
// cannot overflow int.
const maxDiscordant = 1 << 53

func validDiscordantCounts(b, c int) bool {
	return b >= 0 && c >= 0 && b <= maxDiscordant && c <= maxDiscordant-b
}

// halfBinomialTail returns P(X < k) and P(X = k) for X ~ Binomial(n, 1/2),
// for 0 ≤ k ≤ n/2. Terms are summed downward from k with the ratio
// P(X = x−1)/P(X = x) = x/(n−x+1) ≤ 1, so the largest term comes first and
// the sum stops once further terms cannot change it.
func halfBinomialTail(k, n int) (below, point float64) {
	point = halfBinomialPMF(k, n)
	term := point
	for x := k; x > 0; x-- {
		term *= float64(x) / float64(n-x+1)
		if term == 0 || term < below*0x1p-60 {
			break
		}
		below += term
	}
	return below, point
}

// halfBinomialPMF returns P(X = x) for X ~ Binomial(n, 1/2) with Loader's
// (2000) saddle-point expansion, as R's dbinom and SciPy's binom do: every
// term is of modest size, so there is no cancellation between huge
// log-factorials.
func halfBinomialPMF(x, n int) float64 {
	if x < 0 || x > n {
		return 0
	}
	if x == 0 || x == n {
		return math.Ldexp(1, -n)
	}
	nf, xf := float64(n), float64(x)
	lc := stirlingError(nf) - stirlingError(xf) - stirlingError(nf-xf) -
		devianceTerm(xf, nf/2) - devianceTerm(nf-xf, nf/2)
	lf := math.Log(2*math.Pi) + math.Log(xf) + math.Log1p(-xf/nf)
	return math.Exp(lc - 0.5*lf)
}

// stirlingError is log(n!) − log(√(2πn)·(n/e)^n) for n ≥ 1.
func stirlingError(n float64) float64 {
	if n <= 15 {
		// The difference is small but lgamma(16) ≈ 27.9 leaves ~1e-15 of
		// absolute error, well below what the result needs.
		lg, _ := math.Lgamma(n + 1)
		return lg - (n+0.5)*math.Log(n) + n - 0.5*math.Log(2*math.Pi)
	}
	const (
		s0 = 1.0 / 12
		s1 = 1.0 / 360
		s2 = 1.0 / 1260
		s3 = 1.0 / 1680
		s4 = 1.0 / 1188
	)
	nn := n * n
	return (s0 - (s1-(s2-(s3-s4/nn)/nn)/nn)/nn) / n
}

// devianceTerm is x·log(x/np) + np − x, computed without cancellation when
// x is close to np (Loader's bd0).
func devianceTerm(x, np float64) float64 {
	if math.Abs(x-np) < 0.1*(x+np) {
		v := (x - np) / (x + np)
		s := (x - np) * v
		ej := 2 * x * v
		v *= v
		for j := 1; j < 1000; j++ {
			ej *= v
			s1 := s + ej/float64(2*j+1)
			if s1 == s {
				return s1
			}
			s = s1
		}
		return s
	}
	return x*math.Log(x/np) + np - x
}
