package stats

import (
	"errors"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/stat/distuv"
)

// Confusion is a binary classifier (a judge) against the truth (people's
// labels), pass the positive class: TP judge and truth pass, FN the judge
// failed a pass, FP the judge passed a fail, TN both fail.
type Confusion struct {
	TP, FN, FP, TN int
}

// Positives and Negatives are the true passes and fails.
func (c Confusion) Positives() int { return c.TP + c.FN }
func (c Confusion) Negatives() int { return c.FP + c.TN }

// N is every item.
func (c Confusion) N() int { return c.TP + c.FN + c.FP + c.TN }

// TPR is the sensitivity TP/(TP+FN); NaN without true passes.
func (c Confusion) TPR() float64 { return ratio(c.TP, c.Positives()) }

// TNR is the specificity TN/(TN+FP); NaN without true fails.
func (c Confusion) TNR() float64 { return ratio(c.TN, c.Negatives()) }

// Youden is J = TPR + TNR − 1: 0 for a judge no better than a coin of
// any bias (one that passes everything has TNR 0, so J = 0).
func (c Confusion) Youden() float64 { return c.TPR() + c.TNR() - 1 }

// Table is the confusion as a 2×2 table, rows the truth (pass, fail),
// columns the judge (pass, fail): CohensKappa's input.
func (c Confusion) Table() [][]int { return [][]int{{c.TP, c.FN}, {c.FP, c.TN}} }

// ClassMeasures are one class's precision, recall and F1; NaN where a
// division is by zero.
type ClassMeasures struct {
	Precision, Recall, F1 float64
}

// Classes returns the measures of the pass class (recall = TPR) and of the
// fail class (recall = TNR), as sklearn's precision_recall_fscore_support
// computes them, with NaN where it would warn and write 0.
func (c Confusion) Classes() (pass, fail ClassMeasures) {
	return measures(c.TP, c.FP, c.FN), measures(c.TN, c.FN, c.FP)
}

func measures(hit, falseHit, miss int) ClassMeasures {
	m := ClassMeasures{Precision: ratio(hit, hit+falseHit), Recall: ratio(hit, hit+miss)}
	switch {
	case math.IsNaN(m.Precision) || math.IsNaN(m.Recall):
		m.F1 = math.NaN()
	case hit == 0:
		m.F1 = 0
	default:
		m.F1 = 2 * m.Precision * m.Recall / (m.Precision + m.Recall)
	}
	return m
}

func ratio(a, b int) float64 {
	if b == 0 {
		return math.NaN()
	}
	return float64(a) / float64(b)
}

// ErrNotIdentifiable: the Rogan–Gladen correction divides by Youden's J,
// and J ≤ 0 (or a class has no label, so J is unknown): the judge's
// verdicts carry no information about the true pass rate.
var ErrNotIdentifiable = errors.New("the judge does not tell a pass from a fail (Youden's J = TPR + TNR − 1 is not above 0)")

// RoganGladen is the judged pass rate corrected for the judge's error.
type RoganGladen struct {
	// Estimate is (q + TNR − 1)/(TPR + TNR − 1) clipped to [0, 1]; Raw is
	// the value before clipping.
	Estimate, Raw float64
	// Q is the judged pass rate; TPR, TNR and J the judge's rates
	// measured on the labels.
	Q, TPR, TNR, J float64
	// SE is the delta-method standard error:
	//
	//	Var = [q(1−q)/N + p²·TPR(1−TPR)/n₊ + (1−p)²·TNR(1−TNR)/n₋] / J²
	//
	// with the run's N judged outputs and the n₊ labeled passes and n₋
	// labeled fails, each rate's variance taken at (x + ½)/(n + 1) so a
	// perfect score on a few labels does not claim zero uncertainty.
	SE float64
	// CI inverts the same variance as a ratio (Fieller): the p whose
	// numerator q + TNR − 1 − p·J is within z standard errors of 0,
	// clipped to [0, 1]. It is [0, 1] when J itself is not shown above 0.
	// Unlike Estimate ± z·SE it keeps its level when J is uncertain (a
	// small J in the denominator makes the ratio skewed).
	CI Interval
	// Unbounded: J is within its own noise of 0, so the interval is the
	// whole [0, 1].
	Unbounded bool
}

// plusHalf is a rate's value for its variance: (x + ½)/(n + 1).
func plusHalf(x, n int) float64 { return (float64(x) + 0.5) / (float64(n) + 1) }

