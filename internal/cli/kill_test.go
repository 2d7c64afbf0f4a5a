package cli

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/assay-eval/assay/internal/mock"
)

// countResults reads the committed results of the newest run from another
// process's database, as a user's second terminal would.
func countResults(t *testing.T, db string) int {
	t.Helper()
	h, err := sql.Open("sqlite", "file:"+db+"?mode=ro&_pragma=busy_timeout(2000)")
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	var n int
	if err := h.QueryRow(`SELECT count(*) FROM results`).Scan(&n); err != nil {
		return 0 // not created yet
	}
	return n
}

// kill -9 in the middle of a run, then --resume latest: no case missing, no
// result duplicated, and the calls repeated after the kill no more than the
// requests in flight plus one commit window.
func TestKill9ThenResume(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := assayBinary(t)
	const (
		cases       = 400
		concurrency = 8
		latency     = 20 * time.Millisecond
		commitEvery = 100 * time.Millisecond
	)
	srv, url := startMock(t, mock.Options{Latency: latency})
	dir := t.TempDir()
	db := filepath.Join(dir, "assay.db")
	path := echoTask(t, dir, cases, fmt.Sprintf(`  - {name: oa, provider: openai, model: m, base_url: %s/v1, limits: {concurrency: %d}}`, url, concurrency))

	var stderr bytes.Buffer
	cmd := exec.Command(bin, "run", path, "--db", db, "--no-cache", "--commit-every", commitEvery.String())
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for countResults(t, db) < cases/3 {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no progress: %s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	e := cliEnv{env: map[string]string{}}
	// assay runs tells a run its process holds from one whose writer is gone.
	writerGone := func() (bool, invocation) {
		t.Helper()
		inv := runCLI(t, e, "runs", "--json", "--db", db)
		var list []runListing
		if err := json.Unmarshal([]byte(inv.stdout), &list); err != nil || len(list) != 1 || list[0].Status != "running" {
			t.Fatalf("runs --json: %s (%v); want the one running run", inv.stdout, err)
		}
		return list[0].WriterGone, inv
	}
	if gone, inv := writerGone(); gone {
		t.Errorf("runs --json marks the running run's writer gone while its process runs:\n%s", inv.stdout)
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL: no chance to flush or clean up
		t.Fatal(err)
	}
	_ = cmd.Wait()
	committed := countResults(t, db)
	callsAtKill := srv.Stats().Requests
	if committed >= cases {
		t.Fatalf("the run finished before the kill (%d results)", committed)
	}
	if gone, inv := writerGone(); !gone {
		t.Errorf("runs --json after kill -9: writer_gone not set:\n%s", inv.stdout)
	}
	if inv := runCLI(t, e, "runs", "--db", db); !strings.Contains(inv.stdout, "(writer gone)") || !strings.Contains(inv.stderr, "finish it with assay run "+path+" --resume ") {
		t.Errorf("runs after kill -9:\n%s%s\nwant the run marked (writer gone) and how to finish it", inv.stdout, inv.stderr)
	}

	res := runJSON(t, e, "run", path, "--db", db, "--resume", "latest", "--no-cache")
	if res.Status != "complete" {
		t.Fatalf("resume: %+v", res)
	}
	got := readRun(t, db, res.RunID)
	if len(got) != cases {
		t.Fatalf("%d results after resume, want %d", len(got), cases)
	}
	for i := 1; i <= cases; i++ {
		k := keyOf(fmt.Sprintf("c%d", i), "oa")
		if _, ok := got[k]; !ok {
			t.Errorf("case c%d missing", i)
		}
	}
	if n := countResults(t, db); n != cases {
		t.Errorf("%d result rows, want %d (duplicates)", n, cases)
	}
	// Calls made more than once: everything beyond one call per case.
	repeated := srv.Stats().Requests - cases
	// In flight at the kill, plus what one commit window can finish.
	window := int64(math.Ceil(float64(concurrency) * float64(commitEvery) / float64(latency)))
	bound := int64(concurrency) + window + 1
	t.Logf("committed at kill %d, calls at kill %d, repeated %d (bound %d)", committed, callsAtKill, repeated, bound)
	if repeated > bound {
		t.Errorf("%d calls repeated after the kill; at most %d (in flight %d + one commit window %d + 1)", repeated, bound, concurrency, window)
	}
	if repeated < 0 {
		t.Errorf("fewer calls than cases: %d", srv.Stats().Requests)
	}
}
