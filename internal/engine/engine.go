// Package engine owns a run's lifecycle, so "never lose a result, never pay
// twice, never mix two definitions" is implemented once behind every front
// door (the CLI's run, probe, rescore and selftest; later a server and
// workers): create a run or resume one under its lease (one writer per
// run, renewed in the background, taken over from a dead holder), record
// its cases idempotently, build the targets' wrapped providers and the
// scorers' judges through the provider registry, execute the run's work
// units (case × target × epoch) through the runner's per-target workers
// and its one batched writer, run the pairwise judges once every result
// exists, sample the host's load, set the run's status (complete,
// interrupted, failed) even after an interrupt, and release the lease.
// Rescore is an engine operation too, on the same pool and writer; run
// health (each target's provider error rate) is computed here.
//
// The engine parses no flags and renders nothing: a front door turns
// flags into options, calls the engine and renders what it returns.
// Interrupts arrive as a stop channel (issue no new calls, keep what
// finishes) and a context (cancel the calls in flight).
package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/host"
	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/provider/registry"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/runner"
	"github.com/assay-eval/assay/internal/scorer"
	"github.com/assay-eval/assay/internal/spec"
	"github.com/assay-eval/assay/internal/store"
	"github.com/assay-eval/assay/internal/task"
	"github.com/assay-eval/assay/internal/toolrun"
)

