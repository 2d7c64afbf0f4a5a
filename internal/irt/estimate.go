package irt

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"gonum.org/v1/gonum/integrate/quad"
)

// Defaults of Options' zero values.
const (
	DefaultPoints  = 21
	DefaultMaxIter = 500
	DefaultTol     = 1e-6
	DefaultLevel   = 0.95
	// DefaultPriorSD is the SD of the prior on b that a negative
	// Options.PriorSD asks for. Whatever the SD on b, log a gets a quarter of
	// it (0.5 by default: a between about 0.37 and 2.7 at two SDs).
	DefaultPriorSD = 2.0
	// MaxPoints bounds Options.Points.
	MaxPoints = 201
)

// Bounds that keep a fit without a prior finite: log a in [ln 0.01, ln 50],
// |b| ≤ 40. A parameter held at one is reported in Fit.Warnings.
var (
	minAlpha = math.Log(0.01)
	maxAlpha = math.Log(50)
)

const maxB = 40.0

// weakA is the discrimination below which a 2PL item is named in a warning.
const weakA = 0.2

// response is one observed person × item cell.
type response struct {
	item          int
	right, trials float64
}

// fitter holds one Estimate's state.
type fitter struct {
	d          *Data
	o          Options
	nI, nQ     int
	theta      []float64 // quadrature nodes on N(0,1)
	logW       []float64
	persons    [][]response
	fitted     []bool    // item takes part in the EM (false: extreme without a prior)
	alpha, b   []float64 // per item; alpha = log a (one shared value under Rasch)
	sdA, sdB   float64   // prior SDs; 0 = none
	lp, lq     []float64 // log P and log(1-P), item × node
	expR, expN []float64 // expected right and trials, item × node
	post       []float64 // one person's posterior over the nodes (scratch)
	atBound    []bool
}

// Estimate fits the model to d by marginal maximum likelihood: Bock–Aitkin
// EM over Options.Points Gauss–Hermite nodes of the N(0,1) ability
// distribution, each M-step a damped Newton maximisation per item (and of
// the shared discrimination under Rasch). Cells with 0 trials are missing;
// several trials of one cell are independent Bernoulli responses given the
// ability (a binomial count), so a fit of counts equals the fit of the
// expanded 0/1 table, log-likelihood included (it has no binomial
// coefficients). Abilities are EAP under N(0,1) at the fitted items;
// ItemInfo and TestInfo are per response (one epoch). It refuses bad input
// with every problem joined; what it fitted but doubts (extreme items, few
// respondents, no convergence, weak items, approximate SEs) is in
// Fit.Warnings.
func Estimate(d *Data, o Options) (*Fit, error) {
	o, err := checkOptions(o)
	if err != nil {
		return nil, err
	}
	if err := checkData(d); err != nil {
		return nil, err
	}
	f := newFitter(d, o)
	fit := &Fit{Model: o.Model, Points: o.Points, PriorSD: f.sdB}
	itemRight, itemTrials := f.totals()
	var extremes []string
	for i := range f.nI {
		if itemRight[i] == 0 || itemRight[i] == itemTrials[i] {
			extremes = append(extremes, fmt.Sprintf("%q", d.Items[i]))
			if f.sdB == 0 {
				f.fitted[i] = false
			}
		}
	}
	if f.fittedCount() == 0 {
		return nil, errors.New("irt: every item is all right or all wrong: without a prior (PriorSD 0) nothing can be fitted; use a prior")
	}

	maxChange := math.Inf(1)
	it := 0
	for it < o.MaxIter {
		it++
		f.estep(nil)
		maxChange = f.mstep()
		if maxChange < o.Tol {
			break
		}
	}
	fit.Iterations = it
	fit.MaxChange = maxChange
	fit.Converged = maxChange < o.Tol
	fit.LogLik = f.estep(nil)

	se, seNote := f.standardErrors()
	for i := range f.nI {
		it := Item{ID: d.Items[i], Right: itemRight[i], Trials: itemTrials[i]}
		it.Extreme = itemRight[i] == 0 || itemRight[i] == itemTrials[i]
		switch {
		case !f.fitted[i]:
			it.A = math.Exp(f.alphaOf(i))
			if o.Model == TwoPL {
				it.A = 0
			}
			it.B = math.Inf(-1)
			if itemRight[i] == 0 {
				it.B = math.Inf(1)
			}
		default:
			it.A = math.Exp(f.alphaOf(i))
			it.B = f.b[i]
			it.SEA, it.SEB = se[i][0], se[i][1]
		}
		fit.Items = append(fit.Items, it)
	}
	fit.Persons = f.abilities()

	// The convergence report.
	if !fit.Converged {
		fit.Warnings = append(fit.Warnings, fmt.Sprintf("not converged: after %d iterations the largest parameter change was %.3g (tolerance %.3g)", it, maxChange, o.Tol))
	}
	if len(extremes) > 0 {
		how := "finite only through the prior"
		if f.sdB == 0 {
			how = "left out of the fit, difficulty ±Inf (no prior)"
		}
		fit.Warnings = append(fit.Warnings, fmt.Sprintf("%d item(s) all right or all wrong (%s): %s", len(extremes), list(extremes), how))
	}
	if n := len(d.Persons); n < 30 {
		andPrior := ""
		if f.sdB > 0 {
			andPrior = " and the prior"
		}
		fit.Warnings = append(fit.Warnings, fmt.Sprintf("only %d respondents: item parameters rest heavily on the N(0,1) ability assumption%s; abilities compare these respondents only", n, andPrior))
	}
	bound := 0
	for i := range f.nI {
		if f.fitted[i] && f.atBound[i] {
			bound++
		}
	}
	if bound > 0 {
		fit.Warnings = append(fit.Warnings, fmt.Sprintf("%d item(s) held at a parameter bound (a in [0.01, 50], |b| ≤ 40): they barely discriminate, discriminate negatively, or are nearly extreme", bound))
	}
	if o.Model == TwoPL {
		var weak []string
		for i, it := range fit.Items {
			if f.fitted[i] && it.A < weakA {
				weak = append(weak, fmt.Sprintf("%q (a = %.2f)", it.ID, it.A))
			}
		}
		if weak != nil {
			fit.Warnings = append(fit.Warnings, fmt.Sprintf("%d item(s) barely discriminate: %s; stronger respondents do hardly better on them, or worse (2PL keeps a > 0): check their expected answers and scoring", len(weak), list(weak)))
		}
	}
	if seNote != "" {
		fit.Warnings = append(fit.Warnings, seNote)
	}
	return fit, nil
}

