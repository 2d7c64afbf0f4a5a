package cli

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/engine"
	"github.com/assay-eval/assay/internal/mock"
)

// leaseHeld reads whether a run's lease is held, from another connection,
// as a second process would.
func leaseHeld(t *testing.T, db string) bool {
	t.Helper()
	h, err := sql.Open("sqlite", "file:"+db+"?mode=ro&_pragma=busy_timeout(2000)")
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	var n int
	if err := h.QueryRow(`SELECT count(*) FROM leases`).Scan(&n); err != nil {
		return false
	}
	return n > 0
}

// Two resumes of one run at once: the second stops before any call, naming
// the process that holds the run, and the provider is called exactly once
// per result the run was missing.
func TestConcurrentResumesOneWriter(t *testing.T) {
	const cases = 300
	srv, url := startMock(t, mock.Options{Latency: 20 * time.Millisecond})
	dir := t.TempDir()
	db := filepath.Join(dir, "assay.db")
	path := echoTask(t, dir, cases, fmt.Sprintf(`  - {name: oa, provider: openai, model: m, base_url: %s/v1, limits: {concurrency: 4}}`, url))

	// An interrupted run with part of its results.
	intr := make(chan os.Signal, 2)
	first := make(chan invocation, 1)
	go func() { first <- runCLI(t, cliEnv{interrupts: intr}, "run", path, "--db", db, "--no-cache") }()
	for deadline := time.Now().Add(20 * time.Second); countResults(t, db) < cases/5; {
		if time.Now().After(deadline) {
			t.Fatal("the first run stored nothing")
		}
		time.Sleep(10 * time.Millisecond)
	}
	intr <- os.Interrupt
	if inv := <-first; inv.code != ExitInterrupted {
		t.Fatalf("interrupted run: exit %d\n%s", inv.code, inv.stderr)
	}
	stored := countResults(t, db)
	if stored >= cases {
		t.Fatalf("the interrupt came too late: %d of %d stored", stored, cases)
	}
	if leaseHeld(t, db) {
		t.Fatal("the interrupted run kept its lease")
	}

	second := make(chan invocation, 1)
	go func() { second <- runCLI(t, cliEnv{}, "run", path, "--db", db, "--no-cache", "--resume", "latest") }()
	for deadline := time.Now().Add(10 * time.Second); !leaseHeld(t, db); {
		if time.Now().After(deadline) {
			t.Fatal("the resume never took the lease")
		}
		time.Sleep(5 * time.Millisecond)
	}
	third := runCLI(t, cliEnv{}, "run", path, "--db", db, "--no-cache", "--resume", "latest")
	if third.code != ExitErr || !strings.Contains(third.stderr, fmt.Sprintf("being written by another process (pid %d on ", os.Getpid())) || !strings.Contains(third.stderr, "--force") {
		t.Errorf("a second resume while the first runs: exit %d, stderr %q; want exit 1 naming the holder", third.code, third.stderr)
	}
	if inv := <-second; inv.code != 0 {
		t.Fatalf("resume: exit %d\n%s", inv.code, inv.stderr)
	}
	if got := countResults(t, db); got != cases {
		t.Errorf("%d results after the resume, want %d", got, cases)
	}
	if req := srv.Stats().Requests; req != cases {
		t.Errorf("the provider was called %d times for %d results (%d before the interrupt); want one call per result", req, cases, stored)
	}
	if leaseHeld(t, db) {
		t.Error("the finished resume kept its lease")
	}
}

// A lease left by a process that died (kill -9) is taken over by the next
// resume on the same host without --force.
func TestLeaseOfDeadProcessTakenOver(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "assay.db")
	spec := filepath.Join(repoRoot(t), "examples", "quickstart", "assay.yaml")
	if inv := runCLI(t, cliEnv{}, "run", spec, "--db", db); inv.code != 0 {
		t.Fatal(inv.stderr)
	}
	host, _ := os.Hostname()
	h, err := sql.Open("sqlite", "file:"+db+"?_pragma=busy_timeout(2000)")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UnixMicro()
	// A PID no process has: above the kernel's pid_max.
	if _, err := h.Exec(`INSERT INTO leases (run_id, holder, pid, host, acquired, heartbeat) SELECT id, 'gone', 99999999, ?, ?, ? FROM runs`, host, now, now); err != nil {
		t.Fatal(err)
	}
	h.Close()
	inv := runCLI(t, cliEnv{}, "run", spec, "--db", db, "--resume", "latest")
	if inv.code != 0 || !strings.Contains(inv.stderr, "no longer running") {
		t.Errorf("resume over a dead holder's lease: exit %d\n%s", inv.code, inv.stderr)
	}
	// A live holder on another host is not second-guessed without --force.
	h, _ = sql.Open("sqlite", "file:"+db+"?_pragma=busy_timeout(2000)")
	if _, err := h.Exec(`INSERT INTO leases (run_id, holder, pid, host, acquired, heartbeat) SELECT id, 'elsewhere', 1, 'other-host', ?, ? FROM runs`, now, time.Now().UnixMicro()); err != nil {
		t.Fatal(err)
	}
	h.Close()
	if inv := runCLI(t, cliEnv{}, "run", spec, "--db", db, "--resume", "latest"); inv.code != ExitErr || !strings.Contains(inv.stderr, "pid 1 on other-host") {
		t.Errorf("resume over a live lease elsewhere: exit %d\n%s", inv.code, inv.stderr)
	}
	if inv := runCLI(t, cliEnv{}, "run", spec, "--db", db, "--resume", "latest", "--force"); inv.code != 0 {
		t.Errorf("resume --force: exit %d\n%s", inv.code, inv.stderr)
	}
}

// A rescore of a run that a live process is still writing is refused: it
// would score a run whose results are still arriving.
func TestRescoreRefusesRunBeingWritten(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "assay.db")
	spec := filepath.Join(repoRoot(t), "examples", "quickstart", "assay.yaml")
	if inv := runCLI(t, cliEnv{}, "run", spec, "--db", db); inv.code != 0 {
		t.Fatal(inv.stderr)
	}
	h, err := sql.Open("sqlite", "file:"+db+"?_pragma=busy_timeout(2000)")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UnixMicro()
	if _, err := h.Exec(`INSERT INTO leases (run_id, holder, pid, host, acquired, heartbeat) SELECT id, 'writer', 4242, 'build-7', ?, ? FROM runs`, now, now); err != nil {
		t.Fatal(err)
	}
	h.Close()
	inv := runCLI(t, cliEnv{}, "rescore", "latest", "--db", db)
	if inv.code != ExitErr || !strings.Contains(inv.stderr, "pid 4242 on build-7") {
		t.Errorf("rescore of a run being written: exit %d\n%s", inv.code, inv.stderr)
	}
	// Once the writer is gone (its heartbeat stale), the rescore runs.
	h, _ = sql.Open("sqlite", "file:"+db+"?_pragma=busy_timeout(2000)")
	if _, err := h.Exec(`UPDATE leases SET heartbeat = ?`, time.Now().Add(-2*engine.LeaseTTL).UnixMicro()); err != nil {
		t.Fatal(err)
	}
	h.Close()
	if inv := runCLI(t, cliEnv{}, "rescore", "latest", "--db", db); inv.code != 0 {
		t.Errorf("rescore after the writer went stale: exit %d\n%s", inv.code, inv.stderr)
	}
}
