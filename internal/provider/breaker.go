package provider

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// DefaultBreakerThreshold is the number of consecutive calls failing with
// an auth error (HTTP 401/403) or an unavailable target (unknown host,
// refused connection) after which the run's circuit breaker stops calling
// the target.
const DefaultBreakerThreshold = 5

// UnavailableError is what a tripped breaker returns in place of a call:
// no call was made. Reason says why the target was given up, e.g.
// "5 consecutive auth failures (HTTP 401)".
type UnavailableError struct {
	Reason string
}

func (e *UnavailableError) Error() string { return "target_unavailable: " + e.Reason }

// Unavailable reports whether err is a tripped breaker's refusal (no call
// was made), and returns it.
func Unavailable(err error) (*UnavailableError, bool) {
	var ue *UnavailableError
	if errors.As(err, &ue) {
		return ue, true
	}
	return nil, false
}

// WithBreaker stops calling p once threshold calls in a row have failed
// with a kind no retry cures: auth (401, 403) or unavailable (unknown
// host, refused connection). From then on every call returns an
// *UnavailableError at once, with Attempts(err) 0. A success, or any other
// failure, resets the count; a cancelled call leaves it as it is. It
// counts calls as WithRetry returns them, so wrap it outside the retries:
// a 401 is never retried anyway, and a transient failure retried into a
// success is a success. threshold < 1 returns p unchanged.
func WithBreaker(p Provider, threshold int) Provider {
	if threshold < 1 {
		return p
	}
	return &breaker{p: p, threshold: threshold}
}

type breaker struct {
	p         Provider
	threshold int

	mu      sync.Mutex
	run     int // consecutive failures that trip it
	tripped *UnavailableError
}

func (b *breaker) Complete(ctx context.Context, req *Request) (*Response, error) {
	b.mu.Lock()
	tripped := b.tripped
	b.mu.Unlock()
	if tripped != nil {
		return nil, &attemptsError{n: 0, err: tripped}
	}
	resp, err := b.p.Complete(ctx, req)
	kind := KindOf(err)
	if kind == KindCanceled {
		return resp, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if kind != KindAuth && kind != KindUnavailable {
		b.run = 0
		return resp, err
	}
	b.run++
	if b.run >= b.threshold && b.tripped == nil {
		b.tripped = &UnavailableError{Reason: breakerReason(b.run, err)}
	}
	return resp, err
}

// breakerReason says why the breaker tripped after n failures like err.
func breakerReason(n int, err error) string {
	var pe *Error
	if !errors.As(err, &pe) {
		return fmt.Sprintf("%d consecutive failures to reach the target (%v)", n, err)
	}
	if pe.Kind == KindAuth {
		if pe.Status != 0 {
			return fmt.Sprintf("%d consecutive auth failures (HTTP %d)", n, pe.Status)
		}
		return fmt.Sprintf("%d consecutive auth failures", n)
	}
	why := "unknown host or connection refused"
	if pe.Err != nil {
		why = pe.Err.Error()
	}
	return fmt.Sprintf("%d consecutive failures to reach the target (%s)", n, why)
}
