package provider

import "context"

// SharedLimiter bounds a target's load across every process that calls it
// (assay worker's limiter in PostgreSQL: the target's concurrency, RPM and
// TPM held by all workers together), in place of WithLimits' limiter,
// which only sees this process's calls.
type SharedLimiter interface {
	// Acquire waits for a concurrency slot and then for the RPM token and
	// the tokens estimated for the request (as WithLimits takes them),
	// ending with ctx's error when ctx ends first. release gives the slot
	// back and charges used - tokens more when the provider reported more
	// than the estimate (used 0: nothing more).
	Acquire(ctx context.Context, tokens int) (release func(used int), err error)
	// Estimates reports whether the limiter counts tokens (a TPM limit):
	// only then is a request's size estimated.
	Estimates() bool
}

// WithSharedLimits bounds p by l (nil: p unbounded); estimate guesses a
// request's tokens (nil = EstimateTokens). Like WithLimits, an error
// waiting is a KindCanceled error that WithRetry does not count as an
// attempt.
func WithSharedLimits(p Provider, l SharedLimiter, estimate func(*Request) int) Provider {
	if l == nil {
		return p
	}
	if estimate == nil {
		estimate = EstimateTokens
	}
	return &sharedLimiter{p: p, l: l, estimate: estimate}
}

type sharedLimiter struct {
	p        Provider
	l        SharedLimiter
	estimate func(*Request) int
}

func (w *sharedLimiter) Complete(ctx context.Context, req *Request) (*Response, error) {
	if ctx.Err() != nil {
		return nil, notSent{canceled(ctx, nil)}
	}
	est := 0
	if w.l.Estimates() {
		est = max(0, w.estimate(req))
	}
	release, err := w.l.Acquire(ctx, est)
	if err != nil {
		return nil, notSent{canceled(ctx, err)}
	}
	resp, err := w.p.Complete(ctx, req)
	used := 0
	if err == nil && resp != nil {
		used = resp.Usage.Input + resp.Usage.Output
	}
	release(used)
	return resp, err
}
