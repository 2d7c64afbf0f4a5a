package distribute

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/engine"
	"github.com/assay-eval/assay/internal/record"
)

// UnitsArgs is one job: every epoch of Cases on Target, in run Run.
type UnitsArgs struct {
	Run    string `json:"run"`
	Target string `json:"target"`
	// Cases are the cases as the dataset gave them (dataset.Case as JSON),
	// carried as bytes (base64 in the job's JSON) so that what the worker
	// renders is exactly what the submitter read: PostgreSQL's jsonb would
	// rewrite numbers (1e2 → 100) and refuse \u0000.
	Cases []byte `json:"cases"`
	// NoCache calls the target anew (run --no-cache).
	NoCache bool `json:"no_cache,omitempty"`
}

// Kind is the job's River kind.
func (UnitsArgs) Kind() string { return JobKind }

// MaxAttempts is how many times a job is tried (after River's growing
// backoff: 1 s, 16 s, 81 s, 256 s) before River discards it (its units
// then stay missing: the run ends interrupted and a resume enqueues them
// again). A retried job skips its units already stored.
const MaxAttempts = 5

// InsertOpts put the job in its target's queue.
func (a UnitsArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueOf(a.Target), MaxAttempts: MaxAttempts}
}

// decodeCases reads the job's cases, numbers as written (json.Number).
func (a UnitsArgs) decodeCases() ([]*dataset.Case, error) {
	d := json.NewDecoder(bytes.NewReader(a.Cases))
	d.UseNumber()
	var cs []*dataset.Case
	if err := d.Decode(&cs); err != nil {
		return nil, fmt.Errorf("job of run %s, target %s: reading its cases: %w", a.Run, a.Target, err)
	}
	return cs, nil
}

// QueueOf is the River queue of a target's jobs: its name in lower-case
// letters and digits (what River allows), and a hash of the name, so two
// targets never share a queue and `assay worker --targets` can work only
// the queues of the targets it names.
func QueueOf(target string) string {
	var slug []string
	word := strings.Builder{}
	flush := func() {
		if word.Len() > 0 {
			slug = append(slug, word.String())
			word.Reset()
		}
	}
	for _, r := range strings.ToLower(target) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			word.WriteRune(r)
		} else {
			flush()
		}
	}
	flush()
	s := strings.Join(slug, "_")
	if len(s) > 32 {
		s = strings.TrimRight(s[:32], "_")
	}
	h := sha256.Sum256([]byte(target))
	q := "assay_" + hex.EncodeToString(h[:4])
	if s != "" {
		q = "assay_" + s + "_" + hex.EncodeToString(h[:4])
	}
	return q
}

// DefaultBatch is how many units a job holds at most: small, so a killed
// worker's job repeats few calls and the jobs spread over the workers.
const DefaultBatch = 20

// Queue is a database's job queue, seen from the process that submits a
// run (an insert-only River client).
type Queue struct {
	pool   *pgxpool.Pool
	client *river.Client[pgx.Tx]
	schema string
}

// Open sets the queue up in the pool's schema (Setup) and returns it.
func Open(ctx context.Context, pool *pgxpool.Pool) (*Queue, error) {
	schema, err := Setup(ctx, pool)
	if err != nil {
		return nil, err
	}
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{Schema: schema, Logger: quietLogger()})
	if err != nil {
		return nil, err
	}
	return &Queue{pool: pool, client: client, schema: schema}, nil
}

// EnqueueOptions say how a run's units are enqueued.
type EnqueueOptions struct {
	// Batch is the most units a job holds (default DefaultBatch).
	Batch int
	// NoCache makes the workers call every target anew (run --no-cache).
	NoCache bool
}

// Enqueue enqueues the units of run that are not in done: for each case
// and target, a unit per epoch; a job holds the cases of one target with
// at most o.Batch units (every epoch of a case goes in one job). It
// returns the jobs and units enqueued.
func (q *Queue) Enqueue(ctx context.Context, run *record.Run, cases engine.Cases, done map[record.Key]struct{}, o EnqueueOptions) (jobs, units int, err error) {
	batch := o.Batch
	if batch <= 0 {
		batch = DefaultBatch
	}
	perJob := max(1, batch/max(1, run.Epochs))
	pending := make([][]*dataset.Case, len(run.Targets))
	var params []river.InsertManyParams
	insert := func() error {
		if len(params) == 0 {
			return nil
		}
		_, err := q.client.InsertManyFast(ctx, params)
		params = params[:0]
		return err
	}
	flush := func(i int) error {
		if len(pending[i]) == 0 {
			return nil
		}
		b, err := json.Marshal(pending[i])
		if err != nil {
			return err
		}
		params = append(params, river.InsertManyParams{Args: UnitsArgs{Run: run.ID, Target: run.Targets[i], Cases: b, NoCache: o.NoCache}})
		jobs++
		pending[i] = nil
		if len(params) >= 500 {
			return insert()
		}
		return nil
	}
	err = cases(func(c *dataset.Case) error {
		for i, t := range run.Targets {
			missing := 0
			for e := 1; e <= run.Epochs; e++ {
				if _, ok := done[record.Key{CaseID: c.ID, Target: t, Epoch: e}]; !ok {
					missing++
				}
			}
			if missing == 0 {
				continue
			}
			units += missing
			pending[i] = append(pending[i], c)
			if len(pending[i]) >= perJob {
				if err := flush(i); err != nil {
					return err
				}
			}
		}
		return nil
	})
	for i := range pending {
		if err == nil {
			err = flush(i)
		}
	}
	if err == nil {
		err = insert()
	}
	if err != nil {
		return jobs, units, fmt.Errorf("enqueueing run %s: %w", run.ID, err)
	}
	return jobs, units, nil
}

