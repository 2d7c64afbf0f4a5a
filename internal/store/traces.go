package store

import (
	"context"
	"errors"
	"time"

	"github.com/assay-eval/assay/internal/record"
)

// ErrSampleExists is PutSample's answer when a sample of that ID is stored.
var ErrSampleExists = errors.New("a sample of that ID already exists")

// TraceFilter selects stored traces. Zero fields select everything.
type TraceFilter struct {
	// Since and Until bound the traces' times, [Since, Until). A trace
	// without a time (the zero time) is in no bounded window.
	Since, Until time.Time
	// Model, when set, is the trace's model exactly.
	Model string
	// IDs, when not nil, are the only traces wanted (an empty, non-nil
	// list selects none).
	IDs []string
}

// Traces is what a store keeps of production traffic: traces and the
// samples drawn from them.
type Traces interface {
	// PutTraces stores traces in one transaction. A trace whose ID is
	// already stored is skipped, not replaced, so receiving or ingesting
	// it again stores nothing twice (of one ID twice in ts, the first is
	// kept). A trace without a Received time is stamped with the store's
	// clock. It returns how many were new.
	PutTraces(ctx context.Context, ts []record.Trace) (int, error)
	// Traces streams the traces the filter selects, ordered by time then
	// ID (traces without a time first). fn may call the store.
	Traces(ctx context.Context, f TraceFilter, fn func(*record.Trace) error) error
	// Trace returns one trace; an error wrapping ErrNotFound when there is
	// none.
	Trace(ctx context.Context, id string) (*record.Trace, error)
	// CountTraces counts the traces the filter selects.
	CountTraces(ctx context.Context, f TraceFilter) (int64, error)

	// PutSample stores a sample with its strata and items (one
	// transaction); ErrSampleExists when its ID is taken.
	PutSample(ctx context.Context, s *record.Sample) error
	// Sample returns a sample with its items in draw order; an error
	// wrapping ErrNotFound when there is none.
	Sample(ctx context.Context, id string) (*record.Sample, error)
	// Samples lists the stored samples (without their items), oldest
	// first.
	Samples(ctx context.Context) ([]record.Sample, error)
}