func checkOptions(o Options) (Options, error) {
	var errs []error
	switch o.Model {
	case "":
		o.Model = TwoPL
	case Rasch, TwoPL:
	default:
		errs = append(errs, fmt.Errorf("irt: unknown model %q (valid: %s, %s)", o.Model, Rasch, TwoPL))
	}
	if o.Points == 0 {
		o.Points = DefaultPoints
	}
	if o.Points < 2 || o.Points > MaxPoints {
		errs = append(errs, fmt.Errorf("irt: %d quadrature points: need 2 to %d", o.Points, MaxPoints))
	}
	if math.IsNaN(o.PriorSD) || math.IsInf(o.PriorSD, 0) {
		errs = append(errs, fmt.Errorf("irt: prior SD %v: need a finite number (0 = no prior, negative = the default %v)", o.PriorSD, DefaultPriorSD))
	} else if o.PriorSD < 0 {
		o.PriorSD = DefaultPriorSD
	}
	if math.IsNaN(o.FixedA) || math.IsInf(o.FixedA, 0) || o.FixedA < 0 {
		errs = append(errs, fmt.Errorf("irt: fixed discrimination %v: need a positive number, or 0 to estimate it", o.FixedA))
	} else if o.FixedA > 0 && o.Model == TwoPL {
		errs = append(errs, errors.New("irt: a fixed discrimination is for the Rasch model; 2PL estimates one per item"))
	}
	if o.MaxIter == 0 {
		o.MaxIter = DefaultMaxIter
	}
	if o.MaxIter < 0 {
		errs = append(errs, fmt.Errorf("irt: %d iterations: need a positive number", o.MaxIter))
	}
	if o.Tol == 0 {
		o.Tol = DefaultTol
	}
	if !(o.Tol > 0) || math.IsInf(o.Tol, 1) {
		errs = append(errs, fmt.Errorf("irt: tolerance %v: need a positive number", o.Tol))
	}
	if o.Level == 0 {
		o.Level = DefaultLevel
	}
	if !(o.Level > 0 && o.Level < 1) {
		errs = append(errs, fmt.Errorf("irt: interval level %v: need a number between 0 and 1", o.Level))
	}
	return o, errors.Join(errs...)
}

