package provider

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// Backoff defaults.
const (
	DefaultRetryBase = 500 * time.Millisecond
	DefaultRetryCap  = 60 * time.Second
	// MaxRetryAfter bounds how long a server's Retry-After is honoured.
	MaxRetryAfter = 5 * time.Minute
)

// RetryOptions configure WithRetry.
type RetryOptions struct {
	// Max is the number of retries after the first attempt (0 = none).
	Max int
	// Base is the backoff ceiling before the first retry; it doubles with
	// every retry up to Cap. Defaults: 500ms and 60s.
	Base time.Duration
	Cap  time.Duration
	// Sleep waits d or until ctx ends, returning ctx's error in that case.
	// Default: a timer that stops on ctx.Done.
	Sleep func(ctx context.Context, d time.Duration) error
	// Rand returns a number in [0, 1) for the jitter. Default: math/rand/v2.
	Rand func() float64
	// OnRetry, when set, is called before each wait with the number of the
	// attempt that failed (1 for the first call), its error and the wait.
	OnRetry func(attempt int, err error, wait time.Duration)
}

// WithRetry retries p's retryable failures (429, 408, 409, 5xx, 529, network
// errors, malformed replies, truncated streams) up to o.Max times, with
// exponential backoff and full jitter, waiting at least as long as the
// server's Retry-After. Permanent failures (other 4xx, auth, not found, exec
// and protocol errors) are returned at once. A cancelled context stops it at
// once, between attempts or mid-wait, with a KindCanceled error.
//
// Response.Attempts is the number of calls made; on failure Attempts(err)
// gives it (an attempt cut short by cancellation counts, unless it was still
// queued for WithLimits and so never sent), and KindOf(err) and errors.As(err, **Error) see the last
// attempt's error. Per-attempt deadlines are WithTimeout's job: wrap it
// inside, as Wrap does.
func WithRetry(p Provider, o RetryOptions) Provider {
	if o.Max < 0 {
		o.Max = 0
	}
	if o.Base <= 0 {
		o.Base = DefaultRetryBase
	}
	if o.Cap <= 0 {
		o.Cap = DefaultRetryCap
	}
	if o.Sleep == nil {
		o.Sleep = sleepCtx
	}
	if o.Rand == nil {
		o.Rand = rand.Float64
	}
	return &retrier{p: p, o: o}
}

type retrier struct {
	p Provider
	o RetryOptions
}

func (r *retrier) Complete(ctx context.Context, req *Request) (*Response, error) {
	for attempt := 1; ; attempt++ {
		if ctx.Err() != nil {
			return nil, &attemptsError{n: attempt - 1, err: canceled(ctx, nil)}
		}
		resp, err := r.p.Complete(ctx, req)
		if err == nil && resp == nil {
			err = &Error{Kind: KindInvalid, Msg: "the provider returned neither a reply nor an error"}
		}
		if err == nil {
			resp.Attempts = attempt
			return resp, nil
		}
		if ctx.Err() != nil {
			// Whatever the attempt reported, the caller stopped it. An
			// attempt stopped while queued for the limiter made no call.
			n := attempt
			if errors.As(err, new(notSent)) {
				n--
			}
			return nil, &attemptsError{n: n, err: canceled(ctx, err)}
		}
		if attempt > r.o.Max || !retryable(err) {
			return nil, &attemptsError{n: attempt, err: err}
		}
		wait := r.backoff(attempt, err)
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			// The caller's deadline passes before the retry could start:
			// the last failure says more than "canceled" would.
			return nil, &attemptsError{n: attempt, err: err}
		}
		if r.o.OnRetry != nil {
			r.o.OnRetry(attempt, err, wait)
		}
		if serr := r.o.Sleep(ctx, wait); serr != nil {
			return nil, &attemptsError{n: attempt, err: canceled(ctx, serr)}
		}
	}
}

// backoff is the wait after failed attempt n (1-based): full jitter, a random
// duration in [0, min(Cap, Base·2^(n-1))), plus the server's Retry-After when
// it sent one.
//
// Retry-After is honoured even above Cap: Cap bounds our own guess, whereas
// Retry-After is the server telling us when it will accept the call; coming
// back sooner only earns another 429 and burns a retry. It is still bounded
// by MaxRetryAfter so that a wrong or hostile header (hours, days) cannot
// stall a run; after that long the retry simply tries again. The jitter is
// added on top rather than taking the larger of the two, so that the many
// workers that got the same Retry-After do not all come back in the same
// instant and trip the limit again.
func (r *retrier) backoff(n int, err error) time.Duration {
	ceil := r.o.Cap
	if n-1 < 62 && r.o.Base <= r.o.Cap>>(n-1) {
		ceil = r.o.Base << (n - 1)
	}
	f := r.o.Rand()
	if f < 0 || f >= 1 {
		f = 0
	}
	wait := time.Duration(f * float64(ceil))
	var pe *Error
	if errors.As(err, &pe) && pe.RetryAfter > 0 {
		wait += min(pe.RetryAfter, MaxRetryAfter)
	}
	return wait
}

// retryable reports whether err may succeed when tried again, classifying
// unclassified errors as KindOf does.
func retryable(err error) bool {
	var pe *Error
	if errors.As(err, &pe) {
		return pe.Retryable()
	}
	return (&Error{Kind: KindOf(err)}).Retryable()
}

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// attemptsError is the error WithRetry returns: the last attempt's error and
// the number of calls made.
type attemptsError struct {
	n   int
	err error
}

func (e *attemptsError) Error() string {
	if e.n > 1 {
		return fmt.Sprintf("%v (after %d attempts)", e.err, e.n)
	}
	return e.err.Error()
}

func (e *attemptsError) Unwrap() error { return e.err }

// Attempts returns the number of calls made for a failed request: the count
// WithRetry recorded (0 when the context was cancelled before the first
// call), else 1 for any other non-nil error and 0 for nil. For a successful
// request read Response.Attempts.
func Attempts(err error) int {
	if err == nil {
		return 0
	}
	var ae *attemptsError
	if errors.As(err, &ae) {
		return ae.n
	}
	return 1
}
