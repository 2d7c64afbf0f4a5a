package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/store"
)

// One writer per run: a held lease is refused to another holder (naming
// it), renewed by its own, taken over once stale, broken by force (and the
// old holder then learns it lost it), and released.
func testLease(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustCreate(t, s, newRun("leased", t0()))
	now := t0()
	a := store.Lease{RunID: "leased", Holder: "a", PID: 11, Host: "host-a", Acquired: now, Heartbeat: now}
	b := store.Lease{RunID: "leased", Holder: "b", PID: 22, Host: "host-b", Acquired: now.Add(time.Second), Heartbeat: now.Add(time.Second)}
	stale := now.Add(-time.Minute) // a's heartbeat is newer: not stale

	if l, err := s.GetLease(ctx, "leased"); err != nil || l != nil {
		t.Fatalf("GetLease of a fresh run = %+v, %v; want none", l, err)
	}
	if err := s.AcquireLease(ctx, a, stale, false); err != nil {
		t.Fatalf("AcquireLease(a): %v", err)
	}
	err := s.AcquireLease(ctx, b, stale, false)
	var held *store.LeaseHeldError
	if !errors.As(err, &held) || held.Lease.Holder != "a" || held.Lease.PID != 11 || held.Lease.Host != "host-a" {
		t.Fatalf("AcquireLease(b) while a holds it: %v; want a LeaseHeldError naming a (pid 11 on host-a)", err)
	}
	// The holder may take it again (a retry of its own acquisition).
	if err := s.AcquireLease(ctx, a, stale, false); err != nil {
		t.Errorf("AcquireLease(a) again: %v", err)
	}
	later := now.Add(30 * time.Second)
	if err := s.RenewLease(ctx, "leased", "a", later); err != nil {
		t.Fatalf("RenewLease(a): %v", err)
	}
	l, err := s.GetLease(ctx, "leased")
	if err != nil || l == nil || l.Holder != "a" || !sameTime(later, l.Heartbeat) || !sameTime(now, l.Acquired) {
		t.Fatalf("GetLease after renewal = %+v, %v", l, err)
	}
	// Stale: a's heartbeat (later) is before the limit.
	if err := s.AcquireLease(ctx, b, later.Add(time.Microsecond), false); err != nil {
		t.Fatalf("AcquireLease(b) over a stale lease: %v", err)
	}
	if err := s.RenewLease(ctx, "leased", "a", later.Add(time.Second)); !errors.Is(err, store.ErrLeaseLost) {
		t.Errorf("RenewLease(a) after b took over: %v; want ErrLeaseLost", err)
	}
	// Force breaks a live lease.
	if err := s.AcquireLease(ctx, a, stale, true); err != nil {
		t.Fatalf("AcquireLease(a, force): %v", err)
	}
	if l, _ := s.GetLease(ctx, "leased"); l == nil || l.Holder != "a" {
		t.Errorf("after force the lease is %+v; want a's", l)
	}
	// Releasing someone else's lease does nothing; one's own frees it.
	if err := s.ReleaseLease(ctx, "leased", "b"); err != nil {
		t.Fatal(err)
	}
	if l, _ := s.GetLease(ctx, "leased"); l == nil || l.Holder != "a" {
		t.Errorf("b released a's lease: %+v", l)
	}
	if err := s.ReleaseLease(ctx, "leased", "a"); err != nil {
		t.Fatal(err)
	}
	if l, err := s.GetLease(ctx, "leased"); err != nil || l != nil {
		t.Errorf("GetLease after release = %+v, %v; want none", l, err)
	}
	if err := s.AcquireLease(ctx, b, stale, false); err != nil {
		t.Errorf("AcquireLease(b) after release: %v", err)
	}
}

// Of many processes taking one lease at once, exactly one gets it.
func testLeaseRace(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustCreate(t, s, newRun("raced", t0()))
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			now := time.Now()
			errs[i] = s.AcquireLease(ctx, store.Lease{RunID: "raced", Holder: fmt.Sprint("h", i), PID: i, Host: "h", Acquired: now, Heartbeat: now}, now.Add(-time.Hour), false)
		}()
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		var held *store.LeaseHeldError
		switch {
		case err == nil:
			won++
		case errors.As(err, &held):
		default:
			t.Errorf("AcquireLease: %v", err)
		}
	}
	if won != 1 {
		t.Errorf("%d of %d concurrent takers got the lease; want exactly 1", won, n)
	}
}
