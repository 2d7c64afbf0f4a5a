package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/assay-eval/assay/internal/store"
)

var _ store.Dump = (*DB)(nil)

// Scorings implements store.Dump: the union of the numbers with scores and
// the numbers with a row, with each one's row (if any) and score count.
func (d *DB) Scorings(ctx context.Context, runID string) ([]store.Scoring, error) {
	rows, err := d.r.QueryContext(ctx, `WITH n AS (
			SELECT scoring FROM scores WHERE run_id = ?1
			UNION SELECT scoring FROM scorings WHERE run_id = ?1)
		SELECT n.scoring, g.status IS NOT NULL, coalesce(g.status, 'complete'), coalesce(g.scorers_hash, ''), g.created,
			(SELECT count(*) FROM scores s WHERE s.run_id = ?1 AND s.scoring = n.scoring)
		FROM n LEFT JOIN scorings g ON g.run_id = ?1 AND g.scoring = n.scoring
		ORDER BY n.scoring`, runID)
	if err != nil {
		return nil, fmt.Errorf("listing the scorings of run %s: %w", runID, err)
	}
	var out []store.Scoring
	err = each(ctx, rows, func() error {
		var s store.Scoring
		var status string
		var created sql.NullInt64
		if err := rows.Scan(&s.Scoring, &s.Recorded, &status, &s.ScorersHash, &created, &s.Scores); err != nil {
			return err
		}
		s.Pending, s.Created = status == "pending", fromMicros(created)
		out = append(out, s)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing the scorings of run %s: %w", runID, err)
	}
	return out, nil
}

// PutScoring implements store.Dump.
func (d *DB) PutScoring(ctx context.Context, runID string, s store.Scoring) (bool, error) {
	if s.Scoring < 1 {
		return false, fmt.Errorf("recording scoring %d of run %s: scorings are numbered from 1", s.Scoring, runID)
	}
	status := "complete"
	if s.Pending {
		status = "pending"
	}
	var n int64
	err := d.write(ctx, fmt.Sprintf("recording scoring %d of run %s", s.Scoring, runID), func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO scorings (run_id, scoring, status, created, scorers_hash) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (run_id, scoring) DO NOTHING`, runID, s.Scoring, status, micros(s.Created), s.ScorersHash)
		if err != nil {
			return explain(err, "the run does not exist")
		}
		n, err = res.RowsAffected()
		return err
	})
	return n == 1, err
}

// CacheEntries implements store.Dump.
func (d *DB) CacheEntries(ctx context.Context, fn func(store.CacheEntry) error) error {
	rows, err := d.r.QueryContext(ctx, `SELECT key, target, response, created_at FROM cache ORDER BY key`)
	if err != nil {
		return fmt.Errorf("reading the response cache: %w", err)
	}
	err = each(ctx, rows, func() error {
		var e store.CacheEntry
		var created sql.NullInt64
		if err := rows.Scan(&e.Key, &e.Target, &e.Response, &created); err != nil {
			return err
		}
		if e.Response == nil {
			e.Response = []byte{}
		}
		e.Created = fromMicros(created)
		return fn(e)
	})
	if err != nil {
		return fmt.Errorf("reading the response cache: %w", err)
	}
	return nil
}

// PutCacheEntries implements store.Dump.
func (d *DB) PutCacheEntries(ctx context.Context, entries []store.CacheEntry) (int, error) {
	if len(entries) == 0 {
		return 0, nil
	}
	n := 0
	err := d.write(ctx, "writing the response cache", func(tx *sql.Tx) error {
		n = 0
		st, err := tx.PrepareContext(ctx, `INSERT INTO cache (key, response, created_at, target) VALUES (?, ?, ?, ?)
			ON CONFLICT (key) DO NOTHING`)
		if err != nil {
			return err
		}
		defer st.Close()
		for _, e := range entries {
			resp := e.Response
			if resp == nil {
				resp = []byte{}
			}
			res, err := st.ExecContext(ctx, e.Key, resp, e.Created.UnixMicro(), e.Target)
			if err != nil {
				return fmt.Errorf("entry %s: %w", e.Key, err)
			}
			k, err := res.RowsAffected()
			if err != nil {
				return err
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

// TwinSets implements store.Dump.
func (d *DB) TwinSets(ctx context.Context) ([]string, error) {
	rows, err := d.r.QueryContext(ctx, `SELECT DISTINCT set_id FROM twins ORDER BY set_id`)
	if err != nil {
		return nil, fmt.Errorf("listing the twin sets: %w", err)
	}
	var out []string
	err = each(ctx, rows, func() error {
		var s string
		if err := rows.Scan(&s); err != nil {
			return err
		}
		out = append(out, s)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing the twin sets: %w", err)
	}
	return out, nil
}
