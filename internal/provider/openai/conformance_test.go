package openai

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
)

// TestConformance runs the shared suite against the mock server, plain and
// streamed.
func TestConformance(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(mode(stream), func(t *testing.T) {
			providertest.Run(t, providertest.Harness{
				Name: "openai/" + mode(stream),
				New: func(t *testing.T, reply string) provider.Provider {
					return newProvider(t, startMock(t, mock.Options{Default: reply}), stream, "")
				},
				Slow: func(t *testing.T, d time.Duration) provider.Provider {
					return newProvider(t, startMock(t, mock.Options{Latency: d}), stream, "")
				},
				Fail: func(t *testing.T, status int) provider.Provider {
					return newProvider(t, failingServer(t, status), stream, "sk-conformance")
				},
			})
		})
	}
}

// failingServer answers every call with status: through the mock's own
// faults where it has one, else with an OpenAI-shaped error body.
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
		io.WriteString(w, fmt.Sprintf(`{"error":{"message":"injected %d","type":"invalid_request_error","param":null,"code":null}}`, status))
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}
