// Command fill writes synthetic runs into an assay store, for benchmarking
// what reads a large run (report, gate, baseline export, diff, drift, the
// selection ledger): -cases cases × -targets targets, one result and one
// primary score each, with bucket and tier tags. It is not part of the
// assay binary. It prints the ID of each run it writes, one a line.
//
//	go run ./bench/fill -db /tmp/big.db -cases 250000 -targets 4
//
// A baseline and a candidate that regressed, paired case by case (the same
// -seed draws the same numbers, so -regress only turns passes into fails):
//
//	go run ./bench/fill -db /tmp/gate.db -cases 100000 -targets 2
//	go run ./bench/fill -db /tmp/gate.db -cases 100000 -targets 2 -regress 0.05 -slower 1.1
//
// An experiment of 10 runs (each drawn with its own stream):
//
//	go run ./bench/fill -db /tmp/exp.db -cases 10000 -targets 2 -runs 10 -experiment prompt-search
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store"
	"github.com/assay-eval/assay/internal/store/sqlite"
)

type options struct {
	cases, targets, runs int
	seed                 uint64
	regress, slower      float64
	experiment           string
}

func main() {
	var o options
	db := flag.String("db", "big.db", "store path")
	flag.IntVar(&o.cases, "cases", 250000, "cases")
	flag.IntVar(&o.targets, "targets", 4, "targets")
	flag.IntVar(&o.runs, "runs", 1, "runs to write (run r draws from stream -seed, r+2)")
	flag.Uint64Var(&o.seed, "seed", 1, "random seed: runs written with the same seed pair case by case")
	flag.Float64Var(&o.regress, "regress", 0, "lower every pass probability by this much (0.05 = 5 points)")
	flag.Float64Var(&o.slower, "slower", 1, "multiply every latency by this factor")
	flag.StringVar(&o.experiment, "experiment", "", "the runs' experiment name")
	flag.Parse()
	if o.cases < 1 || o.targets < 1 || o.runs < 1 || o.slower <= 0 {
		log.Fatal("-cases, -targets, -runs and -slower must be positive")
	}
	ctx := context.Background()
	st, err := sqlite.Open(ctx, *db)
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	now := time.Now().UTC().Truncate(time.Second)
	for r := range o.runs {
		id, err := fill(ctx, st, o, r, now.Add(time.Duration(r)*time.Second))
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(id)
	}
}

// fill writes run r of the options, started at start.
func fill(ctx context.Context, st store.Store, o options, r int, start time.Time) (string, error) {
	run := &record.Run{ID: record.NewRunID(start), Spec: "bench-big", SpecHash: "sha256:0", DatasetHash: "sha256:0",
		PromptHash: "sha256:0", Experiment: o.experiment, Cases: o.cases, Epochs: 1, Status: record.StatusComplete,
		Started: start, Ended: start}
	for t := 0; t < o.targets; t++ {
		run.Targets = append(run.Targets, "model-"+strconv.Itoa(t))
	}
	if err := st.CreateRun(ctx, run); err != nil {
		return "", err
	}
	buckets := []string{"common", "edge", "hostile", "should-refuse"}
	rng := rand.New(rand.NewPCG(o.seed, 2+uint64(r)))
	var cs []record.Case
	for i := 1; i <= o.cases; i++ {
		cs = append(cs, record.Case{RunID: run.ID, ID: strconv.Itoa(i), Line: i, Expected: []byte(`"42"`),
			Tags: map[string]string{"bucket": buckets[i%4], "tier": strconv.Itoa(i % 9)}})
		if len(cs) == 5000 {
			if err := st.PutCases(ctx, cs); err != nil {
				return "", err
			}
			cs = cs[:0]
		}
	}
	if err := st.PutCases(ctx, cs); err != nil {
		return "", err
	}
	var rs []record.Result
	var ss []record.Score
	flush := func() error {
		err := st.PutResults(ctx, rs, ss)
		rs, ss = rs[:0], ss[:0]
		return err
	}
	for i := 1; i <= o.cases; i++ {
		id := strconv.Itoa(i)
		for t, name := range run.Targets {
			pass := rng.Float64() < 0.6+0.05*float64(t)-0.03*float64(i%9)-o.regress
			rs = append(rs, record.Result{RunID: run.ID, CaseID: id, Target: name, Epoch: 1, Raw: "The answer is A: 42",
				Parsed: `"42"`, InputTokens: 120, OutputTokens: 30, CostUSD: 0.0001, LatencyMS: (200 + 800*rng.Float64()) * o.slower,
				Attempts: 1, CreatedAt: start})
			shape, kind := "pass", ""
			if !pass {
				shape, kind = "silent", "wrong"
			}
			ss = append(ss, record.Score{RunID: run.ID, Scoring: 1, CaseID: id, Target: name, Epoch: 1, Scorer: "correct",
				Primary: true, Pass: pass, Value: map[bool]float64{true: 1}[pass], Shape: shape, Kind: kind})
		}
		if len(rs) >= 2000 {
			if err := flush(); err != nil {
				return "", err
			}
		}
	}
	return run.ID, flush()
}
