package mock

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkHandler measures the server's own cost per request, without the
// network.
func BenchmarkHandler(b *testing.B) {
	for _, bc := range []struct{ name, path, body string }{
		{"openai", "/v1/chat/completions", chatBody},
		{"openai-stream", "/v1/chat/completions", `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"system","content":"be brief"},{"role":"user","content":"what is two plus two"}]}`},
		{"anthropic", "/v1/messages", messagesBody},
		{"openai-tools-stream", "/v1/chat/completions", toolBody(false, true, "", `[{"role":"user","content":"weather?"}]`)},
		{"anthropic-tools", "/v1/messages", toolBody(true, false, "", `[{"role":"user","content":"weather?"}]`)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			h := New(Options{}).Handler()
			body := []byte(bc.body)
			b.ReportAllocs()
			for b.Loop() {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, bc.path, bytes.NewReader(body)))
				if rec.Code != 200 {
					b.Fatalf("status %d", rec.Code)
				}
			}
		})
	}
}
