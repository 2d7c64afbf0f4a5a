package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store"
)

// Stubs of the core part: delete each stub as its method lands, and this file when it is empty.

var errTodoCore = errors.New("postgres: not implemented yet")

func (d *DB) ResultsWithoutCase(ctx context.Context, runID string) (int, error) {
	return 0, errTodoCore
}

func (d *DB) ScorerNames(ctx context.Context, runID string, scoring int) ([]string, error) {
	return nil, errTodoCore
}

func (d *DB) LatestScoring(ctx context.Context, runID string) (int, error) { return 0, errTodoCore }

func (d *DB) ScoringPending(ctx context.Context, runID string, scoring int) (bool, error) {
	return false, errTodoCore
}

func (d *DB) ScoringScorersHash(ctx context.Context, runID string, scoring int) (string, error) {
	return "", errTodoCore
}

func (d *DB) Twins(ctx context.Context, set string, fn func(record.Twin) error) error {
	return errTodoCore
}

func (d *DB) ReplaceResults(ctx context.Context, results []record.Result, scores []record.Score) error {
	return errTodoCore
}

func (d *DB) PutTwins(ctx context.Context, twins []record.Twin) error { return errTodoCore }

func (d *DB) DeleteRun(ctx context.Context, runID string) (store.Deleted, error) {
	return store.Deleted{}, errTodoCore
}

func (d *DB) ReserveScoring(ctx context.Context, runID string) (int, error) { return 0, errTodoCore }

func (d *DB) CompleteScoring(ctx context.Context, runID string, scoring int) error {
	return errTodoCore
}

func (d *DB) SetScoringScorersHash(ctx context.Context, runID string, scoring int, hash string) error {
	return errTodoCore
}

func (d *DB) AcquireLease(ctx context.Context, l store.Lease, staleBefore time.Time, force bool) error {
	return errTodoCore
}

func (d *DB) RenewLease(ctx context.Context, runID, holder string, now time.Time) error {
	return errTodoCore
}

func (d *DB) ReleaseLease(ctx context.Context, runID, holder string) error { return errTodoCore }

func (d *DB) GetLease(ctx context.Context, runID string) (*store.Lease, error) {
	return nil, errTodoCore
}

func (d *DB) CacheGet(ctx context.Context, key string) ([]byte, bool, error) {
	return nil, false, errTodoCore
}

func (d *DB) CachePut(ctx context.Context, key, target string, response []byte) error {
	return errTodoCore
}

func (d *DB) CacheStats(ctx context.Context, target string, only bool) ([]store.CacheStats, error) {
	return nil, errTodoCore
}

func (d *DB) CacheClear(ctx context.Context, target string, only bool) (int64, error) {
	return 0, errTodoCore
}
