package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store"
)

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
		k := keyOfResult(r)
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
	ra, err := newResultArrays(results)
	if err != nil {
		return fmt.Errorf("replacing results: %w", err)
	}
	scores = uniqueScores(scores, true)
	sa, err := newScoreArrays(scores)
	if err != nil {
		return fmt.Errorf("replacing results: %w", err)
	}
	return d.write(ctx, "replacing results", func(tx pgx.Tx) error {
		for _, q := range []string{deleteScoresOf, deleteResultsOf} {
			if _, err := tx.Exec(ctx, q, ra.run, ra.caseID, ra.target, ra.epoch); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, replaceResults, ra.args()...); err != nil {
			if sqlState(err) == foreignKeyViolation {
				if i := d.firstMissingRun(ctx, ra.run); i >= 0 {
					return fmt.Errorf("%s: the run does not exist: %w", describeResult(keyOfResult(&results[i])), err)
				}
			}
			return err
		}
		if len(scores) == 0 {
			return nil
		}
		return d.execScores(ctx, tx, insertScores, scores, sa)
	})
}

// The statements of ReplaceResults: delete the scores (of every scoring)
// and the results with the keys of the call ($1-$4: the results' arrays),
// then insert the call's results, whose keys are then free.
const (
	deleteScoresOf = `DELETE FROM scores s USING unnest($1::text[], $2::bytea[], $3::bytea[], $4::int8[]) AS k(run_id, case_id, target, epoch)
		WHERE s.run_id = k.run_id AND s.case_id = k.case_id AND s.target = k.target AND s.epoch = k.epoch`
	deleteResultsOf = `DELETE FROM results r USING unnest($1::text[], $2::bytea[], $3::bytea[], $4::int8[]) AS k(run_id, case_id, target, epoch)
		WHERE r.run_id = k.run_id AND r.case_id = k.case_id AND r.target = k.target AND r.epoch = k.epoch`
)

var replaceResults = `INSERT INTO results (` + resultColumns + `)
	SELECT ` + resultColumns + ` FROM ` + unnest(1, resultTypes, "t", resultColumns)

// DeleteRun deletes a run and everything stored under it in one
// transaction, and counts what it deleted (see store.Store).
func (d *DB) DeleteRun(ctx context.Context, runID string) (store.Deleted, error) {
	if !storableID(runID) {
		return store.Deleted{}, fmt.Errorf("deleting run %s: run %q: %w", runID, runID, store.ErrNotFound)
	}
	var del store.Deleted
	err := d.write(ctx, "deleting run "+runID, func(tx pgx.Tx) error {
		del = store.Deleted{} // a retried transaction counts afresh
		var one int
		err := tx.QueryRow(ctx, `SELECT 1 FROM runs WHERE id = $1`, runID).Scan(&one)
		if errors.Is(err, pgx.ErrNoRows) {
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
			{&del.Cases, `SELECT count(*) FROM cases WHERE run_id = $1`},
			{&del.Results, `SELECT count(*) FROM results WHERE run_id = $1`},
			{&del.Scores, `SELECT count(*) FROM scores WHERE run_id = $1`},
			{&del.Scorings, `SELECT count(*) FROM (SELECT scoring FROM scores WHERE run_id = $1
				UNION SELECT scoring FROM scorings WHERE run_id = $1) n`},
			{&lease, `SELECT count(*) FROM leases WHERE run_id = $1`},
			{&del.Queues, `SELECT count(*) FROM label_queues WHERE run_id = $1`},
			{&del.Labels, `SELECT count(*) FROM labels WHERE run_id = $1`},
		} {
			if err := tx.QueryRow(ctx, c.q, runID).Scan(c.n); err != nil {
				return err
			}
		}
		del.Lease = lease > 0
		// Children first, as the SQLite store does (the foreign keys would
		// cascade, but scores reach the run only through results).
		for _, q := range []string{
			`DELETE FROM scores WHERE run_id = $1`,
			`DELETE FROM results WHERE run_id = $1`,
			`DELETE FROM cases WHERE run_id = $1`,
			`DELETE FROM scorings WHERE run_id = $1`,
			`DELETE FROM leases WHERE run_id = $1`,
			`DELETE FROM labels WHERE run_id = $1`,
			`DELETE FROM queue_items WHERE run_id = $1`,
			`DELETE FROM label_queues WHERE run_id = $1`,
			`DELETE FROM load_requests WHERE run_id = $1`,
			`DELETE FROM load_steps WHERE run_id = $1`,
			`DELETE FROM runs WHERE id = $1`,
		} {
			if _, err := tx.Exec(ctx, q, runID); err != nil {
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
	rows, err := d.pool.Query(ctx, `SELECT DISTINCT scorer FROM scores WHERE run_id = $1 AND scoring = $2 ORDER BY scorer`, runID, scoring)
	if err != nil {
		return nil, fmt.Errorf("reading the scorers of scoring %d of run %s: %w", scoring, runID, err)
	}
	var names []string
	err = each(ctx, rows, func() error {
		var n string
		if err := rows.Scan(bstr{&n}); err != nil {
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
