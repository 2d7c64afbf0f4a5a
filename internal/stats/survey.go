package stats

import (
	"errors"
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/stat/distuv"
)

// Observation is one sampled unit of a stratified sample drawn without
// replacement: its stratum, its weight (the inverse of its selection
// probability, N_h/n_h for n_h drawn from a stratum of N_h) and its value
// (1 pass, 0 fail, or a score).
type Observation struct {
	Stratum string
	Weight  float64
	Y       float64
}

// Survey interval methods WeightedMean reports.
const (
	// SurveyWilson is Wilson's score interval on the effective sample
	// size, for values in [0, 1].
	SurveyWilson = "wilson_neff"
	// SurveyT is the mean ± t·SE, for values outside [0, 1].
	SurveyT = "t"
)

// WeightedEstimate is a population mean (a pass rate when the values are 0
// and 1) estimated from a stratified sample.
type WeightedEstimate struct {
	// Mean is the weighted (Hájek, ratio) estimate Σw·y / Σw and SE its
	// linearised standard error with each stratum's finite population
	// correction.
	Mean, SE float64
	// CI is the interval at 1 − alpha by Method, on DF degrees of freedom
	// (observations − strata, at least 1).
	CI     Interval
	Method string
	DF     int
	// N is the number of observations, Strata the number of strata they
	// fall in, Population the population they stand for (Σw).
	N          int
	Strata     int
	Population float64
	// Kish is Kish's effective sample size (Σw)²/Σw²: what the unequal
	// weights leave of N. Effective is the sample size the interval is
	// computed on: Mean(1 − Mean)/SE² for a rate, at most Kish's with the
	// finite population corrections for pass/fail values, which is also
	// the size when that is undefined (see WeightedMean).
	Kish, Effective float64
}

