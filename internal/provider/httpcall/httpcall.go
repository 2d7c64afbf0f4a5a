// Package httpcall owns what the SDK-based providers (openai, anthropic)
// share about their one HTTP call: classifying a failed call into a
// *provider.Error by where it failed — before a response, at an error
// status, while reading the body, or in decoding it — as seen by a
// middleware on the SDK's transport, so no SDK error text is ever matched;
// and keeping the API key out of every error text. The same middleware
// bounds every response body (plain, streamed, error) at the target's
// max_output_bytes, so a reply without end is an output_limit error, never
// an exhausted memory. It also holds the base_url check and the default
// HTTP client both providers use.
//
// It imports only the provider package and the standard library; it must
// not import the provider sub-packages (openai, anthropic, exec, replay, …)
// or any SDK.
package httpcall

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/assay-eval/assay/internal/provider"
)

// errorBodyLimit bounds how much of an error response is kept to explain it.
const errorBodyLimit = 8 << 10

// DefaultMaxReplyBytes bounds the bytes read from one response body when
// the target sets no max_output_bytes. It counts bytes on the wire: a
// streamed reply spends ~150–250 bytes of event framing per token, so
// 16 MiB holds a streamed answer of some 70,000 tokens.
const DefaultMaxReplyBytes = 16 << 20

// ErrReplyTooLarge is the read error a response body returns once more than
// the call's limit has been read from it.
var ErrReplyTooLarge = errors.New("reply larger than max_output_bytes")

// Call records what the transport saw during one request. Make one per
// request, install Middleware as the SDK's only middleware for that
// request, and when the SDK returns an error hand it to Classify.
type Call struct {
	// WatchDone makes the call watch a successful response body for the
	// "[DONE]" sentinel that ends an OpenAI stream; SawDone reports it.
	WatchDone bool
	// Limit bounds the bytes read from the response body, error bodies and
	// streams alike (0: DefaultMaxReplyBytes). A read past it fails with
	// ErrReplyTooLarge, and Classify calls the call an output_limit.
	Limit int64

	resp    *http.Response
	sendErr error // the round trip failed before a response
	body    *watchedBody
}

// Middleware watches one round trip. Its signature is the one both SDKs'
// option.WithMiddleware take.
func (c *Call) Middleware(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	resp, err := next(req)
	if err != nil {
		c.sendErr = err
		return resp, err
	}
	c.resp = resp
	if resp != nil && resp.Body != nil {
		limit := c.Limit
		if limit <= 0 {
			limit = DefaultMaxReplyBytes
		}
		c.body = &watchedBody{rc: resp.Body, left: limit, limit: limit, keep: resp.StatusCode >= 300, watchDone: c.WatchDone && resp.StatusCode < 300}
		resp.Body = c.body
	}
	return resp, nil
}

// watchedBody passes a response body through, remembering the first read
// error, the start of an error body, and whether "[DONE]" went by. It reads
// at most limit bytes; past them every read fails with ErrReplyTooLarge,
// so no decoder above it ever holds more.
type watchedBody struct {
	rc        io.ReadCloser
	left      int64 // bytes that may still be read
	limit     int64
	overLimit bool
	readErr   error
	keep      bool
	kept      []byte
	watchDone bool
	matched   int // bytes of "[DONE]" matched so far
	sawDone   bool
}

