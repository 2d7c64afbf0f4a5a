package gate_test

// Benchmarks of the gate's snapshot, baseline file and evaluation at 10,000
// and 100,000 cases × 2 targets. Figures are recorded in bench/RESULTS.md;
// run them with
//
//	go test -run='^$' -bench=. -benchtime=3x ./internal/gate/
//
// Besides time and allocations per operation, each reports retained-MB:
// the heap still held by the operation's result after a collection (what a
// snapshot costs to keep), and, for the baseline file, file-MB.

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/gate"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/runview"
	"github.com/assay-eval/assay/internal/store"
	"github.com/assay-eval/assay/internal/store/sqlite"
)

var benchSizes = []int{10_000, 100_000}

const benchTargets = 2

// benchPass is the chance that target t passes case i, as bench/fill draws
// it: about 50%, falling with the tier (i mod 9).
func benchPass(t, i int, regress float64) float64 {
	return 0.6 + 0.05*float64(t) - 0.03*float64(i%9) - regress
}

var benchBuckets = []string{"common", "edge", "hostile", "should-refuse"}

func benchTags(i int) map[string]string {
	return map[string]string{"bucket": benchBuckets[i%4], "tier": strconv.Itoa(i % 9)}
}

// benchSnapshot builds a snapshot of cases × 2 targets in memory, as
// FromStore would from a bench/fill run: one scorer, tags, silent failures
// with a few loud ones, varying cost and latency, distinct output hashes.
// Snapshots built with the same seed pair case by case: regress only turns
// passes into fails, slower scales every latency.
func benchSnapshot(id string, cases int, seed uint64, regress, slower float64) *runview.View {
	s := &runview.View{
		Run: runview.RunInfo{ID: id, Spec: "bench", SpecHash: "sha256:s", DatasetHash: "sha256:d", PromptHash: "sha256:p",
			ScorersHash: "sha256:c", Epochs: 1, Scoring: 1, Created: time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)},
		Source: "run " + id, Scorers: []string{"correct"}, Primary: "correct", Epochs: 1,
	}
	for i := 1; i <= cases; i++ {
		s.AddCase(strconv.Itoa(i), benchTags(i))
	}
	rng := rand.New(rand.NewPCG(seed, 2))
	for t := range benchTargets {
		name := "model-" + strconv.Itoa(t)
		tg := &runview.Target{Name: name, Pass: map[string][]int8{"correct": make([]int8, cases)},
			Shape: make([]byte, cases), Kind: make([]int32, cases), CostUSD: make([]float64, cases),
			LatencyMS: make([]float64, cases), OutputHash: make([]uint64, cases),
			Fingerprints: []runview.Fingerprint{{Model: name + "-2026-11-01", System: "fp_1", Count: cases}}}
		s.Targets = append(s.Targets, tg)
	}
	for i := 1; i <= cases; i++ {
		for t, tg := range s.Targets {
			j := i - 1
			u, loud := rng.Float64(), rng.Float64() < 0.02
			pass := u < benchPass(t, i, regress)
			tg.Pass["correct"][j] = int8(b2i(pass))
			switch {
			case pass:
				tg.Shape[j] = runview.ShapePass
			case loud:
				tg.Shape[j] = runview.ShapeLoud
				tg.SetKind(j, "timeout")
			default:
				tg.Shape[j] = runview.ShapeSilent
				tg.SetKind(j, "wrong")
			}
			tg.CostUSD[j] = 0.0001 + 0.0001*rng.Float64()
			tg.LatencyMS[j] = (200 + 800*rng.Float64()) * slower
			out := fmt.Sprintf("case %d by %s: A: %t", i, tg.Name, pass)
			tg.OutputHash[j] = runview.OutputSum(out)
		}
	}
	return s
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
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

