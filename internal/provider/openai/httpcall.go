package openai

// This file classifies a failed HTTP call by where it failed — before a
// response, at an error status, while reading the body, or in decoding it —
// as seen by a middleware on the SDK's transport, so no SDK error text is
// ever matched. The anthropic package holds the same code; keep them alike.

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/assay-eval/assay/internal/provider"
)

// errorBodyLimit bounds how much of an error response is kept to explain it.
const errorBodyLimit = 8 << 10

// call records what the transport saw during one request.
type call struct {
	resp    *http.Response
	sendErr error // the round trip failed before a response
	body    *watchedBody
	// watchDone makes the body watch for the "[DONE]" sentinel of an
	// OpenAI stream.
	watchDone bool
}

// middleware is installed as the SDK's only middleware for one request.
func (c *call) middleware(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	resp, err := next(req)
	if err != nil {
		c.sendErr = err
		return resp, err
	}
	c.resp = resp
	if resp != nil && resp.Body != nil {
		c.body = &watchedBody{rc: resp.Body, keep: resp.StatusCode >= 300, watchDone: c.watchDone && resp.StatusCode < 300}
		resp.Body = c.body
	}
	return resp, nil
}

// watchedBody passes a response body through, remembering the first read
// error, the start of an error body, and whether "[DONE]" went by.
type watchedBody struct {
	rc        io.ReadCloser
	readErr   error
	keep      bool
	kept      []byte
	watchDone bool
	matched   int // bytes of "[DONE]" matched so far
	sawDone   bool
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if b.keep && len(b.kept) < errorBodyLimit {
		b.kept = append(b.kept, p[:min(n, errorBodyLimit-len(b.kept))]...)
	}
	if b.watchDone && !b.sawDone {
		const done = "[DONE]"
		for _, c := range p[:n] {
			switch {
			case c == done[b.matched]:
				b.matched++
			case c == done[0]:
				b.matched = 1
			default:
				b.matched = 0
			}
			if b.matched == len(done) {
				b.sawDone = true
				break
			}
		}
	}
	if err != nil && err != io.EOF && b.readErr == nil {
		b.readErr = err
	}
	return n, err
}

func (b *watchedBody) Close() error { return b.rc.Close() }

// sawDone reports whether the response body carried "[DONE]".
func (c *call) sawDone() bool { return c.body != nil && c.body.sawDone }

// classify turns a failed call into a *provider.Error. streamErr, when
// non-nil, classifies an error the API reported inside a 200 answer (an
// error event in a stream); it returns "" when err is not one.
func (c *call) classify(ctx context.Context, err error, key string, streamErr func(error) (provider.ErrorKind, string)) *provider.Error {
	e := &provider.Error{}
	switch {
	case ctx.Err() != nil:
		e.Err = ctx.Err()
		e.Kind = provider.KindCanceled
		e.Msg = "the call was canceled"
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			e.Kind = provider.KindTimeout
			e.Msg = "no complete answer before the deadline"
		}
	case c.sendErr != nil:
		e.Kind = transportKind(c.sendErr)
		e.Msg = "sending the request"
		e.Err = secret(c.sendErr, key)
	case c.resp == nil:
		// The SDK refused before sending: a request it cannot build.
		e.Kind = provider.KindBadRequest
		e.Msg = "the request was not sent"
		e.Err = secret(err, key)
	case c.resp.StatusCode >= 300:
		e.Status = c.resp.StatusCode
		e.Kind = provider.KindForStatus(e.Status)
		e.RetryAfter = retryAfter(c.resp.Header, time.Now())
		var kept []byte
		if c.body != nil {
			kept = c.body.kept
		}
		e.Msg = clean(redact(errorText(kept), key))
		if e.Msg == "" {
			e.Msg = http.StatusText(e.Status)
		}
	case c.body != nil && c.body.readErr != nil:
		e.Kind = transportKind(c.body.readErr)
		e.Msg = "reading the response body"
		e.Status = c.resp.StatusCode
		e.Err = secret(c.body.readErr, key)
	default:
		e.Status = c.resp.StatusCode
		if streamErr != nil {
			if kind, msg := streamErr(err); kind != "" {
				e.Kind, e.Msg = kind, clean(redact(msg, key))
				return e
			}
		}
		e.Kind = provider.KindMalformed
		e.Msg = "the response is not a valid answer"
		e.Err = secret(err, key)
	}
	return e
}

// transportKind is the kind of an error from the connection.
func transportKind(err error) provider.ErrorKind {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return provider.KindTimeout
	}
	return provider.KindNetwork
}

// kindForErrorType maps an error type named in a body (either API's
// vocabulary) to a kind, for errors that arrive inside a 200 stream.
func kindForErrorType(typ string) provider.ErrorKind {
	switch typ {
	case "overloaded_error":
		return provider.KindOverloaded
	case "rate_limit_error", "rate_limit_exceeded", "requests", "tokens":
		return provider.KindRateLimited
	case "timeout_error":
		return provider.KindTimeout
	case "invalid_request_error":
		return provider.KindBadRequest
	}
	return provider.KindServer
}

// retryAfter reads how long the server asked the client to wait:
// retry-after-ms (milliseconds, OpenAI's and Anthropic's extension) first,
// then Retry-After as seconds or an HTTP date. Absent, unparsable, past or
// absurd (over a year) values give 0.
func retryAfter(h http.Header, now time.Time) time.Duration {
	const max = float64(365 * 24 * time.Hour)
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 && ms*float64(time.Millisecond) < max {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s > 0 && !math.IsInf(s, 0) && s*float64(time.Second) < max {
			return time.Duration(s * float64(time.Second))
		}
		return 0
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 && float64(d) < max {
			return d
		}
	}
	return 0
}

// errorText explains an error body: the API's error type and message when
// the body is an error object of a known shape (OpenAI's, Anthropic's, or
// the {"error": "..."} and {"detail": ...} of compatible servers), else the
// body itself. Callers redact and clean it.
func errorText(body []byte) string {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &v) == nil {
		var e struct {
			Type    string `json:"type"`
			Code    any    `json:"code"`
			Message string `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(v.Error, &e) == nil && e.Message != "":
			label := e.Type
			if c, ok := e.Code.(string); ok && c != "" && c != label {
				label = strings.TrimPrefix(label+"/"+c, "/")
			}
			if label == "" {
				return e.Message
			}
			return label + ": " + e.Message
		case json.Unmarshal(v.Error, &s) == nil && s != "":
			return s
		case v.Message != "":
			return v.Message
		case json.Unmarshal(v.Detail, &s) == nil && s != "":
			return s
		case len(v.Detail) > 0 && string(v.Detail) != "null":
			return string(v.Detail)
		}
	}
	return string(body)
}

// clean makes outside text safe for a one-line message: valid UTF-8, no
// control characters, runs of space collapsed, at most 300 bytes.
func clean(s string) string {
	const limit = 300
	var b strings.Builder
	space := false
	for _, r := range strings.ToValidUTF8(s, "\uFFFD") {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			space = b.Len() > 0
			continue
		}
		need := utf8.RuneLen(r)
		if space {
			need++
		}
		if b.Len()+need > limit {
			b.WriteString("…")
			break
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// redact removes the API key from text that came from outside.
func redact(s, key string) string {
	if key == "" {
		return s
	}
	return strings.ReplaceAll(s, key, "[redacted]")
}

// secret wraps err so that its message has the key removed; errors.Is and
// errors.As still see err.
func secret(err error, key string) error {
	if err == nil {
		return nil
	}
	return &redactedError{msg: clean(redact(err.Error(), key)), err: err}
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }
