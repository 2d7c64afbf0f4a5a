package analysis

import (
	"sort"

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
func primaryInterval(r *Rate, pass map[CaseKey]bool, tags map[string]map[string]string, alpha float64) *EpochStats {
	byCase := map[string][]float64{}
	epochs := 0
	for k, p := range pass {
		byCase[k.CaseID] = append(byCase[k.CaseID], b2f(p))
		epochs = max(epochs, k.Epoch)
	}
	clustered := false
	for id := range byCase {
		if tags[id][clusterTag] != "" {
			clustered = true
			break
		}
	}
	if (epochs <= 1 && !clustered) || len(byCase) < 2 {
		return nil
	}
	ids := make([]string, 0, len(byCase))
	for id := range byCase {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	scores := make([][]float64, len(ids))
	clusters := make([]string, len(ids))
	for i, id := range ids {
		scores[i] = byCase[id]
		clusters[i] = tags[id][clusterTag]
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
	ci := stats.NormalCI(mean, se, alpha)
	r.Rate, r.SE = mean, round6(se)
	r.CI = [2]float64{round4(max(0, ci.Lo)), round4(min(1, ci.Hi))}
	if epochs <= 1 {
		return nil
	}
	es := &EpochStats{Cases: len(ids)}
	if !anyNaN(within) {
		es.WithinVar = round6(within)
	}
	return es
}
