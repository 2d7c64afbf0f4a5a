package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/assay-eval/assay/internal/store"
)

// CacheGet returns the cached response under key; ok is false on a miss.
func (d *DB) CacheGet(ctx context.Context, key string) ([]byte, bool, error) {
	var resp []byte
	err := d.pool.QueryRow(ctx, `SELECT response FROM cache WHERE key = $1`, key).Scan(&resp)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("reading the response cache: %w", err)
	}
	if resp == nil {
		resp = []byte{}
	}
	return resp, true, nil
}

// CachePut stores response under key with the target's name, replacing any
// response stored there.
func (d *DB) CachePut(ctx context.Context, key, target string, response []byte) error {
	if response == nil {
		response = []byte{}
	}
	// One statement, atomic on its own: no transaction around it (the
	// cache is on every call's path).
	_, err := d.pool.Exec(ctx, `INSERT INTO cache (key, response, created_at, target) VALUES ($1, $2, $3, $4)
		ON CONFLICT (key) DO UPDATE SET response = excluded.response, created_at = excluded.created_at, target = excluded.target`,
		key, response, d.now().UnixMicro(), b(target))
	if err != nil {
		return fmt.Errorf("writing the response cache: %w", err)
	}
	return nil
}

// CacheStats counts the cache's entries per target (see store.Store).
func (d *DB) CacheStats(ctx context.Context, target string, only bool) ([]store.CacheStats, error) {
	q := `SELECT target, count(*), coalesce(sum(length(response)), 0), min(created_at), max(created_at) FROM cache`
	var args []any
	if only {
		q += ` WHERE target = $1`
		args = append(args, b(target))
	}
	q += ` GROUP BY target ORDER BY target`
	rows, err := d.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("reading the response cache: %w", err)
	}
	var out []store.CacheStats
	err = each(ctx, rows, func() error {
		var s store.CacheStats
		var oldest, newest *int64
		if err := rows.Scan(bstr{&s.Target}, &s.Entries, &s.Bytes, &oldest, &newest); err != nil {
			return err
		}
		s.Oldest, s.Newest = fromMicros(oldest), fromMicros(newest)
		out = append(out, s)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the response cache: %w", err)
	}
	return out, nil
}

// CacheClear deletes cache entries (see store.Store).
func (d *DB) CacheClear(ctx context.Context, target string, only bool) (int64, error) {
	q, args := `DELETE FROM cache`, []any(nil)
	if only {
		q, args = q+` WHERE target = $1`, []any{b(target)}
	}
	var n int64
	err := d.write(ctx, "clearing the response cache", func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, q, args...)
		n = tag.RowsAffected()
		return err
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}
