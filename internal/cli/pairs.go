package cli

import (
	"context"
	"errors"
	"sync"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/scorer"
	"github.com/assay-eval/assay/internal/spec"
	"github.com/assay-eval/assay/internal/store"
)

// scorePairs applies the pairwise judges to one case's results (every
// target and epoch): each candidate against the baseline's result of the
// same epoch. Nothing is returned once ctx is cancelled: a cancelled judge
// call is not a verdict.
func scorePairs(ctx context.Context, set *scorer.Set, c *dataset.Case, group []record.Result) []record.Score {
	if len(set.Pairwise()) == 0 {
		return nil
	}
	scores := set.ScorePairs(ctx, c, group)
	if ctx.Err() != nil {
		return nil
	}
	return scores
}

// scoreRunPairs applies the pairwise judges to every case of a run and
// hands each case's scores to add (called from several goroutines). Cases
// are judged by several workers at once; the judge's own limits bound its
// calls.
func scoreRunPairs(ctx context.Context, st store.Store, set *scorer.Set, cases map[string]*dataset.Case, runID string, workers int, add func([]record.Score)) error {
	groups := make(chan []record.Result, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for g := range groups {
				if scores := scorePairs(ctx, set, cases[g[0].CaseID], g); len(scores) > 0 {
					add(scores)
				}
			}
		}()
	}
	// Results stream in case order, so a case's group is whole when the
	// next case starts.
	var group []record.Result
	send := func() error {
		if len(group) == 0 {
			return nil
		}
		select {
		case groups <- group:
			group = nil
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	err := st.Results(ctx, runID, func(r record.Result) error {
		if len(group) > 0 && group[0].CaseID != r.CaseID {
			if err := send(); err != nil {
				return err
			}
		}
		group = append(group, r)
		return nil
	})
	if err == nil {
		err = send()
	}
	close(groups)
	wg.Wait()
	return err
}

// storePairs runs the pairwise judges over a run and stores their scores
// in the given scoring. A stored verdict is kept, except on the cases in
// redo: there a result was replaced (run --retry-errors), and a verdict
// that compared with its old output, or found no baseline to compare with,
// is overwritten.
func storePairs(ctx context.Context, st store.Store, set *scorer.Set, sp *spec.Spec, runID string, scoring, workers int, redo map[string]bool) error {
	cases, err := casesByID(sp)
	if err != nil {
		return err
	}
	w, wr := newScoreWriter(st), newScoreWriter(st)
	wr.replace = true
	err = scoreRunPairs(ctx, st, set, cases, runID, workers, func(scores []record.Score) {
		for i := range scores {
			scores[i].RunID, scores[i].Scoring = runID, scoring
		}
		if redo[scores[0].CaseID] {
			wr.add(scores)
		} else {
			w.add(scores)
		}
	})
	return errors.Join(err, w.close(ctx), wr.close(ctx))
}

// casesByID reads the spec's dataset into memory by case ID: scoring stored
// results needs each result's case (its vars, expected value and tags).
func casesByID(sp *spec.Spec) (map[string]*dataset.Case, error) {
	cases := map[string]*dataset.Case{}
	err := dataset.Each(sp, func(c *dataset.Case) error { cases[c.ID] = c; return nil })
	return cases, err
}
