package cli

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/store/pgtest"
)

// TestDistributedBench is bench/RESULTS.md's "Distributed runs": 2
// targets × 20,000 cases against `assay mock` at 20 ms, each target
// limited to rpm 12000 (200 calls/s) and 16 calls at once, with 1, 2 and
// 4 worker processes; the mock answers 429 above 440 calls/s. It runs
// only when ASSAY_BENCH_DISTRIBUTED=1 (minutes of both cores):
//
//	ASSAY_TEST_POSTGRES=$(cat /tmp/pgdsn) ASSAY_BENCH_DISTRIBUTED=1 \
//	  go test ./internal/cli -run TestDistributedBench -v -timeout 30m
func TestDistributedBench(t *testing.T) {
	if os.Getenv("ASSAY_BENCH_DISTRIBUTED") != "1" {
		t.Skip("ASSAY_BENCH_DISTRIBUTED=1 runs the distributed benchmark")
	}
	const rpm = 12000
	cases := 20000
	if s := os.Getenv("ASSAY_BENCH_CASES"); s != "" {
		cases, _ = strconv.Atoi(s)
	}
	counts := []int{1, 2, 4}
	if s := os.Getenv("ASSAY_BENCH_WORKERS"); s != "" {
		counts = nil
		for _, f := range strings.Split(s, ",") {
			n, _ := strconv.Atoi(f)
			counts = append(counts, n)
		}
	}
	for _, n := range counts {
		t.Run(fmt.Sprintf("workers=%d", n), func(t *testing.T) {
			url := pgtest.URL(t)
			mockURL, stats := startCountingMock(t, "--latency", "20ms", "--rate", "440", "--burst", "20")
			dir := t.TempDir()
			path := echoTask(t, dir, cases, fmt.Sprintf("  - {name: oa, provider: openai, model: m1, base_url: %s/v1, limits: {rpm: %d, concurrency: 16}}\n  - {name: ob, provider: openai, model: m2, base_url: %s/v1, limits: {rpm: %d, concurrency: 16}}", mockURL, rpm, mockURL, rpm))
			ws := startWorkers(t, url, n, "--concurrency", "4")
			start := time.Now()
			s := waitSubmitted(t, submit(t, cliEnv{env: map[string]string{}}, "run", path, "--db", url, "--no-cache"), 20*time.Minute)
			wall := time.Since(start)
			stopWorkers(t, ws)
			if s.inv.code != 0 || s.sum.Status != "complete" {
				t.Fatalf("exit %d, %+v\n%s", s.inv.code, s.sum, s.inv.stderr)
			}
			db := openPG(t, url)
			var span float64
			if err := db.Pool().QueryRow(t.Context(), `SELECT (max(created_at) - min(created_at)) / 1e6 FROM results`).Scan(&span); err != nil {
				t.Fatal(err)
			}
			// The busiest minute-long window of one target: at most rpm.
			busiest := pgCount(t, db, `SELECT max(n) FROM (SELECT count(*) OVER (PARTITION BY target ORDER BY created_at RANGE BETWEEN 60000000 PRECEDING AND CURRENT ROW) AS n FROM results) w`)
			total := 2 * cases
			ideal := time.Duration(float64(total) / (2 * rpm / 60.0) * float64(time.Second))
			req, r429 := stats()
			t.Logf("| %d | %s | %s | %.0f%% | %.1f s | %.0f/s | %d | %d | %d |", n, wall.Round(100*time.Millisecond), ideal,
				100*ideal.Seconds()/wall.Seconds(), span, float64(total)/span, busiest, req, r429)
		})
	}
}

// startCountingMock runs `assay mock` as a process; stats interrupts it
// and reads the requests it served and how many it answered 429.
func startCountingMock(t *testing.T, args ...string) (string, func() (requests, rateLimited int)) {
	t.Helper()
	cmd := exec.Command(assayBinary(t), append([]string{"mock", "--addr", "127.0.0.1:0"}, args...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		re := regexp.MustCompile(`listening on (http://\S+)`)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	var url string
	select {
	case url = <-found:
	case <-time.After(20 * time.Second):
		t.Fatal("assay mock did not say where it listens")
	}
	return url, func() (int, int) {
		stopped = true
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
		m := regexp.MustCompile(`served (\d+) requests: \d+ ok, (\d+) 429`).FindStringSubmatch(stderr.String())
		if m == nil {
			t.Fatalf("assay mock's counts not found in %q", stderr.String())
		}
		a, _ := strconv.Atoi(m[1])
		b, _ := strconv.Atoi(m[2])
		return a, b
	}
}
