package provider

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"
)

// script is a fake backend that answers call i with errs[i] (nil: a reply),
// and with a reply once errs runs out.
type script struct {
	mu    sync.Mutex
	errs  []error
	calls int
	// before, when set, runs at the start of every call.
	before func(ctx context.Context, call int)
}

func (s *script) Complete(ctx context.Context, req *Request) (*Response, error) {
	s.mu.Lock()
	i := s.calls
	s.calls++
	s.mu.Unlock()
	if s.before != nil {
		s.before(ctx, i)
	}
	if i < len(s.errs) && s.errs[i] != nil {
		return nil, s.errs[i]
	}
	return &Response{Text: "reply", Usage: Usage{Input: 10, Output: 2}, Latency: 7 * time.Millisecond, Attempts: 1}, nil
}

func (s *script) n() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// sleepLog records the waits passed to Sleep without sleeping.
type sleepLog struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (l *sleepLog) sleep(ctx context.Context, d time.Duration) error {
	l.mu.Lock()
	l.waits = append(l.waits, d)
	l.mu.Unlock()
	return ctx.Err()
}

func httpErr(status int) *Error { return &Error{Kind: KindForStatus(status), Status: status} }

func kindErr(k ErrorKind) *Error { return &Error{Kind: k} }

func repeat(err error, n int) []error {
	out := make([]error, n)
	for i := range out {
		out[i] = err
	}
	return out
}

func TestRetryDecisions(t *testing.T) {
	type tc struct {
		name      string
		errs      []error
		max       int
		wantCalls int
		wantKind  ErrorKind // "" for success
	}
	tests := []tc{
		{"500 twice then a reply", []error{httpErr(500), httpErr(500)}, 6, 3, ""},
		{"429 until retries run out", repeat(httpErr(429), 10), 3, 4, KindRateLimited},
		{"no retries configured", []error{httpErr(500)}, 0, 1, KindServer},
		{"500 then a permanent 400", []error{httpErr(500), httpErr(400)}, 6, 2, KindBadRequest},
		{"unclassified error counts as network", []error{errors.New("connection reset by peer")}, 6, 2, ""},
		{"backend's own deadline (not the caller's)", []error{context.DeadlineExceeded}, 6, 2, ""},
	}
	for _, status := range []int{408, 409, 429, 500, 502, 503, 504, 529} {
		tests = append(tests, tc{"retries HTTP " + httpErr(status).Error(), []error{httpErr(status)}, 6, 2, ""})
	}
	for _, k := range []ErrorKind{KindNetwork, KindMalformed, KindTruncated, KindTimeout, KindOverloaded} {
		tests = append(tests, tc{"retries " + string(k), []error{kindErr(k)}, 6, 2, ""})
	}
	for _, status := range []int{400, 401, 403, 404, 422} {
		tests = append(tests, tc{"never retries " + httpErr(status).Error(), []error{httpErr(status)}, 6, 1, KindForStatus(status)})
	}
	for _, k := range []ErrorKind{KindExec, KindNoRecord, KindOutputLimit, KindInvalid, KindCanceled} {
		tests = append(tests, tc{"never retries " + string(k), []error{kindErr(k)}, 6, 1, k})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			be := &script{errs: tt.errs}
			var sl sleepLog
			p := WithRetry(be, RetryOptions{Max: tt.max, Sleep: sl.sleep, Rand: func() float64 { return 0.5 }})
			resp, err := p.Complete(context.Background(), &Request{})
			if be.n() != tt.wantCalls {
				t.Errorf("backend called %d times, want %d", be.n(), tt.wantCalls)
			}
			if len(sl.waits) != tt.wantCalls-1 {
				t.Errorf("slept %d times, want %d (once between attempts)", len(sl.waits), tt.wantCalls-1)
			}
			if tt.wantKind == "" {
				if err != nil {
					t.Fatalf("err = %v, want a reply", err)
				}
				if resp.Attempts != tt.wantCalls {
					t.Errorf("Response.Attempts = %d, want %d", resp.Attempts, tt.wantCalls)
				}
				return
			}
			if err == nil {
				t.Fatalf("got a reply, want a %s error", tt.wantKind)
			}
			if KindOf(err) != tt.wantKind {
				t.Errorf("KindOf = %q, want %q (err %v)", KindOf(err), tt.wantKind, err)
			}
			if got := Attempts(err); got != tt.wantCalls {
				t.Errorf("Attempts(err) = %d, want %d", got, tt.wantCalls)
			}
			// The last attempt's error is still reachable, with its status.
			last := tt.errs[tt.wantCalls-1]
			var pe *Error
			if !errors.As(err, &pe) || pe != last {
				t.Errorf("errors.As gives %v, want the last attempt's error %v", pe, last)
			}
			if n := fmt.Sprintf("after %d attempts", tt.wantCalls); tt.wantCalls > 1 && !strings.Contains(err.Error(), n) {
				t.Errorf("error %q does not say %q", err, n)
			}
		})
	}
}

