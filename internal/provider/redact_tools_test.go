package provider

import (
	"context"
	"strings"
	"testing"
)

// A secret a model echoes into a tool call's arguments (or its name or id)
// is redacted like one in the text, and the wrapped provider's reply is
// left alone.
func TestRedactionCoversToolCalls(t *testing.T) {
	const secret = "sk-tool-0123456789abcdefSECRET"
	calls := []ToolCall{{ID: "c-" + secret, Name: "f", Arguments: `{"key":"` + secret + `"}`}, {Name: "g", Arguments: `{}`}}
	inner := Func(func(ctx context.Context, req *Request) (*Response, error) {
		return &Response{Text: "ok", ToolCalls: calls, Cached: true}, nil
	})
	r := NewRedactor([]Secret{{"KEY", secret}})
	for _, p := range []Provider{WithRedaction(inner, r), withCachedRedaction(inner, r)} {
		resp, err := p.Complete(context.Background(), &Request{})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range resp.ToolCalls {
			if strings.Contains(c.ID+c.Name+c.Arguments, secret) {
				t.Errorf("the secret is in a call: %+v", c)
			}
		}
		if resp.Redactions != 2 || len(resp.ToolCalls) != 2 || resp.ToolCalls[1].Arguments != `{}` {
			t.Errorf("%+v; want 2 redactions and the second call untouched", resp)
		}
		if !strings.Contains(calls[0].Arguments, secret) {
			t.Fatal("redaction changed the wrapped provider's reply")
		}
	}
}
