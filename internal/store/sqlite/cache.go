package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/assay-eval/assay/internal/store"
)

// CacheGet returns the cached response under key; ok is false on a miss.
func (d *DB) CacheGet(ctx context.Context, key string) ([]byte, bool, error) {
	var b []byte
	err := d.r.QueryRowContext(ctx, `SELECT response FROM cache WHERE key = ?`, key).Scan(&b)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("reading the response cache: %w", err)
	}
	if b == nil {
		b = []byte{}
	}
	return b, true, nil
}

// CachePut stores response under key with the target's name, replacing any
// response stored there.
func (d *DB) CachePut(ctx context.Context, key, target string, response []byte) error {
	if response == nil {
		response = []byte{}
	}
	_, err := d.w.ExecContext(ctx, `INSERT OR REPLACE INTO cache (key, response, created_at, target) VALUES (?, ?, ?, ?)`,
		key, response, d.now().UnixMicro(), target)
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
		q += ` WHERE target = ?`
		args = append(args, target)
	}
	q += ` GROUP BY target ORDER BY target`
	rows, err := d.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("reading the response cache: %w", err)
	}
	defer rows.Close()
	var out []store.CacheStats
	for rows.Next() {
		var s store.CacheStats
		var oldest, newest sql.NullInt64
		if err := rows.Scan(&s.Target, &s.Entries, &s.Bytes, &oldest, &newest); err != nil {
			return nil, fmt.Errorf("reading the response cache: %w", err)
		}
		s.Oldest, s.Newest = fromMicros(oldest), fromMicros(newest)
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading the response cache: %w", err)
	}
	return out, nil
}

// CacheClear deletes cache entries (see store.Store).
func (d *DB) CacheClear(ctx context.Context, target string, only bool) (int64, error) {
	q, args := `DELETE FROM cache`, []any(nil)
	if only {
		q, args = q+` WHERE target = ?`, []any{target}
	}
	res, err := d.w.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, fmt.Errorf("clearing the response cache: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("clearing the response cache: %w", err)
	}
	return n, nil
}
