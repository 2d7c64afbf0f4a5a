package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/assay-eval/assay/internal/record"
)

// The light streams (store.Keys). resultKeysOfCases and
// resultKeysOfUnknownCases are resultsOfCases and resultsOfUnknownCases
// reading the key and error_kind alone, so the keys come in the order of
// Results. The second looks each distinct case ID up in the cases once
// (a case has a result per target and epoch), not each result: on
// 1,000,000 results that finds none missing in 0.7 s of CPU instead of
// 1.6 s. verdictsOf walks the scores' unique index (run, scoring, case,
// target, epoch, scorer) in its order. TestLightQueriesUseIndexes checks
// the plans. ?1 is the run, ?2 the scoring, ?3 the scorer.
const (
	resultKeysOfCases = `SELECT r.case_id, r.target, r.epoch, r.error_kind != '' FROM cases c CROSS JOIN results r
		ON r.run_id = c.run_id AND r.case_id = c.case_id
		WHERE c.run_id = ?1 ORDER BY c.line, c.case_id, r.target, r.epoch`
	resultKeysOfUnknownCases = `SELECT r.case_id, r.target, r.epoch, r.error_kind != '' FROM results r
		WHERE r.run_id = ?1 AND r.case_id IN (SELECT o.case_id FROM (SELECT DISTINCT case_id FROM results WHERE run_id = ?1) o
			WHERE NOT EXISTS (SELECT 1 FROM cases c WHERE c.run_id = ?1 AND c.case_id = o.case_id))
		ORDER BY r.case_id, r.target, r.epoch`
	verdictsOf = `SELECT case_id, target, epoch, pass, kind FROM scores
		WHERE run_id = ?1 AND scoring = ?2 AND scorer = ?3 ORDER BY case_id, target, epoch`
)

// ResultKeys streams the keys of a run's results in the order of Results
// (and from one snapshot, as Results does), without their outputs.
func (d *DB) ResultKeys(ctx context.Context, runID string, fn func(k record.Key, failed bool) error) error {
	err := d.read(ctx, func(tx *sql.Tx) error {
		for _, q := range []string{resultKeysOfCases, resultKeysOfUnknownCases} {
			rows, err := tx.QueryContext(ctx, q, runID)
			if err != nil {
				return err
			}
			err = each(ctx, rows, func() error {
				var k record.Key
				var failed bool
				if err := rows.Scan(&k.CaseID, &k.Target, &k.Epoch, &failed); err != nil {
					return err
				}
				return fn(k, failed)
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("reading result keys of run %s: %w", runID, err)
	}
	return nil
}

// Verdicts streams one scorer's verdicts in one scoring of a run, by case
// ID, target and epoch.
func (d *DB) Verdicts(ctx context.Context, runID string, scoring int, scorer string, fn func(k record.Key, pass bool, kind string) error) error {
	rows, err := d.r.QueryContext(ctx, verdictsOf, runID, scoring, scorer)
	if err != nil {
		return fmt.Errorf("reading the verdicts of %q in scoring %d of run %s: %w", scorer, scoring, runID, err)
	}
	err = each(ctx, rows, func() error {
		var k record.Key
		var pass bool
		var kind string
		if err := rows.Scan(&k.CaseID, &k.Target, &k.Epoch, &pass, &kind); err != nil {
			return err
		}
		return fn(k, pass, kind)
	})
	if err != nil {
		return fmt.Errorf("reading the verdicts of %q in scoring %d of run %s: %w", scorer, scoring, runID, err)
	}
	return nil
}
