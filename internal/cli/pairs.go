package cli

import (
	"context"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/scorer"
	"github.com/assay-eval/assay/internal/store"
)

// scorePairs applies the pairwise judges to one case's results (every
// target and epoch): each candidate against the baseline's result of the
// same epoch. Nothing is returned once ctx is cancelled: a cancelled judge
// call is not a verdict.
func scorePairs(ctx context.Context, set *scorer.Set, c *dataset.Case, group []store.Result) []store.Score {
	if len(set.Pairwise()) == 0 {
		return nil
	}
	scores := set.ScorePairs(ctx, c, group)
	if ctx.Err() != nil {
		return nil
	}
	return scores
}
