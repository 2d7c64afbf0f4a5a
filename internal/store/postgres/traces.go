package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store"
)

// traceColumns are a trace's columns in the order of insertTraces' arrays
// and scanTrace's Scan.
const traceColumns = `id, trace_id, span_id, source, time, latency_ms, operation, provider,
	model, response_model, input_tokens, output_tokens, cost_usd, priced, system,
	input, output, finish_reason, error_type, attributes, resource, redactions, received`

// insertTraces stores a batch of traces in one statement: one array per
// column, zipped by unnest, so a batch of any size is one round trip with
// 23 bound values. ON CONFLICT on the key only skips a stored ID (it does
// not swallow NOT NULL or type errors).
const insertTraces = `INSERT INTO traces (` + traceColumns + `)
	SELECT * FROM unnest($1::bytea[], $2::bytea[], $3::bytea[], $4::bytea[], $5::bigint[], $6::float8[], $7::bytea[], $8::bytea[],
		$9::bytea[], $10::bytea[], $11::bigint[], $12::bigint[], $13::float8[], $14::boolean[], $15::bytea[],
		$16::bytea[], $17::bytea[], $18::bytea[], $19::bytea[], $20::bytea[], $21::bytea[], $22::bigint[], $23::bigint[])
	ON CONFLICT (id) DO NOTHING`

// traceArrays are a batch of traces column by column, insertTraces'
// arguments.
type traceArrays struct {
	id, traceID, spanID, source                    [][]byte
	tm                                             []*int64
	latency                                        []float64
	operation, provider, model, responseModel      [][]byte
	inputTokens, outputTokens                      []int64
	cost                                           []float64
	priced                                         []bool
	system, input, output, finishReason, errorType [][]byte
	attributes, resource                           [][]byte
	redactions                                     []int64
	received                                       []*int64
}

func (a *traceArrays) args() []any {
	return []any{a.id, a.traceID, a.spanID, a.source, a.tm, a.latency, a.operation, a.provider,
		a.model, a.responseModel, a.inputTokens, a.outputTokens, a.cost, a.priced, a.system,
		a.input, a.output, a.finishReason, a.errorType, a.attributes, a.resource, a.redactions, a.received}
}

// PutTraces implements store.Traces: one transaction, one statement that
// skips stored IDs. Of traces with one ID in the call, the first is kept
// (the others are dropped before the statement, as SQLite's row-by-row
// insert skips them). A trace with no Received time is stamped with the
// store's clock. A trace the store cannot hold (no ID, a NaN, attributes
// or resource that are not JSON) fails the whole call, which stores
// nothing.
func (d *DB) PutTraces(ctx context.Context, ts []record.Trace) (int, error) {
	if len(ts) == 0 {
		return 0, nil
	}
	var a traceArrays
	var received *int64
	var seen map[string]bool
	if len(ts) > 1 {
		seen = make(map[string]bool, len(ts))
	}
	for i := range ts {
		t := &ts[i]
		if err := checkTrace(t); err != nil {
			return 0, fmt.Errorf("storing traces: trace %d of %d: %w", i+1, len(ts), err)
		}
		in, err := encodeMessages(t.Input)
		if err != nil {
			return 0, fmt.Errorf("storing traces: trace %q: input: %w", t.ID, err)
		}
		out, err := encodeMessages(t.Output)
		if err != nil {
			return 0, fmt.Errorf("storing traces: trace %q: output: %w", t.ID, err)
		}
		if seen != nil {
			if seen[t.ID] {
				continue
			}
			seen[t.ID] = true
		}
		rec := microsPtr(t.Received)
		if rec == nil {
			if received == nil {
				received = microsPtr(d.now())
			}
			rec = received
		}
		a.id = append(a.id, b(t.ID))
		a.traceID = append(a.traceID, b(t.TraceID))
		a.spanID = append(a.spanID, b(t.SpanID))
		a.source = append(a.source, b(t.Source))
		a.tm = append(a.tm, microsPtr(t.Time))
		a.latency = append(a.latency, t.LatencyMS)
		a.operation = append(a.operation, b(t.Operation))
		a.provider = append(a.provider, b(t.Provider))
		a.model = append(a.model, b(t.Model))
		a.responseModel = append(a.responseModel, b(t.ResponseModel))
		a.inputTokens = append(a.inputTokens, int64(t.InputTokens))
		a.outputTokens = append(a.outputTokens, int64(t.OutputTokens))
		a.cost = append(a.cost, t.CostUSD)
		a.priced = append(a.priced, t.Priced)
		a.system = append(a.system, b(t.System))
		a.input = append(a.input, in)
		a.output = append(a.output, out)
		a.finishReason = append(a.finishReason, b(t.FinishReason))
		a.errorType = append(a.errorType, b(t.ErrorType))
		a.attributes = append(a.attributes, t.Attributes) // nil is NULL
		a.resource = append(a.resource, t.Resource)
		a.redactions = append(a.redactions, int64(t.Redactions))
		a.received = append(a.received, rec)
	}
	n := 0
	err := d.write(ctx, "storing traces", func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, insertTraces, a.args()...)
		if err != nil {
			return err
		}
		n = int(tag.RowsAffected())
		return nil
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

// checkTrace refuses a trace the store cannot hold. PostgreSQL could store
// a NaN, but the SQLite store cannot, and both refuse the same traces.
func checkTrace(t *record.Trace) error {
	if t.ID == "" {
		return errors.New("the trace has no ID")
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"latency_ms", t.LatencyMS}, {"cost_usd", t.CostUSD}} {
		if math.IsNaN(f.v) {
			return fmt.Errorf("trace %q: %s is NaN", t.ID, f.name)
		}
	}
	for _, f := range []struct {
		name string
		v    []byte
	}{{"attributes", t.Attributes}, {"resource", t.Resource}} {
		if f.v != nil && !json.Valid(f.v) {
			return fmt.Errorf("trace %q: %s are not JSON (%s)", t.ID, f.name, brief(f.v))
		}
	}
	return nil
}

