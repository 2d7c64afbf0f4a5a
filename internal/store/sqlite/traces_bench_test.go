package sqlite

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store"
)

// benchTraces makes n small traces from number from on, shaped like a
// chat span: a system prompt, one user and one assistant message, a few
// attributes and a resource. IDs are random, as OTLP's trace and span IDs
// are (so the key index is written all over, not appended to); times
// increase with the number.
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

// BenchmarkPutTraces commits batches of 512 small traces to a file-backed
// store, as assay collect stores an OTLP request; traces/s is the
// sustained insert rate.
func BenchmarkPutTraces(b *testing.B) {
	const batch = 512
	d := openTemp(b)
	ctx := context.Background()
	n := 0
	var cpu time.Duration
	for b.Loop() {
		b.StopTimer()
		ts := benchTraces(n*batch, batch)
		n++
		c0 := cpuTime(b)
		b.StartTimer()
		k, err := d.PutTraces(ctx, ts)
		b.StopTimer()
		cpu += cpuTime(b) - c0
		b.StartTimer()
		if err != nil {
			b.Fatal(err)
		}
		if k != batch {
			b.Fatalf("PutTraces stored %d new traces, want %d", k, batch)
		}
	}
	b.ReportMetric(float64(n*batch)/b.Elapsed().Seconds(), "traces/s")
	// On a shared machine the wall-clock rate depends on the neighbours;
	// the rate per CPU second of this process (its GC included) does not.
	if cpu > 0 {
		b.ReportMetric(float64(n*batch)/cpu.Seconds(), "traces/cpu-s")
	}
}

// TestTracesScale stores 1,000,000 traces in batches of 512, reporting
// the insert rate as the store grows, and streams them all at 100,000 and
// at 1,000,000, checking that the heap in use while streaming does not
// grow with the number of traces. It takes minutes, so it runs only when
// ASSAY_TRACES_SCALE is set:
//
//	ASSAY_TRACES_SCALE=1 go test ./internal/store/sqlite -run TestTracesScale -v -timeout 30m
func TestTracesScale(t *testing.T) {
	if os.Getenv("ASSAY_TRACES_SCALE") == "" {
		t.Skip("set ASSAY_TRACES_SCALE=1 to store and stream a million traces")
	}
	const batch = 512
	d := openTemp(t)
	ctx := context.Background()
	stored := 0
	peak := map[int]uint64{}
	for _, upTo := range []int{100_000, 1_000_000} {
		start, cpu0 := time.Now(), cpuTime(t)
		from := stored
		for stored < upTo {
			n := min(batch, upTo-stored)
			if _, err := d.PutTraces(ctx, benchTraces(stored, n)); err != nil {
				t.Fatal(err)
			}
			stored += n
		}
		wall, cpu := time.Since(start), cpuTime(t)-cpu0
		t.Logf("stored traces %d to %d: %.0f traces/s, %.0f traces/cpu-s", from, upTo,
			float64(upTo-from)/wall.Seconds(), float64(upTo-from)/cpu.Seconds())

		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		base := ms.HeapInuse
		n := 0
		start = time.Now()
		err := d.Traces(ctx, store.TraceFilter{}, func(tr *record.Trace) error {
			n++
			if n%10_000 == 0 {
				runtime.ReadMemStats(&ms)
				peak[upTo] = max(peak[upTo], ms.HeapInuse)
			}
			return nil
		})
		if err != nil || n != upTo {
			t.Fatalf("streamed %d traces (%v), want %d", n, err, upTo)
		}
		t.Logf("streamed %d traces in %v (%.0f traces/s); heap in use %.1f MiB before, at most %.1f MiB while streaming",
			n, time.Since(start).Round(time.Millisecond), float64(n)/time.Since(start).Seconds(), mib(base), mib(peak[upTo]))
	}
	if small, large := peak[100_000], peak[1_000_000]; float64(large) > 1.25*float64(small)+4<<20 {
		t.Errorf("streaming 1,000,000 traces peaked at %.1f MiB of heap, 100,000 at %.1f MiB: memory grows with the traces", mib(large), mib(small))
	}
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }
