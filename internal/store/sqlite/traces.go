package sqlite

import (
	"context"
	"errors"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store"
)

// errTracesTODO is the stub's answer until the traces tables land.
var errTracesTODO = errors.New("sqlite: traces are not implemented yet")

func (db *DB) PutTraces(ctx context.Context, ts []record.Trace) (int, error) {
	return 0, errTracesTODO
}

func (db *DB) Traces(ctx context.Context, f store.TraceFilter, fn func(*record.Trace) error) error {
	return errTracesTODO
}

func (db *DB) Trace(ctx context.Context, id string) (*record.Trace, error) {
	return nil, errTracesTODO
}

func (db *DB) CountTraces(ctx context.Context, f store.TraceFilter) (int64, error) {
	return 0, errTracesTODO
}

func (db *DB) PutSample(ctx context.Context, sm *record.Sample) error { return errTracesTODO }

func (db *DB) Sample(ctx context.Context, id string) (*record.Sample, error) {
	return nil, errTracesTODO
}

func (db *DB) Samples(ctx context.Context) ([]record.Sample, error) { return nil, errTracesTODO }