// brief is v for an error message, cut to a readable length.
func brief(v []byte) string {
	const max = 60
	if len(v) > max {
		return fmt.Sprintf("%q… (%d bytes)", v[:max], len(v))
	}
	return fmt.Sprintf("%q", v)
}

// encodeMessages is a conversation as stored: a JSON array, "null" for nil.
func encodeMessages(ms []record.Message) ([]byte, error) {
	if ms == nil {
		return []byte("null"), nil
	}
	return json.Marshal(ms)
}

// microsPtr is micros' encoding as a nullable BIGINT array element.
func microsPtr(t time.Time) *int64 {
	if t.IsZero() {
		return nil
	}
	m := t.UnixMicro()
	return &m
}

// traceWhere is the WHERE clause and arguments of f. IDs travel as one
// bytea[] argument, so a list of any length is one bound value.
func traceWhere(f store.TraceFilter) (string, []any) {
	var conds []string
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	if !f.Since.IsZero() {
		conds = append(conds, "time >= "+arg(ceilMicros(f.Since)))
	}
	if !f.Until.IsZero() {
		conds = append(conds, "time < "+arg(ceilMicros(f.Until)))
	}
	if f.Model != "" {
		conds = append(conds, "model = "+arg(b(f.Model)))
	}
	if f.IDs != nil {
		ids := make([][]byte, len(f.IDs))
		for i, id := range f.IDs {
			ids[i] = b(id)
		}
		conds = append(conds, "id = ANY("+arg(ids)+"::bytea[])")
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

// ceilMicros is t as a bound on stored times: the first microsecond at or
// after t, so [Since, Until) holds exactly the stored times within it.
func ceilMicros(t time.Time) int64 {
	m := t.UnixMicro()
	if time.UnixMicro(m).Before(t) {
		m++
	}
	return m
}

// Traces implements store.Traces: one query in traces_by_time's order
// (time, traces without one first, then ID bytewise), streamed on its own
// connection, so memory does not grow with the number of traces and fn
// may write to the store. An empty (non-nil) IDs list selects nothing.
func (d *DB) Traces(ctx context.Context, f store.TraceFilter, fn func(*record.Trace) error) error {
	where, args := traceWhere(f)
	rows, err := d.pool.Query(ctx, `SELECT `+traceColumns+` FROM traces`+where+` ORDER BY time NULLS FIRST, id`, args...)
	if err != nil {
		return fmt.Errorf("reading traces: %w", err)
	}
	err = each(ctx, rows, func() error {
		t, err := scanTrace(rows)
		if err != nil {
			return err
		}
		return fn(t)
	})
	if err != nil {
		return fmt.Errorf("reading traces: %w", err)
	}
	return nil
}

// Trace implements store.Traces.
func (d *DB) Trace(ctx context.Context, id string) (*record.Trace, error) {
	t, err := scanTrace(d.pool.QueryRow(ctx, `SELECT `+traceColumns+` FROM traces WHERE id = $1`, b(id)))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("trace %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("reading trace %q: %w", id, err)
	}
	return t, nil
}

// CountTraces implements store.Traces.
func (d *DB) CountTraces(ctx context.Context, f store.TraceFilter) (int64, error) {
	where, args := traceWhere(f)
	var n int64
	if err := d.pool.QueryRow(ctx, `SELECT count(*) FROM traces`+where, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("counting traces: %w", err)
	}
	return n, nil
}

func scanTrace(s scanner) (*record.Trace, error) {
	var t record.Trace
	var tm, received *int64
	var in, out []byte
	if err := s.Scan(bstr{&t.ID}, bstr{&t.TraceID}, bstr{&t.SpanID}, bstr{&t.Source}, &tm, &t.LatencyMS, bstr{&t.Operation}, bstr{&t.Provider},
		bstr{&t.Model}, bstr{&t.ResponseModel}, &t.InputTokens, &t.OutputTokens, &t.CostUSD, &t.Priced, bstr{&t.System},
		&in, &out, bstr{&t.FinishReason}, bstr{&t.ErrorType}, &t.Attributes, &t.Resource, &t.Redactions, &received); err != nil {
		return nil, err
	}
	t.Time, t.Received = fromMicros(tm), fromMicros(received)
	var err error
	if t.Input, err = decodeMessages(in); err != nil {
		return nil, fmt.Errorf("trace %q: input: %w", t.ID, err)
	}
	if t.Output, err = decodeMessages(out); err != nil {
		return nil, fmt.Errorf("trace %q: output: %w", t.ID, err)
	}
	return &t, nil
}

// decodeMessages reads a stored conversation: nil for "null".
func decodeMessages(v []byte) ([]record.Message, error) {
	var ms []record.Message
	if err := json.Unmarshal(v, &ms); err != nil {
		return nil, fmt.Errorf("the stored messages are not a JSON array of messages: %w", err)
	}
	return ms, nil
}

// PutSample implements store.Traces: the sample, its strata and its items
// in one transaction.
func (d *DB) PutSample(ctx context.Context, sm *record.Sample) error {
	if sm.ID == "" {
		return errors.New("storing a sample: the sample has no ID")
	}
	if !storableID(sm.ID) {
		return fmt.Errorf("storing sample %q: a sample ID must be UTF-8 text without NUL bytes", sm.ID)
	}
	by := []byte("[]")
	if len(sm.By) > 0 {
		var err error
		if by, err = json.Marshal(sm.By); err != nil {
			return fmt.Errorf("storing sample %q: %w", sm.ID, err)
		}
	}
	for i, it := range sm.Items {
		if math.IsNaN(it.Weight) {
			return fmt.Errorf("storing sample %q: item %d (trace %q): weight is NaN", sm.ID, i+1, it.TraceID)
		}
	}
	return d.write(ctx, fmt.Sprintf("storing sample %q", sm.ID), func(tx pgx.Tx) error {
		var exists bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM samples WHERE id = $1)`, sm.ID).Scan(&exists); err != nil {
			return err
		}
		if exists {
			return store.ErrSampleExists
		}
		if _, err := tx.Exec(ctx, `INSERT INTO samples (id, created, since, until, filter, strata_by, per, seed)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
			sm.ID, micros(sm.Created), micros(sm.Since), micros(sm.Until), b(sm.Filter), by, sm.Per, int64(sm.Seed)); err != nil {
			return err
		}
		var strata pgx.Batch
		for i, s := range sm.Strata {
			strata.Queue(`INSERT INTO sample_strata (sample_id, position, key, population, drawn) VALUES ($1, $2, $3, $4, $5)`,
				sm.ID, i, b(s.Key), s.Population, s.Drawn)
		}
		if err := execEach(ctx, tx, &strata, func(i int) string { return fmt.Sprintf("stratum %q", sm.Strata[i].Key) }); err != nil {
			return err
		}
		var items pgx.Batch
		for i, it := range sm.Items {
			items.Queue(`INSERT INTO sample_items (sample_id, position, trace_id, stratum, weight) VALUES ($1, $2, $3, $4, $5)`,
				sm.ID, i, b(it.TraceID), b(it.Stratum), it.Weight)
		}
		return execEach(ctx, tx, &items, func(i int) string { return fmt.Sprintf("item %d (trace %q)", i+1, sm.Items[i].TraceID) })
	})
}

