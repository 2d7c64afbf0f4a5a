package stats

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/assay-eval/assay/internal/longtest"
)

// allocateQueue is labels.NewQueue's allocation (internal/labels/queue.go,
// allocate), which stats may not import: one item per non-empty stratum,
// the rest one at a time to the stratum furthest below its proportional
// share n·Nₕ/N (ties to the larger stratum, then the first).
func allocateQueue(sizes []int, n int) []int {
	total := 0
	for _, s := range sizes {
		total += s
	}
	draw := make([]int, len(sizes))
	if n < len(sizes) {
		order := make([]int, len(sizes))
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(sizes[b], sizes[a]) })
		for _, i := range order[:n] {
			draw[i] = 1
		}
		return draw
	}
	for i := range draw {
		draw[i] = 1
	}
	share := func(i int) float64 { return float64(n) * float64(sizes[i]) / float64(total) }
	for range n - len(sizes) {
		best := -1
		for i := range sizes {
			if draw[i] >= sizes[i] {
				continue
			}
			if best < 0 {
				best = i
				continue
			}
			d, bd := share(i)-float64(draw[i]), share(best)-float64(draw[best])
			if d > bd || (d == bd && sizes[i] > sizes[best]) {
				best = i
			}
		}
		draw[best]++
	}
	return draw
}

func TestAllocateQueueOverSamplesTheRareStratum(t *testing.T) {
	// 1,000 outputs: 990 judged pass, 10 fail; 50 labels: the fail
	// stratum's share is 0.5, it gets 1.
	if got := allocateQueue([]int{990, 10}, 50); !slices.Equal(got, []int{49, 1}) {
		t.Errorf("allocation %v, want [49 1]", got)
	}
	if got := allocateQueue([]int{600, 300, 100}, 10); !slices.Equal(got, []int{6, 3, 1}) {
		t.Errorf("allocation %v, want [6 3 1]", got)
	}
}

type queueDesign struct {
	pi, tpr, tnr float64
	n, targets   int // outputs of the run, spread evenly over targets
	labels       int
}

func (d queueDesign) String() string {
	return fmt.Sprintf("π %.2f TPR %.2f TNR %.2f, %d outputs over %d targets, %d labels", d.pi, d.tpr, d.tnr, d.n, d.targets, d.labels)
}

type queueSimResult struct {
	covered, done, undefined int
	kishCovered, kishDone    int       // Kish's effective sizes in the binomial variances instead
	weighted, unweighted     []float64 // the corrected rates
	judgeFailShare           float64   // of labels, over the runs
	judgeFailRun             float64   // of the run's outputs
}

// simulateQueue draws runs as simulateCalibration does, with each output
// of one of d.targets targets, and labels a queue stratified by target ×
// the judge's verdict with NewQueue's allocation: each label weighs its
// stratum's size over the items drawn from it.
func simulateQueue(rng *rand.Rand, d queueDesign, reps int) queueSimResult {
	var out queueSimResult
	truth := make([]bool, d.n)
	judge := make([]bool, d.n)
	var labeledFail, labeled, runFail int
	for range reps {
		judgedPass := 0
		strata := make([][]int, 2*d.targets) // target t: 2t judge pass, 2t+1 fail
		for i := range truth {
			truth[i] = rng.Float64() < d.pi
			if truth[i] {
				judge[i] = rng.Float64() < d.tpr
			} else {
				judge[i] = rng.Float64() >= d.tnr
			}
			h := 2 * (i % d.targets)
			if judge[i] {
				judgedPass++
			} else {
				h++
			}
			strata[h] = append(strata[h], i)
		}
		runFail += d.n - judgedPass
		var sizes []int
		var nonEmpty [][]int
		for _, s := range strata {
			if len(s) > 0 {
				sizes = append(sizes, len(s))
				nonEmpty = append(nonEmpty, s)
			}
		}
		draw := allocateQueue(sizes, d.labels)
		var ls []WeightedLabel
		var c Confusion
		for h, s := range nonEmpty {
			w := float64(len(s)) / float64(draw[h])
			for k := range draw[h] {
				j := k + rng.IntN(len(s)-k)
				s[k], s[j] = s[j], s[k]
				i := s[k]
				ls = append(ls, WeightedLabel{Human: truth[i], Judge: judge[i], Weight: w, Design: "q"})
				switch cell(truth[i], judge[i]) {
				case 0:
					c.TP++
				case 1:
					c.FN++
				case 2:
					c.FP++
				default:
					c.TN++
				}
				labeled++
				if !judge[i] {
					labeledFail++
				}
			}
		}
		wc, err := Weigh(ls)
		if err != nil {
			panic(err)
		}
		rg, _, err := RoganGladenWeightedCI(judgedPass, d.n, wc, 0.05)
		if errors.Is(err, ErrNotIdentifiable) {
			out.undefined++
			continue
		}
		out.done++
		if rg.CI.Lo <= d.pi && d.pi <= rg.CI.Hi {
			out.covered++
		}
		out.weighted = append(out.weighted, rg.Estimate)
		if ci, ok := kishInterval(judgedPass, d.n, wc); ok {
			out.kishDone++
			if ci.Lo <= d.pi && d.pi <= ci.Hi {
				out.kishCovered++
			}
		}
		if u, err := RoganGladenCI(judgedPass, d.n, c, 0.05); err == nil {
			out.unweighted = append(out.unweighted, u.Estimate)
		}
	}
	out.judgeFailShare = float64(labeledFail) / float64(labeled)
	out.judgeFailRun = float64(runFail) / float64(reps*d.n)
	return out
}

