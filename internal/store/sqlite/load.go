package sqlite

import (
	"context"
	"errors"

	"github.com/assay-eval/assay/internal/record"
)

var errLoadNotYet = errors.New("load tests are not stored yet")

// PutLoadSteps implements store.Loads.
func (d *DB) PutLoadSteps(ctx context.Context, steps []record.LoadStep) error { return errLoadNotYet }

// PutLoadRequests implements store.Loads.
func (d *DB) PutLoadRequests(ctx context.Context, reqs []record.LoadRequest) error {
	return errLoadNotYet
}

// LoadSteps implements store.Loads.
func (d *DB) LoadSteps(ctx context.Context, runID string, fn func(record.LoadStep) error) error {
	return errLoadNotYet
}

// LoadRequests implements store.Loads.
func (d *DB) LoadRequests(ctx context.Context, runID string, fn func(record.LoadRequest) error) error {
	return errLoadNotYet
}
