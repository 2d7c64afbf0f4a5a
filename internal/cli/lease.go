package cli

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

// leaseTTL is how old a lease's heartbeat may be before another process
// may take the run over; the holder renews it every leaseTTL/6.
const leaseTTL = 60 * time.Second

// runLease is this process's lease on a run: one writer per run, so two
// resumes of one run never both make every call.
type runLease struct {
	st     store.Store
	runID  string
	holder string
	lost   chan struct{} // closed when another process broke the lease
	done   chan struct{}
	exited chan struct{}
}

// takeLease takes the lease on runID before any call is made. A lease held
// by a live process is refused with its holder named (exit 1) unless force;
// one left by a process that died on this host, or whose heartbeat is older
// than leaseTTL, is taken over with a notice. The lease is renewed in the
// background until release; if another process breaks it (--force), lost
// closes and the caller stops.
func takeLease(ctx context.Context, g *Globals, st store.Store, runID string, force bool) (*runLease, error) {
	host, _ := os.Hostname()
	var nonce [6]byte
	_, _ = rand.Read(nonce[:])
	now := g.Now()
	l := store.Lease{RunID: runID, Holder: fmt.Sprintf("%s/%d/%s", host, os.Getpid(), hex.EncodeToString(nonce[:])),
		PID: os.Getpid(), Host: host, Acquired: now, Heartbeat: now}
	err := st.AcquireLease(ctx, l, now.Add(-leaseTTL), force)
	var held *store.LeaseHeldError
	if errors.As(err, &held) {
		// The store already took over a stale lease; a fresh one whose
		// process died on this host is taken over here.
		if holderGone(held.Lease, now, host) {
			fmt.Fprintf(g.Stderr, "run %s: taking over the lease of pid %d on %s, which is no longer running\n", runID, held.Lease.PID, host)
			err = st.AcquireLease(ctx, l, now.Add(-leaseTTL), true)
		} else {
			return nil, fmt.Errorf("%w; wait for it to finish, or if that process is gone pass --force to take the run over", err)
		}
	}
	if err != nil {
		return nil, err
	}
	rl := &runLease{st: st, runID: runID, holder: l.Holder, lost: make(chan struct{}), done: make(chan struct{}), exited: make(chan struct{})}
	go rl.heartbeat(g)
	return rl, nil
}

func (rl *runLease) heartbeat(g *Globals) {
	defer close(rl.exited)
	tick := time.NewTicker(leaseTTL / 6)
	defer tick.Stop()
	for {
		select {
		case <-rl.done:
			return
		case <-tick.C:
			ctx, cancel := context.WithTimeout(context.Background(), leaseTTL/6)
			err := rl.st.RenewLease(ctx, rl.runID, rl.holder, g.Now())
			cancel()
			if errors.Is(err, store.ErrLeaseLost) {
				fmt.Fprintf(g.Stderr, "run %s: another process took the run over (--force); stopping\n", rl.runID)
				close(rl.lost)
				return
			}
		}
	}
}

// release stops the heartbeat and gives the lease up.
func (rl *runLease) release() {
	close(rl.done)
	<-rl.exited
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = rl.st.ReleaseLease(ctx, rl.runID, rl.holder)
}

// requireNoWriter refuses to work on a run another live process is
// writing (rescore would score a run whose results are still arriving).
func requireNoWriter(ctx context.Context, g *Globals, st store.Store, what string, run *record.Run) error {
	l, err := st.GetLease(ctx, run.ID)
	if err != nil || l == nil {
		return err
	}
	host, _ := os.Hostname()
	if holderGone(*l, g.Now(), host) {
		return nil
	}
	return fmt.Errorf("%s: %w; wait for it to finish", what, &store.LeaseHeldError{Lease: *l})
}

// holderGone reports whether a lease's writer is gone: its heartbeat is
// older than leaseTTL, or it ran on this host and its process is not
// running.
func holderGone(l store.Lease, now time.Time, host string) bool {
	return l.Heartbeat.Before(now.Add(-leaseTTL)) || (l.Host == host && !processAlive(l.PID))
}