func TestRetryHonoursRetryAfter(t *testing.T) {
	tests := []struct {
		name       string
		retryAfter time.Duration
		cap        time.Duration
		atLeast    time.Duration
		atMost     time.Duration
	}{
		{"longer than the backoff", 3 * time.Second, time.Second, 3 * time.Second, 4 * time.Second},
		{"longer than Cap is still honoured", 2 * time.Minute, time.Second, 2 * time.Minute, 2*time.Minute + time.Second},
		{"an absurd header is bounded", 24 * time.Hour, time.Second, MaxRetryAfter, MaxRetryAfter + time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := &Error{Kind: KindRateLimited, Status: 429, RetryAfter: tt.retryAfter}
			be := &script{errs: []error{e}}
			var sl sleepLog
			p := WithRetry(be, RetryOptions{Max: 3, Base: 100 * time.Millisecond, Cap: tt.cap, Sleep: sl.sleep,
				Rand: func() float64 { return 0.9 }})
			if _, err := p.Complete(context.Background(), &Request{}); err != nil {
				t.Fatal(err)
			}
			if len(sl.waits) != 1 {
				t.Fatalf("slept %d times, want 1", len(sl.waits))
			}
			if w := sl.waits[0]; w < tt.atLeast || w > tt.atMost {
				t.Errorf("waited %v, want between %v and %v", w, tt.atLeast, tt.atMost)
			}
		})
	}
}

func TestRetryBackoffGrowsAndIsCapped(t *testing.T) {
	be := &script{errs: repeat(httpErr(503), 7)}
	var sl sleepLog
	almostOne := math.Nextafter(1, 0)
	p := WithRetry(be, RetryOptions{Max: 6, Base: 100 * time.Millisecond, Cap: time.Second, Sleep: sl.sleep,
		Rand: func() float64 { return almostOne }})
	if _, err := p.Complete(context.Background(), &Request{}); err == nil {
		t.Fatal("want an error after 7 failed attempts")
	}
	// Ceilings: Base doubling from 100ms, capped at 1s.
	ceil := []time.Duration{100, 200, 400, 800, 1000, 1000}
	if len(sl.waits) != len(ceil) {
		t.Fatalf("slept %d times, want %d", len(sl.waits), len(ceil))
	}
	for i, c := range ceil {
		c *= time.Millisecond
		if w := sl.waits[i]; w > c || w < c*99/100 {
			t.Errorf("wait %d = %v, want just under %v", i+1, w, c)
		}
	}
}

func TestRetryBackoffHuge(t *testing.T) {
	// Many retries must not overflow the doubling.
	be := &script{errs: repeat(httpErr(500), 80)}
	var sl sleepLog
	p := WithRetry(be, RetryOptions{Max: 79, Base: time.Hour, Cap: 2 * time.Hour, Sleep: sl.sleep,
		Rand: func() float64 { return 0.5 }})
	p.Complete(context.Background(), &Request{})
	for i, w := range sl.waits {
		if w < 0 || w > 2*time.Hour {
			t.Fatalf("wait %d = %v, want within [0, Cap]", i+1, w)
		}
	}
}

func TestRetryJitterBounds(t *testing.T) {
	t.Run("full jitter starts at zero", func(t *testing.T) {
		be := &script{errs: repeat(httpErr(500), 3)}
		var sl sleepLog
		p := WithRetry(be, RetryOptions{Max: 3, Sleep: sl.sleep, Rand: func() float64 { return 0 }})
		p.Complete(context.Background(), &Request{})
		for i, w := range sl.waits {
			if w != 0 {
				t.Errorf("wait %d = %v with Rand()=0, want 0", i+1, w)
			}
		}
	})
	t.Run("default rand spreads over [0, ceiling)", func(t *testing.T) {
		const runs = 60
		base := time.Second
		lo, hi := base, time.Duration(0)
		for range runs {
			be := &script{errs: []error{httpErr(500)}}
			var sl sleepLog
			p := WithRetry(be, RetryOptions{Max: 1, Base: base, Sleep: sl.sleep})
			if _, err := p.Complete(context.Background(), &Request{}); err != nil {
				t.Fatal(err)
			}
			w := sl.waits[0]
			if w < 0 || w >= base {
				t.Fatalf("first wait %v outside [0, %v)", w, base)
			}
			lo, hi = min(lo, w), max(hi, w)
		}
		// With 60 uniform draws, missing either quarter has probability
		// about 2·0.75^60 ≈ 6e-8.
		if lo > base/4 || hi < base*3/4 {
			t.Errorf("waits spread over [%v, %v], want jitter across most of [0, %v)", lo, hi, base)
		}
	})
}

