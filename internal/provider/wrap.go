package provider

import (
	"context"
	"log/slog"
	"time"
)

// WrapOptions configure the wrappers Wrap puts around a backend.
type WrapOptions struct {
	// Timeout bounds each attempt (0 = no per-attempt time-out).
	Timeout time.Duration
	// Limits cap the load on the target; Estimate guesses a request's tokens
	// for the TPM limit (nil = EstimateTokens).
	Limits   Limits
	Estimate func(*Request) int
	// Shared, when set, replaces the limits above with a limiter shared
	// by every process calling the target (assay worker's).
	Shared SharedLimiter
	// Retry configures retries with backoff.
	Retry RetryOptions
	// Cache, when non-nil, serves repeated requests without calling the
	// target; nil disables it. Scope says which target the replies belong
	// to. CacheRefresh (--no-cache) skips the read but still stores every
	// successful reply, so the cache holds the fresh one afterwards.
	Cache        Cache
	Scope        CacheScope
	CacheRefresh bool
	// Logger receives cache diagnostics (nil = slog.Default()).
	Logger *slog.Logger
	// Redact, when non-nil, replaces secrets in every reply and error
	// before any other wrapper sees them (see WithRedaction).
	Redact *Redactor
}

// Wrap puts the standard wrappers around p, in this order from the outside in:
//
//	WithCache(WithRetry(WithLimits(WithTimeout(WithRedaction(p)))))
//
// Redaction is innermost, so no secret reaches the cache, a retry's error
// or anything the caller stores or prints; with a cache, cache hits are
// redacted once more as they are served, so that a reply cached before
// redaction (by an older assay) is redacted too.
// The cache is outermost, so a hit costs no attempt, no rate-limit token and
// no retry. Retry is outside the limiter, so every attempt, the first and
// each retry, waits its turn for a concurrency slot and for RPM/TPM tokens: a
// retry storm cannot burst past the target's limits. The time-out is
// innermost, so each attempt gets its own deadline and time spent queuing for
// the limiter does not eat into it.
func Wrap(p Provider, o WrapOptions) Provider {
	p = WithRedaction(p, o.Redact)
	p = WithTimeout(p, o.Timeout)
	if o.Shared != nil {
		p = WithSharedLimits(p, o.Shared, o.Estimate)
	} else {
		p = WithLimits(p, o.Limits, o.Estimate)
	}
	p = WithRetry(p, o.Retry)
	if o.Cache != nil {
		log := o.Logger
		if log == nil {
			log = slog.Default()
		}
		p = withCache(p, o.Cache, o.Scope, o.CacheRefresh, log)
		p = withCachedRedaction(p, o.Redact)
	}
	return p
}

// canceled reports that the caller's context ended: the run was interrupted
// or the caller's own deadline passed. It is never a per-request time-out and
// never retried. cause is used when ctx itself has not ended (an injected
// sleep that failed, say).
func canceled(ctx context.Context, cause error) *Error {
	if c := context.Cause(ctx); c != nil {
		cause = c
	}
	if cause == nil {
		cause = context.Canceled
	}
	return &Error{Kind: KindCanceled, Err: cause}
}
