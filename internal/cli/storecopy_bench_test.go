package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store/pgtest"
)

// benchCopyResults is the size of the run BenchmarkStoreCopy copies.
const benchCopyResults = 100_000

// BenchmarkStoreCopy copies one run of 100,000 results (two scores each)
// SQLite → PostgreSQL → SQLite and reports each leg's results per second.
//
//	ASSAY_TEST_POSTGRES=URL go test ./internal/cli -run '^$' -bench StoreCopy -benchtime 1x
func BenchmarkStoreCopy(b *testing.B) {
	ctx := context.Background()
	src := filepath.Join(b.TempDir(), "src.db")
	st := openRef(b, src)
	run := &record.Run{ID: "20261203-000000-bench0", Spec: "bench", SpecHash: "h", Targets: []string{"a", "b"}, Cases: benchCopyResults / 2, Epochs: 1,
		Status: record.StatusComplete, Started: time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC)}
	if err := st.CreateRun(ctx, run); err != nil {
		b.Fatal(err)
	}
	var cases []record.Case
	for i := range benchCopyResults / 2 {
		cases = append(cases, record.Case{RunID: run.ID, ID: fmt.Sprintf("case-%06d", i), Line: i + 1, Expected: []byte(`"billing"`)})
	}
	if err := st.PutCases(ctx, cases); err != nil {
		b.Fatal(err)
	}
	for from := 0; from < benchCopyResults/2; from += 5000 {
		var rs []record.Result
		var ss []record.Score
		for i := from; i < from+5000; i++ {
			for _, tg := range run.Targets {
				r := record.Result{RunID: run.ID, CaseID: fmt.Sprintf("case-%06d", i), Target: tg, Epoch: 1,
					Raw: "Category: billing — the customer asks about an invoice they were charged twice for.", Parsed: `"billing"`,
					InputTokens: 120, OutputTokens: 18, CostUSD: 0.0004, LatencyMS: 640, Attempts: 1, CreatedAt: run.Started}
				rs = append(rs, r)
				for _, sc := range []string{"correct", "short"} {
					ss = append(ss, record.Score{RunID: run.ID, Scoring: 1, CaseID: r.CaseID, Target: tg, Epoch: 1, Scorer: sc, Primary: sc == "correct", Pass: true, Value: 1, Shape: "pass"})
				}
			}
		}
		if err := st.PutResults(ctx, rs, ss); err != nil {
			b.Fatal(err)
		}
	}
	st.Close()
	b.ResetTimer()
	for range b.N {
		pg := pgtest.URL(b)
		back := filepath.Join(b.TempDir(), "back.db")
		for _, leg := range [][2]string{{src, pg}, {pg, back}} {
			start := time.Now()
			inv := runCLIB(b, "store", "copy", "--from", leg[0], "--to", leg[1])
			if inv.code != 0 {
				b.Fatalf("store copy: %s", inv.stderr)
			}
			d := time.Since(start)
			b.Logf("%s → %s: %d results in %.1f s (%.0f results/s)", storeName(leg[0]), storeName(leg[1]), benchCopyResults, d.Seconds(), benchCopyResults/d.Seconds())
		}
	}
}

// runCLIB is runCLI for a benchmark.
func runCLIB(b *testing.B, args ...string) invocation {
	var out, errb strings.Builder
	g := &Globals{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }, Now: time.Now}
	code := Execute(context.Background(), args, g)
	return invocation{code, out.String(), errb.String()}
}
