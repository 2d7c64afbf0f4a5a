// Package stats is pure math for honest numbers: intervals for proportions
// (Wilson, Clopper–Pearson, Jeffreys; Wilson on a design-effect sample size
// for rates over epochs, EpochRateCI), standard errors of means (plain,
// clustered with CR1 and t on G−1, over epochs), bootstrap intervals, paired
// comparisons and their decisions, multiplicity and power.
//
// Paired comparisons (Paired, with one-sided PValueBelow/PValueAbove at any
// difference for the gate's limits): pass/fail by default with the McNemar
// score test and Tango's score interval, which inverts it, so the interval
// excludes 0 exactly when p < alpha (PairedBinaryTable); exact McNemar with
// Newcombe's interval on request (PairedBinaryExact); scores and epochs
// with the paired t-test (PairedMeans); clustered cases with the CR1
// cluster-robust t-test on G−1 degrees of freedom (ClusteredPaired), since
// a case-level test declares false winners far beyond its level when the
// difference varies by cluster. Power and sample size for the score test
// and for the gate's non-inferiority decision. The simulations in
// decision_sim_test.go record the false-winner rates, sizes and coverages
// these choices achieve.
//
// It does no I/O, keeps no state, and knows nothing of runs, stores or
// reports: it must not import any assay package.
// Every function is checked against an independent implementation
// (statsmodels or scipy; see testdata/*.py for the scripts that produced the
// golden vectors and how to regenerate them).
//
// Conventions shared by every function in the package: NaN in, NaN out; an
// input that makes a quantity undefined (no data, alpha outside (0, 1), a
// count outside [0, n]) yields NaN rather than a panic, unless the function
// documents otherwise.
package stats

import (
	"fmt"
	"math"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"
)

// Interval is a two-sided confidence interval.
type Interval struct {
	Lo, Hi float64
}

// Names of the proportion interval methods accepted by ProportionCI. They
// match statsmodels' proportion_confint methods "wilson", "beta" (under its
// usual name) and "jeffreys".
const (
	MethodWilson         = "wilson"
	MethodClopperPearson = "clopper_pearson"
	MethodJeffreys       = "jeffreys"
)

// ProportionMethods returns the method names ProportionCI accepts, the
// default (Wilson) first.
func ProportionMethods() []string {
	return []string{MethodWilson, MethodClopperPearson, MethodJeffreys}
}

// ProportionCI returns the interval for k successes in n trials at
// confidence 1-alpha by the named method (see ProportionMethods). Unlike the
// individual functions, which return a NaN interval for impossible input, it
// reports an error saying what was wrong and what would be valid.
func ProportionCI(method string, k, n int, alpha float64) (Interval, error) {
	var f func(k, n int, alpha float64) Interval
	switch method {
	case MethodWilson:
		f = Wilson
	case MethodClopperPearson:
		f = ClopperPearson
	case MethodJeffreys:
		f = Jeffreys
	default:
		return nanInterval(), fmt.Errorf("unknown proportion interval method %q: valid methods are %s",
			method, strings.Join(ProportionMethods(), ", "))
	}
	if n < 0 || k < 0 || k > n {
		return nanInterval(), fmt.Errorf("%d successes in %d trials: need 0 <= successes <= trials", k, n)
	}
	if !validAlpha(alpha) {
		return nanInterval(), fmt.Errorf("alpha %g: must be strictly between 0 and 1 (0.05 for a 95%% interval)", alpha)
	}
	return f(k, n, alpha), nil
}

// Wilson returns the Wilson score interval for k successes in n trials at
// confidence 1-alpha. With n == 0 it returns [0, 1]: nothing is known. It
// returns a NaN interval when k is outside [0, n] or alpha outside (0, 1).
func Wilson(k, n int, alpha float64) Interval {
	if bad, iv := proportionGuard(k, n, alpha); bad {
		return iv
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

// ClopperPearson returns the exact (Clopper–Pearson) interval for k
// successes in n trials at confidence 1-alpha: the alpha/2 quantile of
// Beta(k, n-k+1) and the 1-alpha/2 quantile of Beta(k+1, n-k), with the
// lower bound 0 when k == 0 and the upper bound 1 when k == n (statsmodels'
// method "beta"). Its coverage is at least 1-alpha for every true rate, so it
// is conservative. With n == 0 it returns [0, 1]; it returns a NaN interval
// when k is outside [0, n] or alpha outside (0, 1).
func ClopperPearson(k, n int, alpha float64) Interval {
	if bad, iv := proportionGuard(k, n, alpha); bad {
		return iv
	}
	iv := Interval{0, 1}
	if k > 0 {
		iv.Lo = distuv.Beta{Alpha: float64(k), Beta: float64(n - k + 1)}.Quantile(alpha / 2)
	}
	if k < n {
		iv.Hi = distuv.Beta{Alpha: float64(k + 1), Beta: float64(n - k)}.Quantile(1 - alpha/2)
	}
	return iv
}

// Jeffreys returns the equal-tailed Jeffreys interval for k successes in n
// trials at confidence 1-alpha: the alpha/2 and 1-alpha/2 quantiles of the
// Beta(k+1/2, n-k+1/2) posterior under the Jeffreys prior. It follows
// statsmodels' proportion_confint(method="jeffreys") exactly, including at
// the boundaries: at k == 0 the lower bound is the (tiny, positive) beta
// quantile rather than 0, and at k == n the upper bound is below 1. (Brown,
// Cai and DasGupta 2001 suggest pinning those bounds to 0 and 1; statsmodels
// does not, and neither do we.) With n == 0 it returns [0, 1]; it returns a
// NaN interval when k is outside [0, n] or alpha outside (0, 1).
func Jeffreys(k, n int, alpha float64) Interval {
	if bad, iv := proportionGuard(k, n, alpha); bad {
		return iv
	}
	post := distuv.Beta{Alpha: float64(k) + 0.5, Beta: float64(n-k) + 0.5}
	return Interval{post.Quantile(alpha / 2), post.Quantile(1 - alpha/2)}
}

// proportionGuard handles the inputs every proportion interval treats alike:
// impossible ones give NaN, no trials gives [0, 1].
func proportionGuard(k, n int, alpha float64) (bool, Interval) {
	if n < 0 || k < 0 || k > n || !validAlpha(alpha) {
		return true, nanInterval()
	}
	if n == 0 {
		return true, Interval{0, 1}
	}
	return false, Interval{}
}

// validAlpha reports whether alpha is a usable error rate: strictly between
// 0 and 1 (which also excludes NaN).
func validAlpha(alpha float64) bool {
	return alpha > 0 && alpha < 1
}

func nanInterval() Interval {
	return Interval{math.NaN(), math.NaN()}
}