// list names at most five of s, then says how many more.
func list(s []string) string {
	if len(s) <= 5 {
		return strings.Join(s, ", ")
	}
	return strings.Join(s[:5], ", ") + fmt.Sprintf(" and %d more", len(s)-5)
}

func checkData(d *Data) error {
	if d == nil {
		return errors.New("irt: no data")
	}
	var errs []error
	if len(d.Items) == 0 {
		errs = append(errs, errors.New("irt: no items"))
	}
	if len(d.Persons) == 0 {
		errs = append(errs, errors.New("irt: no persons"))
	}
	if errs != nil {
		return errors.Join(errs...)
	}
	n := len(d.Persons) * len(d.Items)
	if len(d.Right) != n || len(d.Trials) != n {
		return fmt.Errorf("irt: %d persons × %d items need %d cells; Right has %d and Trials %d", len(d.Persons), len(d.Items), n, len(d.Right), len(d.Trials))
	}
	var bad []string
	itemSeen := make([]bool, len(d.Items))
	personSeen := make([]bool, len(d.Persons))
	any := false
	for p := range d.Persons {
		for i := range d.Items {
			k := p*len(d.Items) + i
			r, t := d.Right[k], d.Trials[k]
			if r < 0 || t < 0 || r > t {
				bad = append(bad, fmt.Sprintf("person %q × item %q: %d right of %d trials", d.Persons[p], d.Items[i], r, t))
				continue
			}
			if t > 0 {
				any = true
				itemSeen[i] = true
				personSeen[p] = true
			}
		}
	}
	if bad != nil {
		return fmt.Errorf("irt: %d cell(s) with impossible counts (need 0 ≤ right ≤ trials): %s", len(bad), list(bad))
	}
	if !any {
		return errors.Join(append(errs, errors.New("irt: every response is missing (0 trials everywhere)"))...)
	}
	var noItem, noPerson []string
	for i, seen := range itemSeen {
		if !seen {
			noItem = append(noItem, fmt.Sprintf("%q", d.Items[i]))
		}
	}
	for p, seen := range personSeen {
		if !seen {
			noPerson = append(noPerson, fmt.Sprintf("%q", d.Persons[p]))
		}
	}
	if noItem != nil {
		errs = append(errs, fmt.Errorf("irt: %d item(s) without a response: %s (leave them out)", len(noItem), list(noItem)))
	}
	if noPerson != nil {
		errs = append(errs, fmt.Errorf("irt: %d person(s) without a response: %s (leave them out)", len(noPerson), list(noPerson)))
	}
	return errors.Join(errs...)
}

// Nodes returns the n Gauss–Hermite nodes and weights of N(0,1): Σ w = 1 and
// Σ w g(θ) integrates g against the standard normal density.
func Nodes(n int) (theta, w []float64) {
	x := make([]float64, n)
	w = make([]float64, n)
	quad.Hermite{}.FixedLocations(x, w, math.Inf(-1), math.Inf(1))
	theta = make([]float64, n)
	for k := range x {
		theta[k] = math.Sqrt2 * x[k]
		w[k] /= math.SqrtPi
	}
	return theta, w
}

