package provider

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// slack absorbs timer granularity in the lower-bound timing checks.
const slack = 5 * time.Millisecond

// callAll makes n concurrent calls and returns their errors.
func callAll(p Provider, n int, req *Request) []error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { _, errs[i] = p.Complete(context.Background(), req) })
	}
	wg.Wait()
	return errs
}

func noErrors(t *testing.T, errs []error) {
	t.Helper()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
}

func TestLimitsConcurrencyNeverExceeded(t *testing.T) {
	var inflight, high atomic.Int32
	be := Func(func(context.Context, *Request) (*Response, error) {
		n := inflight.Add(1)
		for {
			h := high.Load()
			if n <= h || high.CompareAndSwap(h, n) {
				break
			}
		}
		time.Sleep(2 * time.Millisecond)
		inflight.Add(-1)
		return &Response{}, nil
	})
	p := WithLimits(be, Limits{Concurrency: 3}, nil)
	noErrors(t, callAll(p, 24, &Request{}))
	if h := high.Load(); h > 3 {
		t.Errorf("%d calls in flight at once, limit 3", h)
	}
}

func TestLimitsConcurrencyReached(t *testing.T) {
	// A backend that replies only once n calls are in flight together: it
	// proves the limit admits n at once, and that 0 means no limit.
	barrier := func(n int32) Provider {
		var in atomic.Int32
		all := make(chan struct{})
		return Func(func(context.Context, *Request) (*Response, error) {
			if in.Add(1) == n {
				close(all)
			}
			select {
			case <-all:
				return &Response{}, nil
			case <-time.After(5 * time.Second):
				return nil, errors.New("the calls never were in flight together")
			}
		})
	}
	t.Run("limit 3", func(t *testing.T) {
		noErrors(t, callAll(WithLimits(barrier(3), Limits{Concurrency: 3}, nil), 3, &Request{}))
	})
	t.Run("0 is unlimited", func(t *testing.T) {
		noErrors(t, callAll(WithLimits(barrier(8), Limits{RPM: 6_000_000}, nil), 8, &Request{}))
	})
}

func TestLimitsRPMSpacing(t *testing.T) {
	// 6000 rpm is one call per 10ms; with a burst of 1, six calls span at
	// least five intervals.
	p := WithLimits(&script{}, Limits{RPM: 6000}, nil)
	start := time.Now()
	noErrors(t, callAll(p, 6, &Request{}))
	if el, want := time.Since(start), 50*time.Millisecond-slack; el < want {
		t.Errorf("6 calls at 6000 rpm took %v, want at least %v", el, want)
	}
}

func TestLimitsTPM(t *testing.T) {
	// 600000 tpm is 10 tokens per ms, with a burst of one second (10000).
	const tpm = 600_000
	t.Run("a request larger than the burst waits for its size", func(t *testing.T) {
		est := func(*Request) int { return 10_500 }
		p := WithLimits(&script{}, Limits{TPM: tpm}, est)
		start := time.Now()
		if _, err := p.Complete(context.Background(), &Request{}); err != nil {
			t.Fatal(err)
		}
		if el, want := time.Since(start), 50*time.Millisecond-slack; el < want {
			t.Errorf("took %v, want at least %v for the 500 tokens beyond the burst", el, want)
		}
	})
	t.Run("usage above the estimate is charged after the call", func(t *testing.T) {
		est := func(r *Request) int {
			if r.CaseID == "big" {
				return 10_000
			}
			return 100
		}
		be := Func(func(_ context.Context, r *Request) (*Response, error) {
			if r.CaseID == "big" {
				return &Response{Usage: Usage{Input: 8000, Output: 2500}}, nil // 500 over
			}
			return &Response{}, nil
		})
		p := WithLimits(be, Limits{TPM: tpm}, est)
		if _, err := p.Complete(context.Background(), &Request{CaseID: "big"}); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if _, err := p.Complete(context.Background(), &Request{CaseID: "small"}); err != nil {
			t.Fatal(err)
		}
		// 100 tokens for this call plus the 500 owed: 60ms (10ms without
		// the correction).
		if el, want := time.Since(start), 50*time.Millisecond; el < want {
			t.Errorf("second call waited %v, want at least %v", el, want)
		}
	})
	t.Run("estimate is not called without a TPM limit", func(t *testing.T) {
		est := func(*Request) int { t.Error("estimate called with TPM 0"); return 0 }
		WithLimits(&script{}, Limits{Concurrency: 1, RPM: 6_000_000}, est).Complete(context.Background(), &Request{})
	})
}

func TestLimitsWaitsEndOnCancel(t *testing.T) {
	tests := []struct {
		name   string
		limits Limits
		est    func(*Request) int
	}{
		{"concurrency slot", Limits{Concurrency: 1}, nil},
		{"rpm", Limits{RPM: 1}, nil},
		{"tpm", Limits{TPM: 60}, func(*Request) int { return 1 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The first call takes the only slot (holding it until
			// released) or the only token.
			release := make(chan struct{})
			be := &script{before: func(_ context.Context, call int) {
				if call == 0 && tt.limits.Concurrency > 0 {
					<-release
				}
			}}
			p := WithLimits(be, tt.limits, tt.est)
			first := make(chan struct{})
			go func() {
				defer close(first)
				p.Complete(context.Background(), &Request{})
			}()
			for be.n() == 0 {
				time.Sleep(time.Millisecond)
			}
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(10*time.Millisecond, cancel)
			start := time.Now()
			_, err := p.Complete(ctx, &Request{})
			if el := time.Since(start); el > 5*time.Second {
				t.Errorf("waited %v after cancel", el)
			}
			if KindOf(err) != KindCanceled || !errors.Is(err, context.Canceled) {
				t.Errorf("err = %v (kind %q), want canceled", err, KindOf(err))
			}
			if be.n() != 1 {
				t.Errorf("backend called %d times, want 1 (the cancelled call never went out)", be.n())
			}
			close(release)
			<-first
		})
	}
}

func TestLimitsCallerDeadlineIsNotAnEarlyFailure(t *testing.T) {
	// rate.Limiter.Wait fails at once when the deadline would pass; the
	// wrapper waits for the tokens as long as the caller lets it.
	p := WithLimits(&script{}, Limits{RPM: 1200}, nil) // 50ms apart
	p.Complete(context.Background(), &Request{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if _, err := p.Complete(ctx, &Request{}); err != nil {
		t.Errorf("err = %v, want a reply after about 50ms", err)
	}
}

func TestEstimateTokens(t *testing.T) {
	mt := 100
	tests := []struct {
		name string
		req  Request
		want int
	}{
		{"empty", Request{}, 0},
		{"one message", Request{Messages: []Message{{Role: "user", Content: "abcd"}}}, 1 + 4},
		{"rounds up", Request{Messages: []Message{{Role: "user", Content: "hello"}}}, 2 + 4},
		{"bytes, not characters", Request{Messages: []Message{{Role: "user", Content: "日本語"}}}, 3 + 4}, // 9 bytes
		{"adds max_tokens", Request{
			Messages: []Message{{Role: "system", Content: "abcd"}, {Role: "user", Content: "abcdefgh"}},
			Params:   Params{MaxTokens: &mt},
		}, (1 + 4) + (2 + 4) + 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := EstimateTokens(&tt.req); got != tt.want {
				t.Errorf("EstimateTokens = %d, want %d", got, tt.want)
			}
		})
	}
}
