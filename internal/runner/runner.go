// Package runner owns the fan-out of a run: cases × targets × epochs, each
// target with its own workers (all targets at once, or one after another
// with run.schedule sequential), every call through the target's wrapped
// provider, every result scored and handed to a single writer that commits
// to the store in small batches (so a result is durable a fraction of a
// second after it completes). It skips the keys a resumed run already has
// (and, for `run --retry-errors`, calls the failed ones again, replacing
// each stored result atomically),
// stops issuing work on the first interrupt and keeps what finished. With
// an agent (spec agent:, agent.go) each unit is a tool-calling loop whose
// calls are answered by toolrun handlers, its whole trajectory stored with
// the result once the conversation ends. A
// target whose provider reports it unavailable (provider.WithBreaker
// tripped: consecutive auth failures, unknown host, refused connection)
// stops early: its remaining calls are not made and not stored, so a
// resume makes them, and the summary names the target and why.
//
// Pool and Writer are the one worker pool and the one batched writer: the
// run's per-target workers and its results go through them, and the engine
// reuses them for the pairwise judges, a rescore's scoring and a probe's
// rewrites.
//
// The runner knows the provider and record interfaces, not their
// implementations, and never renders reports; the run's lifecycle around
// it (record, lease, status) is the engine's.
package runner

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/spec"
)

// Target is one target with its fully wrapped provider.
type Target struct {
	Spec     *spec.Target
	Provider provider.Provider
	// Workers is the number of calls in flight (default Spec.Limits.Concurrency, else 8).
	Workers int
}

// Options configure a run. RunID, Targets, Cases, Render, Score and Store
// are required.
type Options struct {
	RunID   string
	Targets []Target
	Epochs  int
	// Cases streams the dataset; it is called once per target.
	Cases func(fn func(*dataset.Case) error) error
	// Render turns a case into the chat messages.
	Render func(*dataset.Case) ([]provider.Message, error)
	// Offer is what every request carries besides its messages: the
	// tools, the tool choice and the reply's schema (OfferOf).
	Offer Offer
	// Agent, when set, makes each unit a tool-calling loop (agent.go);
	// nil makes one call per unit.
	Agent *Agent
	// Score parses and scores a result (filling Parsed and ParseError) and
	// returns one score per scorer.
	Score func(ctx context.Context, c *dataset.Case, r *record.Result) []record.Score
	Store record.Writer
	// Done holds the keys already stored (a resumed run); they are skipped.
	Done map[record.Key]struct{}
	// Retry, when not nil, holds stored results to call again (`run
	// --resume RUN --retry-errors`: results that failed loudly for a
	// provider reason), each with the stored result's Retries. Such a key
	// must not be in Done. Every result of the run is then committed with
	// Store.ReplaceResults: a retried result replaces the stored one (with
	// Retries one more), atomically with its scoring-1 scores, and the old
	// result stays until the new one is written; keys in neither map are
	// called as a resume calls them.
	Retry map[record.Key]int
	// Stop, when closed, stops issuing new calls; calls in flight finish and
	// are kept. Cancelling ctx aborts calls in flight (they are not stored).
	Stop <-chan struct{}
	// Progress receives every stored result; may be nil.
	Progress func(r *record.Result)
	// CommitEvery and CommitBatch bound how long a finished result waits
	// before it is committed (defaults 100ms and 256).
	CommitEvery time.Duration
	CommitBatch int
	Now         func() time.Time
	// Sequential runs the targets one after another (run.schedule
	// sequential): each target's calls, with its own concurrency, all
	// finish before the next target's start, so no two targets' calls are
	// ever in flight at once and a local target's latency is not measured
	// on a machine the others keep busy. False runs every target at once.
	Sequential bool
}

// Summary counts what a run did.
type Summary struct {
	Stored      int     // results committed during this invocation
	Errors      int     // of them, with an error kind
	Skipped     int     // keys already done (resume)
	Discarded   int     // calls aborted by cancellation, not stored
	SpendUSD    float64 // cost of calls actually paid (cache hits cost 0)
	SavedUSD    float64 // what the cache hits would have cost
	Interrupted bool    // Stop was closed or ctx cancelled before every unit was called
	// Retried counts the stored results that replaced a failed one
	// (Options.Retry); RetriedErrors those of them that failed again.
	Retried       int
	RetriedErrors int
	// Unavailable holds the targets that stopped early because their
	// provider reported them unavailable (provider.UnavailableError), each
	// with the reason, in the order they stopped. Their calls not made are
	// not stored.
	Unavailable []Unavailable
}

// Unavailable is a target given up during the run.
type Unavailable struct {
	Target string `json:"target"`
	Reason string `json:"reason"`
}

