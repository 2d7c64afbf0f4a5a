package provider

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestBreakerTripsOnConsecutiveAuthFailures(t *testing.T) {
	auth := &Error{Kind: KindAuth, Status: 401, Msg: "invalid x-api-key"}
	var errs []error
	for range 20 {
		errs = append(errs, auth)
	}
	s := &script{errs: errs}
	p := WithBreaker(s, 5)
	for i := range 20 {
		_, err := p.Complete(context.Background(), &Request{})
		if err == nil {
			t.Fatalf("call %d succeeded", i)
		}
		ue, tripped := Unavailable(err)
		if i < 5 {
			if tripped || KindOf(err) != KindAuth {
				t.Fatalf("call %d: %v, want the backend's own auth error before the breaker trips", i, err)
			}
			continue
		}
		if !tripped {
			t.Fatalf("call %d: %v, want target_unavailable once 5 calls in a row failed", i, err)
		}
		if want := "target_unavailable: 5 consecutive auth failures (HTTP 401)"; err.Error() != want || ue.Reason != strings.TrimPrefix(want, "target_unavailable: ") {
			t.Errorf("call %d: %q, want %q", i, err, want)
		}
		if Attempts(err) != 0 {
			t.Errorf("call %d: Attempts %d, want 0: a tripped breaker makes no call", i, Attempts(err))
		}
	}
	if s.n() != 5 {
		t.Errorf("the backend was called %d times, want 5", s.n())
	}
}

func TestBreakerResetsOnSuccessAndOtherFailures(t *testing.T) {
	auth := &Error{Kind: KindAuth, Status: 403}
	down := &Error{Kind: KindUnavailable, Msg: "sending the request", Err: errors.New("dial tcp 127.0.0.1:9: connect: connection refused")}
	server := &Error{Kind: KindServer, Status: 500}
	// 4 failures, a success, 4, a server error, 4, then unavailable ones
	// (auth and unavailable count together).
	errs := []error{auth, auth, auth, auth, nil, auth, down, auth, down, server, down, down, down, down}
	s := &script{errs: errs}
	p := WithBreaker(s, 5)
	for i := range len(errs) {
		_, err := p.Complete(context.Background(), &Request{})
		if _, tripped := Unavailable(err); tripped {
			t.Fatalf("call %d tripped the breaker; no 5 failures in a row yet", i)
		}
	}
	_, err := p.Complete(context.Background(), &Request{})
	if _, tripped := Unavailable(err); tripped || KindOf(err) != "" {
		t.Fatalf("call %d: %v, want the backend's reply", len(errs), err)
	}
	// Five unavailable in a row now trip it, naming the cause.
	s2 := &script{errs: []error{down, down, down, down, down, down}}
	p = WithBreaker(s2, 5)
	for range 5 {
		p.Complete(context.Background(), &Request{})
	}
	_, err = p.Complete(context.Background(), &Request{})
	ue, tripped := Unavailable(err)
	if !tripped || !strings.Contains(ue.Reason, "5 consecutive failures to reach the target") || !strings.Contains(ue.Reason, "connection refused") {
		t.Errorf("got %v, want target_unavailable naming the refused connection", err)
	}
	if s2.n() != 5 {
		t.Errorf("the backend was called %d times, want 5", s2.n())
	}
}

func TestBreakerIgnoresCanceledCalls(t *testing.T) {
	auth := &Error{Kind: KindAuth, Status: 401}
	canceledErr := &Error{Kind: KindCanceled, Err: context.Canceled}
	s := &script{errs: []error{auth, auth, canceledErr, auth, auth, auth}}
	p := WithBreaker(s, 5)
	for range 6 {
		p.Complete(context.Background(), &Request{})
	}
	_, err := p.Complete(context.Background(), &Request{})
	if _, tripped := Unavailable(err); !tripped {
		t.Errorf("got %v, want the breaker tripped: a cancelled call neither counts nor resets", err)
	}
}

func TestDNSAndRefusedAreNotRetried(t *testing.T) {
	down := &Error{Kind: KindUnavailable, Msg: "sending the request"}
	s := &script{errs: []error{down, down, down, down, down}}
	p := WithRetry(s, RetryOptions{Max: 4, Sleep: func(context.Context, time.Duration) error { return nil }})
	_, err := p.Complete(context.Background(), &Request{})
	if KindOf(err) != KindUnavailable || s.n() != 1 || Attempts(err) != 1 {
		t.Errorf("got %v after %d calls, want one call: an unknown host or refused connection is not retried", err, s.n())
	}
}
