package openai

import (
	"fmt"
	"testing"

	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/provider/httpcall/httpcalltest"
)

// TestConformance runs the suite every SDK-based provider passes against
// the mock server, the providertest conformance suite among it.
func TestConformance(t *testing.T) {
	httpcalltest.Run(t, httpcalltest.Harness{
		Name: "openai",
		New: func(t *testing.T, root string, stream bool, key string, maxOutputBytes int64) provider.Provider {
			tg := targetFor(root+"/v1", stream)
			tg.MaxOutputBytes = maxOutputBytes
			p, err := New(tg, key, nil)
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			return p
		},
		ErrorBody: func(message string) string {
			return fmt.Sprintf(`{"error":{"message":%q,"type":"invalid_request_error","param":null,"code":null}}`, message)
		},
		EndlessStream: func() (string, string) {
			return "", `data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"aaaaaaaaaaaaaaaa"},"finish_reason":null}]}` + "\n\n"
		},
	})
}
