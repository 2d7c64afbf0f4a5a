package engine

import (
	"context"
	"fmt"
	"slices"

	"github.com/assay-eval/assay/internal/record"
)

// RetrySet reads a run's stored results and returns the keys of those that
// failed with one of kinds, each with its Retries so far.
func RetrySet(ctx context.Context, rd record.Reader, runID string, kinds []string) (map[record.Key]int, error) {
	retry := map[record.Key]int{}
	err := rd.Results(ctx, runID, func(r record.Result) error {
		if r.ErrorKind != "" && slices.Contains(kinds, r.ErrorKind) {
			retry[r.Key()] = r.Retries
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the failed results of run %s: %w", runID, err)
	}
	return retry, nil
}
