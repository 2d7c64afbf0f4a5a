package sqlite

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/record"
)

// benchResults makes n results from case number from on, shaped like a real
// run's: a few hundred bytes of output, a parsed value, two scores each.
func benchResults(run string, from, n int) ([]record.Result, []record.Score) {
	rs := make([]record.Result, 0, n)
	ss := make([]record.Score, 0, 2*n)
	for i := from; i < from+n; i++ {
		r := record.Result{
			RunID: run, CaseID: fmt.Sprintf("gsm8k-%06d", i), Target: "gpt-small", Epoch: 1,
			Raw:          strings.Repeat("Natalia sold 48/2 = 24 clips in May. ", 10) + "\nA: 72",
			Parsed:       "72",
			FinishReason: "stop",
			InputTokens:  180, OutputTokens: 95, CostUSD: 0.000123, LatencyMS: 812.5, FirstTokenMS: 210,
			Attempts: 1, Model: "gpt-small-2026-01-01", CreatedAt: time.Now(),
		}
		rs = append(rs, r)
		for _, sc := range []string{"exact", "length"} {
			ss = append(ss, record.Score{RunID: run, Scoring: 1, CaseID: r.CaseID, Target: r.Target, Epoch: 1,
				Scorer: sc, Primary: sc == "exact", Pass: true, Value: 1, Shape: "pass"})
		}
	}
	return rs, ss
}

// BenchmarkPutResults commits batches of 256 results (with two scores each)
// to a file-backed store; results/s is the sustained insert rate.
func BenchmarkPutResults(b *testing.B) {
	const batch = 256
	d := openTemp(b)
	ctx := context.Background()
	if err := d.CreateRun(ctx, &record.Run{ID: "bench", Status: record.StatusRunning}); err != nil {
		b.Fatal(err)
	}
	// Batches are built outside the timer; the timer covers only commits.
	n := 0
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		rs, ss := benchResults("bench", n*batch, batch)
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
	d := openTemp(b)
	ctx := context.Background()
	if err := d.CreateRun(ctx, &record.Run{ID: "bench", Status: record.StatusRunning}); err != nil {
		b.Fatal(err)
	}
	var cases []record.Case
	for i := range total {
		cases = append(cases, record.Case{RunID: "bench", ID: fmt.Sprintf("gsm8k-%06d", i), Line: i + 1, Expected: []byte("72")})
	}
	if err := d.PutCases(ctx, cases); err != nil {
		b.Fatal(err)
	}
	for from := 0; from < total; from += 500 {
		rs, ss := benchResults("bench", from, 500)
		if err := d.PutResults(ctx, rs, ss); err != nil {
			b.Fatal(err)
		}
	}
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