func (b *watchedBody) Read(p []byte) (int, error) {
	if b.overLimit {
		return 0, ErrReplyTooLarge
	}
	if b.left <= 0 {
		// The limit is spent: one byte more means the reply is over it.
		var one [1]byte
		n, err := b.rc.Read(one[:])
		if n == 0 && err != nil {
			if err != io.EOF && b.readErr == nil {
				b.readErr = err
			}
			return 0, err
		}
		b.overLimit = true
		return 0, ErrReplyTooLarge
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
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

// SawDone reports whether the response body carried "[DONE]"; it is
// always false unless WatchDone was set.
func (c *Call) SawDone() bool { return c.body != nil && c.body.sawDone }

// OverLimit reports whether the response body went past the call's limit.
// A decoder may take the cut for an end; a caller that got no error still
// checks this and, when true, hands the call to Classify.
func (c *Call) OverLimit() bool { return c.body != nil && c.body.overLimit }

// Status is the response's HTTP status, or 0 when there was no response.
func (c *Call) Status() int {
	if c.resp == nil {
		return 0
	}
	return c.resp.StatusCode
}

// ContentType is the response's Content-Type header, as the server sent
// it: outside text, to pass through Clean before showing it.
func (c *Call) ContentType() string {
	if c.resp == nil {
		return ""
	}
	return c.resp.Header.Get("Content-Type")
}

// Classify turns the error the SDK returned for this call into a
// *provider.Error whose text never holds key. streamErr, when non-nil,
// classifies an error the API reported inside a 200 answer (an error event
// in a stream); it returns an empty kind when err is not one.
func (c *Call) Classify(ctx context.Context, err error, key string, streamErr func(error) (provider.ErrorKind, string)) *provider.Error {
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
	case c.body != nil && c.body.overLimit:
		e.Kind = provider.KindOutputLimit
		e.Status = c.resp.StatusCode
		e.Msg = fmt.Sprintf("the reply (HTTP %d) was larger than %d bytes and was not read further (raise max_output_bytes if it is legitimate)", e.Status, c.body.limit)
		e.Err = ErrReplyTooLarge
	case c.sendErr != nil:
		e.Kind = transportKind(c.sendErr)
		e.Msg = "sending the request"
		e.Err = RedactError(c.sendErr, key)
	case c.resp == nil:
		// The SDK refused before sending: a request it cannot build.
		e.Kind = provider.KindBadRequest
		e.Msg = "the request was not sent"
		e.Err = RedactError(err, key)
	case c.resp.StatusCode >= 300:
		e.Status = c.resp.StatusCode
		e.Kind = provider.KindForStatus(e.Status)
		e.RetryAfter = retryAfter(c.resp.Header, time.Now())
		var kept []byte
		if c.body != nil {
			kept = c.body.kept
		}
		e.Msg = Clean(redact(ErrorText(kept), key))
		if e.Msg == "" {
			e.Msg = http.StatusText(e.Status)
		}
	case c.body != nil && c.body.readErr != nil:
		e.Kind = transportKind(c.body.readErr)
		e.Msg = "reading the response body"
		e.Status = c.resp.StatusCode
		e.Err = RedactError(c.body.readErr, key)
	default:
		e.Status = c.resp.StatusCode
		if streamErr != nil {
			if kind, msg := streamErr(err); kind != "" {
				e.Kind, e.Msg = kind, Clean(redact(msg, key))
				return e
			}
		}
		e.Kind = provider.KindMalformed
		e.Msg = "the response is not a valid answer"
		e.Err = RedactError(err, key)
	}
	return e
}

// transportKind is the kind of an error from the connection. A host that
// does not resolve (DNS) or refuses the connection is unavailable: calling
// it again in a second will not help, so it is never retried (and the run's
// circuit breaker counts it); a reset or a cut body is a network error,
// retried.
func transportKind(err error) provider.ErrorKind {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return provider.KindTimeout
	}
	var de *net.DNSError
	if errors.As(err, &de) || errors.Is(err, syscall.ECONNREFUSED) {
		return provider.KindUnavailable
	}
	return provider.KindNetwork
}

// KindForErrorType maps an error type named in a body (either API's
// vocabulary) to a kind, for errors that arrive inside a 200 stream. An
// unknown type is a server error.
func KindForErrorType(typ string) provider.ErrorKind {
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

// ErrorText explains an error body: the API's error type and message when
// the body is an error object of a known shape (OpenAI's, Anthropic's, or
// the {"error": "..."} and {"detail": ...} of compatible servers), else the
// body itself. It is outside text: callers redact the key and Clean it.
func ErrorText(body []byte) string {
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

// Clean makes outside text safe for a one-line message: valid UTF-8, no
// control characters, runs of space collapsed, at most 300 bytes. Redact a
// key before cleaning, so that the length limit cannot cut it in two.
func Clean(s string) string {
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

// RedactError wraps err so that its message is one clean line with key
// removed; errors.Is and errors.As still see err. A nil err stays nil.
func RedactError(err error, key string) error {
	if err == nil {
		return nil
	}
	return &redactedError{msg: Clean(redact(err.Error(), key)), err: err}
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// CheckBaseURL accepts an absolute http(s) URL; its message names example
// as one that would be valid. It never shows a password the URL may carry.
func CheckBaseURL(base, example string) error {
	u, err := url.Parse(base)
	if err != nil {
		return fmt.Errorf("base_url is not a valid URL; want an absolute http:// or https:// URL such as %s", example)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("base_url %q is not an absolute http:// or https:// URL (such as %s)", u.Redacted(), example)
	}
	return nil
}

// NewClient returns an HTTP client with the default transport's settings
// and enough idle connections per host for many concurrent calls to one
// API.
func NewClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 256
	return &http.Client{Transport: tr}
}
