package distribute

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/spec"
)

// Limiters are the limits of the targets of runs, shared by every process
// that takes them from the same database: a target's limits.concurrency,
// rpm and tpm then hold for all the workers of a run together, as they
// hold for one process's calls in a local run (provider.WithLimits).
//
// RPM and TPM are token buckets in the GCRA form: one row per run ×
// target × kind holds the time at which the bucket is next empty (tat),
// on the database's clock, and a call reserves its tokens by moving tat
// in one atomic statement, then sleeps until its reservation is due. As
// in the local limiter, RPM has a burst of one (calls are spaced evenly:
// never more than one in any 60/RPM seconds) and TPM a burst of one
// second's worth; a request larger than the burst waits as long as its
// size demands. Usage above the estimate is charged after the call.
//
// Concurrency is slot rows (limits.concurrency per run × target): a call
// claims a free one in one statement (SKIP LOCKED) and frees it after;
// a process renews the slots it holds every few seconds, so the slots of
// a killed worker are free again after SlotTTL.
type Limiters struct {
	pool   *pgxpool.Pool
	holder string

	mu              sync.Mutex
	started, closed bool
	done            chan struct{}
	exited          chan struct{}
}

// SlotTTL is how long a concurrency slot stays held without its holder
// renewing it (every SlotTTL/5).
const SlotTTL = 15 * time.Second

// NewLimiters makes the limiters of this process, which holds slots as
// holder (unique among the processes sharing the database).
func NewLimiters(pool *pgxpool.Pool, holder string) *Limiters {
	return &Limiters{pool: pool, holder: holder, done: make(chan struct{}), exited: make(chan struct{})}
}

// For is the engine's Limiter for run runID: each target with a limit
// gets its shared limiter; a target without one gets nil.
func (ls *Limiters) For(runID string) func(t *spec.Target) provider.SharedLimiter {
	return func(t *spec.Target) provider.SharedLimiter {
		l := t.Limits
		if l.Concurrency <= 0 && l.RPM <= 0 && l.TPM <= 0 {
			return nil
		}
		if l.Concurrency > 0 {
			ls.startRenewing()
		}
		w := &limiter{ls: ls, run: runID, target: []byte(t.Name), l: provider.Limits(l)}
		if l.Concurrency > 0 {
			// No more of this process's calls wait for a slot in the
			// database than there are slots: the others wait here,
			// without polling it.
			w.local = make(chan struct{}, l.Concurrency)
		}
		return w
	}
}

// Close stops renewing and frees every slot this process holds.
func (ls *Limiters) Close() {
	ls.mu.Lock()
	started, closed := ls.started, ls.closed
	ls.closed = true
	ls.mu.Unlock()
	if !started || closed {
		return
	}
	close(ls.done)
	<-ls.exited
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, _ = ls.pool.Exec(ctx, `UPDATE assay_limit_slots SET holder = NULL, expires = NULL WHERE holder = $1`, ls.holder)
}

func (ls *Limiters) startRenewing() {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.started || ls.closed {
		return
	}
	ls.started = true
	go func() {
		defer close(ls.exited)
		tick := time.NewTicker(SlotTTL / 5)
		defer tick.Stop()
		for {
			select {
			case <-ls.done:
				return
			case <-tick.C:
				ctx, cancel := context.WithTimeout(context.Background(), SlotTTL/5)
				_, _ = ls.pool.Exec(ctx, `UPDATE assay_limit_slots SET expires = extract(epoch FROM clock_timestamp()) + $2 WHERE holder = $1`,
					ls.holder, SlotTTL.Seconds())
				cancel()
			}
		}
	}()
}

type limiter struct {
	ls     *Limiters
	run    string
	target []byte
	l      provider.Limits
	local  chan struct{}

	slotsOnce sync.Once
	slotsErr  error
}

func (w *limiter) Estimates() bool { return w.l.TPM > 0 }

