// Command fill writes a synthetic run into an assay store, for benchmarking
// the report on a large run: -cases cases × -targets targets, one result and
// one primary score each, with bucket and tier tags. It is not part of the
// assay binary.
//
//	go run ./bench/fill -db /tmp/big.db -cases 250000 -targets 4
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/assay-eval/assay/internal/store"
	"github.com/assay-eval/assay/internal/store/sqlite"
)

func main() {
	db := flag.String("db", "big.db", "store path")
	cases := flag.Int("cases", 250000, "cases")
	targets := flag.Int("targets", 4, "targets")
	flag.Parse()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, *db)
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	now := time.Now().UTC()
	run := &store.Run{ID: store.NewRunID(now), Spec: "bench-big", SpecHash: "sha256:0", DatasetHash: "sha256:0",
		PromptHash: "sha256:0", Cases: *cases, Epochs: 1, Status: store.StatusComplete, Started: now, Ended: now}
	for t := 0; t < *targets; t++ {
		run.Targets = append(run.Targets, "model-"+strconv.Itoa(t))
	}
	if err := st.CreateRun(ctx, run); err != nil {
		log.Fatal(err)
	}
	buckets := []string{"common", "edge", "hostile", "should-refuse"}
	rng := rand.New(rand.NewPCG(1, 2))
	var cs []store.Case
	for i := 1; i <= *cases; i++ {
		cs = append(cs, store.Case{RunID: run.ID, ID: strconv.Itoa(i), Line: i, Expected: []byte(`"42"`),
			Tags: map[string]string{"bucket": buckets[i%4], "tier": strconv.Itoa(i % 9)}})
		if len(cs) == 5000 {
			if err := st.PutCases(ctx, cs); err != nil {
				log.Fatal(err)
			}
			cs = cs[:0]
		}
	}
	if err := st.PutCases(ctx, cs); err != nil {
		log.Fatal(err)
	}
	var rs []store.Result
	var ss []store.Score
	flush := func() {
		if err := st.PutResults(ctx, rs, ss); err != nil {
			log.Fatal(err)
		}
		rs, ss = rs[:0], ss[:0]
	}
	for i := 1; i <= *cases; i++ {
		id := strconv.Itoa(i)
		for t, name := range run.Targets {
			pass := rng.Float64() < 0.6+0.05*float64(t)-0.03*float64(i%9)
			rs = append(rs, store.Result{RunID: run.ID, CaseID: id, Target: name, Epoch: 1, Raw: "The answer is A: 42",
				Parsed: `"42"`, InputTokens: 120, OutputTokens: 30, CostUSD: 0.0001, LatencyMS: 200 + 800*rng.Float64(),
				Attempts: 1, CreatedAt: now})
			shape, kind := "pass", ""
			if !pass {
				shape, kind = "silent", "wrong"
			}
			ss = append(ss, store.Score{RunID: run.ID, Scoring: 1, CaseID: id, Target: name, Epoch: 1, Scorer: "correct",
				Primary: true, Pass: pass, Value: map[bool]float64{true: 1}[pass], Shape: shape, Kind: kind})
		}
		if len(rs) >= 2000 {
			flush()
		}
	}
	flush()
	fmt.Println(run.ID)
}
