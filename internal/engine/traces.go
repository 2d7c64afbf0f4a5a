package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/runner"
	"github.com/assay-eval/assay/internal/sample"
	"github.com/assay-eval/assay/internal/scorer"
	"github.com/assay-eval/assay/internal/spec"
	"github.com/assay-eval/assay/internal/store"
	"github.com/assay-eval/assay/internal/traces"
)

// TraceOptions describe a scoring of a trace sample.
type TraceOptions struct {
	// NoCache calls every judge anew, storing the fresh verdicts.
	NoCache bool
	// Workers is how many traces are scored at once (default 8).
	Workers int
	// Stop, when closed, stops handing out traces; the judge calls in
	// flight finish and are stored (the run is then interrupted).
	Stop <-chan struct{}
}

// TraceScoring is what ScoreTraces stored.
type TraceScoring struct {
	Run    *record.Run
	Sample *record.Sample
	// Scorers are the scorers applied, in the spec's order; Primary names
	// the headline score; Skipped the spec's scorers left out, each with
	// why ("name: needs an expected value").
	Scorers []string
	Primary string
	Skipped []string
	// Models are the run's targets: the sampled traces' models, sorted.
	Models []string
	// Redacted counts the sampled traces in which the privacy redaction
	// replaced anything before they were stored, Redactions the values it
	// replaced in them.
	Redacted, Redactions int
	// Verdicts are every score stored, with its trace's model, stratum and
	// weight (what sample.Rates reads).
	Verdicts []sample.Verdict
}

// ReferenceFree splits the spec's scorers into those that score a trace
// without an expected value, and those that cannot, each with why: a scorer
// type that compares with the case's expected value (scorer.Meta's
// NeedsExpected), and a pairwise judge, which compares two targets'
// answers to one case (a trace has one).
func ReferenceFree(sp *spec.Spec) (keep []spec.Scorer, skipped []string) {
	for _, sc := range sp.Scorers {
		name := sc.Name
		if name == "" {
			name = sc.Type
		}
		m, _ := scorer.Meta(sc.Type)
		switch {
		case m.NeedsExpected:
			skipped = append(skipped, name+": "+sc.Type+" compares with an expected value, which a trace has none of")
		case sc.Type == "judge" && sc.Mode == scorer.JudgePairwise:
			skipped = append(skipped, name+": a pairwise judge compares two targets' answers to one case; a trace has one answer")
		default:
			keep = append(keep, sc)
		}
	}
	return keep, skipped
}