func (w *limiter) Acquire(ctx context.Context, tokens int) (func(int), error) {
	slot := -1
	if w.l.Concurrency > 0 {
		select {
		case w.local <- struct{}{}:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		var err error
		if slot, err = w.claim(ctx); err != nil {
			<-w.local
			return nil, err
		}
	}
	release := func(used int) {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if w.l.TPM > 0 && used > tokens {
			_, _ = w.reserve(rctx, "tpm", 60/float64(w.l.TPM), used-tokens, 0)
		}
		if slot >= 0 {
			_, _ = w.ls.pool.Exec(rctx, `UPDATE assay_limit_slots SET holder = NULL, expires = NULL
				WHERE run_id = $1 AND target = $2 AND slot = $3 AND holder = $4`, w.run, w.target, slot, w.ls.holder)
			<-w.local
		}
	}
	if w.l.RPM > 0 {
		if err := w.wait(ctx, "rpm", 60/float64(w.l.RPM), 1, 1); err != nil {
			release(0)
			return nil, err
		}
	}
	if w.l.TPM > 0 && tokens > 0 {
		if err := w.wait(ctx, "tpm", 60/float64(w.l.TPM), tokens, max(1, w.l.TPM/60)); err != nil {
			release(0)
			return nil, err
		}
	}
	return release, nil
}

// wait reserves n tokens of the bucket (each worth per seconds, burst
// burst) and sleeps until the reservation is due.
func (w *limiter) wait(ctx context.Context, kind string, per float64, n, burst int) error {
	delay, err := w.reserve(ctx, kind, per, n, burst)
	if err != nil {
		return err
	}
	if delay <= 0 {
		return nil
	}
	t := time.NewTimer(delay)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// reserve moves the bucket's tat by n·per seconds from max(tat, now) in one
// statement and returns how long the caller waits: until n·per − burst·per
// seconds before the new tat.
func (w *limiter) reserve(ctx context.Context, kind string, per float64, n, burst int) (time.Duration, error) {
	var secs float64
	err := w.ls.pool.QueryRow(ctx, `
WITH now AS (SELECT extract(epoch FROM clock_timestamp())::float8 AS t)
INSERT INTO assay_limit_buckets AS b (run_id, target, kind, tat)
SELECT $1, $2, $3, now.t + $4::float8 FROM now
ON CONFLICT (run_id, target, kind) DO UPDATE SET tat = greatest(b.tat, (SELECT t FROM now)) + $4::float8
RETURNING tat - $5::float8 - (SELECT t FROM now)`,
		w.run, w.target, kind, per*float64(n), per*float64(burst)).Scan(&secs)
	if err != nil {
		return 0, fmt.Errorf("shared %s limit of target %s: %w", kind, w.target, err)
	}
	return time.Duration(secs * float64(time.Second)), nil
}

// claim takes a free concurrency slot, polling until one frees or ctx
// ends.
func (w *limiter) claim(ctx context.Context) (int, error) {
	w.slotsOnce.Do(func() {
		_, w.slotsErr = w.ls.pool.Exec(ctx, `INSERT INTO assay_limit_slots (run_id, target, slot)
			SELECT $1, $2, s FROM generate_series(0, $3 - 1) AS s ON CONFLICT DO NOTHING`, w.run, w.target, w.l.Concurrency)
	})
	if w.slotsErr != nil {
		return -1, fmt.Errorf("shared concurrency limit of target %s: %w", w.target, w.slotsErr)
	}
	pause := 2 * time.Millisecond
	for {
		var slot int
		err := w.ls.pool.QueryRow(ctx, `
UPDATE assay_limit_slots SET holder = $3, expires = extract(epoch FROM clock_timestamp()) + $4
WHERE (run_id, target, slot) = (
	SELECT run_id, target, slot FROM assay_limit_slots
	WHERE run_id = $1 AND target = $2 AND slot < $5
	  AND (holder IS NULL OR expires < extract(epoch FROM clock_timestamp()))
	LIMIT 1 FOR UPDATE SKIP LOCKED)
RETURNING slot`, w.run, w.target, w.ls.holder, SlotTTL.Seconds(), w.l.Concurrency).Scan(&slot)
		if err == nil {
			return slot, nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return -1, fmt.Errorf("shared concurrency limit of target %s: %w", w.target, err)
		}
		t := time.NewTimer(pause)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return -1, ctx.Err()
		}
		pause = min(2*pause, 50*time.Millisecond)
	}
}
