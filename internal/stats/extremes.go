package stats

import "math"

// ExpectedMaxNormal is E[max of n independent standard normals]:
// ∫ x · n·φ(x)·Φ(x)^(n−1) dx, by composite Simpson's rule over a range that
// holds all but a negligible tail of the maximum's density. It is 0 for
// n = 1 and grows like √(2 ln n). Times a standard error, it is how much the best of n
// equally good variants is expected to beat their common mean by chance.
func ExpectedMaxNormal(n int) float64 {
	if n <= 1 {
		return 0
	}
	nf := float64(n)
	lo, hi := -10.0, 10.0+math.Sqrt(2*math.Log(nf))
	const steps = 2000 // even
	h := (hi - lo) / steps
	f := func(x float64) float64 {
		cdf := 0.5 * math.Erfc(-x/math.Sqrt2)
		if cdf == 0 {
			return 0
		}
		pdf := math.Exp(-x*x/2) / math.Sqrt(2*math.Pi)
		return x * nf * pdf * math.Exp((nf-1)*math.Log(cdf))
	}
	sum := f(lo) + f(hi)
	for i := 1; i < steps; i++ {
		w := 2.0
		if i%2 == 1 {
			w = 4
		}
		sum += w * f(lo+float64(i)*h)
	}
	return sum * h / 3
}
