package postgres

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store/pgtest"
)

// benchTraces makes n small traces from number from on, the same traces
// as the SQLite store's benchmark makes (so the two rates compare): a
// chat span with a system prompt, one user and one assistant message, a
// few attributes and a resource; random IDs, as OTLP's are, so the key
// index is written all over; times increasing with the number.
func benchTraces(from, n int) []record.Trace {
	base := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	ts := make([]record.Trace, n)
	for i := range ts {
		k := from + i
		rng := rand.New(rand.NewPCG(uint64(k), 16))
		traceID, spanID := fmt.Sprintf("%016x%016x", rng.Uint64(), rng.Uint64()), fmt.Sprintf("%016x", rng.Uint64())
		ts[i] = record.Trace{
			ID: traceID + "-" + spanID, TraceID: traceID, SpanID: spanID,
			Source: "otlp", Time: base.Add(time.Duration(k) * time.Millisecond), LatencyMS: 812.5,
			Operation: "chat", Provider: "openai", Model: []string{"gpt-small", "claude-mid"}[k%2], ResponseModel: "gpt-small-2026-01-01",
			InputTokens: 180, OutputTokens: 95, CostUSD: 0.000123, Priced: true,
			System:       "You are a support triage assistant.",
			Input:        []record.Message{{Role: "user", Content: "My invoice for November was charged twice, please help."}},
			Output:       []record.Message{{Role: "assistant", Content: `{"label":"billing","urgency":"high"}`}},
			FinishReason: "stop",
			Attributes:   []byte(`{"gen_ai.operation.name":"chat","gen_ai.request.model":"gpt-small","route":"/triage"}`),
			Resource:     []byte(`{"service.name":"support-bot"}`),
			Received:     base,
		}
	}
	return ts
}

// BenchmarkPutTraces commits batches of 512 small traces, as assay
// collect stores an OTLP request; traces/s is the sustained insert rate
// (the server's work included: it runs on this machine). Compare with
// the SQLite store's in one run:
//
//	ASSAY_TEST_POSTGRES=$(cat /tmp/pgdsn) go test -run '^$' -bench PutTraces -benchtime 20x \
//	    ./internal/store/sqlite ./internal/store/postgres
func BenchmarkPutTraces(b *testing.B) {
	const batch = 512
	ctx := context.Background()
	d, err := Open(ctx, pgtest.URL(b))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { d.Close() })
	n := 0
	for b.Loop() {
		b.StopTimer()
		ts := benchTraces(n*batch, batch)
		n++
		b.StartTimer()
		k, err := d.PutTraces(ctx, ts)
		if err != nil {
			b.Fatal(err)
		}
		if k != batch {
			b.Fatalf("PutTraces stored %d new traces, want %d", k, batch)
		}
	}
	b.ReportMetric(float64(n*batch)/b.Elapsed().Seconds(), "traces/s")
}
