package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/assay-eval/assay/internal/distribute"
)

type workerOptions struct {
	Targets     []string
	Concurrency int
	RescueAfter time.Duration
	JobTimeout  time.Duration
	Poll        time.Duration
}

func (o *workerOptions) AddFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringSliceVar(&o.Targets, "targets", nil, "take only the jobs of these targets (comma-separated names, of any run); default: every target's")
	f.IntVar(&o.Concurrency, "concurrency", 4, "jobs worked at once per target (each job calls its target with the target's own limits.concurrency)")
	f.DurationVar(&o.RescueAfter, "rescue-after", 10*time.Minute, "a job running longer than this is taken for stuck (its worker killed) and given to another worker")
	f.DurationVar(&o.JobTimeout, "job-timeout", 0, "a job's calls are cancelled after this (below --rescue-after; default three quarters of it)")
	f.DurationVar(&o.Poll, "poll", 500*time.Millisecond, "how often to look for new jobs")
	_ = f.MarkHidden("poll")
}

func newWorkerCommand(g *Globals) *cobra.Command {
	o := &workerOptions{}
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Make the calls of distributed runs (assay run --distributed) from a PostgreSQL store",
		Long: `Take jobs of distributed runs from the PostgreSQL store (--db postgres://… or
ASSAY_DB) and make their calls: assay run SPEC --distributed records a run and
enqueues its calls (a job holds a few cases of one target, every epoch);
any number of workers, on any machines, work them through the same code as a
local run and store every result once. Start as many as you like, before or
after the run is submitted; they wait for work until stopped.

A worker reads a run's spec from the spec file the run names when it has it
unchanged, else from the resolved spec the run stored. Files the spec names
by path (an exec program, a replay file, a file:// schema or rubric, a tool
handler) must be at the same paths on the worker, and the targets' API keys
in its environment. A target that sends headers needs the spec file.

The targets' limits (limits.concurrency, rpm, tpm) hold for all the workers
of a run together: they are kept in the database.

A worker killed (or its machine lost) leaves its jobs running: after
--rescue-after any worker gives them to another, which skips the results
already stored. The first Ctrl-C stops taking jobs, lets the calls in flight
finish and hands the rest of its jobs back; a second drops the calls in
flight (their jobs are rescued later). See docs/distributed.md.

` + exitCodesHelp,
		Args: exactArgs(0),
		PreRunE: func(cmd *cobra.Command, args []string) error {
			if o.Concurrency < 1 {
				return usageError{fmt.Errorf("--concurrency must be at least 1 (got %d)", o.Concurrency)}
			}
			if o.RescueAfter <= 0 {
				return usageError{fmt.Errorf("--rescue-after must be positive (got %s)", o.RescueAfter)}
			}
			if o.JobTimeout < 0 || (o.JobTimeout > 0 && o.JobTimeout >= o.RescueAfter) {
				return usageError{fmt.Errorf("--job-timeout (%s) must be positive and below --rescue-after (%s): a job still working would otherwise be given to a second worker", o.JobTimeout, o.RescueAfter)}
			}
			if o.Poll < 10*time.Millisecond {
				return usageError{fmt.Errorf("--poll must be at least 10ms (got %s)", o.Poll)}
			}
			for i, t := range o.Targets {
				o.Targets[i] = strings.TrimSpace(t)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runWorker(cmd.Context(), g, o)
		},
	}
	o.AddFlags(cmd)
	return cmd
}

func runWorker(ctx context.Context, g *Globals, o *workerOptions) error {
	if err := requirePostgres(g, "assay worker", "a local run (without --distributed) needs no worker"); err != nil {
		return err
	}
	g = lockedStderr(g)
	st, err := openStore(ctx, g)
	if err != nil {
		return err
	}
	defer st.Close()
	db, err := distributedStore(st, g, "assay worker")
	if err != nil {
		return err
	}
	host, _ := os.Hostname()
	var nonce [4]byte
	_, _ = rand.Read(nonce[:])
	id := fmt.Sprintf("%s/%d/%s", host, os.Getpid(), hex.EncodeToString(nonce[:]))
	runCtx, stop, unwatch := watchInterruptsSaying(ctx, g,
		"interrupt: taking no more jobs; the calls in flight finish and the rest of each job goes back to the queue (Ctrl-C again to exit at once)",
		"interrupt: exiting now; the jobs being worked are given to another worker after --rescue-after")
	defer unwatch()
	w, err := distribute.NewWorker(ctx, db, newEngine(g, st), distribute.WorkerOptions{
		Targets: o.Targets, Concurrency: o.Concurrency, RescueAfter: o.RescueAfter, JobTimeout: o.JobTimeout,
		Poll: o.Poll, Spec: specOptions(g, nil), ID: id, Log: g.Stderr, Stop: stop,
	})
	if err != nil {
		return err
	}
	targets := "every target"
	if len(o.Targets) > 0 {
		targets = "targets " + strings.Join(o.Targets, ", ")
	}
	fmt.Fprintf(g.Stderr, "assay worker %s: taking jobs of %s from %s\n", id, targets, storeName(g.DB))
	err = w.Run(runCtx)
	jobs, failed, stored, skipped := w.Jobs.Snapshot()
	fmt.Fprintf(g.Stderr, "assay worker %s: %d jobs (%d failed), %d results stored, %d already stored\n", id, jobs, failed, stored, skipped)
	return err
}
