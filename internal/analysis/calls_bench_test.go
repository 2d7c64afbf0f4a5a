package analysis

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store/sqlite"
)

// BenchmarkReportCalls is Analyze on 100,000 results (50,000 cases × 2
// targets) with and without tool calls: what the tool-call section adds
// to a report's time and memory. Run with
//
//	go test -run='^$' -bench=ReportCalls -benchtime=3x -benchmem ./internal/analysis/
func BenchmarkReportCalls(b *testing.B) {
	for _, withCalls := range []bool{false, true} {
		b.Run("calls="+strconv.FormatBool(withCalls), func(b *testing.B) {
			ctx := context.Background()
			st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "assay.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			start := time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC)
			const cases = 50000
			run := &record.Run{ID: "bench-calls", Spec: "bench", Targets: []string{"a", "b"}, Cases: cases, Epochs: 1,
				Status: record.StatusComplete, Started: start, Config: []byte(`{"scorers":[{"name":"call","type":"tool_call"}]}`)}
			if withCalls {
				run.Config = []byte(`{"tools":[{"name":"lookup_order"}],"scorers":[{"name":"call","type":"tool_call"}]}`)
			}
			if err := st.CreateRun(ctx, run); err != nil {
				b.Fatal(err)
			}
			var cs []record.Case
			var rs []record.Result
			var ss []record.Score
			for i := range cases {
				id := strconv.Itoa(i)
				cs = append(cs, record.Case{RunID: run.ID, ID: id, Line: i + 1, Expected: []byte(`"lookup_order"`)})
				for t, name := range run.Targets {
					r := record.Result{RunID: run.ID, CaseID: id, Target: name, Epoch: 1, CostUSD: 0.0001, LatencyMS: 300, CreatedAt: start}
					ok := (i+t)%3 != 0
					if withCalls {
						r.ToolCalls = []record.ToolCall{{ID: "c" + id, Name: "lookup_order", Arguments: `{"id": ` + id + `}`}}
						if !ok {
							r.ToolCalls[0].Name = "refund"
						}
					} else {
						r.Raw = "lookup_order"
					}
					rs = append(rs, r)
					status := "ok"
					if !ok {
						status = "wrong"
					}
					ss = append(ss, record.Score{RunID: run.ID, Scoring: 1, CaseID: id, Target: name, Epoch: 1, Scorer: "call",
						Primary: true, Pass: ok, Shape: map[bool]string{true: "pass", false: "silent"}[ok],
						Fields: []record.FieldVerdict{{Field: "(tool)", Status: status}}})
				}
				if len(rs) >= 4000 || i == cases-1 {
					if err := st.PutCases(ctx, cs); err != nil {
						b.Fatal(err)
					}
					if err := st.PutResults(ctx, rs, ss); err != nil {
						b.Fatal(err)
					}
					cs, rs, ss = cs[:0], rs[:0], ss[:0]
				}
			}
			b.ResetTimer()
			for range b.N {
				rep, err := Analyze(ctx, st, run, Options{NoLedger: true})
				if err != nil {
					b.Fatal(err)
				}
				if (rep.Calls != nil) != withCalls {
					b.Fatalf("calls section %v with calls %v", rep.Calls != nil, withCalls)
				}
			}
		})
	}
}
