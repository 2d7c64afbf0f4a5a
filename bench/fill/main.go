// Command fill writes synthetic runs into an assay store, for benchmarking
// what reads a large run (report, gate, baseline export, diff, drift, the
// selection ledger): -cases cases × -targets targets, one result and one
// primary score each, with bucket and tier tags. It is not part of the
// assay binary. It prints the ID of each run it writes, one a line.
//
//	go run ./bench/fill -db /tmp/big.db -cases 250000 -targets 4
//
// -db may also be a postgres:// URL (the store in that database's schema).
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
//
// With -dataset DIR it also writes the cases' dataset (DIR/data.jsonl: an
// id, a question and an answer per case) and records it in the runs with a
// spec that reads it (dataset hashes, a prompt), as a real run does: what
// serve's case pages read inputs and render prompts from.
//
//	go run ./bench/fill -db /tmp/big.db -cases 250000 -targets 4 -dataset /tmp/bigdata
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/spec"
	"github.com/assay-eval/assay/internal/store"
	"github.com/assay-eval/assay/internal/store/postgres"
	"github.com/assay-eval/assay/internal/store/sqlite"
)

type options struct {
	cases, targets, runs int
	seed                 uint64
	regress, slower      float64
	experiment           string
	dataset              string
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
	flag.StringVar(&o.dataset, "dataset", "", "write the cases' dataset and a spec reading it into this directory")
	flag.Parse()
	if o.cases < 1 || o.targets < 1 || o.runs < 1 || o.slower <= 0 {
		log.Fatal("-cases, -targets, -runs and -slower must be positive")
	}
	ctx := context.Background()
	st, err := openStore(ctx, *db)
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	now := time.Now().UTC().Truncate(time.Second)
	var ds *datasetRecord
	if o.dataset != "" {
		if ds, err = writeDataset(o.dataset, o.cases); err != nil {
			log.Fatal(err)
		}
	}
	for r := range o.runs {
		id, err := fill(ctx, st, o, ds, r, now.Add(time.Duration(r)*time.Second))
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(id)
	}
}

// openStore opens the SQLite file at ref, or the PostgreSQL database a
// postgres:// URL names.
func openStore(ctx context.Context, ref string) (store.Store, error) {
	if postgres.IsURL(ref) {
		return postgres.Open(ctx, ref)
	}
	return sqlite.Open(ctx, ref)
}

// fill writes run r of the options, started at start.
func fill(ctx context.Context, st store.Store, o options, ds *datasetRecord, r int, start time.Time) (string, error) {
	run := &record.Run{ID: record.NewRunID(start), Spec: "bench-big", SpecHash: "sha256:0", DatasetHash: "sha256:0",
		PromptHash: "sha256:0", Experiment: o.experiment, Cases: o.cases, Epochs: 1, Status: record.StatusComplete,
		Started: start, Ended: start}
	if ds != nil {
		run.SpecPath, run.DatasetHash, run.FileHash, run.Config = ds.specPath, ds.hash, ds.fileHash, ds.config
	}
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

// datasetRecord is what a run records of the dataset writeDataset wrote.
type datasetRecord struct {
	specPath, hash, fileHash string
	config                   []byte
}

// writeDataset writes dir/data.jsonl with cases 1…n (the IDs fill gives
// them) and returns the spec and hashes a run of it records.
func writeDataset(dir string, n int) (*datasetRecord, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.Create(filepath.Join(dir, "data.jsonl"))
	if err != nil {
		return nil, err
	}
	w := bufio.NewWriter(f)
	topics := []string{"billing", "refunds", "shipping", "accounts", "returns", "warranty", "invoices"}
	for i := 1; i <= n; i++ {
		b, err := json.Marshal(map[string]any{"id": strconv.Itoa(i), "answer": "42",
			"q": fmt.Sprintf("Customer %d asks about %s: what is the answer to question %d?", i*7919%100003, topics[i%len(topics)], i)})
		if err != nil {
			return nil, err
		}
		w.Write(b)
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	sp := &spec.Spec{Name: "bench-big", Dir: dir, File: filepath.Join(dir, "assay.yaml"),
		Dataset: spec.Dataset{Path: "data.jsonl", Format: "jsonl", ID: "id", Expected: "answer"},
		Prompt:  spec.Prompt{System: "Answer with the letter and the number.", User: "{{.q}}"},
		Scorers: []spec.Scorer{{Name: "correct", Type: "exact", Primary: true}}}
	info, err := dataset.Scan(sp)
	if err != nil {
		return nil, err
	}
	cfg, err := json.Marshal(sp)
	if err != nil {
		return nil, err
	}
	return &datasetRecord{specPath: sp.File, hash: info.Hash, fileHash: info.FileHash, config: cfg}, nil
}
