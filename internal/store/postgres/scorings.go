package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// ReserveScoring reserves the next scoring number of a run, above every
// scoring with scores and every reserved one and at least 2, and records it
// as pending. The read and the insert share one SERIALIZABLE transaction:
// of two processes reserving at once, the second one's transaction fails
// (a serialization failure, which write retries, or a duplicate number,
// retried here) and runs again, reading the first one's number.
func (d *DB) ReserveScoring(ctx context.Context, runID string) (int, error) {
	var n int
	reserve := func(tx pgx.Tx) error {
		var exists bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM runs WHERE id = $1)`, runID).Scan(&exists); err != nil {
			return err
		}
		if !exists {
			return errors.New("the run does not exist")
		}
		// Scoring 1 belongs to the run (its scorers score each result as it
		// is stored), so a rescore numbers from 2 even before any is stored.
		if err := tx.QueryRow(ctx, `SELECT greatest(1,
				coalesce((SELECT max(scoring) FROM scores WHERE run_id = $1), 0),
				coalesce((SELECT max(scoring) FROM scorings WHERE run_id = $1), 0)) + 1`, runID).Scan(&n); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO scorings (run_id, scoring, status, created) VALUES ($1, $2, 'pending', $3)`,
			runID, n, micros(d.now()))
		return err
	}
	for attempt := 0; ; attempt++ {
		err := d.write(ctx, "reserving a scoring of run "+runID, reserve)
		if err == nil {
			return n, nil
		}
		if sqlState(err) != uniqueViolation || attempt >= 50 {
			return 0, err
		}
	}
}

// CompleteScoring marks a reserved scoring complete; completing it again is
// a no-op.
func (d *DB) CompleteScoring(ctx context.Context, runID string, scoring int) error {
	return d.write(ctx, fmt.Sprintf("completing scoring %d of run %s", scoring, runID), func(tx pgx.Tx) error {
		return execOne(ctx, tx, errNotReserved, `UPDATE scorings SET status = 'complete' WHERE run_id = $1 AND scoring = $2`, runID, scoring)
	})
}

// LatestScoring is the highest scoring number of a run that has scores and
// is not pending, 0 when there is none (or the run does not exist). It steps
// down from the highest scoring with scores past pending ones, each step one
// index seek; pending scorings are few (killed rescores).
func (d *DB) LatestScoring(ctx context.Context, runID string) (int, error) {
	var n int
	err := d.read(ctx, func(tx pgx.Tx) error {
		pending := map[int]bool{}
		rows, err := tx.Query(ctx, `SELECT scoring FROM scorings WHERE run_id = $1 AND status = 'pending'`, runID)
		if err != nil {
			return err
		}
		err = each(ctx, rows, func() error {
			var p int
			if err := rows.Scan(&p); err != nil {
				return err
			}
			pending[p] = true
			return nil
		})
		if err != nil {
			return err
		}
		below := int64(1) << 62
		for {
			if err := tx.QueryRow(ctx, `SELECT coalesce(max(scoring), 0) FROM scores WHERE run_id = $1 AND scoring < $2`, runID, below).Scan(&n); err != nil {
				return err
			}
			if n == 0 || !pending[n] {
				return nil
			}
			below = int64(n)
		}
	})
	if err != nil {
		return 0, fmt.Errorf("reading the latest scoring of run %s: %w", runID, err)
	}
	return n, nil
}

// ScoringPending reports whether a scoring was reserved and not completed.
func (d *DB) ScoringPending(ctx context.Context, runID string, scoring int) (bool, error) {
	var pending bool
	if err := d.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM scorings WHERE run_id = $1 AND scoring = $2 AND status = 'pending')`,
		runID, scoring).Scan(&pending); err != nil {
		return false, fmt.Errorf("reading scoring %d of run %s: %w", scoring, runID, err)
	}
	return pending, nil
}

// ResultsWithoutCase counts the run's results whose case ID has no row in
// the cases table. It first looks up each distinct case ID once (a case
// has a result per target and epoch), and counts results only when some
// case is missing: every command that reads a run asks, and the common
// answer is none.
func (d *DB) ResultsWithoutCase(ctx context.Context, runID string) (int, error) {
	var n int
	err := d.read(ctx, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM (SELECT DISTINCT case_id FROM results WHERE run_id = $1) r
			WHERE NOT EXISTS (SELECT 1 FROM cases c WHERE c.run_id = $1 AND c.case_id = r.case_id)`, runID).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
		return tx.QueryRow(ctx, `SELECT count(*) FROM results r
			WHERE r.run_id = $1 AND NOT EXISTS (SELECT 1 FROM cases c WHERE c.run_id = r.run_id AND c.case_id = r.case_id)`,
			runID).Scan(&n)
	})
	if err != nil {
		return 0, fmt.Errorf("counting results without a case in run %s: %w", runID, err)
	}
	return n, nil
}

// SetScoringScorersHash records the scorers hash of a reserved scoring.
func (d *DB) SetScoringScorersHash(ctx context.Context, runID string, scoring int, hash string) error {
	return d.write(ctx, fmt.Sprintf("recording the scorers hash of scoring %d of run %s", scoring, runID), func(tx pgx.Tx) error {
		return execOne(ctx, tx, errNotReserved, `UPDATE scorings SET scorers_hash = $1 WHERE run_id = $2 AND scoring = $3`, hash, runID, scoring)
	})
}

// ScoringScorersHash returns the scorers hash a scoring was made with: the
// run's for scoring 1, the recorded one for a rescore ("" when none was).
func (d *DB) ScoringScorersHash(ctx context.Context, runID string, scoring int) (string, error) {
	var h string
	row := func() pgx.Row {
		if scoring == 1 {
			return d.pool.QueryRow(ctx, `SELECT coalesce((SELECT scorers_hash FROM runs WHERE id = $1), '')`, runID)
		}
		return d.pool.QueryRow(ctx, `SELECT coalesce((SELECT scorers_hash FROM scorings WHERE run_id = $1 AND scoring = $2), '')`, runID, scoring)
	}()
	if err := row.Scan(&h); err != nil {
		return "", fmt.Errorf("reading the scorers hash of scoring %d of run %s: %w", scoring, runID, err)
	}
	return h, nil
}

// errNotReserved is the answer for a scoring that was never reserved.
var errNotReserved = errors.New("the scoring was never reserved (ReserveScoring)")

// execOne runs a statement that must change one row (or more), and returns
// none when it changed nothing.
func execOne(ctx context.Context, tx pgx.Tx, none error, query string, args ...any) error {
	tag, err := tx.Exec(ctx, query, args...)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return none
	}
	return nil
}
