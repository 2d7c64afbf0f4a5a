package distribute

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/engine"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/spec"
	"github.com/assay-eval/assay/internal/store/postgres"
)

func quietLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// WorkerOptions configure a worker.
type WorkerOptions struct {
	// Targets, when set, are the only targets whose jobs the worker takes
	// (by name, in any run); none takes every target's.
	Targets []string
	// Concurrency is how many jobs the worker works at once per target
	// queue (default 4); each job calls its target with the target's own
	// concurrency (limits.concurrency, else 8), all calls held by the
	// shared limits.
	Concurrency int
	// RescueAfter is how long a job may be running before any worker
	// takes it for stuck (its worker killed) and makes it available again
	// (default 10 minutes). JobTimeout, below it, cancels a job's calls
	// (default three quarters of RescueAfter).
	RescueAfter, JobTimeout time.Duration
	// Poll is how often the worker looks for new jobs and new targets'
	// queues (default 500ms; new jobs are also announced).
	Poll time.Duration
	// Spec reads a run's spec file when the worker has it (Getenv for
	// ${VAR}, the providers' descriptions).
	Spec spec.Options
	// ID names this worker in the queue and as the holder of limiter
	// slots; unique among the workers (host/pid/nonce).
	ID string
	// Log receives what the worker does (runs opened, jobs failed); nil
	// discards it.
	Log io.Writer
	// Stop, when closed, stops taking jobs; the jobs being worked stop
	// issuing calls, keep what finishes and go back to the queue for
	// another worker. Cancelling Run's context drops their calls in
	// flight too.
	Stop <-chan struct{}
}

// Worker executes the jobs of distributed runs from one store.
type Worker struct {
	db     *postgres.DB
	e      *engine.Engine
	o      WorkerOptions
	lims   *Limiters
	client *river.Client[pgx.Tx]

	mu     sync.Mutex
	runs   map[runKey]*openRun
	queues map[string]bool
	Jobs   Counts
}

// Counts are what a worker did.
type Counts struct {
	mu                       sync.Mutex
	Jobs, Failed, Units      int
	Stored, Skipped, Dropped int
}

func (c *Counts) add(sum engine.Summary, failed bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.Jobs++
	if failed {
		c.Failed++
	}
	c.Stored += sum.Stored
	c.Skipped += sum.Skipped
	c.Dropped += sum.Discarded
}

// Snapshot is a copy of the counts.
func (c *Counts) Snapshot() (jobs, failed, stored, skipped int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.Jobs, c.Failed, c.Stored, c.Skipped
}

// runKey is a run opened for its jobs: with the response cache or not.
type runKey struct {
	id      string
	noCache bool
}

type openRun struct {
	once  sync.Once
	units *engine.Units
	err   error
}

// NewWorker makes a worker on db's queue (set up if needed). e is the
// engine jobs execute through: its store must be db.
func NewWorker(ctx context.Context, db *postgres.DB, e *engine.Engine, o WorkerOptions) (*Worker, error) {
	if o.Concurrency <= 0 {
		o.Concurrency = 4
	}
	if o.RescueAfter <= 0 {
		o.RescueAfter = 10 * time.Minute
	}
	if o.JobTimeout <= 0 {
		o.JobTimeout = o.RescueAfter * 3 / 4
	}
	if o.JobTimeout >= o.RescueAfter {
		return nil, fmt.Errorf("the job time-out (%s) must be below the time after which a running job is rescued (%s), or a job still working would be taken by a second worker", o.JobTimeout, o.RescueAfter)
	}
	if o.Poll <= 0 {
		o.Poll = 500 * time.Millisecond
	}
	schema, err := Setup(ctx, db.Pool())
	if err != nil {
		return nil, err
	}
	w := &Worker{db: db, e: e, o: o, lims: NewLimiters(db.Pool(), o.ID), runs: map[runKey]*openRun{}, queues: map[string]bool{}}
	workers := river.NewWorkers()
	river.AddWorker(workers, &handler{w: w})
	// River starts with at least one queue: the targets' named by
	// --targets, else a queue no job goes to; the targets' queues are
	// added as their jobs appear (discover).
	queues := map[string]river.QueueConfig{}
	for _, t := range o.Targets {
		queues[QueueOf(t)] = river.QueueConfig{MaxWorkers: o.Concurrency}
		w.queues[QueueOf(t)] = true
	}
	if len(queues) == 0 {
		queues["assay"] = river.QueueConfig{MaxWorkers: 1}
	}
	w.client, err = river.NewClient(riverpgxv5.New(db.Pool()), &river.Config{
		Schema:               schema,
		ID:                   o.ID,
		Workers:              workers,
		Queues:               queues,
		JobTimeout:           o.JobTimeout,
		RescueStuckJobsAfter: o.RescueAfter,
		FetchPollInterval:    o.Poll,
		FetchCooldown:        min(o.Poll, 100*time.Millisecond),
		Logger:               quietLogger(),
	})
	if err != nil {
		return nil, err
	}
	return w, nil
}

func (w *Worker) logf(format string, args ...any) {
	if w.o.Log != nil {
		fmt.Fprintf(w.o.Log, format+"\n", args...)
	}
}

// Run works jobs until Stop closes (then the jobs being worked finish
// their calls in flight) or ctx ends (then they are dropped; their jobs
// are rescued after RescueAfter).
func (w *Worker) Run(ctx context.Context) error {
	if err := w.client.Start(ctx); err != nil {
		return err
	}
	defer w.closeRuns()
	defer w.lims.Close()
	every := w.o.Poll
	sweep := max(250*time.Millisecond, min(30*time.Second, w.o.RescueAfter/4))
	tick, rescue := time.NewTicker(every), time.NewTicker(sweep)
	defer tick.Stop()
	defer rescue.Stop()
	if len(w.o.Targets) == 0 {
		w.discover(ctx)
	}
	for {
		select {
		case <-ctx.Done():
			sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			return w.client.StopAndCancel(sctx)
		case <-w.o.Stop:
			err := w.client.Stop(ctx)
			if ctx.Err() != nil {
				// A second interrupt while the jobs finished: drop them.
				sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				return w.client.StopAndCancel(sctx)
			}
			return err
		case <-tick.C:
			if len(w.o.Targets) == 0 {
				w.discover(ctx)
			}
		case <-rescue.C:
			if n, err := w.Rescue(ctx); err == nil && n > 0 {
				w.logf("rescued %d stuck job(s) (running longer than %s: their worker is gone)", n, w.o.RescueAfter)
			}
		}
	}
}

// discover adds the queues of targets whose jobs wait and that the worker
// does not work yet.
func (w *Worker) discover(ctx context.Context) {
	rows, err := w.db.Pool().Query(ctx, `SELECT DISTINCT queue FROM river_job WHERE kind = $1 AND state IN `+queued, JobKind)
	if err != nil {
		return
	}
	qs, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return
	}
	for _, q := range qs {
		if w.queues[q] {
			continue
		}
		if err := w.client.Queues().Add(q, river.QueueConfig{MaxWorkers: w.o.Concurrency}); err != nil {
			w.logf("working queue %s: %v", q, err)
			continue
		}
		w.queues[q] = true
	}
}

// Rescue makes the jobs running longer than RescueAfter available again
// (or discards those out of attempts), so a killed worker's jobs go to
// the others: River's own rescuer does the same, but only on its elected
// leader and every 30 seconds. It returns how many it rescued.
func (w *Worker) Rescue(ctx context.Context) (int, error) {
	tag, err := w.db.Pool().Exec(ctx, `UPDATE river_job SET
		state = CASE WHEN attempt < max_attempts THEN 'available' ELSE 'discarded' END::river_job_state,
		finalized_at = CASE WHEN attempt < max_attempts THEN NULL ELSE now() END,
		scheduled_at = now(),
		errors = array_append(errors, jsonb_build_object('at', now(), 'attempt', attempt,
			'error', 'rescued by assay worker: running longer than '||$2||' (its worker is gone)', 'trace', ''))
		WHERE kind = $1 AND state = 'running' AND attempted_at < now() - make_interval(secs => $3)`,
		JobKind, w.o.RescueAfter.String(), w.o.RescueAfter.Seconds())
	if err != nil {
		return 0, err
	}
	return int(tag.RowsAffected()), nil
}

func (w *Worker) closeRuns() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for id, r := range w.runs {
		if r.units != nil {
			r.units.Close()
		}
		delete(w.runs, id)
	}
}

