package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/assay-eval/assay/internal/record"
)

// PutTwins stores twins in one transaction; a twin whose set and case are
// already stored is kept as it was (of one set and case given twice in a
// call, the first).
func (d *DB) PutTwins(ctx context.Context, twins []record.Twin) error {
	if len(twins) == 0 {
		return nil
	}
	n := len(twins)
	sets, ids, sources, fields, created := make([][]byte, 0, n), make([][]byte, 0, n), make([][]byte, 0, n), make([][]byte, 0, n), make([]*int64, 0, n)
	for _, t := range twins {
		if t.Set == "" || t.CaseID == "" {
			return fmt.Errorf("storing twins: a twin needs a set and a case ID (got set %q, case %q)", t.Set, t.CaseID)
		}
		f := t.Fields
		if len(f) == 0 {
			f = []byte("{}")
		}
		var c *int64
		if !t.CreatedAt.IsZero() {
			us := t.CreatedAt.UnixMicro()
			c = &us
		}
		sets, ids, sources = append(sets, b(t.Set)), append(ids, b(t.CaseID)), append(sources, b(t.Source))
		fields, created = append(fields, f), append(created, c)
	}
	const cols = `set_id, case_id, source, fields, created`
	q := `INSERT INTO twins (` + cols + `)
		SELECT DISTINCT ON (set_id, case_id) ` + cols + ` FROM ` + unnest(1, []string{"bytea", "bytea", "bytea", "bytea", "int8"}, "t", cols) + `
		ORDER BY set_id, case_id, ord
		ON CONFLICT (set_id, case_id) DO NOTHING`
	return d.write(ctx, "storing twins", func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, q, sets, ids, sources, fields, created)
		return err
	})
}

// Twins streams a twin set in case-ID order.
func (d *DB) Twins(ctx context.Context, set string, fn func(record.Twin) error) error {
	rows, err := d.pool.Query(ctx, `SELECT set_id, case_id, source, fields, created FROM twins
		WHERE set_id = $1 ORDER BY case_id`, b(set))
	if err != nil {
		return fmt.Errorf("reading twin set %s: %w", set, err)
	}
	var cbErr error
	err = each(ctx, rows, func() error {
		var t record.Twin
		var created *int64
		if err := rows.Scan(bstr{&t.Set}, bstr{&t.CaseID}, bstr{&t.Source}, &t.Fields, &created); err != nil {
			return err
		}
		t.CreatedAt = fromMicros(created)
		cbErr = fn(t)
		return cbErr
	})
	if err != nil && err == cbErr {
		return err
	}
	if err != nil {
		return fmt.Errorf("reading twin set %s: %w", set, err)
	}
	return nil
}
