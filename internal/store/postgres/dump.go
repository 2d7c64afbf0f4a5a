package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/assay-eval/assay/internal/store"
)

var _ store.Dump = (*DB)(nil)

// Scorings implements store.Dump: the union of the numbers with scores and
// the numbers with a row, with each one's row (if any) and score count.
func (d *DB) Scorings(ctx context.Context, runID string) ([]store.Scoring, error) {
	var out []store.Scoring
	err := d.read(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `WITH n AS (
				SELECT scoring FROM scores WHERE run_id = $1
				UNION SELECT scoring FROM scorings WHERE run_id = $1)
			SELECT n.scoring, g.status IS NOT NULL, coalesce(g.status, 'complete'), coalesce(g.scorers_hash, ''), g.created,
				(SELECT count(*) FROM scores s WHERE s.run_id = $1 AND s.scoring = n.scoring)
			FROM n LEFT JOIN scorings g ON g.run_id = $1 AND g.scoring = n.scoring
			ORDER BY n.scoring`, runID)
		if err != nil {
			return err
		}
		return each(ctx, rows, func() error {
			var s store.Scoring
			var number, scores int64
			var status string
			var created *int64
			if err := rows.Scan(&number, &s.Recorded, &status, &s.ScorersHash, &created, &scores); err != nil {
				return err
			}
			s.Scoring, s.Scores = int(number), int(scores)
			s.Pending, s.Created = status == "pending", fromMicros(created)
			out = append(out, s)
			return nil
		})
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
	var stored bool
	err := d.write(ctx, fmt.Sprintf("recording scoring %d of run %s", s.Scoring, runID), func(tx pgx.Tx) error {
		var exists bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM runs WHERE id = $1)`, runID).Scan(&exists); err != nil {
			return err
		}
		if !exists {
			return fmt.Errorf("the run does not exist")
		}
		tag, err := tx.Exec(ctx, `INSERT INTO scorings (run_id, scoring, status, created, scorers_hash) VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (run_id, scoring) DO NOTHING`, runID, int64(s.Scoring), status, micros(s.Created), s.ScorersHash)
		if err != nil {
			return err
		}
		stored = tag.RowsAffected() == 1
		return nil
	})
	return stored, err
}

// CacheEntries implements store.Dump. Entries stream from one snapshot,
// ordered bytewise by key (COLLATE "C", SQLite's BINARY order).
func (d *DB) CacheEntries(ctx context.Context, fn func(store.CacheEntry) error) error {
	err := d.read(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT key, target, response, created_at FROM cache ORDER BY key COLLATE "C"`)
		if err != nil {
			return err
		}
		return each(ctx, rows, func() error {
			var e store.CacheEntry
			var created int64
			if err := rows.Scan(&e.Key, bstr{&e.Target}, &e.Response, &created); err != nil {
				return err
			}
			if e.Response == nil {
				e.Response = []byte{}
			}
			e.Created = fromMicros(&created)
			return fn(e)
		})
	})
	if err != nil {
		return fmt.Errorf("reading the response cache: %w", err)
	}
	return nil
}

// PutCacheEntries implements store.Dump: one batch of inserts that skip
// stored keys.
func (d *DB) PutCacheEntries(ctx context.Context, entries []store.CacheEntry) (int, error) {
	if len(entries) == 0 {
		return 0, nil
	}
	n := 0
	err := d.write(ctx, "writing the response cache", func(tx pgx.Tx) error {
		n = 0
		batch := &pgx.Batch{}
		for _, e := range entries {
			resp := e.Response
			if resp == nil {
				resp = []byte{}
			}
			batch.Queue(`INSERT INTO cache (key, response, created_at, target) VALUES ($1, $2, $3, $4)
				ON CONFLICT (key) DO NOTHING`, e.Key, resp, e.Created.UnixMicro(), b(e.Target))
		}
		br := tx.SendBatch(ctx, batch)
		for _, e := range entries {
			tag, err := br.Exec()
			if err != nil {
				_ = br.Close()
				return fmt.Errorf("entry %s: %w", e.Key, err)
			}
			n += int(tag.RowsAffected())
		}
		return br.Close()
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

// TwinSets implements store.Dump.
func (d *DB) TwinSets(ctx context.Context) ([]string, error) {
	var out []string
	err := d.read(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT DISTINCT set_id FROM twins ORDER BY set_id`)
		if err != nil {
			return err
		}
		return each(ctx, rows, func() error {
			var set string
			if err := rows.Scan(bstr{&set}); err != nil {
				return err
			}
			out = append(out, set)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("listing the twin sets: %w", err)
	}
	return out, nil
}
