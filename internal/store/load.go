package store

import (
	"context"

	"github.com/assay-eval/assay/internal/record"
)

// Loads is what a store keeps of load tests: a load test is a run of kind
// record.KindLoad, its steps (one per target × step) and its requests (one
// per request made). Both are written in batches as the test goes, so an
// interrupted test keeps what it measured.
type Loads interface {
	// PutLoadSteps stores steps in one transaction; a step already stored
	// (same run, target and step) is replaced, so a step recorded when it
	// started can be completed when it ends. The run must exist.
	PutLoadSteps(ctx context.Context, steps []record.LoadStep) error
	// PutLoadRequests stores requests in one transaction; a request
	// already stored (same run, target, step and seq) is an error. The
	// run must exist.
	PutLoadRequests(ctx context.Context, reqs []record.LoadRequest) error
	// LoadSteps streams a run's steps ordered by target, then step.
	LoadSteps(ctx context.Context, runID string, fn func(record.LoadStep) error) error
	// LoadRequests streams a run's requests ordered by target, step, seq.
	LoadRequests(ctx context.Context, runID string, fn func(record.LoadRequest) error) error
}