func newFitter(d *Data, o Options) *fitter {
	nI := len(d.Items)
	f := &fitter{d: d, o: o, nI: nI, nQ: o.Points}
	var w []float64
	f.theta, w = Nodes(o.Points)
	f.logW = make([]float64, len(w))
	for k := range w {
		f.logW[k] = math.Log(w[k])
	}
	f.persons = make([][]response, len(d.Persons))
	for p := range d.Persons {
		for i := range nI {
			k := p*nI + i
			if d.Trials[k] > 0 {
				f.persons[p] = append(f.persons[p], response{item: i, right: float64(d.Right[k]), trials: float64(d.Trials[k])})
			}
		}
	}
	f.fitted = make([]bool, nI)
	f.atBound = make([]bool, nI)
	for i := range f.fitted {
		f.fitted[i] = true
	}
	if o.PriorSD > 0 {
		f.sdB = o.PriorSD
		f.sdA = o.PriorSD / 4
	}
	na := nI
	if o.Model == Rasch {
		na = 1
	}
	f.alpha = make([]float64, na)
	if o.FixedA > 0 {
		f.alpha[0] = math.Log(o.FixedA)
	}
	f.b = make([]float64, nI)
	// Start b at the logit of each item's proportion wrong (shrunk off 0 and 1).
	right, trials := f.totals()
	for i := range nI {
		p := (float64(right[i]) + 0.5) / (float64(trials[i]) + 1)
		f.b[i] = clamp(math.Log((1-p)/p)/math.Exp(f.alphaOf(i)), -maxB, maxB)
	}
	f.lp = make([]float64, nI*f.nQ)
	f.lq = make([]float64, nI*f.nQ)
	f.expR = make([]float64, nI*f.nQ)
	f.expN = make([]float64, nI*f.nQ)
	f.post = make([]float64, f.nQ)
	return f
}

func (f *fitter) totals() (right, trials []int) {
	right = make([]int, f.nI)
	trials = make([]int, f.nI)
	for p := range f.persons {
		for _, r := range f.persons[p] {
			right[r.item] += int(r.right)
			trials[r.item] += int(r.trials)
		}
	}
	return right, trials
}

func (f *fitter) fittedCount() int {
	n := 0
	for _, ok := range f.fitted {
		if ok {
			n++
		}
	}
	return n
}

func (f *fitter) alphaOf(i int) float64 {
	if len(f.alpha) == 1 {
		return f.alpha[0]
	}
	return f.alpha[i]
}

func clamp(x, lo, hi float64) float64 { return math.Max(lo, math.Min(hi, x)) }

// logP returns log P and log(1−P) of η = logit P, without overflow.
func logP(eta float64) (lp, lq float64) {
	lp, lq, _ = logPP(eta)
	return lp, lq
}

// logPP is logP with P itself.
func logPP(eta float64) (lp, lq, p float64) {
	// log P = −log(1+e^−η), log(1−P) = −log(1+e^η).
	if eta > 0 {
		e := math.Exp(-eta)
		l := math.Log1p(e)
		return -l, -eta - l, 1 / (1 + e)
	}
	e := math.Exp(eta)
	l := math.Log1p(e)
	return eta - l, -l, e / (1 + e)
}

// posterior fills f.post with person p's posterior over the nodes and
// returns the person's marginal log-likelihood.
func (f *fitter) posterior(p int) float64 {
	post := f.post
	copy(post, f.logW)
	for _, r := range f.persons[p] {
		if !f.fitted[r.item] {
			continue
		}
		lp := f.lp[r.item*f.nQ : (r.item+1)*f.nQ]
		lq := f.lq[r.item*f.nQ : (r.item+1)*f.nQ]
		wrong := r.trials - r.right
		for q := range post {
			post[q] += r.right*lp[q] + wrong*lq[q]
		}
	}
	m := math.Inf(-1)
	for _, v := range post {
		m = math.Max(m, v)
	}
	sum := 0.0
	for q, v := range post {
		post[q] = math.Exp(v - m)
		sum += post[q]
	}
	for q := range post {
		post[q] /= sum
	}
	return m + math.Log(sum)
}

func (f *fitter) itemProbs() {
	for i := range f.nI {
		a, b := math.Exp(f.alphaOf(i)), f.b[i]
		for q, t := range f.theta {
			f.lp[i*f.nQ+q], f.lq[i*f.nQ+q] = logP(a * (t - b))
		}
	}
}

// estep computes the expected counts at the current parameters and returns
// the marginal log-likelihood (prior excluded). each, when not nil, is called
// with every person's index after f.post holds its posterior.
func (f *fitter) estep(each func(p int)) float64 {
	f.itemProbs()
	clear(f.expR)
	clear(f.expN)
	ll := 0.0
	for p := range f.persons {
		ll += f.posterior(p)
		for _, r := range f.persons[p] {
			if !f.fitted[r.item] {
				continue
			}
			er := f.expR[r.item*f.nQ : (r.item+1)*f.nQ]
			en := f.expN[r.item*f.nQ : (r.item+1)*f.nQ]
			for q, w := range f.post {
				er[q] += w * r.right
				en[q] += w * r.trials
			}
		}
		if each != nil {
			each(p)
		}
	}
	return ll
}

