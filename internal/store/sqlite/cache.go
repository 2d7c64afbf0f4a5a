package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
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

// CachePut stores response under key, replacing any response stored there.
func (d *DB) CachePut(ctx context.Context, key string, response []byte) error {
	if response == nil {
		response = []byte{}
	}
	_, err := d.w.ExecContext(ctx, `INSERT OR REPLACE INTO cache (key, response, created_at) VALUES (?, ?, ?)`,
		key, response, time.Now().UnixMicro())
	if err != nil {
		return fmt.Errorf("writing the response cache: %w", err)
	}
	return nil
}
