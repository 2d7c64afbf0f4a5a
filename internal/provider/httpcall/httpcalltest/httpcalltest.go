// Package httpcalltest owns the tests that every SDK-based HTTP provider
// (openai, anthropic) passes against the assay mock server: the
// providertest conformance suite, plain and streamed; the mock's injected
// faults classified as the same provider.Error kinds with the API key kept
// out of the text; Retry-After carried on a 429; prompt return on deadlines
// and cancellation; time to first token measured on a stream; and replies
// without end (chunked bodies, event streams, huge error bodies) cut at the
// byte limit as an unretried output_limit, or by the time-out when they
// trickle. A provider's test file builds a Harness and calls Run. It also
// holds the small helpers those test files share.
//
// It imports the mock server, provider and providertest; it must not import
// any provider backend (openai, anthropic, exec, replay) or any SDK. Its own
// test (wire_test.go, an external test package) does: the same tool-calling
// requests through both SDK providers, plain and streamed, give the same
// calls.
package httpcalltest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/mock"
	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/provider/providertest"
)

// plantedKey is the API key the fault tests send; no error may show it.
const plantedKey = "sk-planted-0123456789abcdefSECRET"

// Harness builds one provider backend for the suite.
type Harness struct {
	Name string // such as "openai"
	// New returns a provider for the server at root (scheme and host, no
	// path: the provider adds its API's path prefix), streamed or not,
	// sending key ("" for none), with the target's max_output_bytes set to
	// maxOutputBytes (0: not set, the default bound).
	New func(t *testing.T, root string, stream bool, key string, maxOutputBytes int64) provider.Provider
	// ErrorBody is the body the API sends with an error status, in its own
	// shape, carrying message.
	ErrorBody func(message string) string
	// EndlessStream is the start of a streamed answer in the API's event
	// format and one text event that may follow it any number of times.
	EndlessStream func() (head, event string)
}

// Run runs the suite against the providers h builds.
func Run(t *testing.T, h Harness) {
	t.Helper()
	if h.New == nil || h.ErrorBody == nil || h.EndlessStream == nil {
		t.Fatalf("httpcalltest: harness %q needs New, ErrorBody and EndlessStream", h.Name)
	}
	// The subtests marked parallel spend their time waiting (slow replies,
	// time-outs, replies that never end, each on its own server): they run
	// together once the others are done.
	for _, stream := range []bool{false, true} {
		t.Run("Conformance/"+Mode(stream), func(t *testing.T) {
			t.Parallel()
			conformance(t, h, stream)
		})
	}
	t.Run("MockFaults", func(t *testing.T) { testMockFaults(t, h) })
	t.Run("RateLimitCarriesRetryAfter", func(t *testing.T) { testRateLimit(t, h) })
	t.Run("TimeoutAndCancelReturnPromptly", func(t *testing.T) { testTimeoutAndCancel(t, h) })
	t.Run("CancelMidStream", func(t *testing.T) { testCancelMidStream(t, h) })
	t.Run("ConnectionRefused", func(t *testing.T) { testConnectionRefused(t, h) })
	t.Run("UnknownHost", func(t *testing.T) { testUnknownHost(t, h) })
	t.Run("StreamMeasuresFirstToken", func(t *testing.T) { testFirstToken(t, h) })
	t.Run("BoundedReplies", func(t *testing.T) {
		t.Parallel()
		testBoundedReplies(t, h)
	})
	t.Run("TimeoutBoundsBody", func(t *testing.T) {
		t.Parallel()
		testTimeoutBoundsBody(t, h)
	})
}

// conformance runs the providertest suite against the mock server.
func conformance(t *testing.T, h Harness, stream bool) {
	providertest.Run(t, providertest.Harness{
		Name: h.Name + "/" + Mode(stream),
		New: func(t *testing.T, reply string) provider.Provider {
			return h.New(t, StartMock(t, mock.Options{Default: reply}), stream, "", 0)
		},
		Slow: func(t *testing.T, d time.Duration) provider.Provider {
			return h.New(t, StartMock(t, mock.Options{Latency: d}), stream, "", 0)
		},
		Fail: func(t *testing.T, status int) provider.Provider {
			return h.New(t, failingServer(t, h, status), stream, "sk-conformance", 0)
		},
		Calls: func(t *testing.T, calls []provider.ToolCall) provider.Provider {
			return h.New(t, StartMock(t, CallsOptions(calls)), stream, "", 0)
		},
	})
}

