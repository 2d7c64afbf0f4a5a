package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/host"
	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/runner"
	"github.com/assay-eval/assay/internal/spec"
	"github.com/assay-eval/assay/internal/store"
	"github.com/assay-eval/assay/internal/task"
)

type runOptions struct {
	Spec    string
	Targets []string
	Limit   int
	Epochs  int
	NoCache bool
	JSON    bool
	Resume  string
	// Experiment overrides the spec's experiment name.
	Experiment string
	// CommitEvery bounds how long a finished result waits to be committed.
	CommitEvery time.Duration
	// Force takes the run's lease even from a live holder.
	Force bool
	// RetryErrors, with Resume, calls again the results that failed with
	// one of Kinds (default: the retryable provider kinds).
	RetryErrors bool
	Kinds       []string
	// Files are overlays merged over the spec (-f).
	Files []string
}

func (o *runOptions) AddFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	addOverlayFlag(cmd, &o.Files)
	f.StringSliceVar(&o.Targets, "targets", nil, "run only these targets (comma-separated names)")
	f.IntVar(&o.Limit, "limit", 0, "run only the first N cases")
	f.IntVar(&o.Epochs, "epochs", 0, "repeat every case K times (overrides run.epochs)")
	f.BoolVar(&o.NoCache, "no-cache", false, "call every target anew (every call is made and paid) and store the fresh replies in the response cache")
	f.BoolVar(&o.JSON, "json", false, "print a JSON summary (with run_id) instead of text")
	f.StringVar(&o.Experiment, "experiment", "", "the experiment this run belongs to (overrides the spec's experiment:); reports count the variants tried in it")
	f.StringVar(&o.Resume, "resume", "", "finish an interrupted run (RUN_ID, or latest: the newest run of this spec) without repeating completed calls")
	f.BoolVar(&o.Force, "force", false, "with --resume: take the run over even if another process holds its lease (only when that process is gone)")
	f.BoolVar(&o.RetryErrors, "retry-errors", false, "with --resume: call again the results that failed for a provider reason (--kinds), replacing each")
	f.StringSliceVar(&o.Kinds, "kinds", nil, "with --retry-errors: the failure kinds to retry (comma-separated; default: the retryable ones, e.g. rate_limited,timeout,server_error)")
	f.DurationVar(&o.CommitEvery, "commit-every", 100*time.Millisecond, "longest time a finished result waits before it is committed")
	_ = f.MarkHidden("commit-every")
}

