package analysis

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/stats"
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
	// With epochs > 1 each case's epochs are averaged first (a case's
	// repeats are not independent evidence): the rates get
	// stats.EpochRateCI and the net lead the paired t over cases.
	cases map[string]*pairCase // per case, with epochs > 1
}

// pairCase counts one case's decided pairwise verdicts over its epochs.
type pairCase struct{ wins, losses, decided int }

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
func addPairwise(ctx context.Context, st record.Reader, run *record.Run, scoring int, rep *Report, alpha float64) error {
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
	err := st.Scores(ctx, run.ID, scoring, func(s record.Score) error {
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
		var c *pairCase
		if run.Epochs > 1 {
			if p.cases == nil {
				p.cases = map[string]*pairCase{}
			}
			if c = p.cases[s.CaseID]; c == nil {
				c = &pairCase{}
				p.cases[s.CaseID] = c
			}
		}
		decided := true
		switch {
		case s.Pass:
			p.Wins++
			if c != nil {
				c.wins++
			}
		case s.Kind == pairTieKind:
			p.Ties++
		case s.Kind == pairLossKind:
			p.Losses++
			if c != nil {
				c.losses++
			}
		default:
			p.Undecided++
			decided = false
		}
		if c != nil && decided {
			c.decided++
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
			p.finish(alpha, run.Epochs)
			t.Pairwise = append(t.Pairwise, *p)
		}
	}
	return nil
}

// finish computes the rates and intervals from the counts; with epochs >
// 1, the intervals from each case's epochs averaged (see Results).
func (p *Pairwise) finish(alpha float64, epochs int) {
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
	if epochs > 1 && len(p.cases) > 0 {
		p.epochIntervals(alpha, epochs)
	}
}

// epochIntervals replaces the per-result intervals by per-case ones: each
// case's share of wins and of losses over its decided epochs; the win and
// loss rates get stats.EpochRateCI, the net lead the paired t on the
// per-case (win − loss) means. Cases are taken in ID order.
func (p *Pairwise) epochIntervals(alpha float64, epochs int) {
	ids := make([]string, 0, len(p.cases))
	for id, c := range p.cases {
		if c.decided > 0 {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	if len(ids) < 2 {
		return
	}
	wins, losses := make([]float64, len(ids)), make([]float64, len(ids))
	for i, id := range ids {
		c := p.cases[id]
		wins[i] = float64(c.wins) / float64(c.decided)
		losses[i] = float64(c.losses) / float64(c.decided)
	}
	if w, _ := stats.EpochRateCI(wins, epochs, alpha); !anyNaN(w.Lo, w.Hi) {
		p.WinCI = [2]float64{w.Lo, w.Hi}
	}
	if l, _ := stats.EpochRateCI(losses, epochs, alpha); !anyNaN(l.Lo, l.Hi) {
		p.LossCI = [2]float64{l.Lo, l.Hi}
	}
	if q, err := stats.PairedMeans(wins, losses, alpha); err == nil && !anyNaN(q.CI.Lo, q.CI.Hi, q.PValue) {
		p.NetCI = [2]float64{math.Max(-1, q.CI.Lo), math.Min(1, q.CI.Hi)}
		p.NetPValue = q.PValue
	}
}
