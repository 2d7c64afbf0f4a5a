package postgres

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store"
	"github.com/assay-eval/assay/internal/store/pgtest"
	"github.com/assay-eval/assay/internal/store/sqlite"
)

// benchResults makes n results of target from case number from on, the
// same results as the SQLite store's benchmark makes (so the two rates
// compare): a few hundred bytes of output, a parsed value, two scores
// each.
func benchResults(run, target string, from, n int) ([]record.Result, []record.Score) {
	rs := make([]record.Result, 0, n)
	ss := make([]record.Score, 0, 2*n)
	for i := from; i < from+n; i++ {
		r := record.Result{
			RunID: run, CaseID: fmt.Sprintf("gsm8k-%06d", i), Target: target, Epoch: 1,
			Raw:          strings.Repeat("Natalia sold 48/2 = 24 clips in May. ", 10) + "\nA: 72",
			Parsed:       "72",
			FinishReason: "stop",
			InputTokens:  180, OutputTokens: 95, CostUSD: 0.000123, LatencyMS: 812.5, FirstTokenMS: 210,
			Attempts: 1, Model: "gpt-small-2026-01-01", CreatedAt: time.Now(),
		}
		rs = append(rs, r)
		for _, sc := range []string{"exact", "length"} {
			ss = append(ss, record.Score{RunID: run, Scoring: 1, CaseID: r.CaseID, Target: r.Target, Epoch: 1,
				Scorer: sc, Primary: sc == "exact", Pass: i%3 != 0, Value: 1, Shape: "pass"})
		}
	}
	return rs, ss
}

func openBench(b *testing.B) *DB {
	b.Helper()
	d, err := Open(context.Background(), pgtest.URL(b))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { d.Close() })
	return d
}

// BenchmarkPutResults commits batches of 256 results (with two scores
// each), the runner's commit batch; results/s is the sustained insert
// rate, the server's work included (it runs on this machine). Compare with
// the SQLite store's in one run:
//
//	ASSAY_TEST_POSTGRES=$(cat /tmp/pgdsn) go test -run '^$' -bench 'PutResults|ResultsScan' \
//	    ./internal/store/sqlite ./internal/store/postgres
func BenchmarkPutResults(b *testing.B) {
	const batch = 256
	d := openBench(b)
	ctx := context.Background()
	if err := d.CreateRun(ctx, &record.Run{ID: "bench", Status: record.StatusRunning}); err != nil {
		b.Fatal(err)
	}
	n := 0
	for b.Loop() {
		b.StopTimer()
		rs, ss := benchResults("bench", "gpt-small", n*batch, batch)
		n++
		b.StartTimer()
		if err := d.PutResults(ctx, rs, ss); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n*batch)/b.Elapsed().Seconds(), "results/s")
}

// BenchmarkResultsScan streams a 10,000-result run (with its cases, so the
// line-ordered path is measured).
func BenchmarkResultsScan(b *testing.B) {
	const total = 10_000
	d := openBench(b)
	ctx := context.Background()
	fillRun(b, d, "bench", total, 1, 500)
	scanned := 0
	for b.Loop() {
		n := 0
		if err := d.Results(ctx, "bench", func(record.Result) error { n++; return nil }); err != nil {
			b.Fatal(err)
		}
		if n != total {
			b.Fatalf("scanned %d results, want %d", n, total)
		}
		scanned += n
	}
	b.ReportMetric(float64(scanned)/b.Elapsed().Seconds(), "results/s")
}

// fillRun stores a run of cases × targets results (one epoch, two scores
// each) with its cases, committing batch results at a time, and returns
// how long the results took.
func fillRun(b *testing.B, s store.Store, run string, cases, targets, batch int) time.Duration {
	b.Helper()
	ctx := context.Background()
	r := &record.Run{ID: run, Cases: cases, Epochs: 1, Status: record.StatusRunning}
	for t := range targets {
		r.Targets = append(r.Targets, "model-"+strconv.Itoa(t))
	}
	if err := s.CreateRun(ctx, r); err != nil {
		b.Fatal(err)
	}
	var cs []record.Case
	for i := range cases {
		cs = append(cs, record.Case{RunID: run, ID: fmt.Sprintf("gsm8k-%06d", i), Line: i + 1, Expected: []byte(`"72"`),
			Tags: map[string]string{"bucket": strconv.Itoa(i % 4)}})
		if len(cs) == 5000 || i == cases-1 {
			if err := s.PutCases(ctx, cs); err != nil {
				b.Fatal(err)
			}
			cs = cs[:0]
		}
	}
	// Each target's results in case order, the targets interleaved a
	// batch at a time, as a run's single writer receives them.
	var spent time.Duration
	for from := 0; from < cases; from += batch {
		for _, t := range r.Targets {
			rs, ss := benchResults(run, t, from, min(batch, cases-from))
			start := time.Now()
			if err := s.PutResults(ctx, rs, ss); err != nil {
				b.Fatal(err)
			}
			spent += time.Since(start)
		}
	}
	return spent
}

// BenchmarkStores stores one run in each store, as a run's writer does
// (batches of 256 results, two scores each), and reads it back as a report
// does (its cases, its scores, then its results, each streamed in dataset
// order). ASSAY_BENCH_RESULTS sets the run's size (default 20,000; the
// issue's figure is 1,000,000, 250,000 cases × 4 targets):
//
//	ASSAY_BENCH_RESULTS=1000000 ASSAY_TEST_POSTGRES=$(cat /tmp/pgdsn) \
//	    go test -run '^$' -bench Stores -benchtime 3x -timeout 2h ./internal/store/postgres
//
// write-results/s is the rate of the run's PutResults calls (the whole
// run, once per store); ns/op is one read of the whole run.
func BenchmarkStores(b *testing.B) {
	total := 20_000
	if v := os.Getenv("ASSAY_BENCH_RESULTS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 4 {
			b.Fatalf("ASSAY_BENCH_RESULTS=%q: want a number of results, at least 4", v)
		}
		total = n
	}
	const targets = 4
	cases := total / targets
	for _, name := range []string{"sqlite", "postgres"} {
		b.Run(name, func(b *testing.B) {
			var s store.Store
			if name == "sqlite" {
				d, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "assay.db"))
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { d.Close() })
				s = d
			} else {
				s = openBench(b)
			}
			spent := fillRun(b, s, "bench", cases, targets, 256)
			for b.Loop() {
				readRun(b, s, "bench", cases*targets)
			}
			// (After the loop: b.Loop's start clears the metrics.)
			b.ReportMetric(float64(cases*targets)/spent.Seconds(), "write-results/s")
			b.ReportMetric(float64(cases*targets)*float64(b.N)/b.Elapsed().Seconds(), "read-results/s")
		})
	}
}

// readRun reads a run as analysis.Analyze does: its cases, the latest
// scoring's scores, then its results.
func readRun(b *testing.B, s store.Store, run string, want int) {
	ctx := context.Background()
	nc, ns, nr := 0, 0, 0
	if err := s.Cases(ctx, run, func(record.Case) error { nc++; return nil }); err != nil {
		b.Fatal(err)
	}
	scoring, err := s.LatestScoring(ctx, run)
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Scores(ctx, run, scoring, func(record.Score) error { ns++; return nil }); err != nil {
		b.Fatal(err)
	}
	if err := s.Results(ctx, run, func(record.Result) error { nr++; return nil }); err != nil {
		b.Fatal(err)
	}
	if nr != want || ns != 2*want {
		b.Fatalf("read %d cases, %d results and %d scores; want %d results and %d scores", nc, nr, ns, want, 2*want)
	}
}
