package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"

	"github.com/assay-eval/assay/internal/record"
)

// fatTraces are benchTraces with the bulk of bench/collect's spans: a
// ~1.1 KB user turn of varied words, a tool call and its answer, a reply,
// 15 attributes and a resource of 5.
func fatTraces(from, n int) []record.Trace {
	ts := benchTraces(from, n)
	words := strings.Fields("the customer says order arrived damaged and asks for refund of full amount please help me with my invoice charged twice november account locked password reset shipping address change cancel subscription premium plan upgrade discount code expired warranty claim broken screen battery")
	for i := range ts {
		rng := rand.New(rand.NewPCG(uint64(from+i), 7))
		var sb strings.Builder
		for k := 0; k < 160; k++ {
			sb.WriteString(words[rng.IntN(len(words))])
			if rng.IntN(9) == 0 {
				fmt.Fprintf(&sb, " %d", rng.IntN(100000))
			}
			sb.WriteByte(' ')
		}
		long := sb.String()
		ts[i].Input = []record.Message{{Role: "user", Content: long}, {Role: "assistant", Content: "calling lookup"}, {Role: "tool", Content: `{"order":"A-1234","status":"delivered","amount":42.5}`}}
		ts[i].Output = []record.Message{{Role: "assistant", Content: "I have issued a refund of $42.50 for order A-1234; you'll see it in 3-5 days."}}
		ts[i].Attributes = []byte(`{"gen_ai.operation.name":"chat","gen_ai.request.model":"gpt-small","route":"/triage","http.method":"POST","server.address":"api.example.com","user.tier":"gold","session.id":"s-` + ts[i].SpanID + `","gen_ai.request.temperature":0.2,"gen_ai.request.max_tokens":512,"feature":"refunds","tenant":"acme","region":"eu-west-1","retry":0,"cached":false,"app.version":"3.4.1"}`)
		ts[i].Resource = []byte(`{"service.name":"support-bot","service.version":"3.4.1","deployment.environment":"prod","host.name":"bot-7f9c","telemetry.sdk.language":"python"}`)
	}
	return ts
}

// benchLayout stores batches of 512 fatTraces in one of three layouts and
// reports the store's CPU per trace: "rows", the store's own (PutTraces:
// one row per trace holding its conversation, attributes and resource);
// "zstd" and "s2", the alternative a collector could take — per request,
// one block of every trace's bulk (JSON, compressed) and one narrow row
// per trace naming its block. bench/RESULTS.md ("Collect: the store's
// layout") reads it.
func benchLayout(b *testing.B, mode string) {
	const batch = 512
	d := openTemp(b)
	ctx := context.Background()
	if mode != "rows" {
		_, err := d.w.ExecContext(ctx, `CREATE TABLE x_blocks (id INTEGER PRIMARY KEY, data BLOB NOT NULL) STRICT;
CREATE TABLE x_traces (id TEXT PRIMARY KEY, time INTEGER, latency_ms REAL NOT NULL, operation TEXT NOT NULL, provider TEXT NOT NULL, model TEXT NOT NULL, response_model TEXT NOT NULL, input_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL, cost_usd REAL NOT NULL, finish_reason TEXT NOT NULL, error_type TEXT NOT NULL, redactions INTEGER NOT NULL, received INTEGER, block INTEGER NOT NULL, pos INTEGER NOT NULL) STRICT;
CREATE INDEX x_by_time ON x_traces (time, id, model);`)
		if err != nil {
			b.Fatal(err)
		}
	}
	enc, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
	n := 0
	var cpu time.Duration
	var bytes int
	for b.Loop() {
		b.StopTimer()
		ts := fatTraces(n*batch, batch)
		n++
		c0 := cpuTime(b)
		b.StartTimer()
		if mode == "rows" {
			if _, err := d.PutTraces(ctx, ts); err != nil {
				b.Fatal(err)
			}
		} else {
			type bulk struct {
				S    string
				I, O []record.Message
				A, R json.RawMessage
			}
			bs := make([]bulk, len(ts))
			for i := range ts {
				bs[i] = bulk{ts[i].System, ts[i].Input, ts[i].Output, ts[i].Attributes, ts[i].Resource}
			}
			raw, _ := json.Marshal(bs)
			var data []byte
			if mode == "zstd" {
				data = enc.EncodeAll(raw, nil)
			} else {
				data = s2.Encode(nil, raw)
			}
			bytes += len(data)
			err := d.write(ctx, "x", func(tx *sql.Tx) error {
				res, err := tx.ExecContext(ctx, `INSERT INTO x_blocks (data) VALUES (?)`, data)
				if err != nil {
					return err
				}
				blk, _ := res.LastInsertId()
				st, err := tx.PrepareContext(ctx, `INSERT INTO x_traces VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT (id) DO NOTHING`)
				if err != nil {
					return err
				}
				defer st.Close()
				for i := range ts {
					t := &ts[i]
					if _, err := st.ExecContext(ctx, t.ID, micros(t.Time), t.LatencyMS, t.Operation, t.Provider, t.Model, t.ResponseModel, t.InputTokens, t.OutputTokens, t.CostUSD, t.FinishReason, t.ErrorType, t.Redactions, micros(t.Received), blk, i); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		cpu += cpuTime(b) - c0
		b.StartTimer()
	}
	b.ReportMetric(float64(cpu.Microseconds())/float64(n*batch), "cpu-µs/span")
	if bytes > 0 {
		b.ReportMetric(float64(bytes)/float64(n*batch), "blobB/span")
	}
}

// BenchmarkTraceLayout measures the store's cost of a trace in its own
// layout against a block-per-request one (see benchLayout).
func BenchmarkTraceLayout(b *testing.B) {
	for _, mode := range []string{"rows", "zstd", "s2"} {
		b.Run(mode, func(b *testing.B) { benchLayout(b, mode) })
	}
}