// CallsOptions are mock options under which every tool-offering request is
// answered with exactly calls (whatever the conversation holds so far).
func CallsOptions(calls []provider.ToolCall) mock.Options {
	rule := mock.Rule{}
	for _, c := range calls {
		rule.ToolCalls = append(rule.ToolCalls, mock.ToolCall{Name: c.Name, Arguments: c.Arguments})
	}
	return mock.Options{Rules: []mock.Rule{rule}, ToolTurns: 1 << 20}
}

// failingServer answers every call with status: through the mock's own
// faults where it has one, else with an error body in the API's shape.
func failingServer(t *testing.T, h Harness, status int) string {
	switch status {
	case 401:
		return StartMock(t, mock.Options{APIKey: "a-different-key"})
	case 500:
		return StartMock(t, mock.Options{Fail: 1})
	case 529:
		return StartMock(t, mock.Options{Overload: 1})
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(status)
		io.WriteString(w, h.ErrorBody(fmt.Sprintf("injected %d", status)))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func testMockFaults(t *testing.T, h Harness) {
	tests := []struct {
		name   string
		opts   mock.Options
		stream bool
		kind   provider.ErrorKind
		status int
	}{
		{"500", mock.Options{Fail: 1}, false, provider.KindServer, 500},
		{"500 stream", mock.Options{Fail: 1}, true, provider.KindServer, 500},
		{"529", mock.Options{Overload: 1}, false, provider.KindOverloaded, 529},
		{"529 stream", mock.Options{Overload: 1}, true, provider.KindOverloaded, 529},
		{"malformed", mock.Options{Malformed: 1}, false, provider.KindMalformed, 200},
		{"malformed stream", mock.Options{Malformed: 1}, true, provider.KindMalformed, 200},
		{"body cut mid-JSON", mock.Options{Truncate: 1}, false, provider.KindNetwork, 200},
		{"stream cut before the end", mock.Options{Truncate: 1, Default: "a b c d"}, true, provider.KindTruncated, 200},
		{"wrong key", mock.Options{APIKey: "the-right-key"}, false, provider.KindAuth, 401},
		{"wrong key stream", mock.Options{APIKey: "the-right-key"}, true, provider.KindAuth, 401},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := h.New(t, StartMock(t, tt.opts), tt.stream, plantedKey, 0)
			_, err := p.Complete(context.Background(), request("x"))
			pe := ProviderError(t, err)
			if pe.Kind != tt.kind || pe.Status != tt.status {
				t.Errorf("kind %s status %d, want %s %d (err: %v)", pe.Kind, pe.Status, tt.kind, tt.status, err)
			}
			if strings.Contains(err.Error(), plantedKey) {
				t.Errorf("the API key is in the error: %v", err)
			}
		})
	}
}

func testRateLimit(t *testing.T, h Harness) {
	for _, stream := range []bool{false, true} {
		p := h.New(t, StartMock(t, mock.Options{Rate: 0.001, Burst: 1, RetryAfter: 2500 * time.Millisecond}), stream, "", 0)
		if _, err := p.Complete(context.Background(), request("x")); err != nil {
			t.Fatalf("%s: first call within the burst: %v", Mode(stream), err)
		}
		_, err := p.Complete(context.Background(), request("x"))
		pe := ProviderError(t, err)
		if pe.Kind != provider.KindRateLimited || pe.Status != 429 || pe.RetryAfter != 2500*time.Millisecond {
			t.Errorf("%s: kind %s status %d retry-after %v, want rate_limited 429 2.5s", Mode(stream), pe.Kind, pe.Status, pe.RetryAfter)
		}
		if !pe.Retryable() {
			t.Errorf("%s: a 429 must be retryable", Mode(stream))
		}
	}
}

