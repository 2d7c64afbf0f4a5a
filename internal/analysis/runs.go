package analysis

import (
	"context"
	"fmt"
	"slices"

	"github.com/assay-eval/assay/internal/stats"
	"github.com/assay-eval/assay/internal/store"
)

// RunComparison compares the same targets across two runs (before and after
// a prompt, parser or model change), paired by case and epoch.
type RunComparison struct {
	Before RunInfo `json:"before"`
	After  RunInfo `json:"after"`
	// Comparisons have A = the target in the after run, B = the same target
	// in the before run: Delta > 0 means the change helped.
	Comparisons []Comparison `json:"comparisons"`
	// Only lists targets present in one run only (not compared).
	Only     []string `json:"only_in_one_run,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
}

// CompareRuns pairs every target the two runs share, on the primary scorer
// of each run's latest scoring. p-values are Holm-adjusted over the targets.
func CompareRuns(ctx context.Context, st store.Store, before, after *store.Run, o Options) (*RunComparison, error) {
	if o.Alpha == 0 {
		o.Alpha = 0.05
	}
	if o.Margin == 0 {
		o.Margin = stats.DefaultEquivalenceMargin
	}
	ci := newCaseIndex()
	if err := st.Cases(ctx, after.ID, func(c store.Case) error {
		ci.add(c.ID, c.Tags)
		return nil
	}); err != nil {
		return nil, err
	}
	pb, sb, err := primaryPasses(ctx, st, before, ci)
	if err != nil {
		return nil, err
	}
	pa, sa, err := primaryPasses(ctx, st, after, ci)
	if err != nil {
		return nil, err
	}
	rc := &RunComparison{Before: runInfo(before, 0), After: runInfo(after, 0)}
	if before.DatasetHash != after.DatasetHash {
		rc.Warnings = append(rc.Warnings, "the runs measured different datasets: only cases with the same ID in both are paired")
	}
	if sa != sb {
		rc.Warnings = append(rc.Warnings, fmt.Sprintf("the primary scorer differs (%q before, %q after): the comparison mixes two definitions of correct", sb, sa))
	}
	var ps []float64
	for _, name := range after.Targets {
		if !slices.Contains(before.Targets, name) {
			rc.Only = append(rc.Only, name)
			continue
		}
		c, ok := pairDense(pa[name], pb[name], ci, o.Alpha, o.Margin)
		if !ok {
			rc.Warnings = append(rc.Warnings, fmt.Sprintf("target %s shares no scored case between the runs", name))
			continue
		}
		c.A, c.B, c.Scorer = name+"@"+after.ID, name+"@"+before.ID, sa
		for _, byValue := range c.Slices {
			for v, sc := range byValue {
				sc.A, sc.B, sc.Scorer = c.A, c.B, sa
				byValue[v] = sc
			}
		}
		rc.Comparisons = append(rc.Comparisons, c)
		ps = append(ps, c.PValue)
	}
	for _, name := range before.Targets {
		if !slices.Contains(after.Targets, name) {
			rc.Only = append(rc.Only, name)
		}
	}
	adj := stats.Holm(ps)
	for i := range rc.Comparisons {
		c := &rc.Comparisons[i]
		c.PAdjusted = adj[i]
		c.Verdict = stats.Verdict(c.Delta, stats.Interval{Lo: c.CI[0], Hi: c.CI[1]}, adj[i], o.Alpha, o.Margin)
	}
	return rc, nil
}

// primaryPasses reads the primary verdicts of a run's latest scoring.
func primaryPasses(ctx context.Context, st store.Store, run *store.Run, ci *caseIndex) (map[string]*verdicts, string, error) {
	scoring, err := st.LatestScoring(ctx, run.ID)
	if err != nil {
		return nil, "", err
	}
	out := map[string]*verdicts{}
	scorer := ""
	err = st.Scores(ctx, run.ID, scoring, func(s store.Score) error {
		if !s.Primary {
			return nil
		}
		scorer = s.Scorer
		if out[s.Target] == nil {
			out[s.Target] = newVerdicts(run.Epochs)
		}
		out[s.Target].set(ci.add(s.CaseID, nil), s.Epoch, s.Pass)
		return nil
	})
	return out, scorer, err
}
