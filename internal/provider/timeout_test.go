package provider

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// hang is a backend that blocks until its context ends and returns what an
// HTTP client would: the context's error.
func hang(ctx context.Context, _ *Request) (*Response, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func TestTimeoutPerAttempt(t *testing.T) {
	p := WithTimeout(Func(hang), 20*time.Millisecond)
	_, err := p.Complete(context.Background(), &Request{})
	var pe *Error
	if !errors.As(err, &pe) || pe.Kind != KindTimeout {
		t.Fatalf("err = %v, want a timeout *Error", err)
	}
	if !pe.Retryable() {
		t.Error("a per-request time-out must be retryable")
	}
	if !strings.Contains(err.Error(), "no reply within 20ms") {
		t.Errorf("err %q does not say how long it waited", err)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err %v does not wrap context.DeadlineExceeded", err)
	}
}

func TestTimeoutParentEndsFirst(t *testing.T) {
	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(10*time.Millisecond, cancel)
		_, err := WithTimeout(Func(hang), 10*time.Second).Complete(ctx, &Request{})
		if KindOf(err) != KindCanceled || !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v (kind %q), want canceled: an interrupted run is not a time-out", err, KindOf(err))
		}
	})
	t.Run("caller's own deadline", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
		defer cancel()
		_, err := WithTimeout(Func(hang), 10*time.Second).Complete(ctx, &Request{})
		if KindOf(err) != KindCanceled {
			t.Errorf("err = %v (kind %q), want canceled: only the per-request deadline is a time-out", err, KindOf(err))
		}
	})
}

func TestTimeoutPassesThrough(t *testing.T) {
	const d = time.Minute
	t.Run("reply", func(t *testing.T) {
		var deadline time.Time
		be := Func(func(ctx context.Context, _ *Request) (*Response, error) {
			deadline, _ = ctx.Deadline()
			return &Response{Text: "hi"}, nil
		})
		start := time.Now()
		resp, err := WithTimeout(be, d).Complete(context.Background(), &Request{})
		if err != nil || resp.Text != "hi" {
			t.Fatalf("got %v, %v; want the backend's reply", resp, err)
		}
		if deadline.IsZero() || deadline.Before(start) || deadline.After(start.Add(d+time.Second)) {
			t.Errorf("backend saw deadline %v, want about start+%v", deadline, d)
		}
	})
	t.Run("error", func(t *testing.T) {
		want := httpErr(400)
		be := Func(func(context.Context, *Request) (*Response, error) { return nil, want })
		_, err := WithTimeout(be, d).Complete(context.Background(), &Request{})
		if err != want {
			t.Errorf("err = %v, want the backend's error unchanged", err)
		}
	})
	t.Run("zero means no deadline", func(t *testing.T) {
		be := Func(func(ctx context.Context, _ *Request) (*Response, error) {
			if _, ok := ctx.Deadline(); ok {
				t.Error("backend got a deadline with timeout 0")
			}
			return &Response{}, nil
		})
		WithTimeout(be, 0).Complete(context.Background(), &Request{})
	})
}

func TestTimeoutInsideRetryGivesEachAttemptItsOwnDeadline(t *testing.T) {
	// The first attempt hangs past its deadline, the second replies at once.
	be := &script{errs: []error{context.DeadlineExceeded}, before: func(ctx context.Context, call int) {
		if call == 0 {
			<-ctx.Done()
		}
	}}
	var kinds []ErrorKind
	var sl sleepLog
	p := WithRetry(WithTimeout(be, 20*time.Millisecond), RetryOptions{Max: 2, Sleep: sl.sleep,
		OnRetry: func(_ int, err error, _ time.Duration) { kinds = append(kinds, KindOf(err)) }})
	resp, err := p.Complete(context.Background(), &Request{})
	if err != nil {
		t.Fatalf("err = %v, want the second attempt's reply", err)
	}
	if resp.Attempts != 2 || len(kinds) != 1 || kinds[0] != KindTimeout {
		t.Errorf("attempts %d, retried after %v; want 2 attempts, retried after one timeout", resp.Attempts, kinds)
	}
}
