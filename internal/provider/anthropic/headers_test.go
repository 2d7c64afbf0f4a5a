package anthropic

import (
	"context"
	"testing"

	"github.com/assay-eval/assay/internal/spec"
)

// The spec's headers reach the server beside the key, which they cannot
// replace (spec refuses x-api-key).
func TestHeadersReachTheServer(t *testing.T) {
	base, last := recordingServer(t)
	tg := &spec.Target{Name: "t", Provider: "anthropic", Model: "m", BaseURL: base,
		Headers: map[string]string{"X-Gateway-Route": "eu-1", "anthropic-beta": "tools-2024"}}
	p, err := New(tg, plantedKey, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Complete(context.Background(), request("hi")); err != nil {
		t.Fatal(err)
	}
	_, hdr := last()
	if hdr.Get("X-Gateway-Route") != "eu-1" || hdr.Get("Anthropic-Beta") != "tools-2024" {
		t.Fatalf("headers on the wire %v", hdr)
	}
	if hdr.Get("Authorization") != "Bearer "+plantedKey {
		t.Fatalf("the key was replaced: %q", hdr.Get("Authorization"))
	}
}
