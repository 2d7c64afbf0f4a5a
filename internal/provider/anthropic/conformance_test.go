package anthropic

import (
	"fmt"
	"testing"

	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/provider/httpcall/httpcalltest"
	"github.com/assay-eval/assay/internal/spec"
)

// TestConformance runs the suite every SDK-based provider passes against
// the mock server, the providertest conformance suite among it.
func TestConformance(t *testing.T) {
	httpcalltest.Run(t, httpcalltest.Harness{
		Name: "anthropic",
		New: func(t *testing.T, root string, stream bool, key string, maxOutputBytes int64) provider.Provider {
			// The conformance suite's longest reply is 20 KB: more than the
			// default max_tokens lets the mock say.
			maxTokens := 1 << 16
			p, err := New(&spec.Target{Name: "conformance", Provider: "anthropic", Model: "claude-mock", BaseURL: root, Stream: stream, Params: spec.Params{MaxTokens: &maxTokens}, MaxOutputBytes: maxOutputBytes}, key, nil)
			if err != nil {
				t.Fatal(err)
			}
			return p
		},
		ErrorBody: func(message string) string {
			return fmt.Sprintf(`{"type":"error","error":{"type":"api_error","message":%q}}`, message)
		},
		EndlessStream: func() (string, string) {
			return "event: message_start\n" +
					`data: {"type":"message_start","message":{"id":"m","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"usage":{"input_tokens":1,"output_tokens":0}}}` + "\n\n" +
					"event: content_block_start\n" +
					`data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}` + "\n\n",
				"event: content_block_delta\n" +
					`data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"aaaaaaaaaaaaaaaa"}}` + "\n\n"
		},
	})
}
