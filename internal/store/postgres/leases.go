package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/assay-eval/assay/internal/store"
)

// AcquireLease implements store.Store. The read of the current holder and
// the write share one SERIALIZABLE transaction: of processes taking the
// lease at once exactly one commits, and the others, retried by write,
// then read its lease and are refused (or take it over when it is stale).
func (d *DB) AcquireLease(ctx context.Context, l store.Lease, staleBefore time.Time, force bool) error {
	if l.RunID == "" || l.Holder == "" {
		return fmt.Errorf("taking the lease: run and holder are required")
	}
	return d.write(ctx, "taking the lease on run "+l.RunID, func(tx pgx.Tx) error {
		cur, err := getLease(ctx, tx, l.RunID)
		if err != nil {
			return err
		}
		if cur != nil && cur.Holder != l.Holder && !force && !cur.Heartbeat.Before(staleBefore) {
			return &store.LeaseHeldError{Lease: *cur}
		}
		acquired := l.Acquired
		if cur != nil && cur.Holder == l.Holder {
			acquired = cur.Acquired
		}
		_, err = tx.Exec(ctx, `INSERT INTO leases (run_id, holder, pid, host, acquired, heartbeat) VALUES ($1, $2, $3, $4, $5, $6)
			ON CONFLICT (run_id) DO UPDATE SET holder = excluded.holder, pid = excluded.pid, host = excluded.host,
				acquired = excluded.acquired, heartbeat = excluded.heartbeat`,
			l.RunID, l.Holder, l.PID, b(l.Host), leaseMicros(acquired), leaseMicros(l.Heartbeat))
		return err
	})
}

// RenewLease implements store.Store.
func (d *DB) RenewLease(ctx context.Context, runID, holder string, now time.Time) error {
	return d.write(ctx, "renewing the lease on run "+runID, func(tx pgx.Tx) error {
		return execOne(ctx, tx, store.ErrLeaseLost, `UPDATE leases SET heartbeat = $1 WHERE run_id = $2 AND holder = $3`, leaseMicros(now), runID, holder)
	})
}

// ReleaseLease implements store.Store.
func (d *DB) ReleaseLease(ctx context.Context, runID, holder string) error {
	return d.write(ctx, "releasing the lease on run "+runID, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `DELETE FROM leases WHERE run_id = $1 AND holder = $2`, runID, holder)
		return err
	})
}

// GetLease implements store.Store.
func (d *DB) GetLease(ctx context.Context, runID string) (*store.Lease, error) {
	var l *store.Lease
	err := d.read(ctx, func(tx pgx.Tx) error {
		var err error
		l, err = getLease(ctx, tx, runID)
		return err
	})
	return l, err
}

func getLease(ctx context.Context, tx pgx.Tx, runID string) (*store.Lease, error) {
	var l store.Lease
	var acquired, heartbeat int64
	err := tx.QueryRow(ctx, `SELECT run_id, holder, pid, host, acquired, heartbeat FROM leases WHERE run_id = $1`, runID).
		Scan(&l.RunID, &l.Holder, &l.PID, bstr{&l.Host}, &acquired, &heartbeat)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	l.Acquired, l.Heartbeat = fromMicros(&acquired), fromMicros(&heartbeat)
	return &l, nil
}

// leaseMicros encodes a lease time for its NOT NULL column as the SQLite
// store does: microseconds since the epoch, 0 for the zero time.
func leaseMicros(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMicro()
}
