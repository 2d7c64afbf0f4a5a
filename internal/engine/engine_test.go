package engine_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/engine"
	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/provider/registry"
	"github.com/assay-eval/assay/internal/provider/replay"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/spec"
	"github.com/assay-eval/assay/internal/store"
	"github.com/assay-eval/assay/internal/store/sqlite"
	"github.com/assay-eval/assay/internal/task"
)

// fake answers every call with the case's "say" field, counting the calls
// per case and epoch. With gate set, each call first waits for a token
// (or for gate to close).
type fake struct {
	mu    sync.Mutex
	calls map[string]int
	n     int
	gate  chan struct{}
	// fail, when set, makes the calls it names fail with a server error.
	fail func(caseID string) bool
}

func (f *fake) complete(ctx context.Context, req *provider.Request) (*provider.Response, error) {
	if f.gate != nil {
		select {
		case <-f.gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls[fmt.Sprintf("%s/%d", req.CaseID, req.Epoch)]++
	f.n++
	if f.fail != nil && f.fail(req.CaseID) {
		return nil, &provider.Error{Kind: provider.KindServer, Msg: "boom"}
	}
	return &provider.Response{Text: fmt.Sprint(req.Vars["say"]), Attempts: 1}, nil
}

func (f *fake) answered() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n
}

// The fake takes the place of provider replay in the registry: the spec
// stays an ordinary one, and no file is read.
func (f *fake) registry() *registry.Registry {
	return registry.New(registry.Factory{Info: replay.Info(), New: func(*spec.Target, registry.Env) (provider.Provider, error) {
		return provider.Func(f.complete), nil
	}})
}

type env struct {
	dir  string
	task *task.Task
	st   store.Store
	f    *fake
}

func (v *env) engine() *engine.Engine {
	return &engine.Engine{Store: v.st, Providers: v.f.registry(), Now: time.Now, Version: "test"}
}

// setup writes a spec of n cases (one in three expects another word, so it
// fails) with one target and opens a store beside it.
func setup(t *testing.T, n int) *env {
	t.Helper()
	dir := t.TempDir()
	var cases, rec strings.Builder
	for i := 1; i <= n; i++ {
		say, exp := fmt.Sprintf("word-%d", i), fmt.Sprintf("word-%d", i)
		if i%3 == 0 {
			exp = "other"
		}
		fmt.Fprintf(&cases, `{"id":"c%d","say":%q,"expected":%q}`+"\n", i, say, exp)
		fmt.Fprintf(&rec, `{"id":"c%d","out":%q}`+"\n", i, say)
	}
	write(t, filepath.Join(dir, "cases.jsonl"), cases.String())
	write(t, filepath.Join(dir, "rec.jsonl"), rec.String())
	path := filepath.Join(dir, "assay.yaml")
	write(t, path, `name: eng
dataset: {path: cases.jsonl, id: id, expected: expected}
prompt: {user: "{{.say}}"}
targets:
  - {name: fake, provider: replay, replay: {path: rec.jsonl, join: id, output: out}, limits: {concurrency: 4}}
scorers:
  - {name: correct, type: equals}
`)
	tk, err := task.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(context.Background(), filepath.Join(dir, "assay.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return &env{dir: dir, task: tk, st: st, f: &fake{calls: map[string]int{}}}
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func results(t *testing.T, st store.Store, runID string) []record.Result {
	t.Helper()
	var out []record.Result
	if err := st.Results(context.Background(), runID, func(r record.Result) error { out = append(out, r); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

func count(t *testing.T, each func(func() error) error) int {
	t.Helper()
	n := 0
	if err := each(func() error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

func casesOf(t *testing.T, st store.Store, runID string) int {
	return count(t, func(fn func() error) error {
		return st.Cases(context.Background(), runID, func(record.Case) error { return fn() })
	})
}

func scoresOf(t *testing.T, st store.Store, runID string, scoring int) (n, passed int) {
	t.Helper()
	err := st.Scores(context.Background(), runID, scoring, func(s record.Score) error {
		n++
		if s.Pass {
			passed++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n, passed
}

// Start → Execute → Finish stores the record, every case, every result
// scored, marks the run complete and gives the lease up.
func TestStartExecuteFinish(t *testing.T) {
	const n = 30
	v := setup(t, n)
	ctx := context.Background()
	e := v.engine()
	run, err := e.Start(ctx, v.task, engine.StartOptions{Targets: []string{"fake"}, Epochs: 2, Experiment: "exp"})
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	id := run.Record.ID
	if l, err := v.st.GetLease(ctx, id); err != nil || l == nil {
		t.Fatalf("lease after Start: %v, %v; want held", l, err)
	}
	if got := casesOf(t, v.st, id); got != n {
		t.Errorf("%d cases recorded by Start, want %d", got, n)
	}
	progress := 0
	sum, err := run.Execute(ctx, engine.ExecuteOptions{Progress: func(*record.Result) { progress++ }})
	if err != nil {
		t.Fatal(err)
	}
	out, err := run.Finish(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != record.StatusComplete || out.Have != 2*n || out.Total != 2*n {
		t.Errorf("outcome %+v, want complete with %d of %d", out, 2*n, 2*n)
	}
	if sum.Stored != 2*n || progress != 2*n || sum.Errors != 0 {
		t.Errorf("summary %+v, progress %d; want %d stored and told", sum, progress, 2*n)
	}
	got, err := v.st.GetRun(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != record.StatusComplete || got.Ended.IsZero() || got.AssayVersion != "test" || got.Experiment != "exp" ||
		got.DatasetHash != v.task.Dataset.Hash || got.FileHash != v.task.Dataset.FileHash || got.Cases != n || got.Epochs != 2 || got.Host == "" {
		t.Errorf("stored run %+v", got)
	}
	if rs := results(t, v.st, id); len(rs) != 2*n {
		t.Errorf("%d results stored, want %d", len(rs), 2*n)
	}
	if sc, passed := scoresOf(t, v.st, id, 1); sc != 2*n || passed != 2*(n-n/3) {
		t.Errorf("scoring 1: %d scores, %d passed; want %d, %d", sc, passed, 2*n, 2*(n-n/3))
	}
	if l, err := v.st.GetLease(ctx, id); err != nil || l != nil {
		t.Errorf("lease after Finish: %v, %v; want released", l, err)
	}
	hs, err := run.Health(ctx)
	if err != nil || len(hs) != 1 || hs[0].Results != 2*n || hs[0].Errors != 0 || engine.Unhealthy(hs) {
		t.Errorf("health %+v, %v", hs, err)
	}
}

// The first stop keeps the calls in flight: the run is interrupted with
// every answered call stored, and a resume calls only what is missing,
// each unit once over both invocations.
func TestInterruptKeepsEverythingAndResumeSkipsDone(t *testing.T) {
	const n = 40
	v := setup(t, n)
	ctx := context.Background()
	v.f.gate = make(chan struct{})
	run, err := v.engine().Start(ctx, v.task, engine.StartOptions{Targets: []string{"fake"}, CommitEvery: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	id := run.Record.ID
	stop := make(chan struct{})
	type done struct {
		sum engine.Summary
		err error
	}
	finished := make(chan done, 1)
	go func() {
		sum, err := run.Execute(ctx, engine.ExecuteOptions{Stop: stop})
		finished <- done{sum, err}
	}()
	for range 5 {
		v.f.gate <- struct{}{} // five calls answered
	}
	close(stop)
	close(v.f.gate) // the calls in flight finish
	d := <-finished
	if d.err != nil {
		t.Fatal(d.err)
	}
	out, err := run.Finish(ctx)
	if err != nil {
		t.Fatal(err)
	}
	answered := v.f.answered()
	stored := len(results(t, v.st, id))
	if !d.sum.Interrupted || out.Status != record.StatusInterrupted {
		t.Errorf("after a stop: summary interrupted %v, status %s; want interrupted", d.sum.Interrupted, out.Status)
	}
	if stored != answered || d.sum.Stored != answered || out.Have != answered {
		t.Errorf("%d calls answered, %d stored (summary %d, outcome %d): a finished call was lost", answered, stored, d.sum.Stored, out.Have)
	}
	if answered < 5 || answered >= n {
		t.Fatalf("%d calls answered; the test needs a partial run", answered)
	}
	if got, _ := v.st.GetRun(ctx, id); got.Status != record.StatusInterrupted {
		t.Errorf("stored status %s, want interrupted", got.Status)
	}

	// Resume: only the missing units are called.
	v.f.gate = nil
	again, err := v.engine().Resume(ctx, v.task, id, engine.ResumeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if len(again.Done) != stored {
		t.Errorf("resume found %d done keys, want %d", len(again.Done), stored)
	}
	sum, err := again.Execute(ctx, engine.ExecuteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out, err = again.Finish(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != record.StatusComplete || sum.Stored != n-stored || sum.Skipped != stored {
		t.Errorf("resume: status %s, stored %d, skipped %d; want complete, %d, %d", out.Status, sum.Stored, sum.Skipped, n-stored, stored)
	}
	if got := len(results(t, v.st, id)); got != n {
		t.Errorf("%d results after the resume, want %d", got, n)
	}
	for k, c := range v.f.calls {
		if c != 1 {
			t.Errorf("unit %s called %d times, want once", k, c)
		}
	}
	if len(v.f.calls) != n {
		t.Errorf("%d units called, want %d", len(v.f.calls), n)
	}
}

// Cancelling the context (a second Ctrl-C) drops the calls in flight
// (not stored: a resume makes them) and the run is still marked
// interrupted, with a context of its own.
func TestCancelMarksInterrupted(t *testing.T) {
	v := setup(t, 20)
	v.f.gate = make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	run, err := v.engine().Start(ctx, v.task, engine.StartOptions{Targets: []string{"fake"}})
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	finished := make(chan error, 1)
	go func() {
		_, err := run.Execute(ctx, engine.ExecuteOptions{})
		finished <- err
	}()
	v.f.gate <- struct{}{}
	v.f.gate <- struct{}{}
	cancel()
	if err := <-finished; err != nil {
		t.Fatal(err)
	}
	out, err := run.Finish(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got, err := v.st.GetRun(context.Background(), run.Record.ID)
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != record.StatusInterrupted || got.Status != record.StatusInterrupted {
		t.Errorf("after a cancel: outcome %s, stored %s; want interrupted", out.Status, got.Status)
	}
	if stored := len(results(t, v.st, run.Record.ID)); stored != v.f.answered() {
		t.Errorf("%d stored, %d answered", stored, v.f.answered())
	}
}

// A run whose lease a live process holds cannot be resumed: the error
// names the holder, and nothing is called. Once released it can.
func TestLeaseHeldElsewhereIsRefused(t *testing.T) {
	v := setup(t, 10)
	ctx := context.Background()
	first, err := v.engine().Start(ctx, v.task, engine.StartOptions{Targets: []string{"fake"}})
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	id := first.Record.ID

	_, err = v.engine().Resume(ctx, v.task, id, engine.ResumeOptions{})
	var held *store.LeaseHeldError
	if !errors.As(err, &held) || held.Lease.PID != os.Getpid() {
		t.Fatalf("resume while the lease is held: %v; want a LeaseHeldError naming pid %d", err, os.Getpid())
	}
	if v.f.answered() != 0 {
		t.Errorf("%d calls made by a refused resume", v.f.answered())
	}
	if err := v.engine().RequireNoWriter(ctx, "rescore "+id, first.Record); !errors.As(err, &held) {
		t.Errorf("RequireNoWriter with a live writer: %v; want a LeaseHeldError", err)
	}

	first.Close() // gives the lease up
	again, err := v.engine().Resume(ctx, v.task, id, engine.ResumeOptions{})
	if err != nil {
		t.Fatalf("resume once the lease is released: %v", err)
	}
	again.Close()
}

// A run on cases held in memory (a probe's twins) records those cases
// and the given dataset hash, with no file hash.
func TestStartOnCaseList(t *testing.T) {
	v := setup(t, 10)
	ctx := context.Background()
	var all []*dataset.Case
	if err := engine.DatasetCases(v.task, 0)(func(c *dataset.Case) error { all = append(all, c); return nil }); err != nil {
		t.Fatal(err)
	}
	run, err := v.engine().Start(ctx, v.task, engine.StartOptions{Targets: []string{"fake"}, Epochs: 1, Cases: all[:4], DatasetHash: "sha256:twins"})
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	if _, err := run.Execute(ctx, engine.ExecuteOptions{}); err != nil {
		t.Fatal(err)
	}
	if out, err := run.Finish(ctx); err != nil || out.Status != record.StatusComplete || out.Total != 4 {
		t.Fatalf("outcome %+v, %v", out, err)
	}
	got, _ := v.st.GetRun(ctx, run.Record.ID)
	if got.DatasetHash != "sha256:twins" || got.FileHash != "" || got.Cases != 4 {
		t.Errorf("stored run: dataset %q file %q cases %d", got.DatasetHash, got.FileHash, got.Cases)
	}
	if n := casesOf(t, v.st, run.Record.ID); n != 4 {
		t.Errorf("%d cases recorded, want 4", n)
	}
}

// Rescore adds a complete scoring with every result's verdict; a live
// writer's run is refused; a stopped rescore leaves its scoring pending.
func TestRescore(t *testing.T) {
	const n = 12
	v := setup(t, n)
	ctx := context.Background()
	e := v.engine()
	run, err := e.Start(ctx, v.task, engine.StartOptions{Targets: []string{"fake"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run.Execute(ctx, engine.ExecuteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := run.Finish(ctx); err != nil {
		t.Fatal(err)
	}
	run.Close()

	sc, err := e.Rescore(ctx, run.Record, v.task, engine.RescoreOptions{Workers: 3})
	if err != nil {
		t.Fatal(err)
	}
	if sc.Scoring != 2 || sc.Results != n || sc.Scorers["correct"].N != n || sc.Scorers["correct"].Passed != n-n/3 || sc.Interrupted {
		t.Errorf("rescore %+v", sc)
	}
	if latest, _ := v.st.LatestScoring(ctx, run.Record.ID); latest != 2 {
		t.Errorf("latest scoring %d, want 2", latest)
	}
	if got, _ := scoresOf(t, v.st, run.Record.ID, 2); got != n {
		t.Errorf("%d scores in scoring 2, want %d", got, n)
	}

	stop := make(chan struct{})
	close(stop)
	sc, err = e.Rescore(ctx, run.Record, v.task, engine.RescoreOptions{Stop: stop})
	if err != nil || !sc.Interrupted {
		t.Fatalf("stopped rescore: %+v, %v; want interrupted", sc, err)
	}
	if pending, _ := v.st.ScoringPending(ctx, run.Record.ID, sc.Scoring); !pending {
		t.Errorf("scoring %d of a stopped rescore is not pending", sc.Scoring)
	}
	if latest, _ := v.st.LatestScoring(ctx, run.Record.ID); latest != 2 {
		t.Errorf("latest scoring %d after a stopped rescore, want 2", latest)
	}
}

// --retry-errors: Resume with RetryKinds calls again only the results that
// failed with those kinds and replaces each; the run ends complete with no
// failure left, and its health counts what is stored now.
func TestResumeRetriesFailures(t *testing.T) {
	const n = 12
	v := setup(t, n)
	ctx := context.Background()
	v.f.fail = func(id string) bool { return id == "c2" || id == "c5" }
	run, err := v.engine().Start(ctx, v.task, engine.StartOptions{Targets: []string{"fake"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run.Execute(ctx, engine.ExecuteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := run.Finish(ctx); err != nil {
		t.Fatal(err)
	}
	hs, _ := run.Health(ctx)
	if hs[0].Errors != 2 || hs[0].Kinds["server_error"] != 2 {
		t.Errorf("health before the retry: %+v", hs[0])
	}
	run.Close()

	v.f.fail = nil
	again, err := v.engine().Resume(ctx, v.task, run.Record.ID, engine.ResumeOptions{RetryKinds: []string{"server_error"}})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if again.Retrying == nil || again.Retrying.Selected != 2 || len(again.Done) != n-2 {
		t.Fatalf("retrying %+v, %d done; want 2 selected, %d done", again.Retrying, len(again.Done), n-2)
	}
	sum, err := again.Execute(ctx, engine.ExecuteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out, err := again.Finish(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != record.StatusComplete || sum.Retried != 2 || again.Retrying.Retried != 2 || again.Retrying.FailedAgain != 0 {
		t.Errorf("outcome %+v, summary %+v, retrying %+v", out, sum, again.Retrying)
	}
	rs := results(t, v.st, run.Record.ID)
	if len(rs) != n {
		t.Fatalf("%d results, want %d", len(rs), n)
	}
	for _, r := range rs {
		if r.ErrorKind != "" || (r.CaseID == "c2" && r.Retries != 1) {
			t.Errorf("result %s: error %q, retries %d", r.CaseID, r.ErrorKind, r.Retries)
		}
	}
	if v.f.calls["c2/1"] != 2 || v.f.calls["c1/1"] != 1 {
		t.Errorf("calls %v: a failed unit is called again, a good one never", v.f.calls)
	}
	hs, _ = again.Health(ctx)
	if hs[0].Errors != 0 || engine.Unhealthy(hs) {
		t.Errorf("health after the retry: %+v", hs[0])
	}
}