// RoganGladenCI corrects the pass rate judged over a run — judgedPass of
// judged outputs — for the judge's error measured against labels: the
// labels are a random sample of the run's outputs and the label is the
// truth. alpha is the two-sided level. It returns ErrNotIdentifiable when a
// class has no label or J ≤ 0.
func RoganGladenCI(judgedPass, judged int, c Confusion, alpha float64) (RoganGladen, error) {
	if judged <= 0 || judgedPass < 0 || judgedPass > judged || !validAlpha(alpha) {
		return RoganGladen{}, errors.New("the corrected rate needs judged outputs and alpha in (0, 1)")
	}
	if c.Positives() == 0 || c.Negatives() == 0 {
		return RoganGladen{}, ErrNotIdentifiable
	}
	r := RoganGladen{Q: float64(judgedPass) / float64(judged), TPR: c.TPR(), TNR: c.TNR()}
	r.J = r.TPR + r.TNR - 1
	if !(r.J > 0) {
		return r, ErrNotIdentifiable
	}
	r.Raw = (r.Q + r.TNR - 1) / r.J
	r.Estimate = clip01(r.Raw)
	vq, vt, vs := rgVariances(judged, r.Q, c)
	p := r.Estimate
	r.SE = math.Sqrt(vq+p*p*vt+(1-p)*(1-p)*vs) / r.J
	z := distuv.UnitNormal.Quantile(1 - alpha/2)
	r.CI, r.Unbounded = fieller(r.Q+r.TNR-1, r.J, vq, vt, vs, z)
	return r, nil
}

// rgVariances are the variances of q, TPR and TNR.
func rgVariances(judged int, q float64, c Confusion) (vq, vt, vs float64) {
	t := plusHalf(c.TP, c.Positives())
	s := plusHalf(c.TN, c.Negatives())
	return q * (1 - q) / float64(judged), t * (1 - t) / float64(c.Positives()), s * (1 - s) / float64(c.Negatives())
}

// fieller solves (a − pJ)² ≤ z²(vq + p²vt + (1−p)²vs) for p, where a =
// q + TNR − 1 and J = TPR + TNR − 1, Var(a) = vq + vs, Var(J) = vt + vs and
// Cov(a, J) = vs.
func fieller(a, j, vq, vt, vs, z float64) (Interval, bool) {
	z2 := z * z
	A := j*j - z2*(vt+vs)
	B := -2*a*j + 2*z2*vs
	C := a*a - z2*(vq+vs)
	D := B*B - 4*A*C
	if A <= 0 || D < 0 {
		return Interval{0, 1}, true
	}
	sd := math.Sqrt(D)
	lo, hi := (-B-sd)/(2*A), (-B+sd)/(2*A)
	return Interval{clip01(lo), clip01(hi)}, false
}

func clip01(x float64) float64 { return math.Min(1, math.Max(0, x)) }

// RoganGladenBootstrap is the percentile interval of B bootstrap
// replicates of the corrected rate over both samples: the labeled pairs
// (judge verdict, label) resampled with replacement, and the run's judged
// verdicts resampled (a binomial draw of the judged outputs at the judged
// rate). A replicate whose labels leave a class empty or J ≤ 0 has no
// corrected rate and is dropped; dropped counts them. Replicates are
// clipped to [0, 1] as the estimate is.
func RoganGladenBootstrap(rng *rand.Rand, judgedPass, judged int, c Confusion, B int, alpha float64) (ci Interval, dropped int, err error) {
	if judged <= 0 || judgedPass < 0 || judgedPass > judged || !validAlpha(alpha) || B <= 0 {
		return nanInterval(), 0, errors.New("the bootstrap needs judged outputs, B > 0 and alpha in (0, 1)")
	}
	n := c.N()
	if n == 0 {
		return nanInterval(), 0, ErrNotIdentifiable
	}
	q := float64(judgedPass) / float64(judged)
	// The cumulative shares of the four cells, to draw a resample's cell
	// counts one label at a time.
	cum := [4]float64{}
	counts := [4]int{c.TP, c.FN, c.FP, c.TN}
	acc := 0
	for i, k := range counts {
		acc += k
		cum[i] = float64(acc) / float64(n)
	}
	bin := distuv.Binomial{N: float64(judged), P: q, Src: rng}
	reps := make([]float64, 0, B)
	for range B {
		var r Confusion
		for range n {
			u := rng.Float64()
			switch {
			case u < cum[0]:
				r.TP++
			case u < cum[1]:
				r.FN++
			case u < cum[2]:
				r.FP++
			default:
				r.TN++
			}
		}
		qs := q // a binomial at 0 or 1 does not vary
		if q > 0 && q < 1 {
			qs = bin.Rand() / float64(judged)
		}
		if r.Positives() == 0 || r.Negatives() == 0 {
			dropped++
			continue
		}
		t, s := r.TPR(), r.TNR()
		j := t + s - 1
		if !(j > 0) {
			dropped++
			continue
		}
		reps = append(reps, clip01((qs+s-1)/j))
	}
	if len(reps) == 0 {
		return nanInterval(), dropped, ErrNotIdentifiable
	}
	return PercentileCI(reps, alpha), dropped, nil
}