// kishInterval is the Fieller interval with RoganGladenCI's binomial
// variances at Kish's effective numbers of passes and fails: the simpler
// design effect the weighted interval was measured against (it ignores
// what stratifying by the judge's verdict buys, and runs wide).
func kishInterval(judgedPass, judged int, w WeightedConfusion) (Interval, bool) {
	t, s := w.TPR(), w.TNR()
	j := t + s - 1
	if !(j > 0) {
		return Interval{}, false
	}
	q := float64(judgedPass) / float64(judged)
	np, nf := w.EffectivePositives(), w.EffectiveNegatives()
	tt, ss := (t*np+0.5)/(np+1), (s*nf+0.5)/(nf+1)
	z := 1.959963984540054
	ci, _ := fieller(q+s-1, j, q*(1-q)/float64(judged), tt*(1-tt)/np, ss*(1-ss)/nf, z)
	return ci, true
}

func meanSE(xs []float64) (mean, se float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / float64(len(xs)-1) / float64(len(xs)))
}

// A queue of 50 stratified by target and the judge's verdict gives every
// target's rare judge-fail stratum at least one item, so the labels hold
// far more of the judge's fails than the run does. Weighted by the
// inverse selection probabilities, the corrected rate's 95% interval
// covers the true pass rate 95% of the time (±2 points); the same labels
// counted as a simple random sample put the corrected rate off the truth
// by more than a point (the test fails if the weights are dropped).
func TestWeightedCorrectedRateCoverage(t *testing.T) {
	longtest.Skip(t)
	rng := rand.New(rand.NewPCG(2026, 1203))
	const reps = 3000 // Monte Carlo error of a coverage near 95%: 0.4 points
	for _, d := range []queueDesign{
		{pi: 0.95, tpr: 0.99, tnr: 0.8, n: 2000, targets: 10, labels: 50},
		{pi: 0.9, tpr: 0.98, tnr: 0.5, n: 2000, targets: 8, labels: 50},
		{pi: 0.8, tpr: 0.97, tnr: 0.7, n: 2000, targets: 12, labels: 50},
		{pi: 0.85, tpr: 0.99, tnr: 0.6, n: 2000, targets: 12, labels: 50},
	} {
		r := simulateQueue(rng, d, reps)
		cov := float64(r.covered) / float64(r.done)
		wm, wse := meanSE(r.weighted)
		um, use := meanSE(r.unweighted)
		t.Logf("%v: judge fails %.1f%% of labels, %.1f%% of the run; weighted coverage %.4f (Kish's %.4f), mean %.4f ± %.4f; unweighted mean %.4f ± %.4f; undefined %d",
			d, 100*r.judgeFailShare, 100*r.judgeFailRun, cov, float64(r.kishCovered)/float64(r.kishDone), wm, wse, um, use, r.undefined)
		// The band is wider than ±2 points: with 50 labels, 2–3 of a
		// class in a stratum and weights up to 4 to 1, the linearized
		// variance runs a little short when the rare cell has a handful of
		// labels and long when it has none (the half pseudo-label).
		if cov < 0.95-0.025 || cov > 0.95+0.035 {
			t.Errorf("%v: the weighted 95%% interval covers %.1f%% of the time", d, 100*cov)
		}
		if r.undefined > reps/100 {
			t.Errorf("%v: the correction was undefined in %d of %d runs", d, r.undefined, reps)
		}
		if r.judgeFailShare < 1.3*r.judgeFailRun {
			t.Errorf("%v: the queue does not over-sample the judge's fails (%.3f of labels, %.3f of the run)", d, r.judgeFailShare, r.judgeFailRun)
		}
		if math.Abs(wm-d.pi) > 0.005+4*wse {
			t.Errorf("%v: the weighted corrected rate averages %.4f, the truth is %.2f", d, wm, d.pi)
		}
		if math.Abs(um-d.pi) < 0.01 || math.Abs(um-d.pi) < 6*use {
			t.Errorf("%v: counted as a simple random sample the corrected rate averages %.4f ± %.4f: not biased away from %.2f, so the design does not test the weights", d, um, use, d.pi)
		}
	}
}
