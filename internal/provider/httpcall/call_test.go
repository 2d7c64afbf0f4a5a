package httpcall

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/assay-eval/assay/internal/provider"
)

const key = "sk-test-0123456789SECRET"

// errDecode stands for the SDK failing to decode a 200 answer; its text
// carries the key, as an SDK error quoting the body might.
var errDecode = errors.New("decoding the answer near " + key)

// roundTrip does what an SDK does for one call: it sends a GET to url
// through c's middleware and reads the whole body — one byte at a time,
// so that anything the body holds is split across reads. Its error is the
// one the SDK would hand back.
func roundTrip(ctx context.Context, c *Call, url string, decodes bool) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := c.Middleware(req, http.DefaultClient.Do)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.ReadAll(iotest.OneByteReader(resp.Body)); err != nil {
		return err
	}
	if resp.StatusCode >= 300 {
		return errors.New("the SDK's own text for an error status")
	}
	if !decodes {
		return errDecode
	}
	return nil
}

// serve answers every request with status, headers and body.
func serve(t *testing.T, status int, hdr map[string]string, body string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k, v := range hdr {
			w.Header().Set(k, v)
		}
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestClassifyErrorStatus(t *testing.T) {
	for _, tt := range []struct {
		name   string
		status int
		hdr    map[string]string
		body   string
		kind   provider.ErrorKind
		wait   time.Duration
		msg    string
	}{
		{"rate limited", 429, map[string]string{"Retry-After-Ms": "1500", "Retry-After": "2"}, `{"error":{"message":"key ` + key + ` is over its limit","type":"rate_limit_error"}}`, provider.KindRateLimited, 1500 * time.Millisecond, "rate_limit_error: key [redacted] is over its limit"},
		{"overloaded", 529, map[string]string{"Retry-After": "3"}, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, provider.KindOverloaded, 3 * time.Second, "overloaded_error: Overloaded"},
		{"empty body", 503, nil, "", provider.KindServer, 0, "Service Unavailable"},
		{"auth", 401, nil, "bad key\n" + key, provider.KindAuth, 0, "bad key [redacted]"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := &Call{}
			err := roundTrip(context.Background(), c, serve(t, tt.status, tt.hdr, tt.body), true)
			e := c.Classify(context.Background(), err, key, nil)
			if e.Kind != tt.kind || e.Status != tt.status || e.RetryAfter != tt.wait || e.Msg != tt.msg {
				t.Errorf("kind %s status %d retry-after %v msg %q, want %s %d %v %q", e.Kind, e.Status, e.RetryAfter, e.Msg, tt.kind, tt.status, tt.wait, tt.msg)
			}
			if c.Status() != tt.status {
				t.Errorf("Status() = %d, want %d", c.Status(), tt.status)
			}
			if strings.Contains(e.Error(), key) {
				t.Errorf("the key is in %q", e)
			}
		})
	}
}

func TestClassifySendFailure(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c := &Call{}
	// The transport's error quotes the URL, and with it the key.
	err = roundTrip(context.Background(), c, "http://"+addr+"/?key="+key, true)
	e := c.Classify(context.Background(), err, key, nil)
	if e.Kind != provider.KindUnavailable || e.Status != 0 || c.Status() != 0 || e.Retryable() {
		t.Errorf("kind %s status %d, want a refused connection to be unavailable (not retried) without status", e.Kind, e.Status)
	}
	if strings.Contains(e.Error(), key) || !strings.Contains(e.Error(), "[redacted]") {
		t.Errorf("want the key redacted in %q", e)
	}
	var ne *net.OpError
	if !errors.As(e, &ne) {
		t.Errorf("errors.As does not find the *net.OpError under %q", e)
	}
}

func TestClassifyContextEnded(t *testing.T) {
	url := serve(t, 200, nil, "{}")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c := &Call{}
	e := c.Classify(ctx, roundTrip(ctx, c, url, true), key, nil)
	if e.Kind != provider.KindCanceled || !errors.Is(e, context.Canceled) {
		t.Errorf("canceled: kind %s err %v, want canceled wrapping context.Canceled", e.Kind, e)
	}

	ctx, cancel = context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	c = &Call{}
	e = c.Classify(ctx, roundTrip(ctx, c, url, true), key, nil)
	if e.Kind != provider.KindTimeout || !errors.Is(e, context.DeadlineExceeded) {
		t.Errorf("deadline: kind %s err %v, want timeout wrapping context.DeadlineExceeded", e.Kind, e)
	}
}

func TestClassifyNotSent(t *testing.T) {
	c := &Call{}
	e := c.Classify(context.Background(), errors.New("cannot encode the request for "+key), key, nil)
	if e.Kind != provider.KindBadRequest || e.Retryable() || strings.Contains(e.Error(), key) {
		t.Errorf("kind %s err %q, want a non-retryable bad_request without the key", e.Kind, e)
	}
}

func TestClassifyBodyCut(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "100")
		io.WriteString(w, `{"id":`)
	}))
	t.Cleanup(srv.Close)
	c := &Call{}
	err := roundTrip(context.Background(), c, srv.URL, true)
	e := c.Classify(context.Background(), err, key, nil)
	if e.Kind != provider.KindNetwork || e.Status != 200 || !errors.Is(e, io.ErrUnexpectedEOF) {
		t.Errorf("kind %s status %d err %v, want network at 200 wrapping io.ErrUnexpectedEOF", e.Kind, e.Status, e)
	}
}