// Engine runs evaluations against one store.
type Engine struct {
	// Store holds runs, results and the response cache. Nil only for
	// operations that store nothing (a selftest without the cache).
	Store store.Store
	// Providers builds targets' providers (provider/builtin's registry).
	Providers *registry.Registry
	// Getenv reads the environment (keys, exec targets' env:); nil reads
	// nothing.
	Getenv func(string) string
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Log receives notices a user must see whatever the output format (a
	// lease taken over or lost, a resumed run already complete); nil
	// discards them.
	Log io.Writer
	// Version is the assay version recorded on new runs.
	Version string
	// Limiter, when set, gives a target's limiter shared with other
	// processes (assay worker's, in PostgreSQL) in place of the
	// in-process one; nil for a target keeps the in-process one.
	Limiter func(t *spec.Target) provider.SharedLimiter
}

func (e *Engine) now() time.Time {
	if e.Now == nil {
		return time.Now()
	}
	return e.Now()
}

func (e *Engine) getenv(name string) string {
	if e.Getenv == nil {
		return ""
	}
	return e.Getenv(name)
}

func (e *Engine) logf(format string, args ...any) {
	if e.Log != nil {
		fmt.Fprintf(e.Log, format, args...)
	}
}

func (e *Engine) hostname() string {
	h, _ := os.Hostname()
	return h
}

// Closers are what built providers hold (a replay file, the mock grader);
// Close closes them all.
type Closers []io.Closer

// Close closes every closer, once.
func (c *Closers) Close() {
	for _, x := range *c {
		x.Close()
	}
	*c = nil
}

func (e *Engine) buildOptions(sp *spec.Spec, noCache bool) registry.BuildOptions {
	o := registry.BuildOptions{Getenv: e.getenv, NoCache: noCache, Retries: sp.Run.Retries, Now: e.Now, Limiter: e.Limiter}
	if e.Store != nil {
		o.Cache = e.Store
	}
	return o
}

// Targets builds the provider of each named target of sp (every name must
// be one), wrapped by the registry (redaction, time-out, limits, retries,
// the response cache for cacheable providers; refreshed, not read, under
// noCache). Spec problems (a key not set, an exec target's environment …)
// are collected so that all are reported at once; any other error stops.
func (e *Engine) Targets(sp *spec.Spec, names []string, noCache bool, closers *Closers) ([]runner.Target, spec.Problems, error) {
	ps, problems, err := e.Providers.BuildEach(sp, names, e.buildOptions(sp, noCache), (*[]io.Closer)(closers))
	if err != nil {
		return nil, nil, err
	}
	var targets []runner.Target
	for k, name := range names {
		if ps[k] == nil {
			continue
		}
		i := slices.IndexFunc(sp.Targets, func(t spec.Target) bool { return t.Name == name })
		targets = append(targets, runner.Target{Spec: &sp.Targets[i], Provider: ps[k]})
	}
	return targets, problems, nil
}

// Provider builds one target's provider, wrapped as Targets does.
func (e *Engine) Provider(sp *spec.Spec, name string, noCache bool, closers *Closers) (provider.Provider, error) {
	return e.Providers.Build(sp, name, e.buildOptions(sp, noCache), (*[]io.Closer)(closers))
}

// Scorers compiles the spec's scorers with live judges: each judge's
// target gets the same wrappers as a candidate (time-out, limits,
// retries, response cache).
func (e *Engine) Scorers(sp *spec.Spec, noCache bool, closers *Closers) (*scorer.Set, error) {
	var perr error
	set, probs := scorer.CompileWith(sp, scorer.Options{JudgeProvider: e.Providers.Judges(sp, e.buildOptions(sp, noCache), (*[]io.Closer)(closers), &perr)})
	if len(probs) > 0 {
		return nil, probs
	}
	return set, perr
}

// Kit is what a run calls: its targets' providers and the scorers. A kit
// given to Start is the caller's (a probe shares one between its two
// runs) and is not closed by the run.
type Kit struct {
	Targets []runner.Target
	Scorers *scorer.Set
	// Agent answers the tool calls of an agent loop (spec agent:); nil
	// for a spec without one (built by the run when a kit lacks it).
	Agent *runner.Agent
}

// TooManyCallsError is Start's answer when cases × targets × epochs
// exceeds spec.MaxCalls: nothing is written or called.
type TooManyCallsError struct {
	Calls                  int64
	Cases, Targets, Epochs int
}

func (e *TooManyCallsError) Error() string {
	return fmt.Sprintf("the run would make %d calls (%d cases × %d targets × %d epochs); at most %d are allowed: lower --epochs or --limit", e.Calls, e.Cases, e.Targets, e.Epochs, spec.MaxCalls)
}

// StartOptions describe a new run.
type StartOptions struct {
	// Targets are the names of the spec's targets the run calls.
	Targets []string
	// Limit runs only the first Limit cases of the dataset (0: all).
	Limit int
	// Epochs repeats every case (0: the spec's run.epochs).
	Epochs int
	// Experiment is recorded as the run's experiment, as it is.
	Experiment string
	// NoCache calls every target anew, storing the fresh replies.
	NoCache bool
	// CommitEvery bounds how long a finished result waits to be committed.
	CommitEvery time.Duration
	// Cases, when not nil, are the run's cases, held in memory (a probe's
	// originals or twins), instead of the task's dataset.
	Cases []*dataset.Case
	// DatasetHash, when set, is recorded as the run's dataset hash (with no
	// file hash): the run measured cases that are not the dataset's (a
	// twin set's ID), so commands that re-read the dataset refuse it.
	DatasetHash string
	// Kit, when set, holds the targets (in Targets' order) and scorers
	// already built; otherwise Start builds them, each target's provider
	// in a circuit breaker (provider.WithBreaker).
	Kit *Kit
}

// ResumeOptions describe how a stored run is continued.
type ResumeOptions struct {
	// Force takes the run's lease even from a live holder.
	Force bool
	// RetryKinds, when not nil, calls again the stored results that failed
	// with one of these kinds (`run --retry-errors`), replacing each.
	RetryKinds []string
	NoCache    bool
	// CommitEvery bounds how long a finished result waits to be committed.
	CommitEvery time.Duration
}

// Retrying says what `--retry-errors` selected and did.
type Retrying struct {
	Kinds []string
	// Selected is how many stored results had failed with those kinds;
	// Retried how many were called again and stored, FailedAgain how many
	// of those failed again.
	Selected, Retried, FailedAgain int
	// LaterScorings are the run's scorings after the first (rescores):
	// their verdicts on the retried results went with the old outputs.
	LaterScorings int
}

// Summary counts what one execution of a run did.
type Summary = runner.Summary

// Unavailable is a target given up during a run.
type Unavailable = runner.Unavailable

// Run is a run opened for writing: created by Start or continued by
// Resume, under this process's lease. Execute it, then Finish it; Close
// (deferred) releases whatever is still held.
type Run struct {
	e      *Engine
	Record *record.Run
	Task   *task.Task
	// Done holds the keys stored before this invocation (skipped).
	Done map[record.Key]struct{}
	// Retry holds the failed results called again, with their retries so
	// far (--retry-errors); Retrying describes them (nil without).
	Retry    map[record.Key]int
	Retrying *Retrying
	Kit      Kit

	cases       Cases
	commitEvery time.Duration
	lease       *Lease
	closers     Closers
	executed    bool
	sum         Summary
	execErr     error
	leaseLost   bool
	seen        host.Load
}

// Total is how many results the run should have.
func (r *Run) Total() int { return r.Record.Cases * len(r.Record.Targets) * r.Record.Epochs }

// Close releases the lease and closes the providers the run built; safe
// to call more than once.
func (r *Run) Close() {
	r.lease.Release()
	r.closers.Close()
}

// Start creates a run of t: its record (hashes of spec, dataset, prompt and
// scorers; the assay version, git commit and experiment), after checking
// that its calls are bounded and building its providers and scorers
// (nothing is written or called when a key is missing); then takes its
// lease and records its cases.
func (e *Engine) Start(ctx context.Context, t *task.Task, o StartOptions) (_ *Run, err error) {
	sp := t.Spec
	epochs := sp.Run.Epochs
	if o.Epochs > 0 {
		epochs = o.Epochs
	}
	cases, source := t.Dataset.Count, DatasetCases(t, o.Limit)
	if o.Limit > 0 && o.Limit < cases {
		cases = o.Limit
	}
	if o.Cases != nil {
		cases, source = len(o.Cases), CaseList(o.Cases)
	}
	if n := int64(cases) * int64(len(o.Targets)) * int64(epochs); n > spec.MaxCalls {
		return nil, &TooManyCallsError{Calls: n, Cases: cases, Targets: len(o.Targets), Epochs: epochs}
	}
	cfg, _ := json.Marshal(sp)
	rec := &record.Run{
		ID:           record.NewRunID(e.now()),
		Spec:         sp.Name,
		SpecPath:     sp.File,
		SpecHash:     sp.Hash,
		DatasetHash:  t.Dataset.Hash,
		FileHash:     t.Dataset.FileHash,
		PromptHash:   sp.PromptHash(),
		GitCommit:    GitCommit(ctx, sp.Dir),
		ScorersHash:  sp.ScorersHash(),
		AssayVersion: e.Version,
		Experiment:   o.Experiment,
		Targets:      o.Targets,
		Cases:        cases,
		Epochs:       epochs,
		Status:       record.StatusRunning,
		Started:      e.now().UTC(),
		Config:       cfg,
	}
	if o.DatasetHash != "" {
		rec.DatasetHash, rec.FileHash = o.DatasetHash, ""
	}
	r := &Run{e: e, Record: rec, Task: t, cases: source, commitEvery: o.CommitEvery}
	defer func() {
		if err != nil {
			r.Close()
		}
	}()
	if err := r.build(o.Kit, o.NoCache); err != nil {
		return nil, err
	}
	if err := e.Store.CreateRun(ctx, rec); err != nil {
		return nil, err
	}
	if r.lease, err = e.TakeLease(ctx, rec.ID, false); err != nil {
		return nil, err
	}
	if err := PutCases(ctx, e.Store, rec.ID, source); err != nil {
		return nil, err
	}
	return r, nil
}

// Resume continues the stored run runID: it refuses when what decides its
// verdicts changed (ResumeChanged), takes the lease before reading what is
// done (so a second resume stops here instead of repeating every call the
// first one is making), reads the keys stored (and, for RetryKinds, the
// failed results to call again), builds the providers and scorers, marks
// the run running and records its cases again.
func (e *Engine) Resume(ctx context.Context, t *task.Task, runID string, o ResumeOptions) (_ *Run, err error) {
	sp := t.Spec
	rec, err := e.Store.GetRun(ctx, runID)
	if err != nil {
		return nil, fmt.Errorf("resuming %s: %w", runID, err)
	}
	if err := ResumeChanged(rec, sp, t.Dataset); err != nil {
		return nil, err
	}
	if rec.Status == record.StatusComplete && o.RetryKinds == nil {
		e.logf("run %s is already complete\n", rec.ID)
	}
	r := &Run{e: e, Record: rec, Task: t, cases: DatasetCases(t, rec.Cases), commitEvery: o.CommitEvery}
	defer func() {
		if err != nil {
			r.Close()
		}
	}()
	if r.lease, err = e.TakeLease(ctx, rec.ID, o.Force); err != nil {
		return nil, fmt.Errorf("resuming %s: %w", rec.ID, err)
	}
	if r.Done, err = e.Store.DoneKeys(ctx, rec.ID); err != nil {
		return nil, err
	}
	if o.RetryKinds != nil {
		// The failed results are called again: they are not done.
		if r.Retry, err = RetrySet(ctx, e.Store, rec.ID, o.RetryKinds); err != nil {
			return nil, err
		}
		for k := range r.Retry {
			delete(r.Done, k)
		}
		r.Retrying = &Retrying{Kinds: o.RetryKinds, Selected: len(r.Retry)}
		if n, err := e.Store.LatestScoring(ctx, rec.ID); err == nil && n > 1 {
			r.Retrying.LaterScorings = n - 1
		}
	}
	if err := r.build(nil, o.NoCache); err != nil {
		return nil, err
	}
	rec.Status = record.StatusRunning
	if err := e.Store.UpdateRun(ctx, rec); err != nil {
		return nil, err
	}
	if err := PutCases(ctx, e.Store, rec.ID, r.cases); err != nil {
		return nil, err
	}
	return r, nil
}

// build checks the run's targets against the spec and builds (or takes
// from kit) their providers and the scorers. Spec problems are returned
// together, as spec.Problems.
func (r *Run) build(kit *Kit, noCache bool) error {
	sp := r.Task.Spec
	for _, name := range r.Record.Targets {
		if !slices.ContainsFunc(sp.Targets, func(t spec.Target) bool { return t.Name == name }) {
			return fmt.Errorf("run %s has target %q, which the spec no longer defines", r.Record.ID, name)
		}
	}
	if kit != nil {
		r.Kit = *kit
		return r.buildAgent()
	}
	targets, problems, err := r.e.Targets(sp, r.Record.Targets, noCache, &r.closers)
	if err != nil {
		return err
	}
	if len(problems) > 0 {
		return problems
	}
	// A target that answers every call with 401/403, or cannot be reached
	// at all, is given up after a few calls in a row rather than called on
	// every case (the breaker is outermost: a cache hit is a success).
	for i := range targets {
		targets[i].Provider = provider.WithBreaker(targets[i].Provider, provider.DefaultBreakerThreshold)
	}
	// Scorers with live judges: a judge is a target of the spec, called
	// through the same wrappers (limits, retries, cache) as a candidate.
	set, err := r.e.Scorers(sp, noCache, &r.closers)
	if err != nil {
		return err
	}
	r.Kit = Kit{Targets: targets, Scorers: set}
	return r.buildAgent()
}

// buildAgent builds the tool handlers of the spec's agent section (none
// without one) into the kit, unless it has them.
func (r *Run) buildAgent() error {
	sp := r.Task.Spec
	if sp.Agent == nil || r.Kit.Agent != nil {
		return nil
	}
	handlers, err := toolrun.Build(sp.Agent, sp.Dir, r.e.getenv)
	if err != nil {
		return err
	}
	a := &runner.Agent{MaxTurns: sp.Agent.MaxTurns, Handlers: handlers}
	if r.e.Providers != nil {
		// What a handler answers is sent to the model and stored: the
		// secrets the spec names (a handler's env: among them) are hidden
		// as in a reply.
		a.Redact = r.e.Providers.Redactor(sp, r.e.getenv)
	}
	if sp.Dataset.Expected != "" {
		a.Withhold = []string{sp.Dataset.Expected}
	}
	for _, h := range handlers {
		if c, ok := h.(io.Closer); ok {
			r.closers = append(r.closers, c)
		}
	}
	r.Kit.Agent = a
	return nil
}

// ExecuteOptions are how a front door watches an execution.
type ExecuteOptions struct {
	// Stop, when closed, stops issuing calls; the calls in flight finish
	// and are kept (cancel Execute's context to abort them: they are not
	// stored, and a resume makes them).
	Stop <-chan struct{}
	// Progress is told every stored result (from the writer's goroutine).
	Progress func(*record.Result)
	// CallsDone is called once the targets' calls are all committed,
	// before the pairwise judges.
	CallsDone func()
}

// Execute makes the calls the run still needs (every unit not in Done,
// and those in Retry) through the runner, while sampling the host's load,
// and then, when every call was made, the pairwise judges (a case with a
// result --retry-errors replaced is judged again). A lease another
// process breaks stops it at once. Its error is the runner's or the
// judges'; Finish records the status either way.
func (r *Run) Execute(ctx context.Context, o ExecuteOptions) (Summary, error) {
	r.executed = true
	leaseCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if r.lease != nil {
		go func() {
			select {
			case <-r.lease.Lost():
				cancel(store.ErrLeaseLost)
			case <-leaseCtx.Done():
			}
		}()
	}
	t := r.Task
	// The host's load while calls are made: the report warns when it was
	// above the cores (latency then measures the machine too).
	sampler := host.Start()
	sum, err := runner.Run(leaseCtx, runner.Options{
		RunID:       r.Record.ID,
		Targets:     r.Kit.Targets,
		Epochs:      r.Record.Epochs,
		Cases:       r.cases,
		Render:      func(c *dataset.Case) ([]provider.Message, error) { return t.Prompt.Render(c.Vars) },
		Offer:       runner.OfferOf(t.Spec),
		Agent:       r.Kit.Agent,
		Score:       r.Kit.Scorers.Score,
		Store:       r.e.Store,
		Done:        r.Done,
		Retry:       r.Retry,
		Stop:        o.Stop,
		Progress:    o.Progress,
		CommitEvery: r.commitEvery,
		Now:         r.e.Now,
		Sequential:  t.Spec.Run.Schedule == spec.ScheduleSequential,
	})
	if o.CallsDone != nil {
		o.CallsDone()
	}
	r.seen = sampler.Stop()
	if err == nil && !sum.Interrupted && len(r.Kit.Scorers.Pairwise()) > 0 {
		// Pairwise judges compare each candidate with the baseline's
		// output, so they run once every result of the run exists.
		redo := map[string]bool{}
		for k := range r.Retry {
			redo[k.CaseID] = true
		}
		err = r.e.storePairs(leaseCtx, r.Kit.Scorers, r.cases, r.Record.ID, 1, 8, redo)
	}
	r.leaseLost = errors.Is(context.Cause(leaseCtx), store.ErrLeaseLost)
	if r.Retrying != nil {
		r.Retrying.Retried, r.Retrying.FailedAgain = sum.Retried, sum.RetriedErrors
	}
	r.sum, r.execErr = sum, err
	return sum, err
}

// Outcome is how a run ended.
type Outcome struct {
	// Status is the run's status now: complete, interrupted or failed.
	Status string
	// Total is how many results the run should have; Have how many it has.
	Total, Have int
}

// Finish records the run's status — failed when Execute erred,
// interrupted when results are missing (a stop, a cancellation, a target
// given up), else complete — with the host's load merged into what
// earlier invocations saw, written with a context of its own (an
// interrupt must not stop it), and releases the lease. When another
// process broke the lease it writes nothing: that process owns the run
// now, and the error says so (wrapping store.ErrLeaseLost).
func (r *Run) Finish(ctx context.Context) (Outcome, error) {
	defer r.lease.Release()
	rec, sum := r.Record, r.sum
	total := r.Total()
	// A result being retried stays stored until its new call replaces it.
	have := sum.Stored - sum.Retried + len(r.Done) + len(r.Retry)
	out := Outcome{Status: rec.Status, Total: total, Have: have}
	if r.leaseLost {
		return out, fmt.Errorf("run %s: %w after %d results were stored; it finishes the run", rec.ID, store.ErrLeaseLost, sum.Stored)
	}
	wctx, wcancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer wcancel()
	err := r.execErr
	switch {
	case err != nil:
		rec.Status = record.StatusFailed
	case !r.executed || sum.Interrupted || have < total:
		rec.Status = record.StatusInterrupted
	default:
		rec.Status = record.StatusComplete
		rec.Ended = r.e.now().UTC()
	}
	if prev, perr := host.Decode(rec.Host); perr == nil {
		rec.Host = prev.Merge(r.seen).Encode() // a resume adds to what the run saw before
	} else {
		rec.Host = r.seen.Encode()
	}
	if uerr := r.e.Store.UpdateRun(wctx, rec); uerr != nil {
		err = errors.Join(err, uerr)
	}
	out.Status = rec.Status
	return out, err
}

// Health tallies each target's provider error rate over every result the
// run holds, against run.max_error_rate, with the targets this execution
// gave up.
func (r *Run) Health(ctx context.Context) ([]TargetHealth, error) {
	return Health(ctx, r.e.Store, r.Record, r.Task.Spec.Run.MaxErrorRate, r.sum.Unavailable)
}
