package provider

import (
	"context"
	"time"

	"golang.org/x/time/rate"
)

// WithLimits bounds the load p sees: at most l.Concurrency calls in flight
// (0 = unlimited), l.RPM calls and l.TPM tokens per minute (0 = unlimited).
// estimate guesses a request's tokens before the call (nil = EstimateTokens);
// it is only called when l.TPM > 0. Every wait ends when ctx does, with a
// KindCanceled error.
//
// A call first takes a concurrency slot, then its RPM and TPM tokens: taking
// rate tokens first and then queuing for a slot would let the tokens pile up
// and go out together when slots free.
//
// RPM: a token bucket filling at RPM/60 per second with a burst of 1, so calls
// are spaced evenly and never more than one goes out in any 60/RPM window.
// Both OpenAI and Anthropic say they may enforce a per-minute limit over
// shorter windows (600 RPM as 10 per second), so a burst as large as the
// concurrency could draw 429s at the start of a run. The burst does not change
// the steady rate, which is min(RPM/60, concurrency/latency); a burst of 1
// only delays the first calls of a run, by (concurrency-1)·60/RPM seconds at
// most (1.5 s for 16 in flight at 600 RPM).
//
// TPM: a second bucket filling at TPM/60 tokens per second with a burst of one
// second's worth, for the same reason. A call consumes estimate(req) tokens
// before it is sent; a request larger than the burst is charged in burst-sized
// pieces, so it waits as long as its size demands rather than failing. After a
// successful call, if the usage the provider reported (input + output) exceeds
// the estimate, the difference is charged too, so later calls wait for it.
// A smaller actual usage is not refunded (x/time/rate cannot add tokens back);
// the default estimate counts max_tokens, as OpenAI itself does when it
// charges a request against TPM, so for a target with a large max_tokens and
// short replies the TPM limit throttles below what the provider would allow.
func WithLimits(p Provider, l Limits, estimate func(*Request) int) Provider {
	if l.Concurrency <= 0 && l.RPM <= 0 && l.TPM <= 0 {
		return p
	}
	w := &limiter{p: p, estimate: estimate}
	if w.estimate == nil {
		w.estimate = EstimateTokens
	}
	if l.Concurrency > 0 {
		w.sem = make(chan struct{}, l.Concurrency)
	}
	if l.RPM > 0 {
		w.rpm = rate.NewLimiter(rate.Limit(float64(l.RPM)/60), 1)
	}
	if l.TPM > 0 {
		w.tpm = rate.NewLimiter(rate.Limit(float64(l.TPM)/60), max(1, l.TPM/60))
	}
	return w
}

type limiter struct {
	p        Provider
	estimate func(*Request) int
	sem      chan struct{} // nil: no concurrency cap
	rpm      *rate.Limiter // nil: no RPM limit
	tpm      *rate.Limiter // nil: no TPM limit
}

func (w *limiter) Complete(ctx context.Context, req *Request) (*Response, error) {
	if ctx.Err() != nil {
		return nil, notSent{canceled(ctx, nil)}
	}
	if w.sem != nil {
		select {
		case w.sem <- struct{}{}:
			defer func() { <-w.sem }()
		case <-ctx.Done():
			return nil, notSent{canceled(ctx, nil)}
		}
	}
	if w.rpm != nil {
		if err := waitTokens(ctx, w.rpm, 1); err != nil {
			return nil, notSent{canceled(ctx, err)}
		}
	}
	est := 0
	if w.tpm != nil {
		est = max(0, w.estimate(req))
		if err := waitTokens(ctx, w.tpm, est); err != nil {
			return nil, notSent{canceled(ctx, err)}
		}
	}
	resp, err := w.p.Complete(ctx, req)
	if err == nil && resp != nil && w.tpm != nil {
		if extra := resp.Usage.Input + resp.Usage.Output - est; extra > 0 {
			reserveTokens(w.tpm, extra, time.Now())
		}
	}
	return resp, err
}

// notSent marks an error returned before the request was sent (cancelled
// while queued), so that WithRetry does not count it as an attempt.
type notSent struct{ err error }

func (e notSent) Error() string { return e.err.Error() }
func (e notSent) Unwrap() error { return e.err }

// waitTokens takes n tokens from lim, waiting until they are available or
// ctx ends. Unlike rate.Limiter.WaitN it accepts n above the burst (charging
// it in burst-sized pieces) and does not fail early when ctx has a deadline:
// the wait ends only by the tokens or by ctx.
func waitTokens(ctx context.Context, lim *rate.Limiter, n int) error {
	if n <= 0 {
		return nil
	}
	now := time.Now()
	rs := reserveTokens(lim, n, now)
	delay := rs[len(rs)-1].DelayFrom(now)
	if delay <= 0 {
		return nil
	}
	t := time.NewTimer(delay)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		// Give back what we can, latest first, so that the calls still
		// running do not wait for a call that will never be made.
		for i := len(rs) - 1; i >= 0; i-- {
			rs[i].Cancel()
		}
		return ctx.Err()
	}
}

// reserveTokens takes n > 0 tokens from lim at now, in pieces no larger than
// its burst, without waiting; later callers wait for them. The last
// reservation's delay is when all n are available.
func reserveTokens(lim *rate.Limiter, n int, now time.Time) []*rate.Reservation {
	b := lim.Burst()
	rs := make([]*rate.Reservation, 0, (n+b-1)/b)
	for n > 0 {
		k := min(n, b)
		rs = append(rs, lim.ReserveN(now, k))
		n -= k
	}
	return rs
}

// EstimateTokens guesses a request's tokens before it is sent, for the TPM
// limit: a quarter of the message bytes (about 4 characters per token for
// English; bytes rather than characters so that text in scripts that take
// more tokens per character is not badly undercounted), 4 tokens of framing
// per message, and max_tokens for the reply when it is set.
func EstimateTokens(req *Request) int {
	n := 0
	for _, m := range req.Messages {
		n += (len(m.Content)+3)/4 + 4
	}
	if req.Params.MaxTokens != nil && *req.Params.MaxTokens > 0 {
		n += *req.Params.MaxTokens
	}
	return n
}