// itemTerms returns item i's expected complete-data log-likelihood at
// (alpha, b) with its gradient and Hessian in (alpha, b), prior excluded.
// hf leaves out the terms in (r − nP): the expected Hessian (Fisher
// scoring's), always negative semidefinite.
func (f *fitter) itemTerms(i int, alpha, b float64) (v float64, g [2]float64, h, hf [2][2]float64) {
	a := math.Exp(alpha)
	er := f.expR[i*f.nQ : (i+1)*f.nQ]
	en := f.expN[i*f.nQ : (i+1)*f.nQ]
	var ra, rb float64
	for q, t := range f.theta {
		eta := a * (t - b)
		lp, lq, pr := logPP(eta)
		v += er[q]*lp + (en[q]-er[q])*lq
		res := er[q] - en[q]*pr
		w := en[q] * pr * (1 - pr)
		g[0] += res * eta
		g[1] -= res * a
		hf[0][0] -= w * eta * eta
		hf[0][1] += w * a * eta
		hf[1][1] -= w * a * a
		ra += res * eta
		rb -= res * a
	}
	hf[1][0] = hf[0][1]
	h = hf
	h[0][0] += ra
	h[0][1] += rb
	h[1][0] = h[0][1]
	return v, g, h, hf
}

// mstep maximises the expected complete-data log-likelihood plus the log
// prior and returns the largest change of an a or a b.
func (f *fitter) mstep() float64 {
	change := 0.0
	for i := range f.nI {
		if !f.fitted[i] {
			continue
		}
		oldB := f.b[i]
		if f.o.Model == TwoPL {
			oldA := math.Exp(f.alpha[i])
			f.alpha[i], f.b[i], f.atBound[i] = f.newton2(i, f.alpha[i], f.b[i])
			change = math.Max(change, math.Abs(math.Exp(f.alpha[i])-oldA))
		} else {
			f.b[i], f.atBound[i] = f.newtonB(i, f.alpha[0], f.b[i])
		}
		change = math.Max(change, math.Abs(f.b[i]-oldB))
	}
	if f.o.Model == Rasch && f.o.FixedA == 0 {
		old := math.Exp(f.alpha[0])
		f.alpha[0] = f.newtonCommon(f.alpha[0])
		change = math.Max(change, math.Abs(math.Exp(f.alpha[0])-old))
	}
	return change
}

// priorB and priorA are the log prior densities of b and of alpha = log a
// up to a constant, with their first two derivatives; zero without a prior.
func (f *fitter) priorB(b float64) (v, g, h float64)     { return normalPrior(b, f.sdB) }
func (f *fitter) priorA(alpha float64) (v, g, h float64) { return normalPrior(alpha, f.sdA) }

// normalPrior is log N(x; 0, sd²) up to a constant with its first two
// derivatives; zero for sd 0 (no prior).
func normalPrior(x, sd float64) (v, g, h float64) {
	if sd == 0 {
		return 0, 0, 0
	}
	s2 := sd * sd
	return -x * x / (2 * s2), -x / s2, -1 / s2
}

// termsWithPrior is itemTerms plus the log prior, with both Hessians:
// the observed one (h) and the expected one (hf, Fisher scoring's).
func (f *fitter) termsWithPrior(i int, alpha, b float64, withA bool) (v float64, g [2]float64, h, hf [2][2]float64) {
	v, g, h, hf = f.itemTerms(i, alpha, b)
	pb, gb, hb := f.priorB(b)
	v += pb
	g[1] += gb
	h[1][1] += hb
	hf[1][1] += hb
	if withA {
		pa, ga, ha := f.priorA(alpha)
		v += pa
		g[0] += ga
		h[0][0] += ha
		hf[0][0] += ha
	}
	return v, g, h, hf
}

// accept reports whether a step's objective nv is no worse than cur.
func accept(nv, cur float64) bool { return nv >= cur-1e-12*math.Abs(cur) }