func newRunCommand(g *Globals) *cobra.Command {
	o := &runOptions{}
	cmd := &cobra.Command{
		Use:   "run SPEC",
		Short: "Run the candidates on the cases and store every result",
		Long: `Run the spec's targets on its cases, storing every result as it completes.

The spec and dataset are validated first; nothing is called when they are
invalid (exit 4). The first Ctrl-C stops issuing calls and keeps what finished
(exit 130); a second exits at once. Resume with --resume RUN_ID|latest.

--resume RUN --retry-errors calls again only the results that failed for a
provider reason (by default the retryable kinds: rate_limited, overloaded,
server_error, timeout, conflict, network, malformed_response,
truncated_stream; --kinds picks others), replacing each result and its
verdicts in one transaction; its retries count goes up by one. A run that
was rescored keeps its later scorings without the retried results' verdicts:
rescore it again.

` + exitCodesHelp,
		Args: exactArgs(1),
		PreRunE: func(cmd *cobra.Command, args []string) error {
			if o.Limit < 0 {
				return usageError{fmt.Errorf("--limit must not be negative (got %d)", o.Limit)}
			}
			if o.Epochs < 0 || o.Epochs > spec.MaxEpochs {
				return usageError{fmt.Errorf("--epochs must be between 1 and %d (got %d)", spec.MaxEpochs, o.Epochs)}
			}
			if o.Resume != "" && (len(o.Targets) > 0 || o.Limit > 0 || o.Epochs > 0 || o.Experiment != "") {
				return usageError{errors.New("--resume takes the run's own targets, limit, epochs and experiment; drop --targets/--limit/--epochs/--experiment")}
			}
			if o.RetryErrors && o.Resume == "" {
				return usageError{errors.New("--retry-errors works on a stored run: give it with --resume RUN")}
			}
			if len(o.Kinds) > 0 && !o.RetryErrors {
				return usageError{errors.New("--kinds says which failures --retry-errors calls again: give --retry-errors too")}
			}
			if o.RetryErrors {
				kinds, err := retryKinds(o.Kinds)
				if err != nil {
					return err
				}
				o.Kinds = kinds
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Spec = args[0]
			return runRun(cmd.Context(), g, o)
		},
	}
	o.AddFlags(cmd)
	return cmd
}

// runSummary is what `assay run --json` prints.
type runSummary struct {
	RunID       string   `json:"run_id"`
	Status      string   `json:"status"`
	Spec        string   `json:"spec"`
	Targets     []string `json:"targets"`
	Cases       int      `json:"cases"`
	Epochs      int      `json:"epochs"`
	Total       int      `json:"total"`   // results the run should have
	Stored      int      `json:"stored"`  // results committed by this invocation
	Skipped     int      `json:"skipped"` // already present (resume)
	Errors      int      `json:"errors"`
	SpendUSD    float64  `json:"spend_usd"`
	DurationSec float64  `json:"duration_s"`

	// Judges are the spec's judge targets that the run did not call as
	// candidates: they grade the targets and are not ranked with them.
	Judges []string `json:"judges,omitempty"`
	// SavedUSD is what the replies served from the response cache would
	// have cost: never billed again, so not in SpendUSD.
	SavedUSD float64 `json:"saved_usd"`
	// Retry says what --retry-errors called again (absent without it).
	Retry *retryReport `json:"retry_errors,omitempty"`
	// Health is each target's provider error rate over every result of
	// the run; Unhealthy when one is above MaxErrorRate or a target was
	// given up (TargetUnavailable), and the exit code is then 5.
	Health            []targetHealth       `json:"health"`
	MaxErrorRate      float64              `json:"max_error_rate"`
	Unhealthy         bool                 `json:"unhealthy"`
	TargetUnavailable []runner.Unavailable `json:"target_unavailable,omitempty"`
}

func runRun(ctx context.Context, g *Globals, o *runOptions) error {
	t, err := task.LoadWith(o.Spec, specOptions(g, o.Files))
	if err != nil {
		return err
	}
	sp := t.Spec
	for _, w := range t.Dataset.Warnings {
		fmt.Fprintf(g.Stderr, "warning: %s\n", w)
	}

	st, err := openStore(ctx, g)
	if err != nil {
		return err
	}
	defer st.Close()

	var run *record.Run
	var done map[record.Key]struct{}
	var retry map[record.Key]int // --retry-errors: failed results to call again
	var rr *retryReport
	var leaseLost <-chan struct{}
	if o.Resume != "" {
		// latest is the newest run of this spec (latest.go).
		id, err := latestOf(ctx, st, o.Resume, sp.Name)
		if err != nil {
			return fmt.Errorf("resuming %s: %w", o.Resume, err)
		}
		run, err = st.GetRun(ctx, id)
		if err != nil {
			return fmt.Errorf("resuming %s: %w", o.Resume, err)
		}
		if err := resumeChanged(run, sp, t.Dataset); err != nil {
			return err
		}
		if run.Status == record.StatusComplete && !o.RetryErrors {
			fmt.Fprintf(g.Stderr, "run %s is already complete\n", run.ID)
		}
		// One writer per run: the lease is taken before the stored results
		// are read, so a second resume stops here instead of repeating
		// every call the first one is making.
		lease, err := takeLease(ctx, g, st, run.ID, o.Force)
		if err != nil {
			return fmt.Errorf("resuming %s: %w", run.ID, err)
		}
		defer lease.release()
		leaseLost = lease.lost
		done, err = st.DoneKeys(ctx, run.ID)
		if err != nil {
			return err
		}
		if o.RetryErrors {
			// The failed results are called again: they are not done.
			if retry, err = retrySet(ctx, st, run.ID, o.Kinds); err != nil {
				return err
			}
			for k := range retry {
				delete(done, k)
			}
			rr = &retryReport{Kinds: o.Kinds, Selected: len(retry)}
			if n, err := st.LatestScoring(ctx, run.ID); err == nil && n > 1 {
				rr.LaterScorings = n - 1
			}
		}
	} else {
		names, err := selectTargets(sp, o.Targets)
		if err != nil {
			return err
		}
		epochs := sp.Run.Epochs
		if o.Epochs > 0 {
			epochs = o.Epochs
		}
		cases := t.Dataset.Count
		if o.Limit > 0 && o.Limit < cases {
			cases = o.Limit
		}
		if n := int64(cases) * int64(len(names)) * int64(epochs); n > spec.MaxCalls {
			return usageError{fmt.Errorf("the run would make %d calls (%d cases × %d targets × %d epochs); at most %d are allowed: lower --epochs or --limit", n, cases, len(names), epochs, spec.MaxCalls)}
		}
		cfg, _ := json.Marshal(sp)
		experiment := sp.Experiment
		if o.Experiment != "" {
			experiment = o.Experiment
		}
		run = &record.Run{
			ID:           record.NewRunID(g.Now()),
			Spec:         sp.Name,
			SpecPath:     sp.File,
			SpecHash:     sp.Hash,
			DatasetHash:  t.Dataset.Hash,
			FileHash:     t.Dataset.FileHash,
			PromptHash:   sp.PromptHash(),
			GitCommit:    gitCommit(ctx, sp.Dir),
			ScorersHash:  sp.ScorersHash(),
			AssayVersion: Version(),
			Experiment:   experiment,
			Targets:      names,
			Cases:        cases,
			Epochs:       epochs,
			Status:       record.StatusRunning,
			Started:      g.Now().UTC(),
			Config:       cfg,
		}
	}

	// Targets, keys and providers are checked before anything is written or called.
	for _, name := range run.Targets {
		if !slices.ContainsFunc(sp.Targets, func(t spec.Target) bool { return t.Name == name }) {
			return fmt.Errorf("run %s has target %q, which the spec no longer defines", run.ID, name)
		}
	}
	var closers []io.Closer
	defer func() {
		for _, c := range closers {
			c.Close()
		}
	}()
	targets, problems, err := candidateTargets(sp, run.Targets, g, st, o.NoCache, &closers)
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
	set, err := compileScorers(sp, g, st, o.NoCache, &closers)
	if err != nil {
		return err
	}

	if o.Resume == "" {
		if err := st.CreateRun(ctx, run); err != nil {
			return err
		}
		lease, err := takeLease(ctx, g, st, run.ID, false)
		if err != nil {
			return err
		}
		defer lease.release()
		leaseLost = lease.lost
		if err := putCases(ctx, st, run, t); err != nil {
			return err
		}
	} else {
		run.Status = record.StatusRunning
		if err := st.UpdateRun(ctx, run); err != nil {
			return err
		}
		// A run killed while recording its cases has some of them; PutCases
		// is idempotent, so a resume records them all again before any new
		// result can reference a case that is not stored.
		if err := putCases(ctx, st, run, t); err != nil {
			return err
		}
	}
	if !o.JSON {
		fmt.Fprintf(g.Stderr, "run %s: %d cases × %d targets × %d epochs\n", run.ID, run.Cases, len(run.Targets), run.Epochs)
		fmt.Fprintf(g.Stderr, "candidates: %s\n", strings.Join(run.Targets, ", "))
		if js := runJudges(sp, run.Targets); len(js) > 0 {
			fmt.Fprintf(g.Stderr, "judges (grade, not ranked): %s\n", strings.Join(js, ", "))
		}
	}

	total := run.Cases * len(run.Targets) * run.Epochs
	prog := newProgress(g, total-len(done))
	// A run whose lease another process broke (--force) stops at once.
	leaseCtx, leaseCancel := context.WithCancelCause(ctx)
	defer leaseCancel(nil)
	go func() {
		select {
		case <-leaseLost:
			leaseCancel(store.ErrLeaseLost)
		case <-leaseCtx.Done():
		}
	}()
	runCtx, stop, unwatch := watchInterrupts(leaseCtx, g)
	defer unwatch()

	start := g.Now()
	// The host's load while calls are made: the report warns when it was
	// above the cores (latency then measures the machine too).
	sampler := host.Start()
	sum, runErr := runner.Run(runCtx, runner.Options{
		RunID:       run.ID,
		Targets:     targets,
		Epochs:      run.Epochs,
		Cases:       func(fn func(*dataset.Case) error) error { return eachCase(t, run.Cases, fn) },
		Render:      func(c *dataset.Case) ([]provider.Message, error) { return t.Prompt.Render(c.Vars) },
		Score:       set.Score,
		Store:       st,
		Done:        done,
		Retry:       retry,
		Stop:        stop,
		Progress:    prog.add,
		CommitEvery: o.CommitEvery,
		Now:         g.Now,
		Sequential:  sp.Run.Schedule == spec.ScheduleSequential,
	})
	prog.finish()
	seen := sampler.Stop()
	if runErr == nil && !sum.Interrupted && len(set.Pairwise()) > 0 {
		// Pairwise judges compare each candidate with the baseline's output,
		// so they run once every result of the run exists.
		// A case with a result --retry-errors replaced is judged again.
		redo := map[string]bool{}
		for k := range retry {
			redo[k.CaseID] = true
		}
		runErr = storePairs(runCtx, st, set, t.Spec, run.ID, 1, 8, redo)
	}

	if errors.Is(context.Cause(leaseCtx), store.ErrLeaseLost) {
		// The process that took the run over owns its status now.
		return fmt.Errorf("run %s: %w after %d results were stored; it finishes the run", run.ID, store.ErrLeaseLost, sum.Stored)
	}

	// The run's status is written with a context of its own: an interrupt
	// must not stop us from recording that the run was interrupted.
	wctx, wcancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer wcancel()
	// A result being retried stays stored until its new call replaces it.
	have := sum.Stored - sum.Retried + len(done) + len(retry)
	switch {
	case runErr != nil:
		run.Status = record.StatusFailed
	case sum.Interrupted || have < total:
		run.Status = record.StatusInterrupted
	default:
		run.Status = record.StatusComplete
		run.Ended = g.Now().UTC()
	}
	if prev, err := host.Decode(run.Host); err == nil {
		run.Host = prev.Merge(seen).Encode() // a resume adds to what the run saw before
	} else {
		run.Host = seen.Encode()
	}
	if err := st.UpdateRun(wctx, run); err != nil {
		runErr = errors.Join(runErr, err)
	}

	s := runSummary{
		RunID: run.ID, Status: run.Status, Spec: run.Spec, Targets: run.Targets, Judges: runJudges(sp, run.Targets),
		Cases: run.Cases, Epochs: run.Epochs, Total: total,
		Stored: sum.Stored, Skipped: sum.Skipped, Errors: sum.Errors,
		SpendUSD: sum.SpendUSD, SavedUSD: sum.SavedUSD, DurationSec: g.Now().Sub(start).Seconds(),
	}
	if rr != nil {
		rr.retryDone(sum)
		s.Retry = rr
		printRetry(g.Stderr, run.ID, rr)
	}
	s.MaxErrorRate, s.TargetUnavailable = sp.Run.MaxErrorRate, sum.Unavailable
	health, herr := runHealth(wctx, st, run, sp.Run.MaxErrorRate, sum.Unavailable)
	if herr != nil {
		runErr = errors.Join(runErr, herr)
	}
	s.Health = health
	s.Unhealthy = slices.ContainsFunc(health, func(h targetHealth) bool { return h.Unhealthy })
	if o.JSON {
		// Loud whatever the output format: a target given up is on stderr too.
		for _, u := range sum.Unavailable {
			fmt.Fprintf(g.Stderr, "target_unavailable: %s: %s\n", u.Target, u.Reason)
		}
		enc := json.NewEncoder(g.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(s); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(g.Stdout, run.ID)
		saved := ""
		if s.SavedUSD > 0 {
			saved = fmt.Sprintf(" ($%.4f saved by the response cache)", s.SavedUSD)
		}
		fmt.Fprintf(g.Stderr, "%s: %d results stored (%d errors), %d already done, $%.4f spent%s, %.1fs\n",
			run.Status, s.Stored, s.Errors, s.Skipped, s.SpendUSD, saved, s.DurationSec)
		printHealth(g.Stderr, health, sp.Run.MaxErrorRate)
	}
	if runErr == nil && run.Status == record.StatusComplete {
		// A judge that mostly failed makes its scorer's rate meaningless:
		// say so on stderr whatever the output format.
		if counts, err := judgeErrorCounts(wctx, st, sp, run.ID, 1); err == nil {
			warnJudgeErrors(g.Stderr, sp, counts, run.ID)
		}
	}
	if runErr != nil {
		return runErr
	}
	if s.Unhealthy {
		return unhealthyError(health, sp.Run.MaxErrorRate, o.Spec, run.ID)
	}
	if run.Status == record.StatusInterrupted {
		return fmt.Errorf("%w: %d of %d results stored; finish with: assay run %s --resume %s",
			ErrInterrupted, have, total, o.Spec, run.ID)
	}
	if !o.JSON {
		fmt.Fprintf(g.Stderr, "report: assay report %s\n", run.ID)
	}
	return nil
}

// watchInterrupts watches g.Interrupts until unwatch is called: the first
// interrupt closes stop (issue no new calls, keep what finishes), the
// second cancels runCtx (abort the calls in flight). unwatch also cancels
// runCtx.
func watchInterrupts(ctx context.Context, g *Globals) (runCtx context.Context, stop <-chan struct{}, unwatch func()) {
	runCtx, cancel := context.WithCancel(ctx)
	stopC, done := make(chan struct{}), make(chan struct{})
	go relayInterrupts(g, stopC, cancel, done)
	return runCtx, stopC, func() {
		close(done)
		cancel()
	}
}

// relayInterrupts closes stop on the first interrupt and cancels on the
// second.
func relayInterrupts(g *Globals, stop chan struct{}, cancel context.CancelFunc, done <-chan struct{}) {
	if g.Interrupts == nil {
		return
	}
	select {
	case <-g.Interrupts:
		fmt.Fprintln(g.Stderr, "\ninterrupt: no new calls; waiting for the ones in flight (Ctrl-C again to exit at once)")
		close(stop)
	case <-done:
		return
	}
	select {
	case <-g.Interrupts:
		fmt.Fprintln(g.Stderr, "\ninterrupt: exiting now; calls in flight are dropped and will be redone on resume")
		cancel()
	case <-done:
	}
}

// selectTargets returns the targets a run calls: the ones --targets names
// (any target of the spec, a judge too: naming it is asking for it), or
// else the spec's candidates (a target that is only a judge grades them and
// is not run, ranked or counted as one of them).
func selectTargets(sp *spec.Spec, want []string) ([]string, error) {
	var all []string
	for _, t := range sp.Targets {
		all = append(all, t.Name)
	}
	if len(want) == 0 {
		return sp.CandidateNames(), nil
	}
	var out []string
	for _, w := range want {
		w = strings.TrimSpace(w)
		if !slices.Contains(all, w) {
			return nil, usageError{fmt.Errorf("--targets: no target named %q (targets are: %s)", w, strings.Join(all, ", "))}
		}
		if !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out, nil
}

// runJudges are the spec's judge targets that are not among the run's
// targets.
func runJudges(sp *spec.Spec, targets []string) []string {
	var out []string
	for _, j := range sp.JudgeNames() {
		if !slices.Contains(targets, j) {
			out = append(out, j)
		}
	}
	return out
}

// eachCase streams the first limit cases (all when limit is 0).
func eachCase(t *task.Task, limit int, fn func(*dataset.Case) error) error {
	n := 0
	err := dataset.Each(t.Spec, func(c *dataset.Case) error {
		if limit > 0 && n >= limit {
			return errLimit
		}
		n++
		return fn(c)
	})
	if errors.Is(err, errLimit) {
		return nil
	}
	return err
}

var errLimit = errors.New("limit reached")

func putCases(ctx context.Context, st store.Store, run *record.Run, t *task.Task) error {
	batch := make([]record.Case, 0, 1000)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := st.PutCases(ctx, batch)
		batch = batch[:0]
		return err
	}
	err := eachCase(t, run.Cases, func(c *dataset.Case) error {
		exp, err := json.Marshal(c.Expected)
		if err != nil {
			return fmt.Errorf("case %s: expected value: %w", c.ID, err)
		}
		sc := record.Case{RunID: run.ID, ID: c.ID, Line: c.Line, Expected: exp, Tags: c.Tags}
		if c.HasWeight {
			w := c.Weight
			sc.Weight = &w
		}
		batch = append(batch, sc)
		if len(batch) == cap(batch) {
			return flush()
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("recording cases: %w", err)
	}
	return flush()
}

func gitCommit(ctx context.Context, dir string) string {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		return ""
	}
	commit := strings.TrimSpace(string(out))
	// Uncommitted changes beside the spec mean the commit alone does not
	// say what was measured (the content hashes still do).
	status, err := exec.CommandContext(ctx, "git", "-C", dir, "status", "--porcelain", "--", ".").Output()
	if err == nil && len(bytes.TrimSpace(status)) > 0 {
		commit += "-dirty"
	}
	return commit
}

func short(h string) string {
	h = strings.TrimPrefix(h, "sha256:")
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
