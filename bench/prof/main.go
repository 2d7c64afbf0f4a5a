// Command prof profiles the analysis of a stored run (CPU and heap), for
// finding what makes a large report slow. Not part of the assay binary.
//
//	go run ./bench/prof -db /tmp/big.db -cpu cpu.out
package main

import (
	"context"
	"flag"
	"log"
	"os"
	"runtime/pprof"

	"github.com/assay-eval/assay/internal/analysis"
	"github.com/assay-eval/assay/internal/store/sqlite"
)

func main() {
	db := flag.String("db", "big.db", "store path")
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
	f, err := os.Create(*cpu)
	if err != nil {
		log.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		log.Fatal(err)
	}
	if _, err := analysis.Analyze(ctx, st, run, analysis.Options{}); err != nil {
		log.Fatal(err)
	}
	pprof.StopCPUProfile()
}