// Run executes the run and returns when every issued call has finished and
// been committed, or ctx is cancelled.
func Run(ctx context.Context, o Options) (Summary, error) {
	if o.Epochs < 1 {
		o.Epochs = 1
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	stop := o.Stop
	if stop == nil {
		stop = make(chan struct{})
	}

	// A store that cannot commit stops the run: calls whose results cannot
	// be kept must not be paid for.
	ctx, abort := context.WithCancelCause(ctx)
	defer abort(nil)

	var sum Summary
	var skipped, discarded atomic.Int64
	var interrupted atomic.Bool

	// The writer: the only goroutine that writes results.
	put := o.Store.PutResults
	if o.Retry != nil {
		put = o.Store.ReplaceResults
	}
	w := StartWriter(WriterOptions[Scored]{
		Commit: ResultCommit(put),
		What:   "results",
		Every:  o.CommitEvery,
		Batch:  o.CommitBatch,
		Committed: func(batch []Scored) {
			for i := range batch {
				o.tally(&sum, &batch[i].Result)
			}
		},
		Failed: func(err error) { abort(err) },
	})

	var unavailMu sync.Mutex
	var wg sync.WaitGroup
	var issueErr error
	var issueErrOnce sync.Once
	// start starts one target's workers and issuer, counted in wg.
	start := func(t *Target, wg *sync.WaitGroup) {
		workers := t.Workers
		if workers <= 0 {
			workers = t.Spec.Limits.Concurrency
		}
		if workers <= 0 {
			workers = 8
		}
		// given closes when the target is given up: its issuer and
		// workers stop, and what was queued is never called.
		given := make(chan struct{})
		var giveUp sync.Once
		unavailable := func(ue *provider.UnavailableError) {
			giveUp.Do(func() {
				unavailMu.Lock()
				sum.Unavailable = append(sum.Unavailable, Unavailable{Target: t.Spec.Name, Reason: ue.Reason})
				unavailMu.Unlock()
				close(given)
			})
		}
		pool := Pool[job]{Workers: workers, Stop: stop, Halt: given}
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := pool.Run(ctx, func(send func(job) error) error {
				return o.issue(send, t, &skipped)
			}, func(j job) {
				if Closed(stop) || ctx.Err() != nil || Closed(given) {
					// Queued, never called: a resume does it. The issuer
					// may have handed over every unit before the stop,
					// so the skip itself marks the run interrupted.
					if Closed(stop) && !Closed(given) {
						interrupted.Store(true)
					}
					return
				}
				it, ok := o.call(ctx, t, j, unavailable)
				if !ok {
					if !Closed(given) { // else not made: the target is unavailable
						discarded.Add(1)
					}
					return
				}
				w.Add(it)
			})
			if errors.Is(err, errGivenUp) {
				return
			}
			if errors.Is(err, errStopped) {
				interrupted.Store(true)
				return
			}
			if err != nil {
				issueErrOnce.Do(func() { issueErr = fmt.Errorf("target %s: %w", t.Spec.Name, err) })
			}
		}()
	}
	for i := range o.Targets {
		t := &o.Targets[i]
		if !o.Sequential {
			start(t, &wg)
			continue
		}
		// One target at a time: its calls all finish before the next
		// target's first is issued. After an interrupt the later targets
		// issue nothing (their issuers see stop at once).
		var one sync.WaitGroup
		start(t, &one)
		one.Wait()
	}
	wg.Wait()
	werr := w.Close()
	sum.Skipped = int(skipped.Load())
	sum.Discarded = int(discarded.Load())
	sum.Interrupted = interrupted.Load() || (ctx.Err() != nil && werr == nil)
	return sum, errors.Join(issueErr, werr)
}

var (
	errStopped = errors.New("stopped")
	errGivenUp = errors.New("target unavailable")
)

type job struct {
	c     *dataset.Case
	msgs  []provider.Message
	epoch int
	err   error // a prompt that could not be rendered
}

// issue streams the cases for one target and sends the calls still to do.
// It returns errGivenUp once the target is given up (the pool's Halt) and
// errStopped once the run is stopped or cancelled.
func (o *Options) issue(send func(job) error, t *Target, skipped *atomic.Int64) error {
	return o.Cases(func(c *dataset.Case) error {
		var msgs []provider.Message
		var rerr error
		rendered := false
		for e := 1; e <= o.Epochs; e++ {
			if _, ok := o.Done[record.Key{CaseID: c.ID, Target: t.Spec.Name, Epoch: e}]; ok {
				skipped.Add(1)
				continue
			}
			if !rendered {
				msgs, rerr = o.Render(c)
				rendered = true
			}
			if err := send(job{c: c, msgs: msgs, epoch: e, err: rerr}); err != nil {
				if errors.Is(err, ErrHalted) {
					return errGivenUp
				}
				return errStopped
			}
		}
		return nil
	})
}

