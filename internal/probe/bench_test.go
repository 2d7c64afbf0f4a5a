package probe_test

// Benchmarks of the contamination probe's decision at 100,000 paired cases.
// Figures are recorded in bench/RESULTS.md; run them with
//
//	go test -run='^$' -bench=. -benchtime=3x ./internal/probe/
//
// Assess works on the paired tables (four counts per target), so its cost
// does not grow with the cases except through the exact McNemar tail;
// the per-case work is reading each run's verdicts (Verdicts) and pairing
// them (Tables), measured on two stored runs.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/probe"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/stats"
	"github.com/assay-eval/assay/internal/store"
	"github.com/assay-eval/assay/internal/store/sqlite"
)

const benchCases = 100_000

// fillVerdicts stores a run of benchCases cases × 2 targets with one
// primary score each; runs with the same seed pair case by case, and drop
// lowers every pass probability (the twins are harder).
func fillVerdicts(b *testing.B, st store.Store, started time.Time, drop float64) *record.Run {
	b.Helper()
	ctx := context.Background()
	run := &record.Run{ID: record.NewRunID(started), Spec: "bench", SpecHash: "sha256:s", DatasetHash: "sha256:d",
		PromptHash: "sha256:p", Targets: []string{"model-0", "model-1"}, Cases: benchCases, Epochs: 1,
		Status: record.StatusComplete, Started: started, Ended: started}
	if err := st.CreateRun(ctx, run); err != nil {
		b.Fatal(err)
	}
	var cs []record.Case
	for i := 1; i <= benchCases; i++ {
		cs = append(cs, record.Case{RunID: run.ID, ID: strconv.Itoa(i), Line: i, Expected: []byte(`"42"`)})
		if len(cs) == 5000 || i == benchCases {
			if err := st.PutCases(ctx, cs); err != nil {
				b.Fatal(err)
			}
			cs = cs[:0]
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var rs []record.Result
	var ss []record.Score
	for i := 1; i <= benchCases; i++ {
		id := strconv.Itoa(i)
		for t, name := range run.Targets {
			pass := rng.Float64() < 0.6+0.05*float64(t)-0.03*float64(i%9)-drop
			rs = append(rs, record.Result{RunID: run.ID, CaseID: id, Target: name, Epoch: 1, Raw: "A: 42",
				Attempts: 1, LatencyMS: 300, CreatedAt: started})
			shape := "pass"
			if !pass {
				shape = "silent"
			}
			ss = append(ss, record.Score{RunID: run.ID, Scoring: 1, CaseID: id, Target: name, Epoch: 1, Scorer: "correct",
				Primary: true, Pass: pass, Shape: shape})
		}
		if len(rs) >= 2000 || i == benchCases {
			if err := st.PutResults(ctx, rs, ss); err != nil {
				b.Fatal(err)
			}
			rs, ss = rs[:0], ss[:0]
		}
	}
	return run
}

// BenchmarkAssess decides two targets from tables of 100,000 paired cases
// (8% and 1% discordant one way and the other, as a contaminated target).
func BenchmarkAssess(b *testing.B) {
	tables := []stats.PairTable{
		{Both: 45_000, AOnly: 8_000, BOnly: 1_000, Neither: 46_000},
		{Both: 50_000, AOnly: 2_000, BOnly: 1_900, Neither: 46_100},
	}
	b.Run(fmt.Sprintf("cases=%d", benchCases), func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			fs, err := probe.Assess([]string{"model-0", "model-1"}, tables, probe.DefaultOptions())
			if err != nil {
				b.Fatal(err)
			}
			if !fs[0].Flagged() || fs[1].Flagged() {
				b.Fatalf("verdicts %s, %s: want the first flagged only", fs[0].Verdict, fs[1].Verdict)
			}
		}
	})
}

// BenchmarkDecide reads the originals' and the twins' runs (100,000 cases ×
// 2 targets each), pairs them and decides: what `assay probe` does once
// both runs are stored.
func BenchmarkDecide(b *testing.B) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "assay.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	t0 := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	orig := fillVerdicts(b, st, t0, 0)
	twins := fillVerdicts(b, st, t0.Add(time.Hour), 0.05)
	targets := orig.Targets
	b.Run(fmt.Sprintf("cases=%d", benchCases), func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			ov, err := probe.Verdicts(ctx, st, orig.ID)
			if err != nil {
				b.Fatal(err)
			}
			tv, err := probe.Verdicts(ctx, st, twins.ID)
			if err != nil {
				b.Fatal(err)
			}
			fs, err := probe.Assess(targets, probe.Tables(targets, ov, tv), probe.DefaultOptions())
			if err != nil {
				b.Fatal(err)
			}
			if fs[0].N != benchCases {
				b.Fatalf("%d paired cases, want %d", fs[0].N, benchCases)
			}
		}
	})
}
