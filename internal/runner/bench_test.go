package runner

import (
	"context"
	"testing"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/record"
)

// BenchmarkRun measures the runner's own overhead: 2 targets × 10,000 cases
// on a provider that answers at once, one score per result, into a store
// that keeps results in memory.
func BenchmarkRun(b *testing.B) {
	score := func(_ context.Context, c *dataset.Case, r *record.Result) []record.Score {
		return []record.Score{{CaseID: r.CaseID, Target: r.Target, Epoch: r.Epoch, Scorer: "s", Pass: true}}
	}
	b.ReportAllocs()
	for b.Loop() {
		st := newMemStore()
		p := &countingProvider{}
		sum, err := Run(context.Background(), Options{
			RunID:   "r",
			Targets: []Target{target("a", p, 32), target("b", p, 32)},
			Cases:   cases(10000),
			Render:  render,
			Score:   score,
			Store:   st,
		})
		if err != nil || sum.Stored != 20000 {
			b.Fatal(err, sum.Stored)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/20000, "ns/result")
}
