package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store"
)

// LeaseTTL is how old a lease's heartbeat may be before another process
// may take the run over; the holder renews it every LeaseTTL/6.
const LeaseTTL = 60 * time.Second

// Lease is this process's lease on a run: one writer per run, so two
// resumes of one run never both make every call.
type Lease struct {
	st     store.Store
	e      *Engine
	runID  string
	holder string
	lost   chan struct{} // closed when another process broke the lease
	done   chan struct{}
	exited chan struct{}
	freed  bool
}

// TakeLease takes the lease on runID before any call is made. A lease held
// by a live process is refused with its holder named unless force; one
// left by a process that died on this host, or whose heartbeat is older
// than LeaseTTL, is taken over with a notice on e.Log. The lease is renewed
// in the background until Release; if another process breaks it (--force),
// Lost closes and the holder must stop writing.
func (e *Engine) TakeLease(ctx context.Context, runID string, force bool) (*Lease, error) {
	host := e.hostname()
	var nonce [6]byte
	_, _ = rand.Read(nonce[:])
	now := e.now()
	l := store.Lease{RunID: runID, Holder: fmt.Sprintf("%s/%d/%s", host, os.Getpid(), hex.EncodeToString(nonce[:])),
		PID: os.Getpid(), Host: host, Acquired: now, Heartbeat: now}
	err := e.Store.AcquireLease(ctx, l, now.Add(-LeaseTTL), force)
	var held *store.LeaseHeldError
	if errors.As(err, &held) {
		// The store already took over a stale lease; a fresh one whose
		// process died on this host is taken over here.
		if HolderGone(held.Lease, now, host) {
			e.logf("run %s: taking over the lease of pid %d on %s, which is no longer running\n", runID, held.Lease.PID, host)
			err = e.Store.AcquireLease(ctx, l, now.Add(-LeaseTTL), true)
		} else {
			return nil, fmt.Errorf("%w; wait for it to finish, or if that process is gone pass --force to take the run over", err)
		}
	}
	if err != nil {
		return nil, err
	}
	rl := &Lease{st: e.Store, e: e, runID: runID, holder: l.Holder, lost: make(chan struct{}), done: make(chan struct{}), exited: make(chan struct{})}
	go rl.heartbeat()
	return rl, nil
}

// Lost is closed when another process broke the lease (--force).
func (rl *Lease) Lost() <-chan struct{} { return rl.lost }

func (rl *Lease) heartbeat() {
	defer close(rl.exited)
	tick := time.NewTicker(LeaseTTL / 6)
	defer tick.Stop()
	for {
		select {
		case <-rl.done:
			return
		case <-tick.C:
			ctx, cancel := context.WithTimeout(context.Background(), LeaseTTL/6)
			err := rl.st.RenewLease(ctx, rl.runID, rl.holder, rl.e.now())
			cancel()
			if errors.Is(err, store.ErrLeaseLost) {
				rl.e.logf("run %s: another process took the run over (--force); stopping\n", rl.runID)
				close(rl.lost)
				return
			}
		}
	}
}

// Release stops the heartbeat and gives the lease up; a second call does
// nothing.
func (rl *Lease) Release() {
	if rl == nil || rl.freed {
		return
	}
	rl.freed = true
	close(rl.done)
	<-rl.exited
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = rl.st.ReleaseLease(ctx, rl.runID, rl.holder)
}

// RequireNoWriter refuses to work on a run another live process is
// writing (a rescore would score a run whose results are still arriving);
// what names the work in the error ("rescore RUN").
func (e *Engine) RequireNoWriter(ctx context.Context, what string, run *record.Run) error {
	l, live, err := Writer(ctx, e.Store, run.ID, e.now())
	if err != nil || !live {
		return err
	}
	return fmt.Errorf("%s: %w; wait for it to finish", what, &store.LeaseHeldError{Lease: *l})
}

// Writer reads the lease on runID: the lease (nil when none is held) and
// whether its holder is a live process (see HolderGone; this host's name
// is read here).
func Writer(ctx context.Context, st store.Store, runID string, now time.Time) (*store.Lease, bool, error) {
	l, err := st.GetLease(ctx, runID)
	if err != nil || l == nil {
		return nil, false, err
	}
	host, _ := os.Hostname()
	return l, !HolderGone(*l, now, host), nil
}

// HolderGone reports whether a lease's writer is gone: its heartbeat is
// older than LeaseTTL, or it ran on host and its process is not running.
func HolderGone(l store.Lease, now time.Time, host string) bool {
	return l.Heartbeat.Before(now.Add(-LeaseTTL)) || (l.Host == host && !processAlive(l.PID))
}
