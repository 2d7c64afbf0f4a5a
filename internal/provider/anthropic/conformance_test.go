package anthropic

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/mock"
	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/provider/providertest"
	"github.com/assay-eval/assay/internal/spec"
)

// TestConformance runs the shared suite against the mock server, plain and
// streamed.
func TestConformance(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(mode(stream), func(t *testing.T) {
			providertest.Run(t, providertest.Harness{
				Name: "anthropic/" + mode(stream),
				New: func(t *testing.T, reply string) provider.Provider {
					// The suite's longest reply is 20 KB: more than the
					// default max_tokens lets the mock say.
					return conformanceProvider(t, startMock(t, mock.Options{Default: reply}), stream, "")
				},
				Slow: func(t *testing.T, d time.Duration) provider.Provider {
					return conformanceProvider(t, startMock(t, mock.Options{Latency: d}), stream, "")
				},
				Fail: func(t *testing.T, status int) provider.Provider {
					return conformanceProvider(t, failingServer(t, status), stream, "sk-conformance")
				},
			})
		})
	}
}

func conformanceProvider(t *testing.T, base string, stream bool, key string) *Provider {
	t.Helper()
	maxTokens := 1 << 16
	p, err := New(&spec.Target{Name: "conformance", Provider: "anthropic", Model: "claude-mock", BaseURL: base, Stream: stream, Params: spec.Params{MaxTokens: &maxTokens}}, key, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// failingServer answers every call with status: through the mock's own
// faults where it has one, else with an Anthropic-shaped error body.
func failingServer(t *testing.T, status int) string {
	switch status {
	case 401:
		return startMock(t, mock.Options{APIKey: "a-different-key"})
	case 500:
		return startMock(t, mock.Options{Fail: 1})
	case 529:
		return startMock(t, mock.Options{Overload: 1})
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(status)
		io.WriteString(w, fmt.Sprintf(`{"type":"error","error":{"type":"api_error","message":"injected %d"}}`, status))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}
