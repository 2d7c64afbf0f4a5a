package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store"
)

// ReadOnly reports whether the store was opened read-only (OpenExisting on
// a store this process may not write): every write fails.
func (d *DB) ReadOnly() bool { return d.w == d.r }

// ReplaceResults stores results and their scores in one transaction,
// replacing a stored result with the same key together with its scores in
// every scoring (see store.Store). Two results with one key in a call are
// an error.
func (d *DB) ReplaceResults(ctx context.Context, results []record.Result, scores []record.Score) error {
	if len(results) == 0 && len(scores) == 0 {
		return nil
	}
	keys := make(map[resultKey]bool, len(results))
	for i := range results {
		r := &results[i]
		if err := checkResult(r); err != nil {
			return fmt.Errorf("replacing results: %w", err)
		}
		k := resultKey{r.RunID, r.CaseID, r.Target, r.Epoch}
		if keys[k] {
			return fmt.Errorf("replacing results: %s is given twice", describeResult(k))
		}
		keys[k] = true
	}
	for i := range scores {
		s := &scores[i]
		if err := checkScore(s); err != nil {
			return fmt.Errorf("replacing results: %w", err)
		}
		if k := (resultKey{s.RunID, s.CaseID, s.Target, s.Epoch}); !keys[k] {
			return fmt.Errorf("replacing results: score %q: %s is not among the results of this call", s.Scorer, describeResult(k))
		}
	}
	return d.write(ctx, "replacing results", func(tx *sql.Tx) error {
		delS, err := tx.PrepareContext(ctx, `DELETE FROM scores WHERE run_id = ? AND case_id = ? AND target = ? AND epoch = ?`)
		if err != nil {
			return err
		}
		defer delS.Close()
		delR, err := tx.PrepareContext(ctx, `DELETE FROM results WHERE run_id = ? AND case_id = ? AND target = ? AND epoch = ?`)
		if err != nil {
			return err
		}
		defer delR.Close()
		insR, err := tx.PrepareContext(ctx, insertResult)
		if err != nil {
			return err
		}
		defer insR.Close()
		for i := range results {
			r := &results[i]
			for _, st := range []*sql.Stmt{delS, delR} {
				if _, err := st.ExecContext(ctx, r.RunID, r.CaseID, r.Target, r.Epoch); err != nil {
					return fmt.Errorf("%s: %w", describeResult(resultKey{r.RunID, r.CaseID, r.Target, r.Epoch}), err)
				}
			}
			if _, err := execResult(ctx, insR, r); err != nil {
				return err
			}
		}
		return execScores(ctx, tx, insertScore, scores)
	})
}

// DeleteRun deletes a run and everything stored under it in one
// transaction, and counts what it deleted (see store.Store).
func (d *DB) DeleteRun(ctx context.Context, runID string) (store.Deleted, error) {
	var del store.Deleted
	err := d.write(ctx, "deleting run "+runID, func(tx *sql.Tx) error {
		var one int
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM runs WHERE id = ?`, runID).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("run %q: %w", runID, store.ErrNotFound)
		}
		if err != nil {
			return err
		}
		var lease int
		for _, c := range []struct {
			n *int
			q string
		}{
			{&del.Cases, `SELECT count(*) FROM cases WHERE run_id = ?`},
			{&del.Results, `SELECT count(*) FROM results WHERE run_id = ?`},
			{&del.Scores, `SELECT count(*) FROM scores WHERE run_id = ?`},
			{&del.Scorings, `SELECT count(*) FROM (SELECT scoring FROM scores WHERE run_id = ?1
				UNION SELECT scoring FROM scorings WHERE run_id = ?1)`},
			{&lease, `SELECT count(*) FROM leases WHERE run_id = ?`},
			{&del.Queues, `SELECT count(*) FROM label_queues WHERE run_id = ?`},
			{&del.Labels, `SELECT count(*) FROM labels WHERE run_id = ?`},
		} {
			if err := tx.QueryRowContext(ctx, c.q, runID).Scan(c.n); err != nil {
				return err
			}
		}
		del.Lease = lease > 0
		// Children first: nothing here relies on foreign keys cascading.
		for _, q := range []string{
			`DELETE FROM scores WHERE run_id = ?`,
			`DELETE FROM results WHERE run_id = ?`,
			`DELETE FROM cases WHERE run_id = ?`,
			`DELETE FROM scorings WHERE run_id = ?`,
			`DELETE FROM leases WHERE run_id = ?`,
			`DELETE FROM labels WHERE run_id = ?`,
			`DELETE FROM queue_items WHERE run_id = ?`,
			`DELETE FROM label_queues WHERE run_id = ?`,
			`DELETE FROM load_requests WHERE run_id = ?`,
			`DELETE FROM load_steps WHERE run_id = ?`,
			`DELETE FROM runs WHERE id = ?`,
		} {
			if _, err := tx.ExecContext(ctx, q, runID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return store.Deleted{}, err
	}
	return del, nil
}

// ScorerNames returns the sorted names of the scorers with scores in one
// scoring of a run.
func (d *DB) ScorerNames(ctx context.Context, runID string, scoring int) ([]string, error) {
	rows, err := d.r.QueryContext(ctx, `SELECT DISTINCT scorer FROM scores WHERE run_id = ? AND scoring = ? ORDER BY scorer`, runID, scoring)
	if err != nil {
		return nil, fmt.Errorf("reading the scorers of scoring %d of run %s: %w", scoring, runID, err)
	}
	var names []string
	err = each(ctx, rows, func() error {
		var n string
		if err := rows.Scan(&n); err != nil {
			return err
		}
		names = append(names, n)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the scorers of scoring %d of run %s: %w", scoring, runID, err)
	}
	return names, nil
}
