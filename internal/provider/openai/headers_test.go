package openai

import (
	"context"
	"testing"
)

// The spec's headers reach the server on every call, streamed or not,
// beside the key (which they cannot replace: spec refuses Authorization).
func TestHeadersReachTheServer(t *testing.T) {
	for _, stream := range []bool{false, true} {
		base, last := recordingServer(t)
		tg := targetFor(base, stream)
		tg.Headers = map[string]string{"X-Org": "org-4242", "OpenAI-Project": "proj_7"}
		p, err := New(tg, plantedKey, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Complete(context.Background(), request("hi")); err != nil {
			t.Fatal(err)
		}
		_, hdr := last()
		if hdr.Get("X-Org") != "org-4242" || hdr.Get("OpenAI-Project") != "proj_7" {
			t.Fatalf("stream=%v: headers on the wire %v", stream, hdr)
		}
		if hdr.Get("Authorization") != "Bearer "+plantedKey {
			t.Fatalf("stream=%v: the key was replaced: %q", stream, hdr.Get("Authorization"))
		}
	}
}
