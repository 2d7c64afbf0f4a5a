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
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptrace"
	"os"
	"os/exec"
	"slices"
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

	fmt.Printf("| page | visit | status | first byte | first content | total | bytes |\n|---|---|---|---|---|---|---|\n")
	page := func(name, path, visit string) {
		f := fetch(base + path)
		fmt.Printf("| %s `%s` | %s | %d | %s | %s | %s | %d |\n", name, shorten(path, a, b), visit, f.code, ms(f.ttfb), ms(f.content), ms(f.total), f.n)
	}
	for i := range *repeat {
		page("runs list", "/", warm(i))
	}
	// The cold report computes for seconds: the other pages meanwhile.
	cold := make(chan fetched, 1)
	go func() { cold <- fetch(base + "/runs/" + b) }()
	time.Sleep(500 * time.Millisecond)
	page("runs list", "/", "while a report computes")
	page("case explorer", "/runs/"+b+"/cases?target=model-2", "while a report computes")
	page("case page", "/runs/"+b+"/cases/4242", "while a report computes")
	f := <-cold
	fmt.Printf("| %s `%s` | %s | %d | %s | %s | %s | %d |\n", "run report", "/runs/B", "cold", f.code, ms(f.ttfb), ms(f.content), ms(f.total), f.n)
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

// fetched is one page fetched: the time to its first byte, to its first
// computed content (the end of the page's "lead": a streamed page's first
// section after its notice, else its end), to its last byte; its status
// and length.
type fetched struct {
	ttfb, content, total time.Duration
	code                 int
	n                    int64
}

// contentMarks are what the first computed content of a page starts with:
// a run's report, the compare page's flips, the explorer's and a case's
// content.
var contentMarks = []string{`<div class="report">`, `<section id="flips">`, `class="computed"`, `id="failed"`}

func fetch(url string) fetched {
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
	var body []byte
	var content time.Time
	buf := make([]byte, 32<<10)
	for {
		k, err := res.Body.Read(buf)
		body = append(body, buf[:k]...)
		if content.IsZero() && slices.ContainsFunc(contentMarks, func(m string) bool { return bytes.Contains(body, []byte(m)) }) {
			content = time.Now()
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			log.Fatal(err)
		}
	}
	res.Body.Close()
	end := time.Now()
	if content.IsZero() {
		content = end
	}
	return fetched{ttfb: first.Sub(start), content: content.Sub(start), total: end.Sub(start), code: res.StatusCode, n: int64(len(body))}
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