// call makes one call and scores it. ok is false when the call was aborted
// by cancellation, or not made because the target is unavailable (then
// unavailable is told why): such a result is not stored, so a resume makes
// it again.
func (o *Options) call(ctx context.Context, t *Target, j job, unavailable func(*provider.UnavailableError)) (Scored, bool) {
	r := record.Result{
		RunID:  o.RunID,
		CaseID: j.c.ID,
		Target: t.Spec.Name,
		Epoch:  j.epoch,
	}
	if j.err != nil {
		r.ErrorKind = "prompt_error"
		r.Error = j.err.Error()
	} else if o.Agent != nil {
		if !o.loop(ctx, t, j, &r, unavailable) {
			return Scored{}, false
		}
	} else {
		req := o.request(t, j, j.msgs)
		start := o.Now()
		resp, err := t.Provider.Complete(ctx, req)
		if err != nil {
			kind, stored := failed(ctx, err, unavailable)
			if !stored {
				return Scored{}, false
			}
			r.ErrorKind = string(kind)
			r.Error = err.Error()
			r.Attempts = provider.Attempts(err)
			r.Redactions = provider.Redactions(err)
			r.LatencyMS = ms(o.Now().Sub(start))
		} else {
			r.Raw = resp.Text
			r.FinishReason = resp.FinishReason
			r.ToolCalls = ToolCalls(resp.ToolCalls)
			r.InputTokens = resp.Usage.Input
			r.OutputTokens = resp.Usage.Output
			r.CachedTokens = resp.Usage.Cached
			// A reply served from the cache is not billed again: it costs 0
			// and its price is kept apart as saved spend.
			if price := t.Spec.Price.Cost(resp.Usage.Input, resp.Usage.Output, resp.Usage.Cached); resp.Cached {
				r.SavedUSD = price
			} else {
				r.CostUSD = price
			}
			r.LatencyMS = ms(resp.Latency)
			r.FirstTokenMS = ms(resp.FirstToken)
			r.Attempts = resp.Attempts
			r.Model = resp.Model
			r.Fingerprint = resp.SystemFingerprint
			r.FromCache = resp.Cached
			r.Redactions = resp.Redactions
		}
	}
	if n, ok := o.Retry[r.Key()]; ok {
		r.Retries = n + 1
	}
	r.CreatedAt = o.Now().UTC()
	scores := o.Score(ctx, j.c, &r)
	for i := range scores {
		scores[i].RunID = o.RunID
		scores[i].Scoring = 1 // the scoring made during the run; rescores add more
	}
	return Scored{Result: r, Scores: scores}, true
}

// failed is the error kind of a failed model call; stored is false when
// the call was cut short by cancellation or not made because the target is
// unavailable (then unavailable is told why): such a result is not stored.
func failed(ctx context.Context, err error, unavailable func(*provider.UnavailableError)) (kind provider.ErrorKind, stored bool) {
	if ctx.Err() != nil {
		return "", false
	}
	if ue, ok := provider.Unavailable(err); ok {
		unavailable(ue)
		return "", false
	}
	kind = provider.KindOf(err)
	return kind, kind != provider.KindCanceled
}

// tally counts a committed result in the summary and tells Progress
// (from the writer's goroutine).
func (o *Options) tally(sum *Summary, r *record.Result) {
	sum.Stored++
	if r.ErrorKind != "" {
		sum.Errors++
	}
	if _, ok := o.Retry[r.Key()]; ok {
		sum.Retried++
		if r.ErrorKind != "" {
			sum.RetriedErrors++
		}
	}
	sum.SpendUSD += r.CostUSD
	sum.SavedUSD += r.SavedUSD
	if o.Progress != nil {
		o.Progress(r)
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Offer is what a run's every request offers the model besides its
// messages. Its slices are shared by every request: providers read them
// and must not change them.
type Offer struct {
	Tools          []provider.Tool
	ToolChoice     string
	ResponseFormat *provider.ResponseFormat
}

// OfferOf is the spec's tools, tool choice and response format as a
// request carries them (empty when the spec sets none).
func OfferOf(sp *spec.Spec) Offer {
	var o Offer
	for _, t := range sp.Tools {
		o.Tools = append(o.Tools, provider.Tool{Name: t.Name, Description: t.Description, Parameters: t.Parameters})
	}
	o.ToolChoice = sp.ToolChoice
	if f := sp.ResponseFormat; f != nil {
		o.ResponseFormat = &provider.ResponseFormat{Name: f.Name, Schema: f.Schema, Strict: f.Strict}
	}
	return o
}

// ToolCalls are a reply's tool calls as a result stores them (nil for
// none).
func ToolCalls(calls []provider.ToolCall) []record.ToolCall {
	if len(calls) == 0 {
		return nil
	}
	out := make([]record.ToolCall, len(calls))
	for i, c := range calls {
		out[i] = record.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments}
	}
	return out
}

// request is the call of one unit with the messages so far: the target's
// model and params, the spec's offer (tools, tool choice, response format),
// the case and the epoch. A single call sends the rendered messages; an
// agent loop, those and every turn since.
func (o *Options) request(t *Target, j job, msgs []provider.Message) *provider.Request {
	return &provider.Request{
		Model:          t.Spec.Model,
		Messages:       msgs,
		Params:         provider.Params(t.Spec.Params),
		Tools:          o.Offer.Tools,
		ToolChoice:     o.Offer.ToolChoice,
		ResponseFormat: o.Offer.ResponseFormat,
		CaseID:         j.c.ID,
		Vars:           j.c.Vars,
		Epoch:          j.epoch,
	}
}
