package analysis

import (
	"math"

	"github.com/assay-eval/assay/internal/stats"
)

// clusterTag is the tag that groups related cases (several questions about
// one document, turns of one conversation): their results are not
// independent, so the standard error is clustered (Miller 2024).
const clusterTag = "cluster"

// primaryInterval replaces the interval of the primary rate (Wilson, or
// the --ci method) when the cases are not independent draws of one
// pass/fail each:
//   - when cases carry a cluster tag, each case's epochs are averaged and
//     the rate's standard error is clustered (CR1), with a t interval on
//     G−1 degrees of freedom (cr1_t): a normal interval on few clusters
//     covers too little;
//   - with several epochs, each case's epochs are averaged first (the
//     epochs of one case are not independent evidence) and the interval is
//     stats.EpochRateCI's, which keeps its coverage near 0 and 1 and is
//     never of zero width: a target that passed every epoch of every case
//     has a lower bound below 100%.
//
// It returns the epoch summary (nil with one epoch).
func primaryInterval(r *Rate, vs *verdicts, ci *caseIndex, alpha float64) *EpochStats {
	return rateInterval(r, vs, ci, alpha, nil)
}

// sliceInterval is primaryInterval over the cases of one slice (tag key k
// = value v); it returns nothing, the epoch summary being the target's.
func sliceInterval(r *Rate, vs *verdicts, ci *caseIndex, alpha float64, k, v int) {
	rateInterval(r, vs, ci, alpha, func(i int) bool { return ci.tag(k, i) == v })
}

// rateInterval is primaryInterval over the cases keep accepts (all when
// nil).
func rateInterval(r *Rate, vs *verdicts, ci *caseIndex, alpha float64, keep func(i int) bool) *EpochStats {
	if vs == nil {
		return nil
	}
	labels := clusterLabels(ci)
	clustered := labels != nil
	if vs.epochs <= 1 && !clustered {
		return nil
	}
	var scores [][]float64
	var clusters []string
	for i := range ci.len() {
		if (i+1)*vs.epochs > len(vs.v) {
			break
		}
		if keep != nil && !keep(i) {
			continue
		}
		var xs []float64
		for _, x := range vs.v[i*vs.epochs : (i+1)*vs.epochs] {
			if x >= 0 {
				xs = append(xs, float64(x))
			}
		}
		if len(xs) == 0 {
			continue
		}
		scores = append(scores, xs)
		if clustered {
			clusters = append(clusters, labels[i])
		}
	}
	if len(scores) < 2 {
		return nil
	}
	means, within := stats.EpochMeans(scores)
	var mean, se float64
	var iv stats.Interval
	method := ""
	if clustered {
		mean, se, iv, _ = stats.ClusteredMeanCI(means, clusters, alpha)
		method = "cr1_t"
	} else {
		mean, se = stats.MeanSE(means)
		iv, method = stats.EpochRateCI(means, vs.epochs, alpha)
	}
	if anyNaN(mean, se, iv.Lo, iv.Hi) {
		return nil
	}
	r.Rate, r.SE, r.CIMethod = mean, round6(se), method
	// Rounded outwards, so an interval stays an interval: a lower bound of
	// 0.99996 shows as 0.9999, not as 100%.
	r.CI = [2]float64{math.Floor(max(0, iv.Lo)*1e4) / 1e4, math.Ceil(min(1, iv.Hi)*1e4) / 1e4}
	if vs.epochs <= 1 || keep != nil {
		return nil
	}
	es := &EpochStats{Cases: len(scores)}
	if !anyNaN(within) {
		es.WithinVar = round6(within)
	}
	epochNoise(es, vs, ci.len())
	return es
}
