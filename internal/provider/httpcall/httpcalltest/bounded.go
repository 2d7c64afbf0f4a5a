package httpcalltest

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/provider/httpcall"
)

// serverCap is how much a hostile test server sends at most, so that a
// provider without a bound fails the test instead of exhausting memory.
const serverCap = 512 << 20

// peakHeapBound is the most heap a bounded call may add: a few copies of
// the default reply limit, far under the hundreds of megabytes sent.
const peakHeapBound = 160 << 20

// hostileServer counts its hits and answers each with status, head, then
// chunk repeated (generated as it is written, never held whole) until
// total bytes went out or the client stops reading; every delay between
// chunks it waits first. It listens on 127.0.0.1 only.
func hostileServer(t *testing.T, status int, contentType, head, chunk string, total int64, delay time.Duration) (string, *atomic.Int64) {
	t.Helper()
	hits := new(atomic.Int64)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		sent, _ := w.Write([]byte(head))
		buf := []byte(chunk)
		if delay == 0 && len(buf) < 32<<10 {
			buf = bytes.Repeat(buf, (32<<10)/len(buf))
		}
		for n := int64(sent); n < total; {
			if delay > 0 {
				select {
				case <-r.Context().Done():
					return
				case <-time.After(delay):
				}
			}
			m, err := w.Write(buf)
			if err != nil {
				return
			}
			n += int64(m)
			if delay > 0 {
				w.(http.Flusher).Flush()
			}
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL, hits
}

// heapPeak samples the live heap until stop is closed and reports the
// largest value seen, through runtime/metrics (no stop-the-world).
func heapPeak(stop <-chan struct{}) <-chan uint64 {
	out := make(chan uint64, 1)
	go func() {
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		var peak uint64
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(s)
			peak = max(peak, s[0].Value.Uint64())
			select {
			case <-stop:
				out <- peak
				return
			case <-tick.C:
			}
		}
	}()
	return out
}

// streamLimit is the max_output_bytes of the endless event stream case:
// the SDK parses every event up to the limit, seconds of CPU at the
// default; the other cases keep the default bound.
const streamLimit = 1 << 20

// testBoundedReplies sends replies without end — a chunked body, an event
// stream, a 200 MB error body — through the retry wrapper: each call must
// end in a loud, unretried output_limit error while the heap stays far
// under what the server sent.
func testBoundedReplies(t *testing.T, h Harness) {
	head, event := h.EndlessStream()
	cases := []struct {
		name        string
		stream      bool
		status      int
		contentType string
		head, chunk string
		total       int64
		limit       int64 // max_output_bytes; 0 for the default
	}{
		{"endless chunked body", false, 200, "application/json", `{"id":"x","content":"`, "aaaaaaaaaaaaaaaa", serverCap, 0},
		{"endless event stream", true, 200, "text/event-stream", head, event, serverCap, streamLimit},
		{"200 MB error body", false, 500, "application/json", `{"error":{"type":"api_error","message":"`, "bbbbbbbbbbbbbbbb", 200 << 20, 0},
		{"200 MB error body on a stream", true, 500, "application/json", `{"error":{"type":"api_error","message":"`, "bbbbbbbbbbbbbbbb", 200 << 20, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			root, hits := hostileServer(t, c.status, c.contentType, c.head, c.chunk, c.total, 0)
			p := provider.WithRetry(h.New(t, root, c.stream, plantedKey, c.limit), provider.RetryOptions{
				Max:   3,
				Sleep: func(context.Context, time.Duration) error { return nil },
			})
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()

			runtime.GC()
			s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
			metrics.Read(s)
			base := s[0].Value.Uint64()
			stop := make(chan struct{})
			peak := heapPeak(stop)
			_, err := p.Complete(ctx, request("x"))
			close(stop)
			grew := int64(<-peak) - int64(base)

			pe := ProviderError(t, err)
			if pe.Kind != provider.KindOutputLimit || !errors.Is(err, httpcall.ErrReplyTooLarge) {
				t.Fatalf("kind %s, err %v; want output_limit", pe.Kind, err)
			}
			if !strings.Contains(pe.Msg, "max_output_bytes") || strings.Contains(err.Error(), plantedKey) {
				t.Errorf("message %q should name max_output_bytes and never the key", pe.Msg)
			}
			if limit := cmp.Or(c.limit, httpcall.DefaultMaxReplyBytes); !strings.Contains(pe.Msg, fmt.Sprintf("larger than %d bytes", limit)) {
				t.Errorf("message %q should say the reply was cut at max_output_bytes, %d bytes", pe.Msg, limit)
			}
			if n := hits.Load(); n != 1 {
				t.Errorf("the server was called %d times; an output_limit is never retried", n)
			}
			if n := provider.Attempts(err); n != 1 {
				t.Errorf("Attempts = %d, want 1", n)
			}
			if grew > peakHeapBound {
				t.Errorf("the heap grew by %d MB during the call; want under %d MB", grew>>20, peakHeapBound>>20)
			}
			t.Logf("heap peak +%d MB", grew>>20)
		})
	}
}

// testTimeoutBoundsBody: a body that trickles a byte at a time without end
// is stopped by the per-attempt time-out, body reads included.
func testTimeoutBoundsBody(t *testing.T, h Harness) {
	head, event := h.EndlessStream()
	for _, stream := range []bool{false, true} {
		t.Run(Mode(stream), func(t *testing.T) {
			t.Parallel()
			h0, chunk, ct := `{"id":"x","content":"`, "a", "application/json"
			if stream {
				h0, chunk, ct = head, event, "text/event-stream"
			}
			root, _ := hostileServer(t, 200, ct, h0, chunk, serverCap, 5*time.Millisecond)
			const timeout = 500 * time.Millisecond
			p := provider.WithTimeout(h.New(t, root, stream, "", 0), timeout)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			began := time.Now()
			_, err := p.Complete(ctx, request("x"))
			took := time.Since(began)
			if pe := ProviderError(t, err); pe.Kind != provider.KindTimeout {
				t.Errorf("kind %s, err %v; want timeout", pe.Kind, err)
			}
			if took > timeout+time.Second {
				t.Errorf("the call ended %v after it began; the time-out is %v", took, timeout)
			}
		})
	}
}