// WeightedMean estimates a population mean from a stratified sample drawn
// without replacement (simple random sampling within each stratum; one
// stratum for a simple sample).
//
// The estimate is the Hájek (ratio) mean p̂ = Σw·y / Σw. Its variance is the
// Taylor-linearised one of a stratified design: with residuals
// z_i = w_i·(y_i − p̂)/Σw,
//
//	V = Σ_h (1 − f_h) · n_h/(n_h − 1) · Σ_{i∈h} (z_i − z̄_h)²,
//
// where f_h = n_h / Σ_{i∈h} w_i is the stratum's sampling fraction (its
// finite population correction: a stratum drawn whole adds nothing). With
// equal weights within each stratum this is the textbook
// Σ_h (N_h/N)²·(1 − f_h)·s_h²/n_h. A stratum with a single observation has
// no within-stratum spread to measure; it is centred at the overall estimate
// instead (z_i², R survey's lonely.psu = "adjust"), which errs wide.
//
// For values in [0, 1] the interval is Wilson's score interval on the
// effective sample size n* = p̂(1 − p̂)/V (the design-effect-adjusted n:
// n/deff), at the critical value of Student's t on n − H degrees of freedom
// (at least 1). For pass/fail values n* is at most the binomial one,
// n_b = 1 / Σ_h (N_h/N)²·(1 − f_h)/n_h (the size whose binomial variance
// equals the design's if every stratum had the overall rate: Kish's
// effective size (Σw)²/Σw² with the finite population corrections), as
// Korn and Graubard cap theirs at n: near 0 or 1 most strata hold no
// failure (or no pass), V is estimated from the few that do and is too
// small, and an uncapped n* far above the sample's size gives intervals
// that miss. When V is 0 (every sampled trace passed or failed, or every
// stratum is uniform) n* is n_b, so the interval is Wilson's at 0 or 1 for
// the sample the weights leave rather than a point. n_b is at most the
// population's size N. A population drawn whole (every stratum, n_b
// infinite) is known: the interval is the estimate itself, and n* is N. Korn and Graubard's
// Clopper–Pearson analogue was the alternative; Wilson on n* is the
// interval the package already uses for epochs and clusters (EpochRateCI,
// ClusteredMeanCI) and is less conservative. TestWeightedMeanCoverage
// measures its coverage on stratified populations with rates near 0, 0.5
// and 1: 95.6–98.1% at 95%. For values outside [0, 1] the interval is
// p̂ ± t·SE (Method SurveyT).
//
// It reports an error for no observations, alpha outside (0, 1), a weight
// that is not positive and finite, or a value that is not finite.
func WeightedMean(obs []Observation, alpha float64) (WeightedEstimate, error) {
	if len(obs) == 0 {
		return WeightedEstimate{}, errors.New("no observations")
	}
	if !validAlpha(alpha) {
		return WeightedEstimate{}, fmt.Errorf("alpha %g: must be strictly between 0 and 1 (0.05 for a 95%% interval)", alpha)
	}
	type stratum struct {
		n    int
		w    float64
		sumZ float64
	}
	strata := map[string]*stratum{}
	var sw, sw2, swy compensatedSum
	unit, binary := true, true
	for i, o := range obs {
		if !(o.Weight > 0) || math.IsInf(o.Weight, 0) {
			return WeightedEstimate{}, fmt.Errorf("observation %d (stratum %q): weight %g: must be positive and finite", i, o.Stratum, o.Weight)
		}
		if math.IsNaN(o.Y) || math.IsInf(o.Y, 0) {
			return WeightedEstimate{}, fmt.Errorf("observation %d (stratum %q): value %g: must be finite", i, o.Stratum, o.Y)
		}
		if o.Y < 0 || o.Y > 1 {
			unit = false
		}
		if o.Y != 0 && o.Y != 1 {
			binary = false
		}
		sw.add(o.Weight)
		sw2.add(o.Weight * o.Weight)
		swy.add(o.Weight * o.Y)
		s := strata[o.Stratum]
		if s == nil {
			s = &stratum{}
			strata[o.Stratum] = s
		}
		s.n++
		s.w += o.Weight
	}
	total := sw.value()
	p := swy.value() / total
	if unit {
		p = math.Min(1, math.Max(0, p))
	}
	z := make([]float64, len(obs))
	for i, o := range obs {
		z[i] = o.Weight * (o.Y - p) / total
		strata[o.Stratum].sumZ += z[i]
	}
	// Each stratum's squared deviations, summed in a fixed order so the
	// result does not depend on the map's.
	dev := map[string]*compensatedSum{}
	for i, o := range obs {
		s := strata[o.Stratum]
		d := z[i] - s.sumZ/float64(s.n)
		if s.n == 1 {
			d = z[i]
		}
		c := dev[o.Stratum]
		if c == nil {
			c = &compensatedSum{}
			dev[o.Stratum] = c
		}
		c.add(d * d)
	}
	names := make([]string, 0, len(strata))
	for k := range strata {
		names = append(names, k)
	}
	sort.Strings(names)
	var v, binomial compensatedSum
	for _, k := range names {
		s := strata[k]
		fpc := math.Max(0, 1-float64(s.n)/s.w)
		scale := 1.0
		if s.n > 1 {
			scale = float64(s.n) / float64(s.n-1)
		}
		v.add(fpc * scale * dev[k].value())
		share := s.w / total
		binomial.add(share * share * fpc / float64(s.n))
	}
	variance := math.Max(0, v.value())
	e := WeightedEstimate{
		Mean:       p,
		SE:         math.Sqrt(variance),
		N:          len(obs),
		Strata:     len(strata),
		Population: total,
		Kish:       total * total / sw2.value(),
		DF:         max(1, len(obs)-len(strata)),
	}
	q := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(e.DF)}.Quantile(1 - alpha/2)
	if !unit {
		e.Method = SurveyT
		e.CI = Interval{p - q*e.SE, p + q*e.SE}
		return e, nil
	}
	e.Method = SurveyWilson
	// The sample size that would give the estimate its variance if every
	// stratum had the overall rate: Kish's, with the strata's finite
	// population corrections (the population itself when all were drawn
	// whole).
	e.Effective = total
	b := binomial.value()
	if b == 0 {
		// Every stratum drawn whole: the population's mean is known.
		e.CI = Interval{p, p}
		return e, nil
	}
	e.Effective = math.Min(total, 1/b)
	// A variance below a billionth squared of the binomial one is rounding
	// of a zero (residuals that cancel exactly within every stratum).
	if pq := p * (1 - p); pq > 0 && e.SE > 1e-9*math.Sqrt(pq/float64(e.N)) {
		if binary {
			e.Effective = math.Min(e.Effective, pq/variance)
		} else {
			e.Effective = pq / variance
		}
	}
	e.CI = wilsonEffective(p, e.Effective, q)
	return e, nil
}
