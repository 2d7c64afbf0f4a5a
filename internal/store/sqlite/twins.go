package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/assay-eval/assay/internal/record"
)

// PutTwins stores twins in one transaction; a twin whose set and case are
// already stored is kept as it was.
func (d *DB) PutTwins(ctx context.Context, twins []record.Twin) error {
	if len(twins) == 0 {
		return nil
	}
	tx, err := d.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("storing twins: %w", err)
	}
	defer tx.Rollback()
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO twins (set_id, case_id, source, fields, created)
		VALUES (?, ?, ?, ?, ?) ON CONFLICT (set_id, case_id) DO NOTHING`)
	if err != nil {
		return fmt.Errorf("storing twins: %w", err)
	}
	defer stmt.Close()
	for _, t := range twins {
		if t.Set == "" || t.CaseID == "" {
			return fmt.Errorf("storing twins: a twin needs a set and a case ID (got set %q, case %q)", t.Set, t.CaseID)
		}
		fields := string(t.Fields)
		if fields == "" {
			fields = "{}"
		}
		if _, err := stmt.ExecContext(ctx, t.Set, t.CaseID, t.Source, fields, micros(t.CreatedAt)); err != nil {
			return fmt.Errorf("storing twin %s of set %s: %w", t.CaseID, t.Set, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("storing twins: %w", err)
	}
	return nil
}

// Twins streams a twin set in case-ID order.
func (d *DB) Twins(ctx context.Context, set string, fn func(record.Twin) error) error {
	rows, err := d.r.QueryContext(ctx, `SELECT set_id, case_id, source, fields, created FROM twins
		WHERE set_id = ? ORDER BY case_id`, set)
	if err != nil {
		return fmt.Errorf("reading twin set %s: %w", set, err)
	}
	defer rows.Close()
	for rows.Next() {
		var t record.Twin
		var fields string
		var created sql.NullInt64
		if err := rows.Scan(&t.Set, &t.CaseID, &t.Source, &fields, &created); err != nil {
			return fmt.Errorf("reading twin set %s: %w", set, err)
		}
		t.Fields = []byte(fields)
		t.CreatedAt = fromMicros(created)
		if err := fn(t); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("reading twin set %s: %w", set, err)
	}
	return nil
}
