// Command load measures the load harness itself (internal/load, the engine
// behind `assay load`): the highest open-loop rate it sustains on this
// machine against `assay mock` with no latency, and its CPU per request.
// It starts the mock as its own process (so the harness's CPU, read from
// getrusage, is the harness's alone), then runs one open-loop step per
// rate through the real openai provider over HTTP, and prints per rate:
// what was achieved, the p50 latency, the harness's CPU (cores, and per
// request), how late it started requests (p95) and whether it flagged
// itself saturated. A rate is sustained when the harness started its
// schedule's requests (within 5% of the rate: Poisson counts vary), the
// answers completed in the window are within 2% of what it started,
// nothing failed and the step was not saturated. It is not part of the
// assay binary.
//
//	go build -o /tmp/assay ./cmd/assay && go run ./bench/load -assay /tmp/assay -rates 500,1000,2000,3000,4000 -duration 10s
//
// With -cpuprofile FILE it writes a CPU profile of the harness.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/assay-eval/assay/internal/load"
	"github.com/assay-eval/assay/internal/load/harness"
	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/provider/openai"
	"github.com/assay-eval/assay/internal/spec"
)

func main() {
	assay := flag.String("assay", "./assay", "the assay binary whose mock to start")
	ratesFlag := flag.String("rates", "500,1000,2000,3000,4000", "open-loop rates to try, requests/s")
	duration := flag.Duration("duration", 10*time.Second, "each step's measured window")
	warmup := flag.Duration("warmup", time.Second, "each step's warm-up")
	stream := flag.Bool("stream", false, "stream the answers")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the harness to this file")
	flag.Parse()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			log.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			log.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}

	var rates []float64
	for f := range strings.SplitSeq(*ratesFlag, ",") {
		r, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil {
			log.Fatalf("-rates: %v", err)
		}
		rates = append(rates, r)
	}

	cmd := exec.Command(*assay, "mock", "--addr", "127.0.0.1:0")
	out, err := cmd.StdoutPipe()
	if err != nil {
		log.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	}()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		log.Fatalf("reading the mock's address: %v", err)
	}
	url := strings.TrimSpace(line[strings.LastIndex(line, " ")+1:])
	go func() { _, _ = bufio.NewReader(out).WriteTo(os.Stderr) }()

	tg := spec.Target{Name: "mock", Provider: "openai", Model: "mock-1", BaseURL: url + "/v1", Stream: *stream}
	p, err := openai.New(&tg, "", nil)
	if err != nil {
		log.Fatal(err)
	}
	var reqs []provider.Request
	for i := range 20 {
		reqs = append(reqs, provider.Request{Model: "mock-1", CaseID: fmt.Sprint(i),
			Messages: []provider.Message{{Role: "user", Content: fmt.Sprintf("Question %d: what is the capital of France? Answer in one word.", i)}}})
	}
	target := harness.Target{Name: "mock", Provider: p, Requests: reqs}

	fmt.Printf("| offered rps | started rps | achieved rps | errors | p50 | harness CPU (cores) | CPU / request | lateness p95 | saturated |\n|---|---|---|---|---|---|---|---|---|\n")
	best := 0.0
	for i, rate := range rates {
		var m harness.Memory
		err := harness.Run(context.Background(), []harness.Target{target}, harness.Options{
			Mode: load.ModeRate, Levels: []float64{rate}, Duration: *duration, Warmup: *warmup, Seed: uint64(i + 1),
		}, &m, nil)
		if err != nil {
			log.Fatal(err)
		}
		steps, reqs := m.Kept()
		res, err := load.Analyse(steps, reqs, load.AnalyseOptions{Resamples: 200})
		if err != nil {
			log.Fatal(err)
		}
		st, sr := steps[0], res.Targets[0].Steps[0]
		perReq := st.ClientCPU * st.DurationMS / float64(max(1, st.Sent))
		errs := fmt.Sprint(sr.Errors.Count)
		for _, k := range sr.ByKind {
			errs += fmt.Sprintf(" %s %d", k.Kind, k.Count)
		}
		fmt.Printf("| %g | %.0f | %.0f | %s | %.2f ms | %.2f of %d | %.3f ms | %.2f ms | %v |\n",
			rate, float64(st.Sent)/(st.DurationMS/1000), float64(sr.Throughput), errs, float64(sr.P50.Value), st.ClientCPU, st.Cores, perReq, st.LatenessP95MS, st.Saturated)
		started := float64(st.Sent) / (st.DurationMS / 1000)
		if started >= 0.95*rate && float64(sr.Throughput) >= 0.98*started && sr.Errors.Count == 0 && !st.Saturated {
			best = rate
		}
	}
	fmt.Printf("\nhighest rate sustained: %g requests/s\n", best)
}
