package provider

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

func noSleep(context.Context, time.Duration) error { return nil }

// TestWrapOrder checks the chain Wrap builds:
// WithCache(WithRetry(WithLimits(WithTimeout(p)))).
func TestWrapOrder(t *testing.T) {
	t.Run("every attempt passes through the limiter", func(t *testing.T) {
		var estimates atomic.Int32
		be := &script{errs: []error{httpErr(500), httpErr(503), httpErr(429)}}
		p := Wrap(be, WrapOptions{
			// 6000 rpm: attempts at least 10ms apart.
			Limits:   Limits{RPM: 6000, TPM: 60_000_000},
			Estimate: func(*Request) int { estimates.Add(1); return 1 },
			Retry:    RetryOptions{Max: 5, Sleep: noSleep},
		})
		start := time.Now()
		resp, err := p.Complete(context.Background(), &Request{})
		if err != nil {
			t.Fatal(err)
		}
		if resp.Attempts != 4 || be.n() != 4 {
			t.Fatalf("%d attempts, %d calls; want 4", resp.Attempts, be.n())
		}
		if n := estimates.Load(); n != 4 {
			t.Errorf("TPM limiter charged %d times for 4 attempts", n)
		}
		// With backoff sleeps of zero, only the RPM limiter spaces them.
		if el, want := time.Since(start), 30*time.Millisecond-slack; el < want {
			t.Errorf("4 attempts at 6000 rpm took %v, want at least %v", el, want)
		}
	})

	t.Run("waiting for the limiter does not eat the time-out", func(t *testing.T) {
		// 1200 rpm: the retry waits ~50ms for its token, longer than the
		// 30ms time-out; it must still get its full 30ms for the call.
		be := &script{errs: []error{httpErr(500)}}
		p := Wrap(be, WrapOptions{
			Timeout: 30 * time.Millisecond,
			Limits:  Limits{RPM: 1200},
			Retry:   RetryOptions{Max: 1, Sleep: noSleep},
		})
		resp, err := p.Complete(context.Background(), &Request{})
		if err != nil {
			t.Fatalf("err = %v, want the retry's reply", err)
		}
		if resp.Attempts != 2 {
			t.Errorf("Attempts = %d, want 2", resp.Attempts)
		}
	})

	t.Run("each attempt gets its own time-out", func(t *testing.T) {
		be := &script{errs: []error{context.DeadlineExceeded}, before: func(ctx context.Context, call int) {
			if call == 0 {
				<-ctx.Done()
			}
		}}
		p := Wrap(be, WrapOptions{Timeout: 20 * time.Millisecond, Retry: RetryOptions{Max: 1, Sleep: noSleep}})
		resp, err := p.Complete(context.Background(), &Request{})
		if err != nil || resp.Attempts != 2 {
			t.Fatalf("got %+v, %v; want a reply on the second attempt", resp, err)
		}
	})

	t.Run("a cache hit costs no attempt and no limiter token", func(t *testing.T) {
		var estimates atomic.Int32
		c := newMemCache()
		be := &script{errs: []error{httpErr(500)}}
		p := Wrap(be, WrapOptions{
			Limits:   Limits{TPM: 60_000_000},
			Estimate: func(*Request) int { estimates.Add(1); return 1 },
			Retry:    RetryOptions{Max: 2, Sleep: noSleep},
			Cache:    c,
			Scope:    testScope,
			Logger:   discardLog(),
		})
		first, err := p.Complete(context.Background(), baseRequest())
		if err != nil || first.Attempts != 2 || first.Cached {
			t.Fatalf("first: %+v, %v; want a fresh reply after 2 attempts", first, err)
		}
		hit, err := p.Complete(context.Background(), baseRequest())
		if err != nil || !hit.Cached || hit.Attempts != 0 {
			t.Fatalf("second: %+v, %v; want a cache hit with 0 attempts", hit, err)
		}
		if be.n() != 2 || estimates.Load() != 2 {
			t.Errorf("%d calls, %d limiter charges; want 2 and 2 (none for the hit)", be.n(), estimates.Load())
		}
	})

	t.Run("no cache", func(t *testing.T) {
		be := &script{}
		p := Wrap(be, WrapOptions{})
		p.Complete(context.Background(), baseRequest())
		p.Complete(context.Background(), baseRequest())
		if be.n() != 2 {
			t.Errorf("%d calls, want 2 without a cache", be.n())
		}
	})

	t.Run("cancel while queued for the limiter", func(t *testing.T) {
		be := &script{errs: []error{httpErr(500)}}
		p := Wrap(be, WrapOptions{
			Limits: Limits{RPM: 1}, // the retry would wait a minute
			Retry:  RetryOptions{Max: 3, Sleep: noSleep},
		})
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(20*time.Millisecond, cancel)
		start := time.Now()
		_, err := p.Complete(ctx, &Request{})
		if KindOf(err) != KindCanceled || be.n() != 1 || Attempts(err) != 1 {
			t.Errorf("err %v, %d calls, Attempts %d; want canceled after 1 call", err, be.n(), Attempts(err))
		}
		if el := time.Since(start); el > 5*time.Second {
			t.Errorf("returned after %v", el)
		}
	})
}
