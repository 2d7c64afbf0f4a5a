package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/assay-eval/assay/internal/distribute"
	"github.com/assay-eval/assay/internal/engine"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/spec"
	"github.com/assay-eval/assay/internal/store"
	"github.com/assay-eval/assay/internal/store/postgres"
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
	// Distributed enqueues the units for assay worker (PostgreSQL store),
	// Batch units a job at most.
	Distributed bool
	Batch       int
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
	f.BoolVar(&o.Distributed, "distributed", false, "enqueue the calls as jobs that assay worker processes run, on any machine, and wait for them (PostgreSQL store only; see docs/distributed.md)")
	f.IntVar(&o.Batch, "batch", distribute.DefaultBatch, "with --distributed: units (case × target × epoch) a job holds at most")
	_ = f.MarkHidden("batch")
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

--distributed (PostgreSQL store only) records the run and its cases, enqueues
its calls as jobs and waits while assay worker processes, on any machines,
make them; the targets' limits hold across all the workers together. The
first Ctrl-C cancels the jobs no worker has taken; --resume RUN --distributed
enqueues the calls still missing. See docs/distributed.md.

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
			if o.Distributed && o.RetryErrors {
				return usageError{errors.New("--retry-errors runs in this process: drop --distributed")}
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
	Health            []engine.TargetHealth `json:"health"`
	MaxErrorRate      float64               `json:"max_error_rate"`
	Unhealthy         bool                  `json:"unhealthy"`
	TargetUnavailable []engine.Unavailable  `json:"target_unavailable,omitempty"`
}

// newEngine is the engine behind the commands: g's store, providers,
// environment, clock and stderr (for notices), and this build's version.
func newEngine(g *Globals, st store.Store) *engine.Engine {
	return &engine.Engine{Store: st, Providers: g.providers(), Getenv: g.Getenv, Now: g.Now, Log: g.Stderr, Version: Version()}
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

	if o.Distributed {
		if err := requirePostgres(g, "--distributed", "run without --distributed"); err != nil {
			return err
		}
		g = lockedStderr(g)
	}
	st, err := openStore(ctx, g)
	if err != nil {
		return err
	}
	defer st.Close()
	e := newEngine(g, st)
	var db *postgres.DB
	if o.Distributed {
		if db, err = distributedStore(st, g, "--distributed"); err != nil {
			return err
		}
	}

	var run *engine.Run
	if o.Resume != "" {
		// latest is the newest run of this spec (latest.go).
		id, err := latestOf(ctx, st, o.Resume, sp.Name)
		if err != nil {
			return fmt.Errorf("resuming %s: %w", o.Resume, err)
		}
		ro := engine.ResumeOptions{Force: o.Force, NoCache: o.NoCache, CommitEvery: o.CommitEvery}
		if o.RetryErrors {
			ro.RetryKinds = o.Kinds
		}
		if run, err = e.Resume(ctx, t, id, ro); err != nil {
			return err
		}
	} else {
		names, err := selectTargets(sp, o.Targets)
		if err != nil {
			return err
		}
		experiment := sp.Experiment
		if o.Experiment != "" {
			experiment = o.Experiment
		}
		run, err = e.Start(ctx, t, engine.StartOptions{Targets: names, Limit: o.Limit, Epochs: o.Epochs,
			Experiment: experiment, NoCache: o.NoCache, CommitEvery: o.CommitEvery})
		var tooMany *engine.TooManyCallsError
		if errors.As(err, &tooMany) {
			return usageError{err}
		}
		if err != nil {
			return err
		}
	}
	defer run.Close()
	rec := run.Record
	if !o.JSON {
		fmt.Fprintf(g.Stderr, "run %s: %d cases × %d targets × %d epochs\n", rec.ID, rec.Cases, len(rec.Targets), rec.Epochs)
		fmt.Fprintf(g.Stderr, "candidates: %s\n", strings.Join(rec.Targets, ", "))
		if js := runJudges(sp, rec.Targets); len(js) > 0 {
			fmt.Fprintf(g.Stderr, "judges (grade, not ranked): %s\n", strings.Join(js, ", "))
		}
	}

	total := run.Total()
	prog := newProgress(g, total-len(run.Done))
	runCtx, stop, unwatch := watchInterrupts(ctx, g)
	defer unwatch()
	start := g.Now()
	var sum engine.Summary
	if db != nil {
		sum, _ = runDistributed(runCtx, g, db, run, o.Batch, o.NoCache, stop, prog)
	} else {
		sum, _ = run.Execute(runCtx, engine.ExecuteOptions{Stop: stop, Progress: prog.add, CallsDone: prog.finish})
	}
	out, runErr := run.Finish(ctx)
	if errors.Is(runErr, store.ErrLeaseLost) {
		// The process that took the run over owns its status now.
		return runErr
	}

	s := runSummary{
		RunID: rec.ID, Status: rec.Status, Spec: rec.Spec, Targets: rec.Targets, Judges: runJudges(sp, rec.Targets),
		Cases: rec.Cases, Epochs: rec.Epochs, Total: total,
		Stored: sum.Stored, Skipped: sum.Skipped, Errors: sum.Errors,
		SpendUSD: sum.SpendUSD, SavedUSD: sum.SavedUSD, DurationSec: g.Now().Sub(start).Seconds(),
	}
	if rr := run.Retrying; rr != nil {
		s.Retry = &retryReport{Kinds: rr.Kinds, Selected: rr.Selected, Retried: rr.Retried, FailedAgain: rr.FailedAgain, LaterScorings: rr.LaterScorings}
		printRetry(g.Stderr, rec.ID, s.Retry)
	}
	// Reads after the run use a context of their own: an interrupt must
	// not stop us from saying what the run holds.
	wctx, wcancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer wcancel()
	s.MaxErrorRate, s.TargetUnavailable = sp.Run.MaxErrorRate, sum.Unavailable
	health, herr := run.Health(wctx)
	if herr != nil {
		runErr = errors.Join(runErr, herr)
	}
	s.Health = health
	s.Unhealthy = engine.Unhealthy(health)
	if o.JSON {
		// Loud whatever the output format: a target given up is on stderr too.
		for _, u := range sum.Unavailable {
			fmt.Fprintf(g.Stderr, "target_unavailable: %s: %s\n", u.Target, u.Reason)
		}
		if err := writeJSONOut(g.Stdout, s); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(g.Stdout, rec.ID)
		saved := ""
		if s.SavedUSD > 0 {
			saved = fmt.Sprintf(" ($%.4f saved by the response cache)", s.SavedUSD)
		}
		fmt.Fprintf(g.Stderr, "%s: %d results stored (%d errors), %d already done, $%.4f spent%s, %.1fs\n",
			rec.Status, s.Stored, s.Errors, s.Skipped, s.SpendUSD, saved, s.DurationSec)
		printHealth(g.Stderr, health, sp.Run.MaxErrorRate)
	}
	if runErr == nil && rec.Status == record.StatusComplete {
		// A judge that mostly failed makes its scorer's rate meaningless:
		// say so on stderr whatever the output format.
		if counts, err := judgeErrorCounts(wctx, st, sp, rec.ID, 1); err == nil {
			warnJudgeErrors(g.Stderr, sp, counts, rec.ID)
		}
	}
	if runErr != nil {
		return runErr
	}
	if s.Unhealthy {
		return unhealthyError(health, sp.Run.MaxErrorRate, o.Spec, rec.ID)
	}
	if rec.Status == record.StatusInterrupted {
		how := ""
		if o.Distributed {
			how = " --distributed"
		}
		return fmt.Errorf("%w: %d of %d results stored; finish with: assay run %s --resume %s%s",
			ErrInterrupted, out.Have, out.Total, o.Spec, rec.ID, how)
	}
	if !o.JSON {
		fmt.Fprintf(g.Stderr, "report: assay report %s\n", rec.ID)
	}
	return nil
}