// open is the run opened for its units, once per worker.
func (w *Worker) open(ctx context.Context, rec *record.Run, noCache bool) (*engine.Units, error) {
	key := runKey{rec.ID, noCache}
	w.mu.Lock()
	r, ok := w.runs[key]
	if !ok {
		r = &openRun{}
		w.runs[key] = r
	}
	w.mu.Unlock()
	r.once.Do(func() {
		e := *w.e
		e.Limiter = w.lims.For(rec.ID)
		r.units, r.err = e.OpenUnits(ctx, rec, w.o.Spec, noCache)
		if r.err == nil {
			src := "its stored spec"
			if r.units.FromFile {
				src = rec.SpecPath
			}
			w.logf("run %s: working its jobs (spec from %s)", rec.ID, src)
		}
	})
	if r.err != nil {
		// Opening again on the next job: the cause may be fixed by then.
		w.mu.Lock()
		if w.runs[key] == r {
			delete(w.runs, key)
		}
		w.mu.Unlock()
	}
	return r.units, r.err
}

// forget closes a run that is no longer running.
func (w *Worker) forget(runID string) {
	w.mu.Lock()
	var gone []*openRun
	for k, r := range w.runs {
		if k.id == runID {
			gone = append(gone, r)
			delete(w.runs, k)
		}
	}
	w.mu.Unlock()
	for _, r := range gone {
		r.once.Do(func() {})
		if r.units != nil {
			r.units.Close()
		}
	}
}

type handler struct {
	river.WorkerDefaults[UnitsArgs]
	w *Worker
}

func (h *handler) Work(ctx context.Context, job *river.Job[UnitsArgs]) error {
	w, a := h.w, job.Args
	rec, err := w.db.GetRun(ctx, a.Run)
	if err != nil {
		return fmt.Errorf("run %s: %w", a.Run, err)
	}
	if rec.Status != record.StatusRunning {
		// The submitter ended it (interrupted, failed) or the run was
		// finished another way: its units are not wanted now.
		w.forget(rec.ID)
		return river.JobCancel(fmt.Errorf("run %s is %s", rec.ID, rec.Status))
	}
	if !slices.Contains(rec.Targets, a.Target) {
		return river.JobCancel(fmt.Errorf("run %s has no target %q", rec.ID, a.Target))
	}
	cases, err := a.decodeCases()
	if err != nil {
		return river.JobCancel(err)
	}
	u, err := w.open(ctx, rec, a.NoCache)
	if err != nil {
		w.Jobs.add(engine.Summary{}, true)
		w.logf("run %s: %v", rec.ID, err)
		return err
	}
	done, err := w.stored(ctx, a, cases)
	if err != nil {
		return err
	}
	sum, err := u.Execute(ctx, a.Target, cases, done, engine.ExecuteOptions{Stop: w.o.Stop})
	if want, have := len(cases)*rec.Epochs, len(done)+sum.Stored; err == nil && !sum.Interrupted && have < want {
		// Never complete a job that is missing units: it is tried again
		// (skipping what is stored), and a run is not left short by a job
		// taken for done.
		err = fmt.Errorf("stored %d of its %d units", have, want)
	}
	w.Jobs.add(sum, err != nil)
	if err != nil {
		w.logf("run %s, target %s: job %d: %v", rec.ID, a.Target, job.ID, err)
		return err
	}
	if sum.Interrupted {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		// Stopped (the worker is stopping): the units not made go back
		// to the queue for another worker.
		return river.JobSnooze(0)
	}
	return nil
}

// stored are the job's units already in the store: a retried job (its
// worker killed) skips them, so it never calls for a stored unit.
func (w *Worker) stored(ctx context.Context, a UnitsArgs, cases []*dataset.Case) (map[record.Key]struct{}, error) {
	ids := make([][]byte, len(cases))
	for i, c := range cases {
		ids[i] = []byte(c.ID)
	}
	rows, err := w.db.Pool().Query(ctx, `SELECT case_id, epoch FROM results WHERE run_id = $1 AND target = $2 AND case_id = ANY($3)`,
		a.Run, []byte(a.Target), ids)
	if err != nil {
		return nil, fmt.Errorf("reading the stored units of run %s: %w", a.Run, err)
	}
	done := map[record.Key]struct{}{}
	for rows.Next() {
		var id []byte
		var epoch int
		if err := rows.Scan(&id, &epoch); err != nil {
			rows.Close()
			return nil, err
		}
		done[record.Key{CaseID: string(id), Target: a.Target, Epoch: epoch}] = struct{}{}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading the stored units of run %s: %w", a.Run, err)
	}
	return done, nil
}
