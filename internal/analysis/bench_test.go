package analysis_test

// Benchmarks of diff, drift and the selection ledger on stored runs.
// Figures are recorded in bench/RESULTS.md; run them with
//
//	go test -run='^$' -bench=. -benchtime=3x ./internal/analysis/
//
// Filling the stores (through the store's own PutCases and PutResults, as
// bench/fill does) takes most of the time; it is not measured.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/analysis"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store"
	"github.com/assay-eval/assay/internal/store/sqlite"
)

var benchBuckets = []string{"common", "edge", "hostile", "should-refuse"}

// benchRun describes a synthetic run: cases × targets, one result and one
// primary score each. Runs with the same seed pair case by case; regress
// lowers every pass probability (turning passes into fails).
type benchRun struct {
	cases, targets int
	seed           uint64
	regress        float64
	experiment     string
	started        time.Time
}

func fillRun(b *testing.B, st store.Store, r benchRun) *record.Run {
	b.Helper()
	ctx := context.Background()
	run := &record.Run{ID: record.NewRunID(r.started), Spec: "bench", SpecHash: "sha256:s", DatasetHash: "sha256:d",
		PromptHash: "sha256:p", ScorersHash: "sha256:c", Experiment: r.experiment, Cases: r.cases, Epochs: 1,
		Status: record.StatusComplete, Started: r.started, Ended: r.started}
	for t := range r.targets {
		run.Targets = append(run.Targets, "model-"+strconv.Itoa(t))
	}
	if err := st.CreateRun(ctx, run); err != nil {
		b.Fatal(err)
	}
	var cs []record.Case
	for i := 1; i <= r.cases; i++ {
		cs = append(cs, record.Case{RunID: run.ID, ID: strconv.Itoa(i), Line: i, Expected: []byte(`"42"`),
			Tags: map[string]string{"bucket": benchBuckets[i%4], "tier": strconv.Itoa(i % 9)}})
		if len(cs) == 5000 || i == r.cases {
			if err := st.PutCases(ctx, cs); err != nil {
				b.Fatal(err)
			}
			cs = cs[:0]
		}
	}
	rng := rand.New(rand.NewPCG(r.seed, 2))
	var rs []record.Result
	var ss []record.Score
	for i := 1; i <= r.cases; i++ {
		id := strconv.Itoa(i)
		for t, name := range run.Targets {
			pass := rng.Float64() < 0.6+0.05*float64(t)-0.03*float64(i%9)-r.regress
			rs = append(rs, record.Result{RunID: run.ID, CaseID: id, Target: name, Epoch: 1,
				Raw: fmt.Sprintf("Working on case %d ... A: %t", i, pass), Parsed: `"42"`, Model: name + "-2026-11-01",
				Fingerprint: "fp_1", InputTokens: 120, OutputTokens: 30, CostUSD: 0.0001,
				LatencyMS: 200 + 800*rng.Float64(), Attempts: 1, CreatedAt: r.started})
			shape, kind, value := "pass", "", 1.0
			if !pass {
				shape, kind, value = "silent", "wrong", 0
			}
			ss = append(ss, record.Score{RunID: run.ID, Scoring: 1, CaseID: id, Target: name, Epoch: 1, Scorer: "correct",
				Primary: true, Pass: pass, Value: value, Shape: shape, Kind: kind})
		}
		if len(rs) >= 2000 || i == r.cases {
			if err := st.PutResults(ctx, rs, ss); err != nil {
				b.Fatal(err)
			}
			rs, ss = rs[:0], ss[:0]
		}
	}
	return run
}

func openStore(b *testing.B) store.Store {
	b.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "assay.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	return st
}

// retainedMB is the heap held by what f returns, after a collection.
func retainedMB(f func() any) float64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	v := f()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(v)
	return float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / 1e6
}

var t0 = time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)

// BenchmarkDiffDrift runs DiffRuns and Drift on two stored runs of 100,000
// results each (50,000 cases × 2 targets), the second with every pass
// probability 5 points lower (about 5% of the verdicts flip).
func BenchmarkDiffDrift(b *testing.B) {
	ctx := context.Background()
	st := openStore(b)
	const cases = 50_000
	before := fillRun(b, st, benchRun{cases: cases, targets: 2, seed: 1, started: t0})
	after := fillRun(b, st, benchRun{cases: cases, targets: 2, seed: 1, regress: 0.05, started: t0.Add(time.Hour)})
	name := fmt.Sprintf("results=%d", cases*2)
	b.Run("DiffRuns/"+name, func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			d, err := analysis.DiffRuns(ctx, st, before, after, analysis.DiffOptions{})
			if err != nil {
				b.Fatal(err)
			}
			if len(d.Flips) != 2 || d.Flips[0].PassToFail == 0 {
				b.Fatalf("flips %+v: the after run regressed", d.Flips)
			}
		}
	})
	b.Run("Drift/"+name, func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			d, err := analysis.Drift(ctx, st, before, after, analysis.DriftOptions{})
			if err != nil {
				b.Fatal(err)
			}
			if len(d.Drifted) != 2 {
				b.Fatalf("drifted %v: the after run regressed", d.Drifted)
			}
		}
	})
}

// BenchmarkLedger analyses the last run of an experiment of 10 runs ×
// 10,000 cases × 2 targets (20 variants), with and without the selection
// ledger: the difference is the ledger's cost (it reads the 9 earlier runs'
// primary scores and compares 19 variants with the reference).
func BenchmarkLedger(b *testing.B) {
	ctx := context.Background()
	st := openStore(b)
	const runs, cases = 10, 10_000
	var last *record.Run
	for r := range runs {
		last = fillRun(b, st, benchRun{cases: cases, targets: 2, seed: uint64(r + 1), regress: 0.005 * float64(r%3),
			experiment: "bench", started: t0.Add(time.Duration(r) * time.Minute)})
	}
	for _, tc := range []struct {
		name     string
		noLedger bool
	}{{"report-without-ledger", true}, {"report-with-ledger", false}} {
		b.Run(fmt.Sprintf("runs=%d/cases=%d/%s", runs, cases, tc.name), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				rep, err := analysis.Analyze(ctx, st, last, analysis.Options{NoLedger: tc.noLedger})
				if err != nil {
					b.Fatal(err)
				}
				if !tc.noLedger && (rep.Ledger == nil || rep.Ledger.Variants != runs*2) {
					b.Fatalf("ledger %+v: want %d variants", rep.Ledger, runs*2)
				}
			}
			b.ReportMetric(retainedMB(func() any {
				rep, _ := analysis.Analyze(ctx, st, last, analysis.Options{NoLedger: tc.noLedger})
				return rep
			}), "retained-MB")
		})
	}
}
