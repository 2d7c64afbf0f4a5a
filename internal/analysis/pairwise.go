package analysis

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/assay-eval/assay/internal/stats"
	"github.com/assay-eval/assay/internal/store"
)

// Pairwise judges' verdict kinds (the scorer package's KindTie and
// KindWorseThanBaseline; a pass is a win).
const (
	pairTieKind  = "tie"
	pairLossKind = "worse_than_baseline"
)

// Pairwise is a pairwise judge's verdicts on one target against its
// baseline target: wins (better in both orders), ties (a tie, or verdicts
// that follow the order) and losses (worse in both orders). A tie is not
// a failure: it is counted apart. Verdicts the judge could not give
// (judge errors, no baseline output) are Undecided and in no rate.
type Pairwise struct {
	Scorer   string `json:"scorer"`
	Baseline string `json:"baseline"`
	Wins     int    `json:"wins"`
	Ties     int    `json:"ties"`
	Losses   int    `json:"losses"`
	// N is wins + ties + losses: the decided comparisons.
	N         int `json:"n"`
	Undecided int `json:"undecided"`
	// WinRate and LossRate are shares of N with Wilson intervals.
	WinRate  float64    `json:"win_rate"`
	WinCI    [2]float64 `json:"win_ci"`
	TieRate  float64    `json:"tie_rate"`
	LossRate float64    `json:"loss_rate"`
	LossCI   [2]float64 `json:"loss_ci"`
	// Net is (wins − losses)/N, the candidate's lead over the baseline,
	// with Tango's score interval for a paired difference (a win is a case
	// only the candidate "passes", a loss one only the baseline does, a
	// tie both or neither) and the McNemar score test's two-sided p-value
	// of no lead.
	Net       float64    `json:"net"`
	NetCI     [2]float64 `json:"net_ci"`
	NetPValue float64    `json:"net_p_value"`
	// Results says the intervals count each judged result as one
	// observation: with epochs > 1 a case's repeats are not independent
	// and the intervals are too narrow.
	Results bool `json:"per_result,omitempty"`
}

// pairwiseJudges returns the pairwise judge scorers of a run's spec and
// their baseline targets, in spec order.
func pairwiseJudges(config []byte) [][2]string {
	var sp struct {
		Scorers []struct {
			Name     string `json:"name"`
			Type     string `json:"type"`
			Mode     string `json:"mode"`
			Baseline string `json:"baseline"`
		} `json:"scorers"`
	}
	if len(config) == 0 || json.Unmarshal(config, &sp) != nil {
		return nil
	}
	var out [][2]string
	for _, s := range sp.Scorers {
		if s.Type == "judge" && s.Mode == "pairwise" {
			out = append(out, [2]string{s.Name, s.Baseline})
		}
	}
	return out
}

// addPairwise tallies every pairwise judge's wins, ties and losses per
// target and puts them on the report's targets.
func addPairwise(ctx context.Context, st store.Store, run *store.Run, scoring int, rep *Report, alpha float64) error {
	judges := pairwiseJudges(run.Config)
	if len(judges) == 0 || scoring == 0 {
		return nil
	}
	baseline := map[string]string{}
	for _, j := range judges {
		baseline[j[0]] = j[1]
	}
	type key struct{ target, scorer string }
	tally := map[key]*Pairwise{}
	err := st.Scores(ctx, run.ID, scoring, func(s store.Score) error {
		b, ok := baseline[s.Scorer]
		if !ok {
			return nil
		}
		k := key{s.Target, s.Scorer}
		p := tally[k]
		if p == nil {
			p = &Pairwise{Scorer: s.Scorer, Baseline: b}
			tally[k] = p
		}
		switch {
		case s.Pass:
			p.Wins++
		case s.Kind == pairTieKind:
			p.Ties++
		case s.Kind == pairLossKind:
			p.Losses++
		default:
			p.Undecided++
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("reading pairwise verdicts: %w", err)
	}
	for i := range rep.Targets {
		t := &rep.Targets[i]
		for _, j := range judges {
			p := tally[key{t.Name, j[0]}]
			if p == nil {
				continue
			}
			p.finish(alpha)
			p.Results = run.Epochs > 1
			t.Pairwise = append(t.Pairwise, *p)
		}
	}
	return nil
}

// finish computes the rates and intervals from the counts.
func (p *Pairwise) finish(alpha float64) {
	p.N = p.Wins + p.Ties + p.Losses
	if p.N == 0 {
		return
	}
	n := float64(p.N)
	p.WinRate, p.TieRate, p.LossRate = float64(p.Wins)/n, float64(p.Ties)/n, float64(p.Losses)/n
	w, l := stats.Wilson(p.Wins, p.N, alpha), stats.Wilson(p.Losses, p.N, alpha)
	p.WinCI, p.LossCI = [2]float64{w.Lo, w.Hi}, [2]float64{l.Lo, l.Hi}
	p.Net = float64(p.Wins-p.Losses) / n
	// Ties are concordant pairs: split them between both and neither, which
	// the score test and Tango's interval treat alike.
	t := stats.PairTable{AOnly: p.Wins, BOnly: p.Losses, Both: p.Ties}
	ci := stats.TangoInterval(t, alpha)
	p.NetCI = [2]float64{ci.Lo, ci.Hi}
	p.NetPValue = 1
	if q, err := stats.PairedBinaryTable(t, alpha); err == nil {
		p.NetPValue = q.PValue
	}
}
