package difficulty

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkCompare: a GSM8K-sized benchmark (1,319 cases, 4 targets) and
// a workload of 10,000 cases on a continuous axis, 2,000 bootstrap
// replicates.
func BenchmarkCompare(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	bench := &Set{Name: "bench"}
	for i := range 1319 {
		bench.Cases = append(bench.Cases, fmt.Sprint(i))
		bench.Values = append(bench.Values, rng.NormFloat64())
	}
	for k := range 4 {
		tr := TargetResults{Name: fmt.Sprint("t", k), Right: make([]int32, 1319), Trials: make([]int32, 1319)}
		for i := range tr.Right {
			tr.Trials[i] = 1
			tr.Right[i] = int32(rng.IntN(2))
		}
		bench.Targets = append(bench.Targets, tr)
	}
	work := &Set{Name: "work"}
	for i := range 10000 {
		work.Cases = append(work.Cases, fmt.Sprint(i))
		work.Values = append(work.Values, 0.5+rng.NormFloat64())
	}
	b.ResetTimer()
	for range b.N {
		if _, err := Compare(bench, work, MismatchOptions{Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
}