// ScoreTraces scores the stored sample sampleID with the spec's scorers
// that need no expected value, as an ordinary run: one case per sampled
// trace (ID the trace's, weight its sampling weight, tags its model,
// stratum, time and strata values), one result per trace whose target is
// the trace's model (its output, tool calls, tokens, latency, cost, error),
// scored by the same scorer set and stored by the same batched writer as a
// run's, in scoring 1; then the run is complete. Judges get their targets'
// providers through the provider registry as in a run, with its response
// cache. The spec's hashes and config are recorded as `assay run` records
// them; the dataset hash is "sample:<id>", so commands that re-read the
// spec's dataset refuse the run.
func (e *Engine) ScoreTraces(ctx context.Context, sp *spec.Spec, sampleID string, o TraceOptions) (*TraceScoring, error) {
	smp, err := e.Store.Sample(ctx, sampleID)
	if err != nil {
		return nil, err
	}
	if len(smp.Items) == 0 {
		return nil, fmt.Errorf("sample %s drew no traces: nothing to score", smp.ID)
	}
	keep, skipped := ReferenceFree(sp)
	if len(keep) == 0 {
		return nil, fmt.Errorf("the spec has no scorer that works without an expected value, so none can score production traffic (%s): add one such as is_json, regex, json_schema, no_tool_call, cel or a judge", strings.Join(skipped, "; "))
	}
	// The scorers applied are the spec's, less those that cannot score a
	// trace; compiled with live judges as a run compiles them.
	scoring := *sp
	scoring.Scorers = keep
	var closers Closers
	defer closers.Close()
	set, err := e.Scorers(&scoring, o.NoCache, &closers)
	if err != nil {
		return nil, err
	}

	traces := map[string]*record.Trace{}
	ids := make([]string, len(smp.Items))
	for i, it := range smp.Items {
		ids[i] = it.TraceID
	}
	err = e.Store.Traces(ctx, store.TraceFilter{IDs: ids}, func(t *record.Trace) error {
		c := *t
		traces[t.ID] = &c
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading sample %s's traces: %w", smp.ID, err)
	}
	var missing []string
	for _, id := range ids {
		if traces[id] == nil {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("sample %s: %d of its %d traces are not in the store (%s): the store is not the one the sample was drawn from", smp.ID, len(missing), len(ids), strings.Join(missing[:min(3, len(missing))], ", "))
	}

	out := &TraceScoring{Sample: smp, Scorers: set.Names(), Primary: set.Headline(), Skipped: skipped}
	cases := make([]*dataset.Case, 0, len(ids))
	models := map[string]bool{}
	items := map[string]record.SampleItem{}
	for _, t := range traces {
		if t.Redactions > 0 {
			out.Redacted++
			out.Redactions += t.Redactions
		}
	}
	for _, it := range smp.Items {
		t := traces[it.TraceID]
		items[t.ID] = it
		models[t.Model] = true
		cases = append(cases, traceCase(t, it, smp.By))
	}
	targets := make([]string, 0, len(models))
	for m := range models {
		targets = append(targets, m)
	}
	slices.Sort(targets)
	out.Models = targets

	cfg, _ := json.Marshal(sp)
	now := e.now().UTC()
	run := &record.Run{
		ID:           record.NewRunID(now),
		Spec:         sp.Name,
		SpecPath:     sp.File,
		SpecHash:     sp.Hash,
		DatasetHash:  "sample:" + smp.ID,
		PromptHash:   sp.PromptHash(),
		GitCommit:    GitCommit(ctx, sp.Dir),
		ScorersHash:  sp.ScorersHash(),
		AssayVersion: e.Version,
		Sample:       smp.ID,
		Targets:      targets,
		Cases:        len(cases),
		Epochs:       1,
		Status:       record.StatusRunning,
		Started:      now,
		Config:       cfg,
	}
	out.Run = run
	if err := e.Store.CreateRun(ctx, run); err != nil {
		return nil, err
	}
	lease, err := e.TakeLease(ctx, run.ID, false)
	if err != nil {
		return nil, err
	}
	defer lease.Release()
	if err := PutCases(ctx, e.Store, run.ID, CaseList(cases)); err != nil {
		return nil, err
	}

	// Bookkeeping goes on after an interrupt.
	bctx := context.WithoutCancel(ctx)
	w := runner.StartWriter(runner.WriterOptions[runner.Scored]{
		Commit: runner.ResultCommit(e.Store.PutResults), What: "results",
	})
	var mu sync.Mutex
	stored := 0
	pool := runner.Pool[*dataset.Case]{Workers: o.Workers, Stop: o.Stop}
	err = pool.Run(ctx, func(send func(*dataset.Case) error) error {
		for _, c := range cases {
			if err := send(c); err != nil {
				return err
			}
		}
		return nil
	}, func(c *dataset.Case) {
		if ctx.Err() != nil {
			return
		}
		r := traceResult(run.ID, traces[c.ID])
		scores := set.Score(ctx, c, &r)
		if ctx.Err() != nil {
			return // a judge call was cut short: the trace is not scored
		}
		for i := range scores {
			scores[i].RunID, scores[i].Scoring = run.ID, 1
		}
		it := items[c.ID]
		mu.Lock()
		stored++
		for _, sc := range scores {
			out.Verdicts = append(out.Verdicts, sample.Verdict{Model: r.Target, Scorer: sc.Scorer, Stratum: it.Stratum, Weight: it.Weight, Pass: sc.Pass})
		}
		mu.Unlock()
		w.Add(runner.Scored{Result: r, Scores: scores})
	})
	interrupted := errors.Is(err, runner.ErrStopped) || ctx.Err() != nil
	if interrupted {
		err = nil
	}
	werr := w.Close()
	if err == nil {
		err = werr
	}
	switch {
	case err != nil:
		run.Status = record.StatusFailed
	case interrupted || stored < len(cases):
		run.Status = record.StatusInterrupted
	default:
		run.Status = record.StatusComplete
		run.Ended = e.now().UTC()
	}
	if uerr := e.Store.UpdateRun(bctx, run); uerr != nil {
		err = errors.Join(err, uerr)
	}
	if err != nil {
		return out, fmt.Errorf("scoring sample %s as run %s: %w", smp.ID, run.ID, err)
	}
	return out, nil
}

// traceCase is a sampled trace as a case: its ID, its conversation as vars
// (traces.Vars: a judge shows them) and tags for slicing the report (model,
// stratum, day, and each strata key's value). Its sampling weight stays in
// the sample (a case's weight is the cost of a wrong answer), and the
// privacy redactions in the trace (ingest's and collect's counts) are not
// a result's: those count secrets a target's reply echoed.
func traceCase(t *record.Trace, it record.SampleItem, by []string) *dataset.Case {
	vars := traces.Vars(t)
	tags := map[string]string{
		"model":   t.Model,
		"stratum": it.Stratum,
		"day":     t.Time.UTC().Format(time.DateOnly),
	}
	for k, v := range sample.StratumValues(it.Stratum, by) {
		tags[k] = v
	}
	return &dataset.Case{ID: t.ID, Vars: vars, Tags: tags}
}

// traceResult is a trace's call as a result of its model's target.
func traceResult(runID string, t *record.Trace) record.Result {
	r := record.Result{
		RunID: runID, CaseID: t.ID, Target: t.Model, Epoch: 1,
		Raw: t.OutputText(), ToolCalls: t.OutputToolCalls(), FinishReason: t.FinishReason,
		InputTokens: t.InputTokens, OutputTokens: t.OutputTokens,
		CostUSD: t.CostUSD, LatencyMS: t.LatencyMS, Attempts: 1,
		Model: t.ResponseModel, CreatedAt: t.Time.UTC(),
	}
	if t.ErrorType != "" {
		r.ErrorKind = string(traceErrorKind(t.ErrorType))
		r.Error = "the call failed in production: error.type " + t.ErrorType
	}
	return r
}

// traceErrorKind classifies a trace's error.type (an HTTP status, an
// exception's class name, or one of the semantic conventions' values) as
// the kind of a failed call; what it cannot tell is a server error.
func traceErrorKind(typ string) provider.ErrorKind {
	if slices.Contains(provider.Kinds(), provider.ErrorKind(typ)) {
		return provider.ErrorKind(typ)
	}
	if code, err := strconv.Atoi(typ); err == nil {
		switch {
		case code == 429:
			return provider.KindRateLimited
		case code == 408:
			return provider.KindTimeout
		case code == 401 || code == 403:
			return provider.KindAuth
		case code == 404:
			return provider.KindNotFound
		case code == 409:
			return provider.KindConflict
		case code == 529:
			return provider.KindOverloaded
		case code >= 400 && code < 500:
			return provider.KindBadRequest
		}
		return provider.KindServer
	}
	l := strings.ToLower(typ)
	switch {
	case strings.Contains(l, "ratelimit") || strings.Contains(l, "rate_limit"):
		return provider.KindRateLimited
	case strings.Contains(l, "timeout") || strings.Contains(l, "timed_out"):
		return provider.KindTimeout
	case strings.Contains(l, "auth") || strings.Contains(l, "permission"):
		return provider.KindAuth
	case strings.Contains(l, "overload"):
		return provider.KindOverloaded
	case strings.Contains(l, "connection") || strings.Contains(l, "network"):
		return provider.KindNetwork
	case strings.Contains(l, "badrequest") || strings.Contains(l, "bad_request") || strings.Contains(l, "invalid"):
		return provider.KindBadRequest
	}
	return provider.KindServer
}
