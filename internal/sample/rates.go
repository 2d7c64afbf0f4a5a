package sample

import (
	"fmt"
	"slices"

	"github.com/assay-eval/assay/internal/stats"
)

// AllModels is the Model of the rates over every model's traces.
const AllModels = "(all)"

// Verdict is one scorer's verdict on one sampled trace, with the trace's
// model, stratum and weight.
type Verdict struct {
	Model   string
	Scorer  string
	Stratum string
	Weight  float64
	Pass    bool
}

// Rates estimates each model × scorer pass rate over the sample's
// population (stats.WeightedMean: the weighted rate, its linearised
// standard error with the strata's finite population corrections, and
// Wilson's interval on the effective sample size at level), beside the
// plain share of sampled traces that passed. Rows follow the models' and
// scorers' order; with more than one model, a row per scorer over every
// model (AllModels) follows. A model's rate treats its traces in each
// stratum as that stratum's draws: exact when the sample is stratified by
// model (each stratum holds one model), an approximation (the draws per
// model taken as fixed) when strata mix models.
func Rates(vs []Verdict, models, scorers []string, level float64) ([]Estimate, error) {
	type cell struct{ model, scorer string }
	obs := map[cell][]stats.Observation{}
	for _, v := range vs {
		y := 0.0
		if v.Pass {
			y = 1
		}
		o := stats.Observation{Stratum: v.Stratum, Weight: v.Weight, Y: y}
		obs[cell{v.Model, v.Scorer}] = append(obs[cell{v.Model, v.Scorer}], o)
		if len(models) > 1 {
			obs[cell{AllModels, v.Scorer}] = append(obs[cell{AllModels, v.Scorer}], o)
		}
	}
	rows := slices.Clone(models)
	if len(models) > 1 {
		rows = append(rows, AllModels)
	}
	var out []Estimate
	for _, m := range rows {
		for _, sc := range scorers {
			os := obs[cell{m, sc}]
			if len(os) == 0 {
				continue
			}
			e, err := stats.WeightedMean(os, 1-level)
			if err != nil {
				return nil, fmt.Errorf("%s × %s: %w", m, sc, err)
			}
			passed := 0.0
			for _, o := range os {
				passed += o.Y
			}
			out = append(out, Estimate{
				Model: m, Scorer: sc, N: e.N, Population: e.Population,
				Rate: e.Mean, SE: e.SE, Lo: e.CI.Lo, Hi: e.CI.Hi,
				Unweighted: passed / float64(e.N),
			})
		}
	}
	return out, nil
}
