package provider

import (
	"context"
	"errors"
	"testing"
)

type fakeShared struct {
	estimates    bool
	err          error
	tokens, used []int
}

func (f *fakeShared) Estimates() bool { return f.estimates }

func (f *fakeShared) Acquire(ctx context.Context, tokens int) (func(int), error) {
	if f.err != nil {
		return nil, f.err
	}
	f.tokens = append(f.tokens, tokens)
	return func(used int) { f.used = append(f.used, used) }, nil
}

// A shared limiter is asked for the request's estimated tokens (only when
// it counts tokens), told the usage the provider reported, and a wait
// that fails is a cancelled call that was never sent.
func TestWithSharedLimits(t *testing.T) {
	calls := 0
	inner := Func(func(ctx context.Context, req *Request) (*Response, error) {
		calls++
		return &Response{Text: "ok", Usage: Usage{Input: 7, Output: 5}}, nil
	})
	req := &Request{Messages: []Message{{Role: "user", Content: "12345678"}}}

	f := &fakeShared{estimates: true}
	if _, err := WithSharedLimits(inner, f, nil).Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if want := EstimateTokens(req); len(f.tokens) != 1 || f.tokens[0] != want || len(f.used) != 1 || f.used[0] != 12 {
		t.Errorf("asked for %v tokens and told %v used; want [%d] and [12]", f.tokens, f.used, want)
	}

	f = &fakeShared{}
	if _, err := WithSharedLimits(inner, f, nil).Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if f.tokens[0] != 0 {
		t.Errorf("a limiter without a TPM limit was asked for %d tokens", f.tokens[0])
	}

	before := calls
	f = &fakeShared{err: context.Canceled}
	_, err := WithSharedLimits(inner, f, nil).Complete(context.Background(), req)
	if KindOf(err) != KindCanceled || calls != before {
		t.Errorf("a failed wait: kind %q, %d calls made; want canceled and none", KindOf(err), calls-before)
	}
	var ns notSent
	if !errors.As(err, &ns) {
		t.Errorf("a failed wait is counted as an attempt: %v", err)
	}
}
