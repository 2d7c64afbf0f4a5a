package analysis

import (
	"math"

	"github.com/assay-eval/assay/internal/stats"
)

// epochNoise adds the run-to-run figures to es, from a target's primary
// verdicts over its epochs:
//
//   - EpochRates: each epoch's rate on its own, over the cases scored in
//     every epoch (so the K rates measure the same cases, as K single runs
//     of the same set would);
//   - BetweenRunSD: their sample standard deviation (n−1): how far one run
//     of the target moves from the next on the same cases. It sits beside
//     the standard error across cases, which measures how far the rate
//     would move on a different draw of cases;
//   - TotalVar and WithinShare: the variance (n−1) of every scored verdict,
//     and the fraction of it that lies within cases, WithinVar/TotalVar
//     (the law of total variance: Var(x) = E[Var(x|case)] + Var(E[x|case])).
//
// cases bounds the cases read from vs. Nothing is added with fewer than two
// epochs or two complete cases: one epoch has no between-run spread.
func epochNoise(es *EpochStats, vs *verdicts, cases int) {
	if es == nil || vs == nil || vs.epochs < 2 {
		return
	}
	k := vs.epochs
	passed := make([]int, k)
	complete := 0
	var all []float64
	for i := range cases {
		if (i+1)*k > len(vs.v) {
			break
		}
		row := vs.v[i*k : (i+1)*k]
		full := true
		for _, x := range row {
			if x < 0 {
				full = false
				continue
			}
			all = append(all, float64(x))
		}
		if !full {
			continue
		}
		complete++
		for e, x := range row {
			passed[e] += int(x)
		}
	}
	if complete < 2 {
		return
	}
	// A complete case has k ≥ 2 scored epochs, so WithinVar is defined.
	if _, se := stats.MeanSE(all); !anyNaN(se) {
		es.TotalVar = round6(se * se * float64(len(all)))
		if es.TotalVar > 0 {
			share := round4(math.Min(1, es.WithinVar/es.TotalVar))
			es.WithinShare = &share
		}
	}
	rates := make([]float64, k)
	for e := range k {
		rates[e] = float64(passed[e]) / float64(complete)
	}
	_, se := stats.MeanSE(rates)
	if anyNaN(se) {
		return
	}
	sd := round6(se * math.Sqrt(float64(k)))
	es.Epochs = k
	es.CompleteCases = complete
	for _, r := range rates {
		es.EpochRates = append(es.EpochRates, round6(r))
	}
	es.BetweenRunSD = &sd
}