// newton2 maximises item i's 2PL objective from (alpha, b): Newton steps
// (Fisher scoring where the Hessian is not negative definite), halved until
// the objective does not fall, within the bounds.
func (f *fitter) newton2(i int, alpha, b float64) (float64, float64, bool) {
	cur, g, h, hf := f.termsWithPrior(i, alpha, b, true)
	for range 25 {
		det := h[0][0]*h[1][1] - h[0][1]*h[1][0]
		if !(h[0][0] < 0 && det > 0) {
			h = hf
			det = h[0][0]*h[1][1] - h[0][1]*h[1][0]
			if !(h[0][0] < 0 && det > 0) {
				// Flat in some direction: a gradient step.
				h = [2][2]float64{{-1, 0}, {0, -1}}
				det = 1
			}
		}
		// step = −H⁻¹ g
		da := -(h[1][1]*g[0] - h[0][1]*g[1]) / det
		db := -(-h[1][0]*g[0] + h[0][0]*g[1]) / det
		// Bound a step: at most 1 in log a and 2 in b.
		if s := math.Max(math.Abs(da)/1, math.Abs(db)/2); s > 1 {
			da, db = da/s, db/s
		}
		var na, nb, nv float64
		var ng [2]float64
		var nh, nhf [2][2]float64
		ok := false
		for t := 1.0; t > 1e-9; t /= 2 {
			na = clamp(alpha+t*da, minAlpha, maxAlpha)
			nb = clamp(b+t*db, -maxB, maxB)
			nv, ng, nh, nhf = f.termsWithPrior(i, na, nb, true)
			if ok = accept(nv, cur); ok {
				break
			}
		}
		if !ok {
			break
		}
		moved := math.Max(math.Abs(na-alpha), math.Abs(nb-b))
		alpha, b, cur, g, h, hf = na, nb, nv, ng, nh, nhf
		if moved < 1e-10 {
			break
		}
	}
	bound := alpha <= minAlpha || alpha >= maxAlpha || math.Abs(b) >= maxB
	return alpha, b, bound
}

// newtonB maximises item i's objective in b alone at a fixed alpha (the
// objective is concave in b: Newton with halving).
func (f *fitter) newtonB(i int, alpha, b float64) (float64, bool) {
	eval := func(bb float64) (v, g, h float64) {
		v, gr, _, hr := f.itemTerms(i, alpha, bb)
		pb, gb, hb := f.priorB(bb)
		return v + pb, gr[1] + gb, hr[1][1] + hb
	}
	cur, g, h := eval(b)
	for range 25 {
		if !(h < 0) {
			h = -1
		}
		db := clamp(-g/h, -2, 2)
		var nb, nv, ng, nh float64
		ok := false
		for t := 1.0; t > 1e-9; t /= 2 {
			nb = clamp(b+t*db, -maxB, maxB)
			nv, ng, nh = eval(nb)
			if ok = accept(nv, cur); ok {
				break
			}
		}
		if !ok {
			break
		}
		moved := math.Abs(nb - b)
		b, cur, g, h = nb, nv, ng, nh
		if moved < 1e-10 {
			break
		}
	}
	return b, math.Abs(b) >= maxB
}

// newtonCommon maximises the Rasch model's shared log discrimination at the
// items' current difficulties.
func (f *fitter) newtonCommon(alpha float64) float64 {
	obj := func(al float64) (v, g, h float64) {
		v, g, h = f.priorA(al)
		for i := range f.nI {
			if !f.fitted[i] {
				continue
			}
			vi, gi, _, hi := f.itemTerms(i, al, f.b[i])
			v += vi
			g += gi[0]
			h += hi[0][0]
		}
		return v, g, h
	}
	cur, g, h := obj(alpha)
	for range 25 {
		if !(h < 0) {
			h = -1
		}
		da := clamp(-g/h, -1, 1)
		var na, nv, ng, nh float64
		ok := false
		for t := 1.0; t > 1e-9; t /= 2 {
			na = clamp(alpha+t*da, minAlpha, maxAlpha)
			nv, ng, nh = obj(na)
			if ok = accept(nv, cur); ok {
				break
			}
		}
		if !ok {
			break
		}
		moved := math.Abs(na - alpha)
		alpha, cur, g, h = na, nv, ng, nh
		if moved < 1e-10 {
			break
		}
	}
	return alpha
}
