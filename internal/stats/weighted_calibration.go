package stats

import (
	"cmp"
	"errors"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

// WeightedLabel is one labeled output with its sampling weight: the
// inverse of the probability it was drawn for labeling. A queue stratified
// by the judge's verdict draws the rare verdict's outputs more often than
// their share of the run, so each must count for fewer outputs.
type WeightedLabel struct {
	Human, Judge bool // the person's and the judge's verdicts, pass true
	Weight       float64
	// Design names the sample the label was drawn in (a labeling queue;
	// "" for labels with no known design). The variances treat the labels
	// of one design and one judge verdict as a stratum.
	Design string
}

// WeightedConfusion is a confusion matrix of weighted labels: each cell
// the sum of its labels' weights (a Horvitz–Thompson estimate of how many
// of the run's outputs fall in it), beside the raw counts.
type WeightedConfusion struct {
	// Counts are the labels in each cell, unweighted.
	Counts Confusion
	// TP, FN, FP and TN are the cells' sums of weights.
	TP, FN, FP, TN float64
	sq             [4]float64 // Σ w² per cell, for Kish's effective sizes
	labels         []WeightedLabel
}

// ErrBadWeight: a weight that is not a positive finite number.
var ErrBadWeight = errors.New("a label's weight must be a positive, finite number")

// Weigh sums the labels' weights into a confusion matrix.
func Weigh(labels []WeightedLabel) (WeightedConfusion, error) {
	var w WeightedConfusion
	for _, l := range labels {
		if !(l.Weight > 0) || math.IsInf(l.Weight, 0) {
			return WeightedConfusion{}, ErrBadWeight
		}
		i := cell(l.Human, l.Judge)
		switch i {
		case 0:
			w.Counts.TP++
			w.TP += l.Weight
		case 1:
			w.Counts.FN++
			w.FN += l.Weight
		case 2:
			w.Counts.FP++
			w.FP += l.Weight
		default:
			w.Counts.TN++
			w.TN += l.Weight
		}
		w.sq[i] += l.Weight * l.Weight
	}
	w.labels = slices.Clone(labels)
	return w, nil
}

// cell is a label's cell: 0 TP, 1 FN, 2 FP, 3 TN.
func cell(human, judge bool) int {
	switch {
	case human && judge:
		return 0
	case human:
		return 1
	case judge:
		return 2
	}
	return 3
}

// EqualWeights: every label weighs the same (a simple random sample, or
// labels with no design), so the weighted measures are the unweighted
// ones and Counts should be used as they are.
func (w WeightedConfusion) EqualWeights() bool {
	for _, l := range w.labels {
		if l.Weight != w.labels[0].Weight {
			return false
		}
	}
	return true
}

// Positives and Negatives are the weighted true passes and fails.
func (w WeightedConfusion) Positives() float64 { return w.TP + w.FN }
func (w WeightedConfusion) Negatives() float64 { return w.FP + w.TN }

// TPR and TNR are the weighted sensitivity and specificity; NaN without
// labels of the class.
func (w WeightedConfusion) TPR() float64 { return fratio(w.TP, w.Positives()) }
func (w WeightedConfusion) TNR() float64 { return fratio(w.TN, w.Negatives()) }

// Youden is the weighted TPR + TNR − 1.
func (w WeightedConfusion) Youden() float64 { return w.TPR() + w.TNR() - 1 }

// HumanPass is the weighted share of labels people passed: the estimate
// of the run's true pass rate from the labels alone.
func (w WeightedConfusion) HumanPass() float64 {
	return fratio(w.Positives(), w.Positives()+w.Negatives())
}

// Agreement is the weighted share of labels the judge agreed with.
func (w WeightedConfusion) Agreement() float64 {
	return fratio(w.TP+w.TN, w.Positives()+w.Negatives())
}

// Classes are the weighted measures of the pass and fail classes.
func (w WeightedConfusion) Classes() (pass, fail ClassMeasures) {
	return fmeasures(w.TP, w.FP, w.FN), fmeasures(w.TN, w.FN, w.FP)
}

// Kish's effective sample size of a set of weights, (Σw)²/Σw²: the number
// of equally weighted labels that would estimate a share as precisely.
func kish(sum, sq float64) float64 {
	if sq == 0 {
		return 0
	}
	return sum * sum / sq
}

// EffectivePositives, EffectiveNegatives and Effective are Kish's
// effective sizes of the labeled passes, the labeled fails and all labels.
func (w WeightedConfusion) EffectivePositives() float64 {
	return kish(w.Positives(), w.sq[0]+w.sq[1])
}
func (w WeightedConfusion) EffectiveNegatives() float64 {
	return kish(w.Negatives(), w.sq[2]+w.sq[3])
}
func (w WeightedConfusion) Effective() float64 {
	return kish(w.Positives()+w.Negatives(), w.sq[0]+w.sq[1]+w.sq[2]+w.sq[3])
}

// Proportions is the weighted 2×2 table as shares of the total weight,
// rows the truth (pass, fail), columns the judge.
func (w WeightedConfusion) Proportions() [][]float64 {
	n := w.Positives() + w.Negatives()
	return [][]float64{{w.TP / n, w.FN / n}, {w.FP / n, w.TN / n}}
}

func fratio(a, b float64) float64 {
	if b == 0 {
		return math.NaN()
	}
	return a / b
}

// fmeasures is measures over weighted sums.
func fmeasures(hit, falseHit, miss float64) ClassMeasures {
	m := ClassMeasures{Precision: fratio(hit, hit+falseHit), Recall: fratio(hit, hit+miss)}
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

// WeightedKappa is Cohen's κ of the weighted table: the proportions are
// the weighted shares, and the standard error is statsmodels' with n
// Kish's effective number of labels.
func WeightedKappa(w WeightedConfusion, alpha float64) (Kappa, error) {
	if w.Positives()+w.Negatives() == 0 {
		return Kappa{}, ErrKappaUndefined
	}
	return kappaOf(w.Proportions(), w.Effective(), alpha)
}

// RGVariances are the variances the corrected rate's interval is built
// from: of the judged pass rate q, of TPR and TNR, and TPR's covariance
// with TNR.
type RGVariances struct {
	Q, TPR, TNR, Cov float64
}

// designVariances linearizes TPR = TP/(TP+FN) and TNR = TN/(FP+TN) over
// the weighted labels and sums their variances stratum by stratum, a
// stratum being the labels of one design with one judge verdict (a queue
// stratified by target and slice as well is taken as stratified by the
// judge's verdict alone: pooling strata costs a little precision, never
// coverage, and keeps strata of one label out of the sum). Within a
// stratum a label's value is its weight times its influence on (TPR,
// TNR); the variance of the stratum's total is n·S² with S² the values'
// variance (drawn with replacement). As plusHalf does for a rate, half a
// pseudo-label of each class, at the stratum's mean weight, keeps a
// stratum whose labels all agree from claiming no variance.
//
// Pooled by judge verdict, a design stratified by it keeps what that
// stratification buys: TPR and TNR are then estimated from the same two
// strata and their errors are correlated (Cov), which the interval uses.
func (w WeightedConfusion) designVariances() (vt, vs, cov float64) {
	P, F := w.Positives(), w.Negatives()
	t, s := w.TP/P, w.TN/F
	type key struct {
		design string
		judge  bool
	}
	type sums struct{ n, s1, s2 [2]float64 } // by human class: pass, fail
	groups := map[key]*sums{}
	var order []key
	for _, l := range w.labels {
		k := key{l.Design, l.Judge}
		g := groups[k]
		if g == nil {
			g = &sums{}
			groups[k] = g
			order = append(order, k)
		}
		c := 1
		if l.Human {
			c = 0
		}
		g.n[c]++
		g.s1[c] += l.Weight
		g.s2[c] += l.Weight * l.Weight
	}
	// A fixed order, so the sums are the same run to run.
	slices.SortFunc(order, func(a, b key) int {
		if c := cmp.Compare(a.design, b.design); c != 0 {
			return c
		}
		if a.judge == b.judge {
			return 0
		}
		if a.judge {
			return -1
		}
		return 1
	})
	for _, k := range order {
		g := groups[k]
		// The influence of a human pass and of a human fail on (TPR, TNR).
		var ep, ef [2]float64
		if k.judge {
			ep, ef = [2]float64{(1 - t) / P, 0}, [2]float64{0, -s / F}
		} else {
			ep, ef = [2]float64{-t / P, 0}, [2]float64{0, (1 - s) / F}
		}
		n := g.n[0] + g.n[1]
		w1, w2 := (g.s1[0]+g.s1[1])/n, (g.s2[0]+g.s2[1])/n
		s1 := [2]float64{g.s1[0] + w1/2, g.s1[1] + w1/2}
		s2 := [2]float64{g.s2[0] + w2/2, g.s2[1] + w2/2}
		var m, e2 [2][2]float64 // m[0] is the mean; e2 the second moments
		for i := range 2 {
			m[0][i] = (s1[0]*ep[i] + s1[1]*ef[i]) / (n + 1)
			for j := range 2 {
				e2[i][j] = (s2[0]*ep[i]*ep[j] + s2[1]*ef[i]*ef[j]) / (n + 1)
			}
		}
		vt += n * (e2[0][0] - m[0][0]*m[0][0])
		vs += n * (e2[1][1] - m[0][1]*m[0][1])
		cov += n * (e2[0][1] - m[0][0]*m[0][1])
	}
	return vt, vs, cov
}

// WeightedVariances are the corrected rate's variances over weighted
// labels (designVariances) and the judged sample's q(1−q)/N.
func WeightedVariances(judged int, q float64, w WeightedConfusion) RGVariances {
	vt, vs, cov := w.designVariances()
	return RGVariances{Q: q * (1 - q) / float64(judged), TPR: vt, TNR: vs, Cov: cov}
}

// RoganGladenWeightedCI is RoganGladenCI over weighted labels: TPR and TNR
// from the weighted cells, the variance of the estimate
//
//	[Var q + p²·Var TPR + (1−p)²·Var TNR − 2p(1−p)·Cov(TPR, TNR)] / J²
//
// with designVariances', and the Fieller interval of the same variance.
// With equal weights use RoganGladenCI: this is the design-based
// variance, not the binomial one.
func RoganGladenWeightedCI(judgedPass, judged int, w WeightedConfusion, alpha float64) (RoganGladen, RGVariances, error) {
	if judged <= 0 || judgedPass < 0 || judgedPass > judged || !validAlpha(alpha) {
		return RoganGladen{}, RGVariances{}, errors.New("the corrected rate needs judged outputs and alpha in (0, 1)")
	}
	if w.Counts.Positives() == 0 || w.Counts.Negatives() == 0 {
		return RoganGladen{}, RGVariances{}, ErrNotIdentifiable
	}
	r := RoganGladen{Q: float64(judgedPass) / float64(judged), TPR: w.TPR(), TNR: w.TNR()}
	r.J = r.TPR + r.TNR - 1
	if !(r.J > 0) {
		return r, RGVariances{}, ErrNotIdentifiable
	}
	r.Raw = (r.Q + r.TNR - 1) / r.J
	r.Estimate = clip01(r.Raw)
	v := WeightedVariances(judged, r.Q, w)
	p := r.Estimate
	r.SE = math.Sqrt(math.Max(0, v.Q+p*p*v.TPR+(1-p)*(1-p)*v.TNR-2*p*(1-p)*v.Cov)) / r.J
	z := distuv.UnitNormal.Quantile(1 - alpha/2)
	r.CI, r.Unbounded = fiellerCov(r.Q+r.TNR-1, r.J, v, z)
	return r, v, nil
}

// fiellerCov solves (a − pJ)² ≤ z²·Var(a − pJ) for p, where a = q + TNR −
// 1, J = TPR + TNR − 1 and a − pJ = q − p·TPR + (1−p)·TNR − (1−p), so
// Var(a − pJ) = Var q + p²·Var TPR + (1−p)²·Var TNR − 2p(1−p)·Cov.
func fiellerCov(a, j float64, v RGVariances, z float64) (Interval, bool) {
	z2 := z * z
	A := j*j - z2*(v.TPR+v.TNR+2*v.Cov)
	B := -2*a*j + 2*z2*(v.TNR+v.Cov)
	C := a*a - z2*(v.Q+v.TNR)
	D := B*B - 4*A*C
	if A <= 0 || D < 0 {
		return Interval{0, 1}, true
	}
	sd := math.Sqrt(D)
	return Interval{clip01((-B - sd) / (2 * A)), clip01((-B + sd) / (2 * A))}, false
}

// RoganGladenWeightedBootstrap is RoganGladenBootstrap over weighted
// labels: each replicate redraws, with replacement, as many labels as
// each stratum (design × judge verdict, as designVariances') has from
// that stratum, and sums their weights; the judged rate is redrawn as a
// binomial.
func RoganGladenWeightedBootstrap(rng *rand.Rand, judgedPass, judged int, w WeightedConfusion, B int, alpha float64) (ci Interval, dropped int, err error) {
	if judged <= 0 || judgedPass < 0 || judgedPass > judged || !validAlpha(alpha) || B <= 0 {
		return nanInterval(), 0, errors.New("the bootstrap needs judged outputs, B > 0 and alpha in (0, 1)")
	}
	if len(w.labels) == 0 {
		return nanInterval(), 0, ErrNotIdentifiable
	}
	type key struct {
		design string
		judge  bool
	}
	byKey := map[key][]WeightedLabel{}
	var order []key
	for _, l := range w.labels {
		k := key{l.Design, l.Judge}
		if _, ok := byKey[k]; !ok {
			order = append(order, k)
		}
		byKey[k] = append(byKey[k], l)
	}
	q := float64(judgedPass) / float64(judged)
	bin := distuv.Binomial{N: float64(judged), P: q, Src: rng}
	reps := make([]float64, 0, B)
	for range B {
		var cells [4]float64
		for _, k := range order {
			g := byKey[k]
			for range g {
				l := g[rng.IntN(len(g))]
				cells[cell(l.Human, l.Judge)] += l.Weight
			}
		}
		qs := q
		if q > 0 && q < 1 {
			qs = bin.Rand() / float64(judged)
		}
		P, F := cells[0]+cells[1], cells[2]+cells[3]
		if P == 0 || F == 0 {
			dropped++
			continue
		}
		t, s := cells[0]/P, cells[3]/F
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

// NeededWeightedLabels is NeededLabels over weighted labels: further labels
// are taken to come from the same design, so each class's variance falls
// as its count of labels rises (Var TPR·n₊/(n₊ + more)), and the
// covariance shrinks in the same proportion as the rest of the labels'
// share of the variance.
func NeededWeightedLabels(r RoganGladen, v RGVariances, w WeightedConfusion, width, alpha float64) (LabelsNeeded, error) {
	if !(width > 0) || !validAlpha(alpha) || !(r.J > 0) {
		return LabelsNeeded{}, errors.New("labels needed: a width above 0, alpha in (0, 1) and a corrected rate")
	}
	z := distuv.UnitNormal.Quantile(1 - alpha/2)
	p := r.Estimate
	P, F := float64(w.Counts.Positives()), float64(w.Counts.Negatives())
	a := p * p * v.TPR * P
	b := (1 - p) * (1 - p) * v.TNR * F
	// The labels' share of the variance is k·(a/n₊ + b/n₋): k carries the
	// covariance (1 with none).
	k := 1.0
	if sum := a/P + b/F; sum > 0 {
		k = math.Max(0, sum-2*p*(1-p)*v.Cov) / sum
	}
	return neededLabels(a*k, b*k, P, F, v.Q, r.J, 2*z*r.SE, width, z)
}
