package analysis

import (
	"github.com/assay-eval/assay/internal/stats"
)

// clusterTag is the tag that groups related cases (several questions about
// one document, turns of one conversation): their results are not
// independent, so the standard error is clustered (Miller 2024).
const clusterTag = "cluster"

// primaryInterval replaces the Wilson interval of the primary rate when the
// cases are not independent draws of one pass/fail each:
//   - with several epochs, each case's epochs are averaged first and the
//     standard error is taken across cases (the epochs of one case are not
//     independent evidence);
//   - when cases carry a cluster tag, the standard error is clustered.
//
// It returns the epoch summary (nil with one epoch).
func primaryInterval(r *Rate, vs *verdicts, ci *caseIndex, alpha float64) *EpochStats {
	if vs == nil {
		return nil
	}
	clusterKey, clustered := ci.keyOf[clusterTag]
	if vs.epochs <= 1 && !clustered {
		return nil
	}
	var scores [][]float64
	var clusters []string
	for i := range ci.len() {
		if (i+1)*vs.epochs > len(vs.v) {
			break
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
			cl := ""
			if v := ci.tagOf[clusterKey][i]; v >= 0 {
				cl = ci.vals[clusterKey][v]
			}
			clusters = append(clusters, cl)
		}
	}
	if len(scores) < 2 {
		return nil
	}
	means, within := stats.EpochMeans(scores)
	var mean, se float64
	if clustered {
		mean, se = stats.ClusteredMeanSE(means, clusters)
		r.CIMethod = "clustered_se"
	} else {
		mean, se = stats.MeanSE(means)
		r.CIMethod = "epoch_mean_se"
	}
	if anyNaN(mean, se) {
		return nil
	}
	ci95 := stats.NormalCI(mean, se, alpha)
	r.Rate, r.SE = mean, round6(se)
	r.CI = [2]float64{round4(max(0, ci95.Lo)), round4(min(1, ci95.Hi))}
	if vs.epochs <= 1 {
		return nil
	}
	es := &EpochStats{Cases: len(scores)}
	if !anyNaN(within) {
		es.WithinVar = round6(within)
	}
	epochNoise(es, vs, ci.len())
	return es
}