// watchInterrupts watches g.Interrupts until unwatch is called: the first
// interrupt closes stop (issue no new calls, keep what finishes), the
// second cancels runCtx (abort the calls in flight). unwatch also cancels
// runCtx.
func watchInterrupts(ctx context.Context, g *Globals) (runCtx context.Context, stop <-chan struct{}, unwatch func()) {
	return watchInterruptsSaying(ctx, g,
		"interrupt: no new calls; waiting for the ones in flight (Ctrl-C again to exit at once)",
		"interrupt: exiting now; calls in flight are dropped and will be redone on resume")
}

// watchInterruptsSaying is watchInterrupts saying first on stderr as it
// closes stop and second (unless "") as it cancels runCtx.
func watchInterruptsSaying(ctx context.Context, g *Globals, first, second string) (runCtx context.Context, stop <-chan struct{}, unwatch func()) {
	runCtx, cancel := context.WithCancel(ctx)
	stopC, done := make(chan struct{}), make(chan struct{})
	go relayInterrupts(g, first, second, stopC, cancel, done)
	return runCtx, stopC, func() {
		close(done)
		cancel()
	}
}

// cancelOnInterrupt is ctx cancelled by the first interrupt, which says
// msg on stderr (unless ""), or by cancel.
func cancelOnInterrupt(ctx context.Context, g *Globals, msg string) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-ctx.Done():
		case <-g.Interrupts:
			if msg != "" {
				fmt.Fprintln(g.Stderr, "\n"+msg)
			}
			cancel()
		}
	}()
	return ctx, cancel
}

// relayInterrupts closes stop on the first interrupt and cancels on the
// second, saying first and second.
func relayInterrupts(g *Globals, first, second string, stop chan struct{}, cancel context.CancelFunc, done <-chan struct{}) {
	if g.Interrupts == nil {
		return
	}
	select {
	case <-g.Interrupts:
		fmt.Fprintln(g.Stderr, "\n"+first)
		close(stop)
	case <-done:
		return
	}
	select {
	case <-g.Interrupts:
		if second != "" {
			fmt.Fprintln(g.Stderr, "\n"+second)
		}
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
