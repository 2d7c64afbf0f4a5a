package cli

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store/sqlite"
)

// A server that never stops sending — an endless chunked body, an endless
// event stream, a huge error body — cannot exhaust a run: every call ends as
// a loud output_limit result (never retried), the run completes, the store
// holds no more than a short message per result, and the heap stays small.
func TestRunBoundsEndlessReplies(t *testing.T) {
	t.Parallel()
	var hits atomic.Int64
	chunk := []byte(strings.Repeat("x", 32<<10))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		switch {
		case strings.HasPrefix(r.URL.Path, "/error/"):
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
		case strings.HasPrefix(r.URL.Path, "/sse/"):
			w.Header().Set("Content-Type", "text/event-stream")
		default:
			w.Header().Set("Content-Type", "application/json")
		}
		// At most 256 MiB, so a missing bound fails the test instead of the machine.
		for sent := 0; sent < 256<<20; sent += len(chunk) {
			if strings.HasPrefix(r.URL.Path, "/sse/") {
				if _, err := fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"content\":\"%s\"}}]}\n\n", chunk[:1024]); err != nil {
					return
				}
			} else if _, err := w.Write(chunk); err != nil {
				return
			}
			if f, ok := w.(http.Flusher); ok {
				f.Flush()
			}
		}
	}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	db := filepath.Join(dir, "assay.db")
	const cases = 6
	path := echoTask(t, dir, cases, fmt.Sprintf(`  - {name: plain, provider: openai, model: m, base_url: %[1]s/plain/v1, max_output_bytes: 1048576}
  - {name: sse, provider: openai, model: m, base_url: %[1]s/sse/v1, stream: true, max_output_bytes: 1048576}
  - {name: error, provider: openai, model: m, base_url: %[1]s/error/v1, max_output_bytes: 1048576}`, srv.URL))

	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	run := runJSON(t, cliEnv{}, "run", path, "--db", db, "--no-cache")
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if run.Status != record.StatusComplete || run.Stored != 3*cases {
		t.Fatalf("run: %+v", run)
	}
	if h := hits.Load(); h != 3*cases {
		t.Errorf("%d requests for %d calls: an output_limit reply was retried", h, 3*cases)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("the run took %s", d)
	}
	// Total bytes allocated while 18 replies of up to 256 MiB were offered:
	// a cap of 1 MiB each keeps it to a few MiB per call.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 400<<20 {
		t.Errorf("the run allocated %d MiB", alloc>>20)
	}
	st, err := sqlite.OpenExisting(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	n := 0
	if err := st.Results(context.Background(), run.RunID, func(r record.Result) error {
		n++
		if r.ErrorKind != "output_limit" {
			t.Errorf("%s/%s: error kind %q (%s), want output_limit", r.Target, r.CaseID, r.ErrorKind, r.Error)
		}
		if len(r.Raw)+len(r.Error) > 64<<10 {
			t.Errorf("%s/%s: %d bytes stored", r.Target, r.CaseID, len(r.Raw)+len(r.Error))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n != 3*cases {
		t.Errorf("%d results stored, want %d", n, 3*cases)
	}
}
