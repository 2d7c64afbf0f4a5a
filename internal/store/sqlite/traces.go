package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store"
)

// traceColumns are a trace's columns in the order of insertTrace's values
// and scanTrace's Scan.
const traceColumns = `id, trace_id, span_id, source, time, latency_ms, operation, provider,
	model, response_model, input_tokens, output_tokens, cost_usd, priced, system,
	input, output, finish_reason, error_type, attributes, resource, redactions, received`

// insertTrace skips a trace whose ID is stored (ON CONFLICT on the key
// only: unlike INSERT OR IGNORE it does not also swallow NOT NULL or type
// errors). One row per statement: a statement of several rows needs a
// statement journal (it could fail after changing some), which writes
// every page it touches once more.
var insertTrace = `INSERT INTO traces (` + traceColumns + `) VALUES (` +
	strings.Repeat("?, ", strings.Count(traceColumns, ",")) + `?) ON CONFLICT (id) DO NOTHING`

// PutTraces implements store.Traces: one transaction, one prepared insert
// that skips stored IDs. A trace with no Received time is stamped with the
// store's clock. A trace the store cannot hold (no ID, a NaN, attributes
// or resource that are not JSON) fails the whole call, which stores
// nothing.
func (d *DB) PutTraces(ctx context.Context, ts []record.Trace) (int, error) {
	if len(ts) == 0 {
		return 0, nil
	}
	// Encode before taking the write lock: the transaction holds it only
	// for the inserts.
	rows := make([][]any, len(ts))
	var received sql.NullInt64
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
		rec := micros(t.Received)
		if !rec.Valid {
			if !received.Valid {
				received = micros(d.now())
			}
			rec = received
		}
		rows[i] = []any{t.ID, t.TraceID, t.SpanID, t.Source, micros(t.Time), t.LatencyMS, t.Operation, t.Provider,
			t.Model, t.ResponseModel, t.InputTokens, t.OutputTokens, t.CostUSD, t.Priced, t.System,
			in, out, t.FinishReason, t.ErrorType, jsonText(t.Attributes), jsonText(t.Resource), t.Redactions, rec}
	}
	n := 0
	err := d.write(ctx, "storing traces", func(tx *sql.Tx) error {
		n = 0
		st, err := tx.PrepareContext(ctx, insertTrace)
		if err != nil {
			return err
		}
		defer st.Close()
		for i, row := range rows {
			res, err := st.ExecContext(ctx, row...)
			if err != nil {
				return fmt.Errorf("trace %q: %w", ts[i].ID, err)
			}
			k, err := res.RowsAffected()
			if err != nil {
				return fmt.Errorf("trace %q: %w", ts[i].ID, err)
			}
			n += int(k)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

// checkTrace refuses a trace the store cannot hold.
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

// brief is b for an error message, cut to a readable length.
func brief(b []byte) string {
	const max = 60
	if len(b) > max {
		return fmt.Sprintf("%q… (%d bytes)", b[:max], len(b))
	}
	return fmt.Sprintf("%q", b)
}

// encodeMessages is a conversation as stored: a JSON array, "null" for nil.
func encodeMessages(ms []record.Message) (string, error) {
	if ms == nil {
		return "null", nil
	}
	b, err := json.Marshal(ms)
	return string(b), err
}

// jsonText is a JSON column's value: NULL for nil.
func jsonText(b []byte) sql.NullString {
	if b == nil {
		return sql.NullString{}
	}
	return sql.NullString{String: string(b), Valid: true}
}

// traceWhere is the WHERE clause and arguments of f. IDs travel as one
// JSON array argument (json_each), so a list of any length is one bound
// value and the query needs no temporary table (read connections are
// query-only).
func traceWhere(f store.TraceFilter) (string, []any, error) {
	var conds []string
	var args []any
	if !f.Since.IsZero() {
		conds = append(conds, "time >= ?")
		args = append(args, ceilMicros(f.Since))
	}
	if !f.Until.IsZero() {
		conds = append(conds, "time < ?")
		args = append(args, ceilMicros(f.Until))
	}
	if f.Model != "" {
		conds = append(conds, "model = ?")
		args = append(args, f.Model)
	}
	if f.IDs != nil {
		ids, err := json.Marshal(f.IDs)
		if err != nil {
			return "", nil, err
		}
		conds = append(conds, "id IN (SELECT value FROM json_each(?))")
		args = append(args, string(ids))
	}
	if len(conds) == 0 {
		return "", nil, nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args, nil
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

// Traces implements store.Traces: one query that walks traces_by_time (or
// traces_by_model for a model) in order, so memory does not grow with the
// number of traces. An empty (non-nil) IDs list selects nothing.
func (d *DB) Traces(ctx context.Context, f store.TraceFilter, fn func(*record.Trace) error) error {
	where, args, err := traceWhere(f)
	if err != nil {
		return fmt.Errorf("reading traces: %w", err)
	}
	rows, err := d.r.QueryContext(ctx, tracesQuery(where), args...)
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

// tracesQuery is the streaming query of the traces a WHERE clause selects.
func tracesQuery(where string) string {
	return `SELECT ` + traceColumns + ` FROM traces` + where + ` ORDER BY time, id`
}

// Trace implements store.Traces.
func (d *DB) Trace(ctx context.Context, id string) (*record.Trace, error) {
	t, err := scanTrace(d.r.QueryRowContext(ctx, `SELECT `+traceColumns+` FROM traces WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("trace %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("reading trace %q: %w", id, err)
	}
	return t, nil
}

// CountTraces implements store.Traces.
func (d *DB) CountTraces(ctx context.Context, f store.TraceFilter) (int64, error) {
	where, args, err := traceWhere(f)
	if err != nil {
		return 0, fmt.Errorf("counting traces: %w", err)
	}
	var n int64
	if err := d.r.QueryRowContext(ctx, `SELECT count(*) FROM traces`+where, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("counting traces: %w", err)
	}
	return n, nil
}

func scanTrace(s scanner) (*record.Trace, error) {
	var t record.Trace
	var tm, received sql.NullInt64
	var in, out string
	var attrs, resource sql.NullString
	if err := s.Scan(&t.ID, &t.TraceID, &t.SpanID, &t.Source, &tm, &t.LatencyMS, &t.Operation, &t.Provider,
		&t.Model, &t.ResponseModel, &t.InputTokens, &t.OutputTokens, &t.CostUSD, &t.Priced, &t.System,
		&in, &out, &t.FinishReason, &t.ErrorType, &attrs, &resource, &t.Redactions, &received); err != nil {
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
	if attrs.Valid {
		t.Attributes = []byte(attrs.String)
	}
	if resource.Valid {
		t.Resource = []byte(resource.String)
	}
	return &t, nil
}

// decodeMessages reads a stored conversation: nil for "null".
func decodeMessages(s string) ([]record.Message, error) {
	var ms []record.Message
	if err := json.Unmarshal([]byte(s), &ms); err != nil {
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
	return d.write(ctx, fmt.Sprintf("storing sample %q", sm.ID), func(tx *sql.Tx) error {
		var one int
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM samples WHERE id = ?`, sm.ID).Scan(&one)
		if err == nil {
			return store.ErrSampleExists
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO samples (id, created, since, until, filter, strata_by, per, seed)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			sm.ID, micros(sm.Created), micros(sm.Since), micros(sm.Until), sm.Filter, string(by), sm.Per, int64(sm.Seed)); err != nil {
			return err
		}
		strata, err := tx.PrepareContext(ctx, `INSERT INTO sample_strata (sample_id, position, key, population, drawn) VALUES (?, ?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		defer strata.Close()
		for i, s := range sm.Strata {
			if _, err := strata.ExecContext(ctx, sm.ID, i, s.Key, s.Population, s.Drawn); err != nil {
				return fmt.Errorf("stratum %q: %w", s.Key, err)
			}
		}
		items, err := tx.PrepareContext(ctx, `INSERT INTO sample_items (sample_id, position, trace_id, stratum, weight) VALUES (?, ?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		defer items.Close()
		for i, it := range sm.Items {
			if _, err := items.ExecContext(ctx, sm.ID, i, it.TraceID, it.Stratum, it.Weight); err != nil {
				return fmt.Errorf("item %d (trace %q): %w", i+1, it.TraceID, err)
			}
		}
		return nil
	})
}

const sampleColumns = `id, created, since, until, filter, strata_by, per, seed`

// Sample implements store.Traces: the sample with its strata and its
// items in draw order (Items empty, not nil, for a sample that drew none).
func (d *DB) Sample(ctx context.Context, id string) (*record.Sample, error) {
	var sm *record.Sample
	err := d.read(ctx, func(tx *sql.Tx) error {
		var err error
		sm, err = scanSample(tx.QueryRowContext(ctx, `SELECT `+sampleColumns+` FROM samples WHERE id = ?`, id))
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("no sample %q: %w", id, store.ErrNotFound)
		}
		if err != nil {
			return err
		}
		if sm.Strata, err = sampleStrata(ctx, tx, id); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT trace_id, stratum, weight FROM sample_items WHERE sample_id = ? ORDER BY position`, id)
		if err != nil {
			return err
		}
		sm.Items = []record.SampleItem{}
		return each(ctx, rows, func() error {
			var it record.SampleItem
			if err := rows.Scan(&it.TraceID, &it.Stratum, &it.Weight); err != nil {
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
	err := d.read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT `+sampleColumns+` FROM samples ORDER BY created, rowid`)
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
	var created, since, until sql.NullInt64
	var by string
	var seed int64
	if err := s.Scan(&sm.ID, &created, &since, &until, &sm.Filter, &by, &sm.Per, &seed); err != nil {
		return nil, err
	}
	sm.Created, sm.Since, sm.Until, sm.Seed = fromMicros(created), fromMicros(since), fromMicros(until), uint64(seed)
	if err := json.Unmarshal([]byte(by), &sm.By); err != nil {
		return nil, fmt.Errorf("sample %q: strata keys %q are not a JSON array: %w", sm.ID, by, err)
	}
	if len(sm.By) == 0 {
		sm.By = nil
	}
	return &sm, nil
}

// sampleStrata reads a sample's strata in the order they were given
// (empty, not nil, when it has none).
func sampleStrata(ctx context.Context, tx *sql.Tx, id string) ([]record.SampleStratum, error) {
	rows, err := tx.QueryContext(ctx, `SELECT key, population, drawn FROM sample_strata WHERE sample_id = ? ORDER BY position`, id)
	if err != nil {
		return nil, err
	}
	strata := []record.SampleStratum{}
	err = each(ctx, rows, func() error {
		var s record.SampleStratum
		if err := rows.Scan(&s.Key, &s.Population, &s.Drawn); err != nil {
			return err
		}
		strata = append(strata, s)
		return nil
	})
	return strata, err
}
