package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/assay-eval/assay/internal/record"
)

// The light streams (store.Keys), in the SQLite store's orders.
// resultKeysOfCases and resultKeysOfUnknownCases are resultsOfCases and
// resultsOfUnknownCases (results.go: the cases' index in line order, each
// case's results through the unique index, streamed without sorting the
// run) reading the key and whether the result failed alone, so the keys
// come in the order of Results. verdictsOf walks the scores' unique key
// (run, scoring, case, target, epoch, scorer) in its order. $1 is the run,
// $2 the scoring, $3 the scorer.
const (
	resultKeysOfCases = `SELECT r.case_id, r.target, r.epoch, r.failed FROM cases c CROSS JOIN LATERAL (
			SELECT r.case_id, r.target, r.epoch, r.error_kind <> ''::bytea AS failed FROM results r
			WHERE r.run_id = c.run_id AND r.case_id = c.case_id ORDER BY r.target, r.epoch OFFSET 0) r
		WHERE c.run_id = $1 ORDER BY c.line, c.case_id, r.target, r.epoch`
	resultKeysOfUnknownCases = `SELECT r.case_id, r.target, r.epoch, r.error_kind <> ''::bytea FROM results r
		WHERE r.run_id = $1 AND NOT EXISTS (SELECT 1 FROM cases c WHERE c.run_id = r.run_id AND c.case_id = r.case_id)
		ORDER BY r.case_id, r.target, r.epoch`
	verdictsOf = `SELECT case_id, target, epoch, pass, kind FROM scores
		WHERE run_id = $1 AND scoring = $2 AND scorer = $3 ORDER BY case_id, target, epoch`
)

// ResultKeys streams the keys of a run's results in the order of Results
// (and from one snapshot, as Results does), without their outputs.
func (d *DB) ResultKeys(ctx context.Context, runID string, fn func(k record.Key, failed bool) error) error {
	if !storableID(runID) {
		return nil // no such run: no keys, as in SQLite
	}
	err := d.read(ctx, func(tx pgx.Tx) error {
		for _, q := range []string{resultKeysOfCases, resultKeysOfUnknownCases} {
			rows, err := tx.Query(ctx, q, runID)
			if err != nil {
				return err
			}
			err = each(ctx, rows, func() error {
				var k record.Key
				var failed bool
				if err := rows.Scan(bstr{&k.CaseID}, bstr{&k.Target}, &k.Epoch, &failed); err != nil {
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
	if !storableID(runID) {
		return nil
	}
	rows, err := d.pool.Query(ctx, verdictsOf, runID, scoring, b(scorer))
	if err != nil {
		return fmt.Errorf("reading the verdicts of %q in scoring %d of run %s: %w", scorer, scoring, runID, err)
	}
	err = each(ctx, rows, func() error {
		var k record.Key
		var pass bool
		var kind string
		if err := rows.Scan(bstr{&k.CaseID}, bstr{&k.Target}, &k.Epoch, &pass, bstr{&kind}); err != nil {
			return err
		}
		return fn(k, pass, kind)
	})
	if err != nil {
		return fmt.Errorf("reading the verdicts of %q in scoring %d of run %s: %w", scorer, scoring, runID, err)
	}
	return nil
}