// fillStore writes a run of cases × 2 targets into st the way bench/fill
// does (one result and one primary score each, bucket and tier tags).
func fillStore(b *testing.B, st store.Store, cases int, seed uint64, regress float64) *record.Run {
	b.Helper()
	ctx := context.Background()
	now := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC).Add(time.Duration(cases) * time.Second)
	run := &record.Run{ID: record.NewRunID(now), Spec: "bench", SpecHash: "sha256:s", DatasetHash: "sha256:d",
		PromptHash: "sha256:p", Cases: cases, Epochs: 1, Status: record.StatusComplete, Started: now, Ended: now}
	for t := range benchTargets {
		run.Targets = append(run.Targets, "model-"+strconv.Itoa(t))
	}
	if err := st.CreateRun(ctx, run); err != nil {
		b.Fatal(err)
	}
	var cs []record.Case
	for i := 1; i <= cases; i++ {
		cs = append(cs, record.Case{RunID: run.ID, ID: strconv.Itoa(i), Line: i, Expected: []byte(`"42"`), Tags: benchTags(i)})
		if len(cs) == 5000 || i == cases {
			if err := st.PutCases(ctx, cs); err != nil {
				b.Fatal(err)
			}
			cs = cs[:0]
		}
	}
	rng := rand.New(rand.NewPCG(seed, 2))
	var rs []record.Result
	var ss []record.Score
	for i := 1; i <= cases; i++ {
		id := strconv.Itoa(i)
		for t, name := range run.Targets {
			pass := rng.Float64() < benchPass(t, i, regress)
			rs = append(rs, record.Result{RunID: run.ID, CaseID: id, Target: name, Epoch: 1, Raw: "The answer is A: 42",
				Parsed: `"42"`, Model: name + "-2026-11-01", Fingerprint: "fp_1", InputTokens: 120, OutputTokens: 30,
				CostUSD: 0.0001, LatencyMS: 200 + 800*rng.Float64(), Attempts: 1, CreatedAt: now})
			shape, kind := "pass", ""
			if !pass {
				shape, kind = "silent", "wrong"
			}
			ss = append(ss, record.Score{RunID: run.ID, Scoring: 1, CaseID: id, Target: name, Epoch: 1, Scorer: "correct",
				Primary: true, Pass: pass, Value: float64(b2i(pass)), Shape: shape, Kind: kind})
		}
		if len(rs) >= 2000 || i == cases {
			if err := st.PutResults(ctx, rs, ss); err != nil {
				b.Fatal(err)
			}
			rs, ss = rs[:0], ss[:0]
		}
	}
	return run
}

// BenchmarkFromStore snapshots a stored run (its cases, results and
// scores, read from SQLite).
func BenchmarkFromStore(b *testing.B) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "assay.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	for _, n := range benchSizes {
		run := fillStore(b, st, n, 1, 0)
		b.Run(fmt.Sprintf("cases=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := runview.FromStore(ctx, st, run); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(retainedMB(func() any {
				s, _ := runview.FromStore(ctx, st, run)
				return s
			}), "retained-MB")
		})
	}
}

// BenchmarkWriteBaseline writes a snapshot as a baseline file.
func BenchmarkWriteBaseline(b *testing.B) {
	for _, n := range benchSizes {
		s := benchSnapshot("base", n, 1, 0, 1)
		b.Run(fmt.Sprintf("cases=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			var size int
			for b.Loop() {
				var cw countWriter
				if err := runview.WriteBaseline(&cw, s); err != nil {
					b.Fatal(err)
				}
				size = cw.n
			}
			b.ReportMetric(float64(size)/1e6, "file-MB")
		})
	}
}

type countWriter struct{ n int }

func (c *countWriter) Write(p []byte) (int, error) { c.n += len(p); return len(p), nil }

// BenchmarkReadBaseline reads a baseline file (from memory) back into a
// snapshot, with every check the file gets.
func BenchmarkReadBaseline(b *testing.B) {
	for _, n := range benchSizes {
		var buf bytes.Buffer
		if err := runview.WriteBaseline(&buf, benchSnapshot("base", n, 1, 0, 1)); err != nil {
			b.Fatal(err)
		}
		data := buf.Bytes()
		b.Run(fmt.Sprintf("cases=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := runview.ReadBaseline("baseline.json", bytes.NewReader(data)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(data))/1e6, "file-MB")
			b.ReportMetric(retainedMB(func() any {
				s, _ := runview.ReadBaseline("baseline.json", bytes.NewReader(data))
				return s
			}), "retained-MB")
		})
	}
}

// BenchmarkEvaluate gates a candidate that regressed (5 points, 10% slower)
// against its baseline: the default rule alone, each other rule alone, and
// the default rule with a cost rule and a p95 latency rule (2,000 paired
// bootstrap resamples of the p95).
func BenchmarkEvaluate(b *testing.B) {
	ruleSets := []struct {
		name  string
		flags []string
	}{
		{"default", nil},
		{"cost", []string{"cost_per_case max_rise=10%"}},
		{"p95", []string{"latency_p95 max_rise=5%"}},
		{"default+cost+p95", []string{"primary max_drop=5%", "cost_per_case max_rise=10%", "latency_p95 max_rise=5%"}},
	}
	for _, n := range benchSizes {
		base := benchSnapshot("base", n, 1, 0, 1)
		cand := benchSnapshot("cand", n, 1, 0.05, 1.1)
		for _, rs := range ruleSets {
			rules, err := gate.RulesFromFlags(rs.flags, []string{"correct"}, []string{"bucket", "tier"})
			if err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("cases=%d/rules=%s", n, rs.name), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					res, err := gate.Evaluate(base, cand, rules, gate.Options{})
					if err != nil {
						b.Fatal(err)
					}
					if res.Verdict != gate.Fail && rs.name != "cost" {
						b.Fatalf("verdict %s: the candidate regressed", res.Verdict)
					}
				}
			})
		}
	}
}
