package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/runner"
	"github.com/assay-eval/assay/internal/scorer"
	"github.com/assay-eval/assay/internal/task"
)

// RescoreOptions describe a rescore.
type RescoreOptions struct {
	// NoCache calls every judge anew, storing the fresh verdicts.
	NoCache bool
	// Workers is how many results are scored at once (default 8).
	Workers int
	// Stop, when closed, stops handing out results; the judge calls in
	// flight finish and are stored (cancel Rescore's context to abort
	// them).
	Stop <-chan struct{}
}

// Scoring is what a rescore did.
type Scoring struct {
	RunID   string
	Scoring int
	// Results is how many stored results were scored.
	Results int
	// Scorers counts each scorer's verdicts; Names lists the scorers in
	// the spec's order.
	Scorers map[string]ScorerCount
	Names   []string
	// JudgeCostUSD is the judges' spend; JudgeSavedUSD what the verdicts
	// served from the response cache would have cost.
	JudgeCostUSD, JudgeSavedUSD float64
	// Interrupted: stopped before every result was scored; the scoring
	// stays pending and is never read.
	Interrupted bool
}

// ScorerCount is one scorer's verdicts in a scoring.
type ScorerCount struct {
	Passed, N int
	// JudgeErrors counts a judge scorer's verdicts that failed.
	JudgeErrors int
}

// Rescore re-applies t's scorers to the outputs run stored, as a new
// scoring of the run, calling no candidate (judges go through the response
// cache). The scoring is reserved (pending) in one write transaction, so
// two rescores at once get distinct numbers, and completed only after
// every score is stored: a rescore killed or stopped halfway leaves a
// pending scoring that report, gate and baseline export never read. A run
// whose lease a live writer holds, or whose dataset changed, is refused.
func (e *Engine) Rescore(ctx context.Context, run *record.Run, t *task.Task, o RescoreOptions) (Scoring, error) {
	if d := DatasetChanged(run, t.Dataset); d != "" {
		return Scoring{}, fmt.Errorf("rescore %s: the dataset changed since the run (%s); scores must be of the cases the run measured",
			run.ID, d)
	}
	var closers Closers
	defer closers.Close()
	set, err := e.Scorers(t.Spec, o.NoCache, &closers)
	if err != nil {
		return Scoring{}, err
	}
	cases, err := DatasetCases(t, 0).byID()
	if err != nil {
		return Scoring{}, err
	}
	// Bookkeeping reads and writes go on after an interrupt.
	bctx := context.WithoutCancel(ctx)
	if err := e.RequireNoWriter(bctx, "rescore "+run.ID, run); err != nil {
		return Scoring{}, err
	}
	scoring, err := e.Store.ReserveScoring(bctx, run.ID)
	if err != nil {
		return Scoring{}, fmt.Errorf("rescore %s: %w", run.ID, err)
	}
	// The report of a rescored run names the definition of correct it read.
	if err := e.Store.SetScoringScorersHash(bctx, run.ID, scoring, t.Spec.ScorersHash()); err != nil {
		return Scoring{}, fmt.Errorf("rescore %s: %w", run.ID, err)
	}

	sum := Scoring{RunID: run.ID, Scoring: scoring, Scorers: map[string]ScorerCount{}, Names: set.Names()}
	var mu sync.Mutex
	w := e.scoreWriter(false)
	keep := func(scores []record.Score) {
		mu.Lock()
		for i := range scores {
			s := &scores[i]
			s.RunID, s.Scoring = run.ID, scoring
			c := sum.Scorers[s.Scorer]
			c.N++
			if s.Pass {
				c.Passed++
			}
			if s.Kind == scorer.KindJudgeError {
				c.JudgeErrors++
			}
			sum.Scorers[s.Scorer] = c
			sum.JudgeCostUSD += s.JudgeCost
			sum.JudgeSavedUSD += s.JudgeSaved
		}
		mu.Unlock()
		w.Add(scores...)
	}

	pool := runner.Pool[record.Result]{Workers: o.Workers, Stop: o.Stop}
	err = pool.Run(ctx, func(send func(record.Result) error) error {
		return e.Store.Results(bctx, run.ID, func(r record.Result) error {
			if cases[r.CaseID] == nil {
				return fmt.Errorf("result for case %q, which the dataset does not have", r.CaseID)
			}
			if err := send(r); err != nil {
				return err
			}
			sum.Results++
			return nil
		})
	}, func(r record.Result) {
		keep(set.Score(ctx, cases[r.CaseID], &r))
	})
	interrupted := errors.Is(err, runner.ErrStopped)
	if interrupted {
		err = nil
	}
	if err == nil && !interrupted && len(set.Pairwise()) > 0 {
		err = judgePairs(ctx, e.Store, set, cases, run.ID, o.Workers, keep)
	}
	if err == nil && ctx.Err() != nil {
		interrupted, err = true, nil // a second Ctrl-C: the calls in flight were dropped
	}
	werr := w.Close()
	if err == nil && interrupted {
		if werr != nil {
			return sum, fmt.Errorf("rescore %s: %w", run.ID, werr)
		}
		sum.Interrupted = true
		return sum, nil
	}
	if err == nil {
		err = werr
	}
	if err == nil {
		err = e.Store.CompleteScoring(bctx, run.ID, scoring)
	}
	if err != nil {
		return sum, fmt.Errorf("rescore %s: %w (scoring %d stays pending; reports keep using the previous scoring)", run.ID, err, scoring)
	}
	return sum, nil
}
