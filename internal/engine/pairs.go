package engine

import (
	"context"
	"errors"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/runner"
	"github.com/assay-eval/assay/internal/scorer"
)

// judgePairs applies the pairwise judges to every case of a run and hands
// each case's scores to add (called from several goroutines): each
// candidate against the baseline's result of the same epoch. Cases are
// judged by the pool's workers at once; the judge's own limits bound its
// calls. Nothing is handed on once ctx is cancelled: a cancelled judge
// call is not a verdict.
func judgePairs(ctx context.Context, rd record.Reader, set *scorer.Set, cases map[string]*dataset.Case, runID string, workers int, add func([]record.Score)) error {
	if len(set.Pairwise()) == 0 {
		return nil
	}
	pool := runner.Pool[[]record.Result]{Workers: workers}
	return pool.Run(ctx, func(send func([]record.Result) error) error {
		// Results stream in case order, so a case's group is whole when
		// the next case starts.
		var group []record.Result
		err := rd.Results(ctx, runID, func(r record.Result) error {
			if len(group) > 0 && group[0].CaseID != r.CaseID {
				if err := send(group); err != nil {
					return err
				}
				group = nil
			}
			group = append(group, r)
			return nil
		})
		if err == nil && len(group) > 0 {
			err = send(group)
		}
		return err
	}, func(g []record.Result) {
		scores := set.ScorePairs(ctx, cases[g[0].CaseID], g)
		if ctx.Err() == nil && len(scores) > 0 {
			add(scores)
		}
	})
}

// scoreWriter is the batched writer for scores of one scoring: stored with
// PutScores, or with ReplaceScores when replace is set.
func (e *Engine) scoreWriter(replace bool) *runner.Writer[record.Score] {
	commit := e.Store.PutScores
	if replace {
		commit = e.Store.ReplaceScores
	}
	return runner.StartWriter(runner.WriterOptions[record.Score]{Commit: commit, What: "scores", Batch: 1024})
}

// storePairs runs the pairwise judges over a run and stores their scores
// in the given scoring. A stored verdict is kept, except on the cases in
// redo: there a result was replaced (run --retry-errors), and a verdict
// that compared with its old output, or found no baseline to compare with,
// is overwritten.
func (e *Engine) storePairs(ctx context.Context, set *scorer.Set, cases Cases, runID string, scoring, workers int, redo map[string]bool) error {
	byID, err := cases.byID()
	if err != nil {
		return err
	}
	w, wr := e.scoreWriter(false), e.scoreWriter(true)
	err = judgePairs(ctx, e.Store, set, byID, runID, workers, func(scores []record.Score) {
		for i := range scores {
			scores[i].RunID, scores[i].Scoring = runID, scoring
		}
		if redo[scores[0].CaseID] {
			wr.Add(scores...)
		} else {
			w.Add(scores...)
		}
	})
	return errors.Join(err, w.Close(), wr.Close())
}
