package provider

import (
	"context"
	"encoding/base64"
	"errors"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Every encoding the Redactor documents is replaced in replies and errors,
// whatever surrounds it; short values are left alone.
func TestRedactorEncodings(t *testing.T) {
	const v = "sk-live/Planted+Key=0123456789?&"
	r := NewRedactor([]Secret{{"MY_KEY", v}, {"SHORT", "abc"}})
	b64 := func(s string) []string {
		return []string{base64.StdEncoding.EncodeToString([]byte(s)), base64.URLEncoding.EncodeToString([]byte(s)),
			base64.RawStdEncoding.EncodeToString([]byte(s))}
	}
	forms := []string{v, "Authorization: Bearer " + v, url.QueryEscape(v), url.PathEscape(v),
		strconv.Quote(v), `{"error":"` + strings.ReplaceAll(v, "/", `\/`) + `"}`,
		// A key cut by a truncation at either end.
		v[:FragmentLen], v[len(v)-FragmentLen:], v[5:]}
	forms = append(forms, b64(v)...)
	for _, user := range []string{"", "u", "us", "user", "longer-user-name"} {
		forms = append(forms, b64(user+":"+v)...)
		forms = append(forms, b64(user+":"+v+"trailing")...)
	}
	for _, f := range forms {
		in := "before " + f + " after abc"
		out, n := r.Redact(in)
		if n == 0 || !strings.Contains(out, "[REDACTED:MY_KEY]") {
			t.Errorf("%q not redacted: %q", f, out)
		}
		// What is left of the encoding is at most 4 characters each side.
		if strings.Contains(out, v[:FragmentLen]) || strings.Contains(out, v[4:4+FragmentLen]) || strings.Contains(out, v[len(v)-FragmentLen:]) {
			t.Errorf("%q left the key in %q", f, out)
		}
		if !strings.HasSuffix(out, " after abc") {
			t.Errorf("%q: the short value or the text around was changed: %q", f, out)
		}
	}

	p := WithRedaction(Func(func(ctx context.Context, req *Request) (*Response, error) {
		if req.CaseID == "fail" {
			return nil, &Error{Kind: KindAuth, Status: 401, Msg: "bad key " + v, Err: context.DeadlineExceeded}
		}
		return &Response{Text: "echo " + v + " and " + v, Model: v}, nil
	}), r)
	resp, err := p.Complete(context.Background(), &Request{})
	if err != nil || strings.Contains(resp.Text+resp.Model, v) || resp.Redactions != 3 {
		t.Errorf("reply %+v, %v: want the key replaced 3 times", resp, err)
	}
	_, err = p.Complete(context.Background(), &Request{CaseID: "fail"})
	if err == nil || strings.Contains(err.Error(), v) || Redactions(err) != 1 {
		t.Errorf("error %v (%d redactions): want the key replaced once", err, Redactions(err))
	}
	var pe *Error
	if !errors.As(err, &pe) || pe.Kind != KindAuth || pe.Status != 401 || strings.Contains(pe.Error(), v) ||
		!errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("the redacted error lost its kind, status or cause: %#v", err)
	}
	if WithRedaction(p, NewRedactor([]Secret{{"S", "short"}})) != p {
		t.Error("a Redactor with only short values should not wrap")
	}
}

// Redaction of a 16 MiB output (the largest a target may send) stays fast.
func TestRedactorLargeOutput(t *testing.T) {
	r := NewRedactor([]Secret{{"A", "sk-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}, {"B", "sk-0123456789abcdef0123456789"}})
	big := strings.Repeat("sk-aaaaaaaab 0123456789aX ", 16<<20/26) // runs of 11 bytes of each key
	start := time.Now()
	out, n := r.Redact(big)
	if n != 0 || out != big {
		t.Errorf("%d redactions in an output with no secret", n)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("redacting 16 MiB took %v", d)
	}
	t.Logf("16 MiB redacted in %v", time.Since(start))
}

// leaky echoes a secret in every reply.
type leaky struct{ secret string }

func (l leaky) Complete(ctx context.Context, req *Request) (*Response, error) {
	return &Response{Text: "the key is " + l.secret, Attempts: 1}, nil
}

// Through Wrap with a cache: a fresh reply is redacted before the cache
// stores it, and a reply an older assay cached unredacted is redacted as it
// is served.
func TestWrapRedactsFreshAndCachedReplies(t *testing.T) {
	const secret = "sk-cached-0123456789abcdef"
	ctx := context.Background()
	r := NewRedactor([]Secret{{"KEY", secret}})
	wrapped := func(c Cache, redact *Redactor) Provider {
		return Wrap(leaky{secret}, WrapOptions{Timeout: time.Second, Limits: Limits{Concurrency: 1}, Cache: c, Scope: testScope, Logger: discardLog(), Redact: redact})
	}

	fresh := newMemCache()
	resp, err := wrapped(fresh, r).Complete(ctx, baseRequest())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(resp.Text, secret) || resp.Redactions != 1 || resp.Cached {
		t.Errorf("fresh reply: %+v; want the key redacted once", resp)
	}
	for k, v := range fresh.m {
		if strings.Contains(string(v), secret) {
			t.Errorf("the cache stored the key under %s", k)
		}
	}

	// An entry cached without redaction (an older assay).
	old := newMemCache()
	if _, err := wrapped(old, nil).Complete(ctx, baseRequest()); err != nil {
		t.Fatal(err)
	}
	hit, err := wrapped(old, r).Complete(ctx, baseRequest())
	if err != nil {
		t.Fatal(err)
	}
	if !hit.Cached || strings.Contains(hit.Text, secret) || hit.Redactions != 1 {
		t.Errorf("old cached reply: %+v; want a hit with the key redacted", hit)
	}
}
