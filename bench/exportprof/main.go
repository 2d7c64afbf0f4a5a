// Command exportprof profiles `assay export` of a stored run (CPU), for
// finding what makes a large export slow. Not part of the assay binary.
//
//	go run ./bench/exportprof -db /tmp/big.db -format jsonl -cpu cpu.out
package main

import (
	"context"
	"flag"
	"io"
	"log"
	"os"
	"runtime/pprof"

	"github.com/assay-eval/assay/internal/export"
	"github.com/assay-eval/assay/internal/store/sqlite"
)

func main() {
	db := flag.String("db", "big.db", "store path")
	format := flag.String("format", "jsonl", "jsonl | csv | parquet")
	cpu := flag.String("cpu", "cpu.out", "CPU profile")
	flag.Parse()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, *db)
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	run, err := st.GetRun(ctx, "latest")
	if err != nil {
		log.Fatal(err)
	}
	scoring, err := st.LatestScoring(ctx, run.ID)
	if err != nil {
		log.Fatal(err)
	}
	names, err := st.ScorerNames(ctx, run.ID, scoring)
	if err != nil {
		log.Fatal(err)
	}
	cols := export.Columns{Scorers: names}
	f, err := os.Create(*cpu)
	if err != nil {
		log.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		log.Fatal(err)
	}
	defer pprof.StopCPUProfile()
	w, err := export.NewWriter(io.Discard, *format, cols)
	if err != nil {
		log.Fatal(err)
	}
	n := 0
	err = export.Rows(ctx, export.Source{Store: st, Run: run, Scoring: scoring, Columns: cols}, func(r *export.Row) error {
		n++
		return w.Write(r)
	})
	if err == nil {
		err = w.Close()
	}
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("%d rows", n)
}
