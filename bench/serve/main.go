// Command serve measures `assay serve` on a large store: the time to the
// first byte and to the last of each page, through the real binary over
// HTTP on loopback. It is not part of the assay binary.
//
//	go run ./bench/fill -db /tmp/big.db -cases 250000 -targets 4
//	go run ./bench/fill -db /tmp/big.db -cases 250000 -targets 4 -regress 0.05
//	go run ./bench/serve -bin bench/out/assay -db /tmp/big.db
//
// It compares the two newest runs (the older as A) and opens the newest
// run's report cold (computed) and then cached, the case explorer and a
// case's page. It prints a Markdown table.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptrace"
	"os"
	"os/exec"
	"strings"
	"time"
)

func main() {
	bin := flag.String("bin", "bench/out/assay", "the assay binary")
	db := flag.String("db", "big.db", "store path")
	repeat := flag.Int("n", 3, "how many times each warm page is fetched")
	flag.Parse()

	out, err := exec.Command(*bin, "runs", "--json", "--db", *db, "--limit", "2").Output()
	if err != nil {
		log.Fatalf("assay runs: %v", err)
	}
	var runs []struct {
		ID    string `json:"id"`
		Cases int    `json:"cases"`
	}
	if err := json.Unmarshal(out, &runs); err != nil || len(runs) < 2 {
		log.Fatalf("want two runs in %s (bench/fill twice): %v", *db, err)
	}
	b, a := runs[0].ID, runs[1].ID

	cmd := exec.Command(*bin, "serve", "--db", *db, "--addr", "127.0.0.1:0")
	stdout, err := cmd.StdoutPipe()
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
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		log.Fatalf("serve: %v", err)
	}
	_, rest, _ := strings.Cut(line, "http://")
	addr, _, _ := strings.Cut(rest, " ")
	base := "http://" + addr

	fmt.Printf("| page | visit | status | first byte | total | bytes |\n|---|---|---|---|---|---|\n")
	page := func(name, path, visit string) {
		ttfb, total, code, n := fetch(base + path)
		fmt.Printf("| %s `%s` | %s | %d | %s | %s | %d |\n", name, shorten(path, a, b), visit, code, ms(ttfb), ms(total), n)
	}
	for i := range *repeat {
		page("runs list", "/", warm(i))
	}
	page("run report", "/runs/"+b, "cold")
	for range *repeat {
		page("run report", "/runs/"+b, "cached")
	}
	cmp := "/compare?a=" + a + "&b=" + b
	page("compare", cmp, "cold")
	for range *repeat {
		page("compare", cmp, "cached")
	}
	for i := range *repeat {
		page("case explorer", "/runs/"+b+"/cases", warm(i))
	}
	for i := range *repeat {
		page("case explorer, failures", "/runs/"+b+"/cases?verdict=fail&target=model-1", warm(i))
	}
	for i := range *repeat {
		page("case page", "/runs/"+b+"/cases/123457", warm(i))
	}
}

func warm(i int) string {
	if i == 0 {
		return "first"
	}
	return "again"
}

// fetch GETs url and returns the time to the response's first byte, to
// its last, its status and its length.
func fetch(url string) (ttfb, total time.Duration, code int, n int64) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		log.Fatal(err)
	}
	var first time.Time
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
		GotFirstResponseByte: func() { first = time.Now() },
	}))
	start := time.Now()
	res, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		log.Fatal(err)
	}
	n, err = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if err != nil {
		log.Fatal(err)
	}
	return first.Sub(start), time.Since(start), res.StatusCode, n
}

func ms(d time.Duration) string {
	if d < 10*time.Millisecond {
		return fmt.Sprintf("%.1f ms", float64(d)/1e6)
	}
	if d < 10*time.Second {
		return fmt.Sprintf("%.0f ms", float64(d)/1e6)
	}
	return fmt.Sprintf("%.1f s", d.Seconds())
}

// shorten writes run IDs as A and B.
func shorten(path, a, b string) string {
	return strings.NewReplacer(a, "A", b, "B").Replace(path)
}