func TestClassifyUndecodableAnswer(t *testing.T) {
	overloaded := func(error) (provider.ErrorKind, string) {
		return provider.KindOverloaded, "error in the stream: overloaded for " + key
	}
	notOne := func(error) (provider.ErrorKind, string) { return "", "" }
	for _, tt := range []struct {
		name      string
		streamErr func(error) (provider.ErrorKind, string)
		kind      provider.ErrorKind
		msg       string
	}{
		{"no stream errors", nil, provider.KindMalformed, "the response is not a valid answer"},
		{"not a stream error", notOne, provider.KindMalformed, "the response is not a valid answer"},
		{"a stream error", overloaded, provider.KindOverloaded, "error in the stream: overloaded for [redacted]"},
	} {
		c := &Call{}
		err := roundTrip(context.Background(), c, serve(t, 200, nil, "<html>"), false)
		e := c.Classify(context.Background(), err, key, tt.streamErr)
		if e.Kind != tt.kind || e.Status != 200 || e.Msg != tt.msg {
			t.Errorf("%s: kind %s status %d msg %q, want %s 200 %q", tt.name, e.Kind, e.Status, e.Msg, tt.kind, tt.msg)
		}
		if strings.Contains(e.Error(), key) {
			t.Errorf("%s: the key is in %q", tt.name, e)
		}
		if tt.kind == provider.KindMalformed && !errors.Is(e, errDecode) {
			t.Errorf("%s: %v does not wrap the SDK's error", tt.name, e)
		}
	}
}

func TestSawDone(t *testing.T) {
	for _, tt := range []struct {
		name   string
		watch  bool
		status int
		body   string
		want   bool
	}{
		{"stream end", true, 200, "data: {}\n\ndata: [DONE]\n\n", true},
		{"after a false start", true, 200, "data: [[DONE]\n\n", true},
		{"not watched", false, 200, "data: [DONE]\n\n", false},
		{"cut short", true, 200, "data: {}\n\ndata: [DONE", false},
		{"broken up", true, 200, "data: [DO NE]\n\n", false},
		{"in an error body", true, 500, "data: [DONE]\n\n", false},
	} {
		c := &Call{WatchDone: tt.watch}
		_ = roundTrip(context.Background(), c, serve(t, tt.status, map[string]string{"Content-Type": "text/event-stream"}, tt.body), true)
		if got := c.SawDone(); got != tt.want {
			t.Errorf("%s: SawDone() = %v, want %v", tt.name, got, tt.want)
		}
		if got := c.ContentType(); got != "text/event-stream" {
			t.Errorf("%s: ContentType() = %q, want text/event-stream", tt.name, got)
		}
	}
}

func TestCheckBaseURL(t *testing.T) {
	const example = "http://127.0.0.1:11434/v1"
	for _, base := range []string{"http://127.0.0.1:11434/v1", "https://api.anthropic.com", "https://gateway.example/openai/v1?tenant=a"} {
		if err := CheckBaseURL(base, example); err != nil {
			t.Errorf("%s: %v, want it accepted", base, err)
		}
	}
	for _, base := range []string{"localhost:8080/v1", "api.openai.com/v1", "ftp://host/v1", "https://user:hunter2@/v1", "http://[::1", ""} {
		err := CheckBaseURL(base, example)
		if err == nil {
			t.Errorf("%q accepted, want an error", base)
			continue
		}
		if !strings.Contains(err.Error(), "absolute http:// or https:// URL") || !strings.Contains(err.Error(), example) {
			t.Errorf("%q: %q does not say what a valid base_url looks like", base, err)
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("the password is in %q", err)
		}
	}
}

// A body of exactly Limit bytes is read whole; one byte more fails the read
// with ErrReplyTooLarge, and Classify calls it an output_limit that is not
// retried, whatever the status.
func TestReplyLimit(t *testing.T) {
	body := strings.Repeat("x", 100)
	for _, status := range []int{200, 500} {
		c := &Call{Limit: 100}
		err := roundTrip(context.Background(), c, serve(t, status, nil, body), true)
		if c.OverLimit() || errors.Is(err, ErrReplyTooLarge) {
			t.Errorf("status %d: a body of exactly the limit was cut: %v", status, err)
		}

		c = &Call{Limit: 99}
		err = roundTrip(context.Background(), c, serve(t, status, nil, body), true)
		if !errors.Is(err, ErrReplyTooLarge) || !c.OverLimit() {
			t.Fatalf("status %d: err %v, want ErrReplyTooLarge", status, err)
		}
		e := c.Classify(context.Background(), err, key, nil)
		if e.Kind != provider.KindOutputLimit || e.Retryable() || e.Status != status || !strings.Contains(e.Msg, "99 bytes") || !strings.Contains(e.Msg, "max_output_bytes") {
			t.Errorf("status %d: kind %s retryable %v status %d msg %q, want an unretried output_limit naming 99 bytes and max_output_bytes", status, e.Kind, e.Retryable(), e.Status, e.Msg)
		}
	}
}