func testTimeoutAndCancel(t *testing.T, h Harness) {
	for _, stream := range []bool{false, true} {
		p := h.New(t, StartMock(t, mock.Options{Hang: 1}), stream, "", 0)

		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		began := time.Now()
		_, err := p.Complete(ctx, request("x"))
		cancel()
		if pe := ProviderError(t, err); pe.Kind != provider.KindTimeout || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s deadline: kind %s err %v, want timeout wrapping context.DeadlineExceeded", Mode(stream), pe.Kind, err)
		}
		if d := time.Since(began); d > time.Second {
			t.Errorf("%s deadline: returned after %v", Mode(stream), d)
		}

		ctx, cancel = context.WithCancel(context.Background())
		time.AfterFunc(50*time.Millisecond, cancel)
		began = time.Now()
		_, err = p.Complete(ctx, request("x"))
		if pe := ProviderError(t, err); pe.Kind != provider.KindCanceled || !errors.Is(err, context.Canceled) {
			t.Errorf("%s cancel: kind %s err %v, want canceled", Mode(stream), pe.Kind, err)
		}
		if d := time.Since(began); d > time.Second {
			t.Errorf("%s cancel: returned after %v", Mode(stream), d)
		}
	}
}

func testCancelMidStream(t *testing.T, h Harness) {
	p := h.New(t, StartMock(t, mock.Options{TokenDelay: time.Second, Default: "slow slow slow"}), true, "", 0)
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	began := time.Now()
	_, err := p.Complete(ctx, request("x"))
	if pe := ProviderError(t, err); pe.Kind != provider.KindTimeout {
		t.Errorf("kind %s, want timeout (err %v)", pe.Kind, err)
	}
	if d := time.Since(began); d > time.Second {
		t.Errorf("returned after %v, want soon after the 150ms deadline", d)
	}
}

func testConnectionRefused(t *testing.T, h Harness) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, err = h.New(t, "http://"+addr, false, plantedKey, 0).Complete(context.Background(), request("x"))
	if pe := ProviderError(t, err); pe.Kind != provider.KindUnavailable || pe.Status != 0 || pe.Retryable() {
		t.Errorf("kind %s status %d, want an unavailable error without status, not retried (err %v)", pe.Kind, pe.Status, err)
	}
}

// testUnknownHost: a host that does not resolve is unavailable, not a
// transient network error. The .invalid top-level domain never resolves
// (RFC 6761), so no network is needed.
func testUnknownHost(t *testing.T, h Harness) {
	_, err := h.New(t, "http://assay-test.invalid", false, plantedKey, 0).Complete(context.Background(), request("x"))
	if pe := ProviderError(t, err); pe.Kind != provider.KindUnavailable || pe.Status != 0 || pe.Retryable() {
		t.Errorf("kind %s status %d, want an unavailable error without status, not retried (err %v)", pe.Kind, pe.Status, err)
	}
	if strings.Contains(err.Error(), plantedKey) {
		t.Errorf("the key is in %q", err)
	}
}

func testFirstToken(t *testing.T, h Harness) {
	p := h.New(t, StartMock(t, mock.Options{Latency: 40 * time.Millisecond, TokenDelay: 40 * time.Millisecond, Default: "a b c d"}), true, "", 0)
	resp, err := p.Complete(context.Background(), request("x"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "a b c d" {
		t.Errorf("text %q, want %q", resp.Text, "a b c d")
	}
	// The first token comes after the latency; the three later tokens take
	// three token delays more.
	if resp.FirstToken < 40*time.Millisecond || resp.Latency-resp.FirstToken < 120*time.Millisecond {
		t.Errorf("first token %v of %v, want >= 40ms and >= 120ms more for the rest", resp.FirstToken, resp.Latency)
	}
}

// request is a system prompt and one user message for a model named
// mock-model: the mock answers to any name.
func request(user string) *provider.Request {
	return &provider.Request{
		Model: "mock-model",
		Messages: []provider.Message{
			{Role: "system", Content: "answer in one word"},
			{Role: "user", Content: user},
		},
	}
}

// StartMock starts the mock server with opts for the rest of the test and
// returns its root URL.
func StartMock(t *testing.T, opts mock.Options) string {
	t.Helper()
	s := mock.New(opts)
	root, err := s.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return root
}

// Serve starts a server for the rest of the test that answers every
// request with status, contentType and body, and returns its root URL.
func Serve(t *testing.T, status int, contentType, body string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// ProviderError is err as a *provider.Error; the test fails at once when it
// is not one.
func ProviderError(t *testing.T, err error) *provider.Error {
	t.Helper()
	var pe *provider.Error
	if !errors.As(err, &pe) {
		t.Fatalf("err %v (%T), want a *provider.Error", err, err)
	}
	return pe
}

// Mode names a streamed or plain call in test names and messages.
func Mode(stream bool) string {
	if stream {
		return "stream"
	}
	return "plain"
}
