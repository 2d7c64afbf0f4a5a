package postgres

import (
	"context"
	"errors"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store"
)

// Stubs of the labels part: delete each stub as its method lands, and this file when it is empty.

var errTodoLabels = errors.New("postgres: not implemented yet")

func (d *DB) CreateQueue(ctx context.Context, q *record.Queue) error { return errTodoLabels }

func (d *DB) Queue(ctx context.Context, runID, name string) (*record.Queue, error) {
	return nil, errTodoLabels
}

func (d *DB) Queues(ctx context.Context, runID string) ([]store.QueueProgress, error) {
	return nil, errTodoLabels
}

func (d *DB) PutLabels(ctx context.Context, labels []record.Label) (int, error) {
	return 0, errTodoLabels
}

func (d *DB) UndoLabel(ctx context.Context, runID, queue, labeler string) (*record.Label, error) {
	return nil, errTodoLabels
}

func (d *DB) Labels(ctx context.Context, runID string, fn func(record.Label) error) error {
	return errTodoLabels
}

func (d *DB) PutTraces(ctx context.Context, ts []record.Trace) (int, error) { return 0, errTodoLabels }

func (d *DB) Traces(ctx context.Context, f store.TraceFilter, fn func(*record.Trace) error) error {
	return errTodoLabels
}

func (d *DB) Trace(ctx context.Context, id string) (*record.Trace, error) { return nil, errTodoLabels }

func (d *DB) CountTraces(ctx context.Context, f store.TraceFilter) (int64, error) {
	return 0, errTodoLabels
}

func (d *DB) PutSample(ctx context.Context, s *record.Sample) error { return errTodoLabels }

func (d *DB) Sample(ctx context.Context, id string) (*record.Sample, error) {
	return nil, errTodoLabels
}

func (d *DB) Samples(ctx context.Context) ([]record.Sample, error) { return nil, errTodoLabels }

func (d *DB) PutLoadSteps(ctx context.Context, steps []record.LoadStep) error { return errTodoLabels }

func (d *DB) PutLoadRequests(ctx context.Context, reqs []record.LoadRequest) error {
	return errTodoLabels
}

func (d *DB) LoadSteps(ctx context.Context, runID string, fn func(record.LoadStep) error) error {
	return errTodoLabels
}

func (d *DB) LoadRequests(ctx context.Context, runID string, fn func(record.LoadRequest) error) error {
	return errTodoLabels
}
