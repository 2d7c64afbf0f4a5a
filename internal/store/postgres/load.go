package postgres

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store"
)

const loadStepColumns = `run_id, target, step, mode, level, started, duration_ms, sent, done,
	client_cpu, cores, lateness_p95_ms, saturated, skipped`

const loadRequestColumns = `run_id, target, step, seq, case_id, start_ms, latency_ms, first_token_ms,
	inter_token_ms, input_tokens, output_tokens, cost_usd, error_kind, status`

// insertLoadStep replaces a stored step: a step recorded as it starts is
// completed when it ends.
var insertLoadStep = `INSERT INTO load_steps (` + loadStepColumns + `) VALUES (` + placeholders(loadStepColumns) + `)
	ON CONFLICT (run_id, target, step) DO UPDATE SET ` + updateAll(loadStepColumns, 3)

var insertLoadRequest = `INSERT INTO load_requests (` + loadRequestColumns + `) VALUES (` + placeholders(loadRequestColumns) + `)`

// placeholders is "$1, $2, …", one for each of columns.
func placeholders(columns string) string {
	n := strings.Count(columns, ",") + 1
	ps := make([]string, n)
	for i := range ps {
		ps[i] = fmt.Sprintf("$%d", i+1)
	}
	return strings.Join(ps, ", ")
}

// updateAll is "c = excluded.c, …" for the columns after the first keys.
func updateAll(columns string, keys int) string {
	var sets []string
	for i, c := range strings.Split(columns, ",") {
		if i < keys {
			continue
		}
		c = strings.TrimSpace(c)
		sets = append(sets, c+" = excluded."+c)
	}
	return strings.Join(sets, ", ")
}

// PutLoadSteps implements store.Loads: one transaction; a stored step of
// the same run, target and step is replaced (a later one in the same call
// replaces an earlier one, as each is its own statement). Every step's run
// must exist.
func (d *DB) PutLoadSteps(ctx context.Context, steps []record.LoadStep) error {
	if len(steps) == 0 {
		return nil
	}
	rows := make([][]any, len(steps))
	for i := range steps {
		s := &steps[i]
		if s.RunID == "" || s.Target == "" {
			return fmt.Errorf("storing load steps: step %d of %d has no run ID or target", i+1, len(steps))
		}
		for _, f := range []struct {
			name string
			v    float64
		}{{"level", s.Level}, {"duration_ms", s.DurationMS}, {"client_cpu", s.ClientCPU}, {"lateness_p95_ms", s.LatenessP95MS}} {
			if math.IsNaN(f.v) || math.IsInf(f.v, 0) {
				return fmt.Errorf("storing load steps: %s step %d: %s is %v", s.Target, s.Step, f.name, f.v)
			}
		}
		rows[i] = []any{s.RunID, b(s.Target), s.Step, s.Mode, s.Level, micros(s.Started), s.DurationMS, s.Sent, s.Done,
			s.ClientCPU, s.Cores, s.LatenessP95MS, s.Saturated, b(s.Skipped)}
	}
	return d.write(ctx, "storing load steps", func(tx pgx.Tx) error {
		if err := runsExist(ctx, tx, func(yield func(string) bool) {
			for i := range steps {
				if !yield(steps[i].RunID) {
					return
				}
			}
		}); err != nil {
			return err
		}
		// A batch is built per attempt: write may run this again.
		var batch pgx.Batch
		for _, row := range rows {
			batch.Queue(insertLoadStep, row...)
		}
		return execEach(ctx, tx, &batch, func(i int) string { return fmt.Sprintf("%s step %d", steps[i].Target, steps[i].Step) })
	})
}

// PutLoadRequests implements store.Loads: one transaction; a request
// already stored (same run, target, step and seq) fails the call, which
// stores nothing. NaN first-token and inter-token times are stored as
// NULL (and read back as NaN), as in SQLite; other NaNs and infinities are
// refused.
func (d *DB) PutLoadRequests(ctx context.Context, reqs []record.LoadRequest) error {
	if len(reqs) == 0 {
		return nil
	}
	rows := make([][]any, len(reqs))
	for i := range reqs {
		r := &reqs[i]
		if r.RunID == "" || r.Target == "" {
			return fmt.Errorf("storing load requests: request %d of %d has no run ID or target", i+1, len(reqs))
		}
		for _, f := range []struct {
			name string
			v    float64
		}{{"start_ms", r.StartMS}, {"latency_ms", r.LatencyMS}, {"cost_usd", r.CostUSD}} {
			if math.IsNaN(f.v) || math.IsInf(f.v, 0) {
				return fmt.Errorf("storing load requests: %s step %d request %d: %s is %v", r.Target, r.Step, r.Seq, f.name, f.v)
			}
		}
		rows[i] = []any{r.RunID, b(r.Target), r.Step, r.Seq, b(r.CaseID), r.StartMS, r.LatencyMS, nullNaN(r.FirstTokenMS),
			nullNaN(r.InterTokenMS), r.InputTokens, r.OutputTokens, r.CostUSD, b(r.ErrorKind), r.Status}
	}
	return d.write(ctx, "storing load requests", func(tx pgx.Tx) error {
		if err := runsExist(ctx, tx, func(yield func(string) bool) {
			for i := range reqs {
				if !yield(reqs[i].RunID) {
					return
				}
			}
		}); err != nil {
			return err
		}
		var batch pgx.Batch
		for _, row := range rows {
			batch.Queue(insertLoadRequest, row...)
		}
		return execEach(ctx, tx, &batch, func(i int) string {
			r := &reqs[i]
			return fmt.Sprintf("%s step %d request %d", r.Target, r.Step, r.Seq)
		})
	})
}

