package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/assay-eval/assay/internal/distribute"
	"github.com/assay-eval/assay/internal/engine"
	"github.com/assay-eval/assay/internal/store"
	"github.com/assay-eval/assay/internal/store/postgres"
)

// requirePostgres refuses, before any store is opened or created, a
// distributed run or a worker on an SQLite store: the workers on other
// machines take the jobs from the same PostgreSQL database.
func requirePostgres(g *Globals, what, instead string) error {
	if postgres.IsURL(g.DB) {
		return nil
	}
	if err := checkStoreRef(g.DB); err != nil {
		return err
	}
	return usageError{fmt.Errorf("%s needs the PostgreSQL store, which workers on other machines share (--db postgres://USER@HOST/DB or ASSAY_DB); %s is an SQLite file: %s, or copy it there with assay store copy", what, storeName(g.DB), instead)}
}

// lockedStderr is g with a stderr that goroutines may share: the
// submitter's progress, a worker's jobs and the interrupt watcher each
// write to it.
func lockedStderr(g *Globals) *Globals {
	c := *g
	c.Stderr = &lockedWriter{w: g.Stderr}
	return &c
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// distributedStore is the PostgreSQL store requirePostgres let through.
func distributedStore(st store.Store, g *Globals, what string) (*postgres.DB, error) {
	db, ok := st.(*postgres.DB)
	if !ok {
		return nil, fmt.Errorf("%s: the store at %s is not PostgreSQL", what, storeName(g.DB))
	}
	return db, nil
}

// runDistributed enqueues the run's missing units as jobs for `assay
// worker` and waits until they drain, showing the progress; the first
// interrupt (stop) cancels the jobs no worker has taken and waits for the
// running ones, the second (ctx) stops waiting.
func runDistributed(ctx context.Context, g *Globals, db *postgres.DB, run *engine.Run, batch int, noCache bool, stop <-chan struct{}, prog *progress) (engine.Summary, error) {
	return run.ExecuteElsewhere(ctx, func(ctx context.Context) (engine.Summary, error) {
		q, err := distribute.Open(ctx, db.Pool())
		if err != nil {
			return engine.Summary{}, err
		}
		before, err := q.Progress(ctx, run.Record.ID)
		if err != nil {
			return engine.Summary{}, err
		}
		// Jobs a killed submitter left queued are replaced by the missing
		// units enqueued now.
		if _, err := q.Cancel(ctx, run.Record.ID); err != nil {
			return engine.Summary{}, err
		}
		jobs, units, err := q.Enqueue(ctx, run.Record, run.Cases(), run.Done, distribute.EnqueueOptions{Batch: batch, NoCache: noCache})
		if err != nil {
			return engine.Summary{}, err
		}
		fmt.Fprintf(g.Stderr, "enqueued %d units in %d jobs for assay worker --db %s\n", units, jobs, storeName(g.DB))
		var sum engine.Summary
		last, started, waiting, failing := time.Time{}, g.Now(), true, ""

		p, err := q.Wait(ctx, run.Record.ID, distribute.WaitOptions{
			Stop: stop,
			Tick: func(p distribute.Progress) {
				prog.set(p.Stored-before.Stored, p.Errors-before.Errors, p.SpendUSD-before.SpendUSD)
				now := g.Now()
				if waiting && p.Running == 0 && p.Stored == before.Stored && now.Sub(started) > 10*time.Second {
					fmt.Fprintf(g.Stderr, "no worker has taken a job yet: start one with  assay worker --db %s\n", storeName(g.DB))
					waiting = false
				}
				if p.Running > 0 {
					waiting = false
				}
				if p.Retrying > 0 && p.LastError != failing {
					// What a worker said is the worker's text: shown as data.
					failing = p.LastError
					fmt.Fprintf(g.Stderr, "%d jobs failed and wait to be tried again (up to %d times); a worker said: %s\n", p.Retrying, distribute.MaxAttempts, termSafe(p.LastError))
				}
				if prog.bar == nil && now.Sub(last) >= 10*time.Second {
					last = now
					fmt.Fprintf(g.Stderr, "run %s: %d of %d results stored; jobs: %d running, %d queued\n",
						run.Record.ID, p.Stored, run.Total(), p.Running, p.Queued)
				}
			},
			Cancelled: func(n int) {
				fmt.Fprintf(g.Stderr, "cancelled %d queued jobs; waiting for the jobs workers are running (Ctrl-C again to stop waiting)\n", n)
				sum.Interrupted = true
			},
		})
		prog.finish()
		sum.Stored, sum.Errors = p.Stored-before.Stored, p.Errors-before.Errors
		sum.SpendUSD, sum.SavedUSD = p.SpendUSD-before.SpendUSD, p.SavedUSD-before.SavedUSD
		sum.Skipped = len(run.Done) // stored before this invocation, as a local resume counts them
		if err != nil && ctx.Err() != nil && !errors.Is(context.Cause(ctx), store.ErrLeaseLost) {
			// The second interrupt: what the workers stored is the run's;
			// Finish marks it interrupted.
			sum.Interrupted, err = true, nil
		}
		return sum, err
	})
}

// set shows done results (errors among them, what they cost) of a run
// whose results other processes store.
func (p *progress) set(done, errs int, spend float64) {
	p.errors, p.spend = errs, spend
	if p.bar == nil {
		return
	}
	p.bar.Describe(fmt.Sprintf("errors %d · $%.4f", p.errors, p.spend))
	_ = p.bar.Set(done)
}