const sampleColumns = `id, created, since, until, filter, strata_by, per, seed`

// Sample implements store.Traces: the sample with its strata and its
// items in draw order (Items empty, not nil, for a sample that drew none).
func (d *DB) Sample(ctx context.Context, id string) (*record.Sample, error) {
	if !storableID(id) { // sample IDs are TEXT, as run IDs are
		return nil, fmt.Errorf("no sample %q: %w", id, store.ErrNotFound)
	}
	var sm *record.Sample
	err := d.read(ctx, func(tx pgx.Tx) error {
		var err error
		sm, err = scanSample(tx.QueryRow(ctx, `SELECT `+sampleColumns+` FROM samples WHERE id = $1`, id))
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("no sample %q: %w", id, store.ErrNotFound)
		}
		if err != nil {
			return err
		}
		if sm.Strata, err = sampleStrata(ctx, tx, id); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT trace_id, stratum, weight FROM sample_items WHERE sample_id = $1 ORDER BY position`, id)
		if err != nil {
			return err
		}
		sm.Items = []record.SampleItem{}
		return each(ctx, rows, func() error {
			var it record.SampleItem
			if err := rows.Scan(bstr{&it.TraceID}, bstr{&it.Stratum}, &it.Weight); err != nil {
				return err
			}
			sm.Items = append(sm.Items, it)
			return nil
		})
	})
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
		return nil, fmt.Errorf("reading sample %q: %w", id, err)
	}
	return sm, nil
}

// Samples implements store.Traces: every sample with its strata but not
// its items (Items nil), oldest first (by Created, then by when it was
// stored).
func (d *DB) Samples(ctx context.Context) ([]record.Sample, error) {
	var out []record.Sample
	err := d.read(ctx, func(tx pgx.Tx) error {
		out = nil
		rows, err := tx.Query(ctx, `SELECT `+sampleColumns+` FROM samples ORDER BY created NULLS FIRST, seq`)
		if err != nil {
			return err
		}
		err = each(ctx, rows, func() error {
			sm, err := scanSample(rows)
			if err != nil {
				return err
			}
			out = append(out, *sm)
			return nil
		})
		if err != nil {
			return err
		}
		for i := range out {
			if out[i].Strata, err = sampleStrata(ctx, tx, out[i].ID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing samples: %w", err)
	}
	return out, nil
}

func scanSample(s scanner) (*record.Sample, error) {
	var sm record.Sample
	var created, since, until *int64
	var by []byte
	var seed int64
	if err := s.Scan(&sm.ID, &created, &since, &until, bstr{&sm.Filter}, &by, &sm.Per, &seed); err != nil {
		return nil, err
	}
	sm.Created, sm.Since, sm.Until, sm.Seed = fromMicros(created), fromMicros(since), fromMicros(until), uint64(seed)
	if err := json.Unmarshal(by, &sm.By); err != nil {
		return nil, fmt.Errorf("sample %q: strata keys %q are not a JSON array: %w", sm.ID, by, err)
	}
	if len(sm.By) == 0 {
		sm.By = nil
	}
	return &sm, nil
}

// sampleStrata reads a sample's strata in the order they were given
// (empty, not nil, when it has none).
func sampleStrata(ctx context.Context, tx pgx.Tx, id string) ([]record.SampleStratum, error) {
	rows, err := tx.Query(ctx, `SELECT key, population, drawn FROM sample_strata WHERE sample_id = $1 ORDER BY position`, id)
	if err != nil {
		return nil, err
	}
	strata := []record.SampleStratum{}
	err = each(ctx, rows, func() error {
		var s record.SampleStratum
		if err := rows.Scan(bstr{&s.Key}, &s.Population, &s.Drawn); err != nil {
			return err
		}
		strata = append(strata, s)
		return nil
	})
	return strata, err
}

// execEach runs a batch of statements in tx in one round trip; the first
// that fails is named by what(its index).
func execEach(ctx context.Context, tx pgx.Tx, batch *pgx.Batch, what func(i int) string) error {
	if batch.Len() == 0 {
		return nil
	}
	br := tx.SendBatch(ctx, batch)
	for i := range batch.Len() {
		if _, err := br.Exec(); err != nil {
			_ = br.Close()
			return fmt.Errorf("%s: %w", what(i), err)
		}
	}
	return br.Close()
}