// runsExist checks that every run ID named exists, so a missing run is
// ErrNotFound rather than a foreign key failure.
func runsExist(ctx context.Context, tx pgx.Tx, ids func(yield func(string) bool)) error {
	seen := map[string]bool{}
	for id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		if !storableID(id) {
			return fmt.Errorf("run %q: %w", id, store.ErrNotFound)
		}
		var exists bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM runs WHERE id = $1)`, id).Scan(&exists); err != nil {
			return err
		}
		if !exists {
			return fmt.Errorf("run %q: %w", id, store.ErrNotFound)
		}
	}
	return nil
}

// nullNaN is v for a nullable column: NULL for NaN.
func nullNaN(v float64) *float64 {
	if math.IsNaN(v) {
		return nil
	}
	return &v
}

// fromNull reads nullNaN's encoding.
func fromNull(v *float64) float64 {
	if v == nil {
		return math.NaN()
	}
	return *v
}

// LoadSteps implements store.Loads: the run's steps by target (bytewise),
// then step, read in one snapshot before fn is called (fn may call the
// store).
func (d *DB) LoadSteps(ctx context.Context, runID string, fn func(record.LoadStep) error) error {
	if !storableID(runID) {
		return nil // no run has that ID
	}
	var steps []record.LoadStep
	err := d.read(ctx, func(tx pgx.Tx) error {
		steps = nil
		rows, err := tx.Query(ctx, `SELECT `+loadStepColumns+` FROM load_steps WHERE run_id = $1 ORDER BY target, step`, runID)
		if err != nil {
			return err
		}
		return each(ctx, rows, func() error {
			var s record.LoadStep
			var started *int64
			if err := rows.Scan(&s.RunID, bstr{&s.Target}, &s.Step, &s.Mode, &s.Level, &started, &s.DurationMS, &s.Sent, &s.Done,
				&s.ClientCPU, &s.Cores, &s.LatenessP95MS, &s.Saturated, bstr{&s.Skipped}); err != nil {
				return err
			}
			s.Started = fromMicros(started)
			steps = append(steps, s)
			return nil
		})
	})
	if err != nil {
		return fmt.Errorf("reading the load steps of run %s: %w", runID, err)
	}
	for _, s := range steps {
		if err := fn(s); err != nil {
			return err
		}
	}
	return nil
}

// LoadRequests implements store.Loads: the run's requests by target
// (bytewise), step and seq, read in one snapshot before fn is called.
func (d *DB) LoadRequests(ctx context.Context, runID string, fn func(record.LoadRequest) error) error {
	if !storableID(runID) {
		return nil // no run has that ID
	}
	var reqs []record.LoadRequest
	err := d.read(ctx, func(tx pgx.Tx) error {
		reqs = nil
		rows, err := tx.Query(ctx, `SELECT `+loadRequestColumns+` FROM load_requests WHERE run_id = $1 ORDER BY target, step, seq`, runID)
		if err != nil {
			return err
		}
		return each(ctx, rows, func() error {
			var r record.LoadRequest
			var ft, it *float64
			if err := rows.Scan(&r.RunID, bstr{&r.Target}, &r.Step, &r.Seq, bstr{&r.CaseID}, &r.StartMS, &r.LatencyMS, &ft,
				&it, &r.InputTokens, &r.OutputTokens, &r.CostUSD, bstr{&r.ErrorKind}, &r.Status); err != nil {
				return err
			}
			r.FirstTokenMS, r.InterTokenMS = fromNull(ft), fromNull(it)
			reqs = append(reqs, r)
			return nil
		})
	})
	if err != nil {
		return fmt.Errorf("reading the load requests of run %s: %w", runID, err)
	}
	for _, r := range reqs {
		if err := fn(r); err != nil {
			return err
		}
	}
	return nil
}
