package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/assay-eval/assay/internal/store"
)

// AcquireLease implements store.Store. The read of the current holder and
// the write share one IMMEDIATE transaction, so of two processes taking the
// lease at once exactly one gets it.
func (d *DB) AcquireLease(ctx context.Context, l store.Lease, staleBefore time.Time, force bool) error {
	if l.RunID == "" || l.Holder == "" {
		return fmt.Errorf("taking the lease: run and holder are required")
	}
	return d.write(ctx, "taking the lease on run "+l.RunID, func(tx *sql.Tx) error {
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
		_, err = tx.ExecContext(ctx, `INSERT INTO leases (run_id, holder, pid, host, acquired, heartbeat) VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT (run_id) DO UPDATE SET holder = excluded.holder, pid = excluded.pid, host = excluded.host,
				acquired = excluded.acquired, heartbeat = excluded.heartbeat`,
			l.RunID, l.Holder, l.PID, l.Host, micros(acquired).Int64, micros(l.Heartbeat).Int64)
		return err
	})
}

// RenewLease implements store.Store.
func (d *DB) RenewLease(ctx context.Context, runID, holder string, now time.Time) error {
	return d.write(ctx, "renewing the lease on run "+runID, func(tx *sql.Tx) error {
		return execOne(ctx, tx, store.ErrLeaseLost, `UPDATE leases SET heartbeat = ? WHERE run_id = ? AND holder = ?`, micros(now).Int64, runID, holder)
	})
}

// ReleaseLease implements store.Store.
func (d *DB) ReleaseLease(ctx context.Context, runID, holder string) error {
	return d.write(ctx, "releasing the lease on run "+runID, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM leases WHERE run_id = ? AND holder = ?`, runID, holder)
		return err
	})
}

// GetLease implements store.Store.
func (d *DB) GetLease(ctx context.Context, runID string) (*store.Lease, error) {
	var l *store.Lease
	err := d.read(ctx, func(tx *sql.Tx) error {
		var err error
		l, err = getLease(ctx, tx, runID)
		return err
	})
	return l, err
}

func getLease(ctx context.Context, tx *sql.Tx, runID string) (*store.Lease, error) {
	var l store.Lease
	var acquired, heartbeat sql.NullInt64
	err := tx.QueryRowContext(ctx, `SELECT run_id, holder, pid, host, acquired, heartbeat FROM leases WHERE run_id = ?`, runID).
		Scan(&l.RunID, &l.Holder, &l.PID, &l.Host, &acquired, &heartbeat)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	l.Acquired, l.Heartbeat = fromMicros(acquired), fromMicros(heartbeat)
	return &l, nil
}