// LabelsNeeded is how many more labels of each true class would bring the
// corrected rate's delta-method interval to width, holding the observed
// rates.
type LabelsNeeded struct {
	// Pass and Fail are the further labels of each class in the cheapest
	// split (the fewest labels in all).
	Pass, Fail int
	// Random is the further labels needed when they are drawn at random
	// from the run, so the classes come in the shares the labels show.
	Random int
	// Width is the interval's width now (2·z·SE).
	Width float64
}

// ErrWidthUnreachable: the run's own judged sample makes the interval
// wider than asked however many labels are added.
var ErrWidthUnreachable = errors.New("the width asked for is narrower than the judged sample alone allows")

// NeededLabels solves the delta-method variance of the corrected rate for
// the labeled passes n₊ and fails n₋ at which its interval, 2·z·SE, is
// width: with a = p²·TPR(1−TPR) and b = (1−p)²·TNR(1−TNR), the target is
// a/n₊ + b/n₋ ≤ V* = (width/2z)²·J² − q(1−q)/N, and the fewest labels in
// all put n₊ ∝ √a and n₋ ∝ √b (never fewer than already given).
func NeededLabels(r RoganGladen, judged int, c Confusion, width, alpha float64) (LabelsNeeded, error) {
	if !(width > 0) || !validAlpha(alpha) || judged <= 0 || !(r.J > 0) {
		return LabelsNeeded{}, errors.New("labels needed: a width above 0, alpha in (0, 1) and a corrected rate")
	}
	z := distuv.UnitNormal.Quantile(1 - alpha/2)
	vq, vt, vs := rgVariances(judged, r.Q, c)
	p := r.Estimate
	a := p * p * vt * float64(c.Positives())
	b := (1 - p) * (1 - p) * vs * float64(c.Negatives())
	return neededLabels(a, b, float64(c.Positives()), float64(c.Negatives()), vq, r.J, 2*z*r.SE, width, z)
}

// neededLabels solves a/n₊ + b/n₋ ≤ (width/2z)²·J² − vq for the further
// labels, P and F labels of each class given; now is the width now.
func neededLabels(a, b, P, F, vq, J, now, width, z float64) (LabelsNeeded, error) {
	out := LabelsNeeded{Width: now}
	target := math.Pow(width/(2*z), 2)*J*J - vq
	if target <= 0 {
		return out, ErrWidthUnreachable
	}
	if a/P+b/F <= target {
		return out, nil
	}
	sa, sb := math.Sqrt(a), math.Sqrt(b)
	np, nf := sa*(sa+sb)/target, sb*(sa+sb)/target
	switch {
	case np < P: // passes enough already: only fails
		np, nf = P, b/(target-a/P)
	case nf < F:
		np, nf = a/(target-b/F), F
	}
	out.Pass = max(0, int(math.Ceil(np-P-1e-9)))
	out.Fail = max(0, int(math.Ceil(nf-F-1e-9)))
	// At random, a share h of new labels are passes.
	h := P / (P + F)
	need := func(m float64) bool { return a/(P+h*m)+b/(F+(1-h)*m) <= target }
	hi := 1
	for !need(float64(hi)) {
		hi *= 2
		if hi > 1<<40 {
			return out, ErrWidthUnreachable
		}
	}
	lo := hi / 2 // need(lo) is false, or lo is 0
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if need(float64(mid)) {
			hi = mid
		} else {
			lo = mid
		}
	}
	out.Random = hi
	return out, nil
}
