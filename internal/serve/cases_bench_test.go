package serve

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/store/sqlite"
)

// BenchStoreEnv names the store BenchmarkCasesPages reads (a big one, as
// bench/fill writes: go run ./bench/fill -db /tmp/big.db -cases 250000
// -targets 4 -dataset /tmp/bigdata); BenchRunEnv picks a run (the newest
// when unset).
const (
	BenchStoreEnv = "ASSAY_BENCH_STORE"
	BenchRunEnv   = "ASSAY_BENCH_RUN"
)

// BenchmarkCasesPages times the case explorer and a case's page over HTTP
// on loopback against the store ASSAY_BENCH_STORE names (skipped when
// unset): the first page, filtered pages, text searches (a word in a
// seventh of the inputs, one in a single case's input, one nowhere) warm
// and cold (the run's input index built again), and a case's page. It
// reports the mean time to the first byte and to the last.
//
//	ASSAY_BENCH_STORE=/tmp/big.db go test ./internal/serve -run '^$' -bench CasesPages -benchtime 5x
func BenchmarkCasesPages(b *testing.B) {
	path := os.Getenv(BenchStoreEnv)
	if path == "" {
		b.Skipf("set %s to a store (bench/fill writes one)", BenchStoreEnv)
	}
	ctx := context.Background()
	st, err := sqlite.OpenExisting(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	runID := os.Getenv(BenchRunEnv)
	if runID == "" {
		runs, err := st.ListRuns(ctx, 1)
		if err != nil || len(runs) == 0 {
			b.Fatalf("no run in %s: %v", path, err)
		}
		runID = runs[0].ID
	}
	s, err := New(Options{Addr: "127.0.0.1:0", Store: st})
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(s)
	defer ts.Close()
	base := ts.URL + "/runs/" + url.PathEscape(runID) + "/cases"
	pages := []struct {
		name, path string
		cold       bool // drop the server's cache before each fetch
	}{
		{"explorer", "", false},
		{"failures", "?verdict=fail&target=model-1", false},
		{"tag+shape", "?tag=bucket%3Dedge&shape=silent", false},
		{"page-100", "", false}, // filled in below: the 100th page's cursor
		{"search-common-cold", "?q=refunds", true},
		{"search-common", "?q=refunds", false},
		{"search-one-case", "?q=question+123457%3F", false},
		{"search-nowhere", "?q=no+such+words+anywhere", false},
		{"case", "/123457", false},
		{"case-cold", "/123457", true},
	}
	// The 100th page: follow 99 cursors once.
	after := ""
	for range 99 {
		rows, next, err := st.BrowseResults(ctx, runID, 0, casesFilter{}.storeFilter(), after, casesPerPage)
		if err != nil || next == "" || len(rows) == 0 {
			b.Fatalf("paging to page 100: %v", err)
		}
		after = next
	}
	pages[3].path = "?after=" + url.QueryEscape(after)
	for _, p := range pages {
		b.Run(p.name, func(b *testing.B) {
			var first, total time.Duration
			for range b.N {
				if p.cold {
					s.cache = newRunCache()
				}
				f, t, code := timeGet(b, base+p.path)
				if code != http.StatusOK {
					b.Fatalf("GET %s: %d", p.path, code)
				}
				first += f
				total += t
			}
			b.ReportMetric(float64(first.Microseconds())/1000/float64(b.N), "ms-first-byte")
			b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms-total")
		})
	}
}

// timeGet GETs url and returns the time to the first byte of the response
// and to its last, and the status.
func timeGet(b *testing.B, u string) (time.Duration, time.Duration, int) {
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		b.Fatal(err)
	}
	var first time.Time
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
		GotFirstResponseByte: func() { first = time.Now() },
	}))
	start := time.Now()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	_, err = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if err != nil {
		b.Fatal(err)
	}
	return first.Sub(start), time.Since(start), res.StatusCode
}
