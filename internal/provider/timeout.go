package provider

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// errAttemptTimeout is the cause WithTimeout gives its own deadline, so that
// it can tell its deadline from the caller's.
var errAttemptTimeout = errors.New("per-request time-out")

// WithTimeout gives every call to p its own deadline d (d <= 0: none). A call
// still running at the deadline fails with a KindTimeout error ("no reply
// within 30s"), which WithRetry retries; so put WithTimeout inside WithRetry
// (as Wrap does) to give each attempt a fresh deadline. When the caller's
// context ends first — the run was interrupted, or the caller's own deadline
// passed — the error is KindCanceled, not a time-out.
func WithTimeout(p Provider, d time.Duration) Provider {
	if d <= 0 {
		return p
	}
	return &timeouter{p: p, d: d}
}

type timeouter struct {
	p Provider
	d time.Duration
}

func (t *timeouter) Complete(ctx context.Context, req *Request) (*Response, error) {
	actx, cancel := context.WithTimeoutCause(ctx, t.d, errAttemptTimeout)
	defer cancel()
	resp, err := t.p.Complete(actx, req)
	if err == nil {
		return resp, nil
	}
	if ctx.Err() != nil {
		return nil, canceled(ctx, err)
	}
	if errors.Is(context.Cause(actx), errAttemptTimeout) {
		return nil, &Error{Kind: KindTimeout, Msg: fmt.Sprintf("no reply within %s", t.d), Err: context.DeadlineExceeded}
	}
	return nil, err
}