func TestRetryStopsOnCancel(t *testing.T) {
	t.Run("mid-backoff", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		be := &script{errs: repeat(httpErr(500), 5)}
		p := WithRetry(be, RetryOptions{Max: 5, Base: 10 * time.Second, Cap: 10 * time.Second,
			Rand:    func() float64 { return 0.99 },
			OnRetry: func(int, error, time.Duration) { time.AfterFunc(10*time.Millisecond, cancel) }})
		start := time.Now()
		_, err := p.Complete(ctx, &Request{})
		if el := time.Since(start); el > 5*time.Second {
			t.Errorf("returned after %v; a cancelled context must stop the ~10s wait at once", el)
		}
		if KindOf(err) != KindCanceled || !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v (kind %q), want canceled wrapping context.Canceled", err, KindOf(err))
		}
		if be.n() != 1 || Attempts(err) != 1 {
			t.Errorf("backend called %d times, Attempts(err) = %d; want 1 and 1", be.n(), Attempts(err))
		}
	})
	t.Run("before the first call", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		be := &script{}
		_, err := WithRetry(be, RetryOptions{Max: 3}).Complete(ctx, &Request{})
		if KindOf(err) != KindCanceled || be.n() != 0 || Attempts(err) != 0 {
			t.Errorf("err %v, calls %d, Attempts %d; want canceled, 0, 0", err, be.n(), Attempts(err))
		}
	})
	t.Run("during an attempt", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		// The backend sees the cancellation and reports it as a network
		// error, as an HTTP client would; it must not be retried.
		be := &script{errs: repeat(&Error{Kind: KindNetwork, Msg: "request aborted"}, 3),
			before: func(context.Context, int) { cancel() }}
		var sl sleepLog
		_, err := WithRetry(be, RetryOptions{Max: 3, Sleep: sl.sleep}).Complete(ctx, &Request{})
		if KindOf(err) != KindCanceled || be.n() != 1 || len(sl.waits) != 0 {
			t.Errorf("err %v (kind %q), calls %d, sleeps %d; want canceled, 1, 0", err, KindOf(err), be.n(), len(sl.waits))
		}
	})
	t.Run("cause is kept", func(t *testing.T) {
		interrupted := errors.New("interrupted by the user")
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(interrupted)
		_, err := WithRetry(&script{}, RetryOptions{}).Complete(ctx, &Request{})
		if !errors.Is(err, interrupted) {
			t.Errorf("err = %v, want it to carry the cancellation cause", err)
		}
	})
}

func TestRetryGivesUpWhenTheDeadlineComesFirst(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	e := &Error{Kind: KindRateLimited, Status: 429, RetryAfter: 10 * time.Second}
	be := &script{errs: repeat(e, 3)}
	var sl sleepLog
	retried := false
	p := WithRetry(be, RetryOptions{Max: 3, Sleep: sl.sleep, OnRetry: func(int, error, time.Duration) { retried = true }})
	_, err := p.Complete(ctx, &Request{})
	if KindOf(err) != KindRateLimited {
		t.Errorf("kind %q, want rate_limited: the last failure, not a cancellation", KindOf(err))
	}
	if len(sl.waits) != 0 || retried || be.n() != 1 {
		t.Errorf("slept %d times, OnRetry %v, %d calls; want no wait for a retry that could not start before the deadline",
			len(sl.waits), retried, be.n())
	}
}

func TestRetryOnRetry(t *testing.T) {
	be := &script{errs: []error{httpErr(500), httpErr(429)}}
	var sl sleepLog
	type call struct {
		attempt int
		kind    ErrorKind
		wait    time.Duration
	}
	var got []call
	p := WithRetry(be, RetryOptions{Max: 5, Sleep: sl.sleep, Rand: func() float64 { return 0.5 },
		OnRetry: func(a int, err error, w time.Duration) { got = append(got, call{a, KindOf(err), w}) }})
	if _, err := p.Complete(context.Background(), &Request{}); err != nil {
		t.Fatal(err)
	}
	want := []call{{1, KindServer, sl.waits[0]}, {2, KindRateLimited, sl.waits[1]}}
	if len(got) != len(want) {
		t.Fatalf("OnRetry called %d times, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("OnRetry call %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestRetryErrorMessage(t *testing.T) {
	be := &script{errs: repeat(&Error{Kind: KindRateLimited, Status: 429, Msg: "slow down"}, 4)}
	var sl sleepLog
	_, err := WithRetry(be, RetryOptions{Max: 3, Sleep: sl.sleep}).Complete(context.Background(), &Request{})
	want := "rate_limited (HTTP 429): slow down (after 4 attempts)"
	if err == nil || err.Error() != want {
		t.Errorf("err = %v, want %q", err, want)
	}
}

func TestAttempts(t *testing.T) {
	if Attempts(nil) != 0 {
		t.Error("Attempts(nil) != 0")
	}
	if Attempts(httpErr(400)) != 1 {
		t.Error("an error that never went through WithRetry was one call")
	}
}

func TestRetryNilReply(t *testing.T) {
	// A backend that returns neither must not crash the run.
	p := WithRetry(Func(func(context.Context, *Request) (*Response, error) { return nil, nil }), RetryOptions{})
	_, err := p.Complete(context.Background(), &Request{})
	if KindOf(err) != KindInvalid {
		t.Errorf("err = %v, want invalid_reply", err)
	}
}
