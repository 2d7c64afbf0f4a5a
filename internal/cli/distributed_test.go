package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/distribute"
	"github.com/assay-eval/assay/internal/mock"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store"
	"github.com/assay-eval/assay/internal/store/pgtest"
	"github.com/assay-eval/assay/internal/store/postgres"
	"github.com/assay-eval/assay/internal/store/sqlite"
)

// unitScores is what one unit of a run holds: its reply, its error kind
// and every verdict of scoring 1, in scorer order.
type unitScores struct {
	raw, kind string
	scores    string
}

// readUnits reads every result of a run and its scores, failing on a
// result stored twice.
func readUnits(t *testing.T, st store.Store, runID string) map[record.Key]unitScores {
	t.Helper()
	ctx := context.Background()
	out := map[record.Key]unitScores{}
	err := st.Results(ctx, runID, func(r record.Result) error {
		if _, dup := out[r.Key()]; dup {
			t.Errorf("result %v stored twice", r.Key())
		}
		out[r.Key()] = unitScores{raw: r.Raw, kind: r.ErrorKind}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = st.Scores(ctx, runID, 1, func(s record.Score) error {
		k := record.Key{CaseID: s.CaseID, Target: s.Target, Epoch: s.Epoch}
		v := out[k]
		v.scores += fmt.Sprintf("%s=%v/%v/%s/%s/%s;", s.Scorer, s.Pass, s.Value, s.Shape, s.Kind, s.Reason)
		out[k] = v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// worker is one `assay worker` process of a test.
type worker struct {
	cmd    *exec.Cmd
	stderr *bytes.Buffer
	done   chan struct{}
}

// startWorkers starts n worker processes on the store at url; they are
// killed when the test ends if still running.
func startWorkers(t *testing.T, url string, n int, args ...string) []*worker {
	t.Helper()
	bin := assayBinary(t)
	var ws []*worker
	for range n {
		w := &worker{stderr: &bytes.Buffer{}, done: make(chan struct{})}
		w.cmd = exec.Command(bin, append([]string{"worker", "--db", url, "--poll", "50ms"}, args...)...)
		w.cmd.Stderr = w.stderr
		if err := w.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { _ = w.cmd.Wait(); close(w.done) }()
		ws = append(ws, w)
		t.Cleanup(func() {
			select {
			case <-w.done:
			default:
				_ = w.cmd.Process.Kill()
				<-w.done
			}
		})
	}
	return ws
}

// stopWorkers interrupts the workers (a first Ctrl-C) and waits for them.
func stopWorkers(t *testing.T, ws []*worker) {
	t.Helper()
	for _, w := range ws {
		select {
		case <-w.done:
			continue
		default:
		}
		_ = w.cmd.Process.Signal(os.Interrupt)
		select {
		case <-w.done:
		case <-time.After(20 * time.Second):
			t.Errorf("a worker did not stop on interrupt: %s", w.stderr)
		}
	}
}

// pgCount runs a count query on the store at url.
func pgCount(t *testing.T, db *postgres.DB, query string, args ...any) int {
	t.Helper()
	var n int
	if err := db.Pool().QueryRow(context.Background(), query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

func openPG(t *testing.T, url string) *postgres.DB {
	t.Helper()
	db, err := postgres.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

type submitted struct {
	inv invocation
	sum runSummary
}

// submit runs `assay run --distributed --json` in this process, in the
// background.
func submit(t *testing.T, e cliEnv, args ...string) <-chan submitted {
	t.Helper()
	ch := make(chan submitted, 1)
	go func() {
		inv := runCLI(t, e, append(args, "--distributed", "--json")...)
		var s runSummary
		_ = json.Unmarshal([]byte(inv.stdout), &s)
		ch <- submitted{inv, s}
	}()
	return ch
}

func waitSubmitted(t *testing.T, ch <-chan submitted, within time.Duration) submitted {
	t.Helper()
	select {
	case s := <-ch:
		return s
	case <-time.After(within):
		t.Fatalf("the distributed run did not finish in %s", within)
		return submitted{}
	}
}

// Three workers, one killed with kill -9 while it works a job: every
// result is stored once, the scores are those of a run in one process,
// and the calls made twice are no more than the killed worker's jobs
// could hold (its jobs at once × units a job).
func TestDistributedKill9(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts worker processes")
	}
	url := pgtest.URL(t)
	const (
		cases       = 600
		batch       = 10
		concurrency = 2 // jobs a worker works at once
	)
	dir := t.TempDir()
	srv, mockURL := startMock(t, mock.Options{Latency: 50 * time.Millisecond})
	path := echoTask(t, dir, cases, fmt.Sprintf(`  - {name: oa, provider: openai, model: m, base_url: %s/v1}`, mockURL))
	e := cliEnv{env: map[string]string{}}

	// The same spec in one process, on its own mock, into SQLite.
	_, refURL := startMock(t, mock.Options{})
	refPath := filepath.Join(t.TempDir(), "assay.yaml")
	writeFile(t, refPath, strings.ReplaceAll(readFileT(t, path), mockURL, refURL))
	writeFile(t, filepath.Join(filepath.Dir(refPath), "cases.jsonl"), readFileT(t, filepath.Join(dir, "cases.jsonl")))
	lite := filepath.Join(t.TempDir(), "ref.db")
	ref := runJSON(t, e, "run", refPath, "--db", lite, "--no-cache")
	if ref.Status != "complete" {
		t.Fatalf("reference run: %+v", ref)
	}

	db := openPG(t, url)
	ws := startWorkers(t, url, 3, "--concurrency", fmt.Sprint(concurrency), "--rescue-after", "4s", "--job-timeout", "3s")
	done := submit(t, e, "run", path, "--db", url, "--no-cache", "--batch", fmt.Sprint(batch))

	// Halfway, kill -9 a worker that is working a job.
	victim := ws[0]
	pid := fmt.Sprintf("%%/%d/%%", victim.cmd.Process.Pid)
	deadline := time.Now().Add(30 * time.Second)
	for pgCount(t, db, `SELECT count(*) FROM results`) < cases/2 ||
		pgCount(t, db, `SELECT count(*) FROM river_job WHERE state = 'running' AND attempted_by[array_length(attempted_by, 1)] LIKE $1`, pid) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no progress, or the worker never held a job: %d results\n%s", pgCount(t, db, `SELECT count(*) FROM results`), victim.stderr)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := victim.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-victim.done
	atKill := pgCount(t, db, `SELECT count(*) FROM results`)
	if atKill >= cases {
		t.Fatalf("the run finished before the kill (%d results)", atKill)
	}

	s := waitSubmitted(t, done, 60*time.Second)
	stopWorkers(t, ws[1:])
	if s.inv.code != 0 || s.sum.Status != "complete" {
		t.Fatalf("distributed run: exit %d, %+v\n%s", s.inv.code, s.sum, s.inv.stderr)
	}
	rescued := pgCount(t, db, `SELECT count(*) FROM river_job WHERE kind = 'assay_units' AND cardinality(errors) > 0`)
	if rescued == 0 {
		t.Errorf("no job was rescued after the kill")
	}

	got := readUnits(t, db, s.sum.RunID)
	refStore, err := sqlite.Open(context.Background(), lite)
	if err != nil {
		t.Fatal(err)
	}
	defer refStore.Close()
	want := readUnits(t, refStore, ref.RunID)
	if len(got) != cases || len(want) != cases {
		t.Fatalf("%d results distributed, %d in one process; want %d each", len(got), len(want), cases)
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%v: distributed %+v, one process %+v", k, got[k], w)
		}
	}
	if n := pgCount(t, db, `SELECT count(*) FROM results`); n != cases {
		t.Errorf("%d result rows, want %d", n, cases)
	}
	calls := srv.Stats().Requests
	bound := int64(cases + concurrency*batch)
	t.Logf("results at kill %d, calls %d (bound %d), jobs rescued %d", atKill, calls, bound, rescued)
	if calls > bound {
		t.Errorf("%d calls for %d results: more than the killed worker's %d jobs × %d units could repeat", calls, cases, concurrency, batch)
	}
}

// Three workers share a target's RPM limit: the mock, answering 429
// just above that rate (10%, with a burst of 5 for the scheduling jitter
// of five processes on a loaded machine), never has to. Without the
// shared limit each worker would go at the full rate: three times it.
//
// Not parallel: other tests' processes on the same cores would make the
// workers' sends bunch (see bench/RESULTS.md, "Distributed runs").
func TestDistributedSharedRPM(t *testing.T) {
	if testing.Short() {
		t.Skip("starts worker processes")
	}
	url := pgtest.URL(t)
	const (
		cases = 150
		rpm   = 2400 // 40 a second
	)
	srv, mockURL := startMock(t, mock.Options{Rate: 44, Burst: 5, RetryAfter: time.Second})
	path := echoTask(t, t.TempDir(), cases, fmt.Sprintf(`  - {name: oa, provider: openai, model: m, base_url: %s/v1, limits: {rpm: %d}}`, mockURL, rpm))
	ws := startWorkers(t, url, 3, "--concurrency", "4")
	start := time.Now()
	s := waitSubmitted(t, submit(t, cliEnv{env: map[string]string{}}, "run", path, "--db", url, "--no-cache", "--batch", "5"), 60*time.Second)
	took := time.Since(start)
	stopWorkers(t, ws)
	if s.inv.code != 0 || s.sum.Status != "complete" {
		t.Fatalf("distributed run: exit %d, %+v\n%s", s.inv.code, s.sum, s.inv.stderr)
	}
	st := srv.Stats()
	t.Logf("%d calls in %s (%.1f/s), %d answered 429", st.Requests, took.Round(time.Millisecond), float64(st.Requests)/took.Seconds(), st.RateLimit)
	if st.RateLimit != 0 {
		t.Errorf("%d calls answered 429: the workers together went above rpm %d", st.RateLimit, rpm)
	}
	// The limit held: cases spaced 60/rpm apart take at least this long.
	if minimum := time.Duration(cases-1) * time.Minute / rpm; took < minimum {
		t.Errorf("%d calls took %s, less than the %s the limit allows", cases, took, minimum)
	}
	var busy int
	for _, w := range ws {
		if strings.Contains(w.stderr.String(), "working its jobs") {
			busy++
		}
	}
	if busy < 2 {
		t.Errorf("only %d of 3 workers worked the run: the limit was not shared", busy)
	}
}

// The first Ctrl-C on the submitter cancels the jobs no worker took and
// marks the run interrupted (exit 130); `assay runs` shows its progress;
// --resume RUN --distributed enqueues only the missing units and
// completes it with every result stored once.
func TestDistributedInterruptResume(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts worker processes")
	}
	url := pgtest.URL(t)
	const cases = 300
	srv, mockURL := startMock(t, mock.Options{Latency: 20 * time.Millisecond})
	path := echoTask(t, t.TempDir(), cases, fmt.Sprintf(`  - {name: oa, provider: openai, model: m, base_url: %s/v1, limits: {concurrency: 2}}`, mockURL))
	db := openPG(t, url)
	ws := startWorkers(t, url, 1, "--concurrency", "1")
	interrupts := make(chan os.Signal, 2)
	e := cliEnv{env: map[string]string{}, interrupts: interrupts}
	done := submit(t, e, "run", path, "--db", url, "--no-cache", "--batch", "10")

	deadline := time.Now().Add(30 * time.Second)
	for pgCount(t, db, `SELECT count(*) FROM results`) < 40 {
		if time.Now().After(deadline) {
			t.Fatalf("no progress: %s", ws[0].stderr)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Progress as `assay runs` shows it while the workers store results.
	var listed []runListing
	inv := runCLI(t, cliEnv{env: map[string]string{}}, "--db", url, "runs", "--json")
	if err := json.Unmarshal([]byte(inv.stdout), &listed); err != nil || len(listed) != 1 {
		t.Fatalf("runs --json: %v %s", err, inv.stdout)
	}
	if l := listed[0]; l.Status != "running" || l.Stored == nil || *l.Stored < 40 || *l.Stored >= cases || l.Expected != cases {
		t.Errorf("runs while running: status %s, stored %v of %d; want running, 40 ≤ stored < %d of %d", l.Status, l.Stored, l.Expected, cases, cases)
	}
	text := runCLI(t, cliEnv{env: map[string]string{}}, "--db", url, "runs")
	if !strings.Contains(text.stdout, fmt.Sprintf("/%d", cases)) || !strings.Contains(text.stdout, "running ") {
		t.Errorf("runs does not show the progress:\n%s", text.stdout)
	}

	interrupts <- syscall.SIGINT
	s := waitSubmitted(t, done, 30*time.Second)
	if s.inv.code != ExitInterrupted || s.sum.Status != "interrupted" {
		t.Fatalf("after Ctrl-C: exit %d, status %q\n%s", s.inv.code, s.sum.Status, s.inv.stderr)
	}
	if want := "--resume " + s.sum.RunID + " --distributed"; !strings.Contains(s.inv.stderr, want) {
		t.Errorf("the submitter does not say how to resume (%q):\n%s", want, s.inv.stderr)
	}
	if !strings.Contains(s.inv.stderr, "cancelled") {
		t.Errorf("the submitter did not say it cancelled the queued jobs:\n%s", s.inv.stderr)
	}
	waiting := pgCount(t, db, `SELECT count(*) FROM river_job WHERE state IN ('available', 'scheduled', 'retryable', 'running')`)
	if waiting != 0 {
		t.Errorf("%d jobs still queued or running after the interrupt", waiting)
	}
	// Nothing more is called for the run once it is interrupted.
	time.Sleep(300 * time.Millisecond)
	stored, calls := pgCount(t, db, `SELECT count(*) FROM results`), srv.Stats().Requests
	time.Sleep(500 * time.Millisecond)
	if n := srv.Stats().Requests; n != calls {
		t.Errorf("calls went on after the interrupt: %d → %d", calls, n)
	}
	if stored >= cases {
		t.Fatalf("the run completed before the interrupt (%d results)", stored)
	}

	r := waitSubmitted(t, submit(t, cliEnv{env: map[string]string{}}, "run", path, "--db", url, "--no-cache", "--resume", s.sum.RunID), 60*time.Second)
	stopWorkers(t, ws)
	if r.inv.code != 0 || r.sum.Status != "complete" || r.sum.RunID != s.sum.RunID {
		t.Fatalf("resume: exit %d, %+v\n%s", r.inv.code, r.sum, r.inv.stderr)
	}
	if want := fmt.Sprintf("enqueued %d units", cases-stored); !strings.Contains(r.inv.stderr, want) {
		t.Errorf("resume: want %q in\n%s", want, r.inv.stderr)
	}
	got := readUnits(t, db, s.sum.RunID)
	if len(got) != cases {
		t.Errorf("%d results after resume, want %d", len(got), cases)
	}
	if r.sum.Skipped != stored {
		t.Errorf("resume: %d already done, want %d", r.sum.Skipped, stored)
	}
	if r.sum.Stored != cases-stored {
		t.Errorf("resume stored %d, want %d", r.sum.Stored, cases-stored)
	}
}

// --distributed needs the PostgreSQL store.
func TestDistributedRefusesSQLite(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := echoTask(t, dir, 3, `  - {name: oa, provider: openai, model: m, base_url: http://127.0.0.1:1/v1}`)
	inv := runCLI(t, cliEnv{env: map[string]string{}}, "run", path, "--db", filepath.Join(dir, "a.db"), "--distributed")
	if inv.code != ExitUsage || !strings.Contains(inv.stderr, "--distributed needs the PostgreSQL store") {
		t.Errorf("exit %d, stderr %s", inv.code, inv.stderr)
	}
	inv = runCLI(t, cliEnv{env: map[string]string{}}, "worker", "--db", filepath.Join(dir, "a.db"))
	if inv.code != ExitUsage || !strings.Contains(inv.stderr, "assay worker needs the PostgreSQL store") {
		t.Errorf("worker: exit %d, stderr %s", inv.code, inv.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "a.db")); !os.IsNotExist(err) {
		t.Errorf("refusing, a store was created: %v", err)
	}
}

// A job worked again (its worker killed after storing part of it) calls
// nothing for the units already stored: here every unit of the run is
// stored and its jobs are enqueued once more.
func TestDistributedRetriedJobSkipsStored(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts worker processes")
	}
	url := pgtest.URL(t)
	const cases = 30
	srv, mockURL := startMock(t, mock.Options{})
	path := echoTask(t, t.TempDir(), cases, fmt.Sprintf(`  - {name: oa, provider: openai, model: m, base_url: %s/v1}`, mockURL))
	ws := startWorkers(t, url, 1)
	s := waitSubmitted(t, submit(t, cliEnv{env: map[string]string{}}, "run", path, "--db", url, "--no-cache", "--batch", "7"), 60*time.Second)
	if s.inv.code != 0 || s.sum.Status != "complete" {
		t.Fatalf("distributed run: exit %d, %+v\n%s", s.inv.code, s.sum, s.inv.stderr)
	}
	if n := srv.Stats().Requests; n != cases {
		t.Fatalf("%d calls for %d cases", n, cases)
	}

	ctx := context.Background()
	db := openPG(t, url)
	rec, err := db.GetRun(ctx, s.sum.RunID)
	if err != nil {
		t.Fatal(err)
	}
	rec.Status = record.StatusRunning // as while its submitter waits
	if err := db.UpdateRun(ctx, rec); err != nil {
		t.Fatal(err)
	}
	q, err := distribute.Open(ctx, db.Pool())
	if err != nil {
		t.Fatal(err)
	}
	all := func(fn func(*dataset.Case) error) error {
		for i := 1; i <= cases; i++ {
			if err := fn(&dataset.Case{ID: fmt.Sprintf("c%d", i), Vars: map[string]any{"say": fmt.Sprintf("word-%d", i)}}); err != nil {
				return err
			}
		}
		return nil
	}
	jobs, units, err := q.Enqueue(ctx, rec, all, nil, distribute.EnqueueOptions{Batch: 7, NoCache: true})
	if err != nil || units != cases {
		t.Fatalf("enqueued %d units in %d jobs: %v", units, jobs, err)
	}
	if _, err := q.Wait(ctx, rec.ID, distribute.WaitOptions{Every: 20 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	stopWorkers(t, ws)
	if n := srv.Stats().Requests; n != cases {
		t.Errorf("%d calls after the jobs were worked again; want %d (every unit was stored)", n, cases)
	}
	if n := pgCount(t, db, `SELECT count(*) FROM results`); n != cases {
		t.Errorf("%d results, want %d", n, cases)
	}
	if n := pgCount(t, db, `SELECT count(*) FROM river_job WHERE state = 'completed'`); n != 2*jobs {
		t.Errorf("%d jobs completed, want %d (both rounds)", n, 2*jobs)
	}
}

// A worker that cannot make a target's calls (its API key is not in the
// worker's environment, only the submitter's) fails the jobs, and the
// submitter says so with the worker's reason instead of waiting silently.
func TestDistributedWorkerWithoutKey(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts worker processes")
	}
	url := pgtest.URL(t)
	_, mockURL := startMock(t, mock.Options{})
	path := echoTask(t, t.TempDir(), 5, fmt.Sprintf(`  - {name: oa, provider: openai, model: m, base_url: %s/v1, api_key_env: H5_TEST_ONLY_KEY}`, mockURL))
	if os.Getenv("H5_TEST_ONLY_KEY") != "" {
		t.Skip("H5_TEST_ONLY_KEY is set in this environment")
	}
	ws := startWorkers(t, url, 1)
	interrupts := make(chan os.Signal, 2)
	e := cliEnv{env: map[string]string{"H5_TEST_ONLY_KEY": "sk-test"}, interrupts: interrupts}
	db := openPG(t, url)
	if _, err := distribute.Setup(context.Background(), db.Pool()); err != nil {
		t.Fatal(err)
	}
	done := submit(t, e, "run", path, "--db", url)
	deadline := time.Now().Add(30 * time.Second)
	for pgCount(t, db, `SELECT count(*) FROM river_job WHERE state = 'retryable'`) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no job failed: %s", ws[0].stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(700 * time.Millisecond) // a progress read or two
	interrupts <- syscall.SIGINT
	s := waitSubmitted(t, done, 30*time.Second)
	stopWorkers(t, ws)
	if s.sum.Status != "interrupted" {
		t.Errorf("status %q, want interrupted", s.sum.Status)
	}
	if !strings.Contains(s.inv.stderr, "jobs failed and wait to be tried again (up to 5 times); a worker said: ") || !strings.Contains(s.inv.stderr, "H5_TEST_ONLY_KEY") {
		t.Errorf("the submitter did not say why the jobs fail:\n%s", s.inv.stderr)
	}
}

// A worker on a machine without the spec file or the dataset rebuilds the
// task from the resolved spec the run stored and the cases its jobs
// carry: the results are those of a worker that has the files.
func TestDistributedWorkerWithoutSpecFile(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts worker processes")
	}
	url := pgtest.URL(t)
	const cases = 40
	_, mockURL := startMock(t, mock.Options{})
	dir := t.TempDir()
	path := echoTask(t, dir, cases, fmt.Sprintf(`  - {name: oa, provider: openai, model: m, base_url: %s/v1}`, mockURL))
	db := openPG(t, url)
	if _, err := distribute.Setup(context.Background(), db.Pool()); err != nil {
		t.Fatal(err)
	}
	done := submit(t, cliEnv{env: map[string]string{}}, "run", path, "--db", url, "--no-cache")
	deadline := time.Now().Add(30 * time.Second)
	for pgCount(t, db, `SELECT count(*) FROM river_job`) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("nothing enqueued")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The submitter has read everything; the workers' machine has none of it.
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	ws := startWorkers(t, url, 2)
	s := waitSubmitted(t, done, 60*time.Second)
	stopWorkers(t, ws)
	if s.inv.code != 0 || s.sum.Status != "complete" {
		t.Fatalf("distributed run: exit %d, %+v\n%s", s.inv.code, s.sum, s.inv.stderr)
	}
	stored := 0
	for _, w := range ws {
		if strings.Contains(w.stderr.String(), "spec from its stored spec") {
			stored++
		} else if strings.Contains(w.stderr.String(), "working its jobs") {
			t.Errorf("a worker read a spec file that was removed:\n%s", w.stderr)
		}
	}
	if stored == 0 {
		t.Errorf("no worker says it worked from the stored spec")
	}
	got := readUnits(t, db, s.sum.RunID)
	if len(got) != cases {
		t.Fatalf("%d results, want %d", len(got), cases)
	}
	// echoTask: the mock echoes the word; every third case expects another.
	for i := 1; i <= cases; i++ {
		u := got[keyOf(fmt.Sprintf("c%d", i), "oa")]
		pass := i%3 != 0
		if u.raw != fmt.Sprintf("word-%d", i) || !strings.HasPrefix(u.scores, fmt.Sprintf("correct=%v/", pass)) {
			t.Errorf("c%d: reply %q, scores %s; want word-%d, pass %v", i, u.raw, u.scores, i, pass)
		}
	}
}

// --targets: a worker takes only the jobs of the targets it names, so a
// target's calls stay on the machines that can reach it.
func TestDistributedWorkerTargets(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts worker processes")
	}
	url := pgtest.URL(t)
	const cases = 20
	_, mockURL := startMock(t, mock.Options{})
	path := echoTask(t, t.TempDir(), cases, fmt.Sprintf("  - {name: oa, provider: openai, model: m, base_url: %s/v1}\n  - {name: \"O.b-2\", provider: openai, model: m, base_url: %s/v1}", mockURL, mockURL))
	db := openPG(t, url)
	if _, err := distribute.Setup(context.Background(), db.Pool()); err != nil {
		t.Fatal(err)
	}
	oa := startWorkers(t, url, 1, "--targets", "oa")
	done := submit(t, cliEnv{env: map[string]string{}}, "run", path, "--db", url, "--no-cache", "--batch", "5")
	count := func(target string) int {
		return pgCount(t, db, `SELECT count(*) FROM results WHERE target = $1`, []byte(target))
	}
	deadline := time.Now().Add(30 * time.Second)
	for count("oa") < cases {
		if time.Now().After(deadline) {
			select {
			case s := <-done:
				t.Fatalf("the run ended: exit %d\n%s", s.inv.code, s.inv.stderr)
			default:
			}
			t.Fatalf("oa's jobs were not worked: %s", oa[0].stderr)
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // a few of the worker's polls
	if n := count("O.b-2"); n != 0 {
		t.Errorf("a worker for oa stored %d results of \"O.b-2\"", n)
	}
	ob := startWorkers(t, url, 1, "--targets", "O.b-2")
	s := waitSubmitted(t, done, 30*time.Second)
	stopWorkers(t, append(oa, ob...))
	if s.inv.code != 0 || s.sum.Status != "complete" || count("O.b-2") != cases {
		t.Fatalf("exit %d, %+v, %d results of \"O.b-2\"\n%s", s.inv.code, s.sum, count("O.b-2"), s.inv.stderr)
	}
}

// Ctrl-C on a worker: it takes no more jobs, its calls in flight finish
// and are stored, and the rest of its jobs go back to the queue, where
// another worker completes the run without calling anything twice.
func TestDistributedWorkerInterrupt(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts worker processes")
	}
	url := pgtest.URL(t)
	const cases = 200
	srv, mockURL := startMock(t, mock.Options{Latency: 30 * time.Millisecond})
	path := echoTask(t, t.TempDir(), cases, fmt.Sprintf(`  - {name: oa, provider: openai, model: m, base_url: %s/v1, limits: {concurrency: 2}}`, mockURL))
	db := openPG(t, url)
	if _, err := distribute.Setup(context.Background(), db.Pool()); err != nil {
		t.Fatal(err)
	}
	first := startWorkers(t, url, 1, "--concurrency", "1")
	done := submit(t, cliEnv{env: map[string]string{}}, "run", path, "--db", url, "--no-cache", "--batch", "20")
	deadline := time.Now().Add(30 * time.Second)
	for pgCount(t, db, `SELECT count(*) FROM results`) < 30 {
		if time.Now().After(deadline) {
			t.Fatalf("no progress: %s", first[0].stderr)
		}
		time.Sleep(5 * time.Millisecond)
	}
	stopWorkers(t, first)
	stopped := pgCount(t, db, `SELECT count(*) FROM results`)
	if stopped >= cases {
		t.Fatalf("the run finished before the worker was stopped")
	}
	if !strings.Contains(first[0].stderr.String(), "taking no more jobs") {
		t.Errorf("the worker did not say it stops:\n%s", first[0].stderr)
	}
	second := startWorkers(t, url, 1)
	s := waitSubmitted(t, done, 60*time.Second)
	stopWorkers(t, second)
	if s.inv.code != 0 || s.sum.Status != "complete" {
		t.Fatalf("exit %d, %+v\n%s", s.inv.code, s.sum, s.inv.stderr)
	}
	if n := srv.Stats().Requests; n != cases {
		t.Errorf("%d calls for %d cases: a stopped worker's calls were repeated or dropped", n, cases)
	}
	if n := pgCount(t, db, `SELECT count(*) FROM results`); n != cases {
		t.Errorf("%d results, want %d", n, cases)
	}
}
