package store

import (
	"context"

	"github.com/assay-eval/assay/internal/record"
)

// Keys streams what sampling and calibration need of a run without its
// outputs: each result's key and whether its call failed, and one
// scorer's verdicts. On a million results these read a few columns of
// an index where Results and Scores read every output and reason.
type Keys interface {
	// ResultKeys streams the key of each of a run's results, in the order
	// of Results, with failed set when the call failed (the result has an
	// ErrorKind). A run with no results, or no such run, streams nothing.
	ResultKeys(ctx context.Context, runID string, fn func(k record.Key, failed bool) error) error
	// Verdicts streams one scorer's verdicts (Score.Pass, and Score.Kind:
	// "" for a pass, the failure kind otherwise, so a judge_error is told
	// from a fail) in one scoring of a run, ordered by case ID, target and
	// epoch. A scorer with no scores in the scoring (or no such scoring or
	// run) streams nothing.
	Verdicts(ctx context.Context, runID string, scoring int, scorer string, fn func(k record.Key, pass bool, kind string) error) error
}