// queued are the states of a job not yet taken by a worker.
const queued = `('available', 'scheduled', 'retryable', 'pending')`

// Cancel cancels the run's jobs no worker has taken yet; the running
// ones finish (their calls in flight are kept). It returns how many it
// cancelled.
func (q *Queue) Cancel(ctx context.Context, runID string) (int, error) {
	tag, err := q.pool.Exec(ctx, `UPDATE river_job SET state = 'cancelled', finalized_at = now()
		WHERE kind = '`+JobKind+`' AND args->>'run' = $1 AND state IN `+queued, runID)
	if err != nil {
		return 0, fmt.Errorf("cancelling the jobs of run %s: %w", runID, err)
	}
	return int(tag.RowsAffected()), nil
}

// Progress is where a distributed run stands.
type Progress struct {
	// Queued jobs wait for a worker (Retrying of them failed and wait to
	// be tried again; LastError is one of their failures); Running ones
	// are being worked.
	Queued, Running, Retrying int
	LastError                 string
	// Stored results of the run, Errors among them, and what they cost
	// and saved.
	Stored, Errors     int
	SpendUSD, SavedUSD float64
}

// Progress reads the run's jobs and results.
func (q *Queue) Progress(ctx context.Context, runID string) (Progress, error) {
	var p Progress
	err := q.pool.QueryRow(ctx, `SELECT
		count(*) FILTER (WHERE state IN `+queued+`),
		count(*) FILTER (WHERE state = 'running'),
		count(*) FILTER (WHERE state = 'retryable'),
		coalesce(max(errors[cardinality(errors)]->>'error') FILTER (WHERE state = 'retryable'), '')
		FROM river_job WHERE kind = '`+JobKind+`' AND args->>'run' = $1`, runID).Scan(&p.Queued, &p.Running, &p.Retrying, &p.LastError)
	if err == nil {
		err = q.pool.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE error_kind <> ''::bytea),
			coalesce(sum(cost_usd), 0), coalesce(sum(saved_usd), 0) FROM results WHERE run_id = $1`, runID).
			Scan(&p.Stored, &p.Errors, &p.SpendUSD, &p.SavedUSD)
	}
	if err != nil {
		return p, fmt.Errorf("reading the progress of run %s: %w", runID, err)
	}
	return p, nil
}

// WaitOptions say how Wait watches a run's jobs.
type WaitOptions struct {
	// Every is how often progress is read (default 500ms).
	Every time.Duration
	// Stop, when closed, cancels the jobs not taken yet (Cancel); Wait
	// then waits for the running ones.
	Stop <-chan struct{}
	// Tick is told each progress read.
	Tick func(Progress)
	// Cancelled is told how many jobs Stop cancelled.
	Cancelled func(int)
}

// Wait returns once no job of the run is queued or running (the last
// progress read), or when ctx ends.
func (q *Queue) Wait(ctx context.Context, runID string, o WaitOptions) (Progress, error) {
	every := o.Every
	if every <= 0 {
		every = 500 * time.Millisecond
	}
	stop := o.Stop
	tick := time.NewTicker(every)
	defer tick.Stop()
	var last Progress
	for {
		p, err := q.Progress(ctx, runID)
		if err != nil {
			return last, err
		}
		last = p
		if o.Tick != nil {
			o.Tick(p)
		}
		if p.Queued == 0 && p.Running == 0 {
			return p, nil
		}
		select {
		case <-ctx.Done():
			return p, ctx.Err()
		case <-stop:
			stop = nil
			n, err := q.Cancel(context.WithoutCancel(ctx), runID)
			if err != nil {
				return p, err
			}
			if o.Cancelled != nil {
				o.Cancelled(n)
			}
		case <-tick.C:
		}
	}
}
