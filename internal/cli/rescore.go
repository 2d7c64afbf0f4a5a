package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/spf13/cobra"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/scorer"
	"github.com/assay-eval/assay/internal/spec"
	"github.com/assay-eval/assay/internal/store"
	"github.com/assay-eval/assay/internal/task"
)

type rescoreOptions struct {
	// Files are overlays merged over the spec (-f).
	Files   []string
	Run     string
	Spec    string
	JSON    bool
	NoCache bool
	Workers int
}

func (o *rescoreOptions) AddFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	addOverlayFlag(cmd, &o.Files)
	f.StringVar(&o.Spec, "spec", "", "spec whose scorers to apply (default: the spec the run was started with); latest is then the newest run of this spec")
	f.BoolVar(&o.JSON, "json", false, "print a JSON summary")
	f.BoolVar(&o.NoCache, "no-cache", false, "call every judge anew and store the fresh verdicts in the response cache")
	f.IntVar(&o.Workers, "workers", 8, "results scored at once (judge calls are further bounded by the judge's limits)")
}

func newRescoreCommand(g *Globals) *cobra.Command {
	o := &rescoreOptions{}
	cmd := &cobra.Command{
		Use:   "rescore [RUN_ID|latest]",
		Short: "Re-apply the spec's scorers to a run's stored outputs, calling no candidate",
		Long: `Re-apply the current scorers of the spec to the outputs a run stored, without
calling any candidate model. Judge scorers call their judge (through the
response cache, so an unchanged judge prompt costs nothing). The scores are
recorded as a new scoring of the same run, which reports use only once every
score is stored (an interrupted rescore is never read); reports use the latest
complete scoring unless --scoring says otherwise.`,
		Args: rangeArgs(0, 1),
		PreRunE: func(cmd *cobra.Command, args []string) error {
			if o.Workers < 1 || o.Workers > spec.MaxConcurrency {
				return usageError{fmt.Errorf("--workers must be between 1 and %d (got %d)", spec.MaxConcurrency, o.Workers)}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Run = runArg(args)
			return runRescore(cmd.Context(), g, o)
		},
	}
	o.AddFlags(cmd)
	return cmd
}

// errStopped ends a stream of results early after an interrupt.
var errStopped = errors.New("stopped")

type rescoreSummary struct {
	RunID        string                 `json:"run_id"`
	Scoring      int                    `json:"scoring"`
	Results      int                    `json:"results"`
	Scorers      map[string]scorerCount `json:"scorers"`
	JudgeCostUSD float64                `json:"judge_cost_usd"`
	// JudgeSavedUSD is what the judge verdicts served from the response
	// cache would have cost: never billed again, so not in JudgeCostUSD.
	JudgeSavedUSD float64 `json:"judge_saved_usd"`
}

type scorerCount struct {
	Passed int `json:"passed"`
	N      int `json:"n"`
	// JudgeErrors counts a judge scorer's verdicts that failed
	// (judge_error).
	JudgeErrors int `json:"judge_errors,omitempty"`
}

func runRescore(ctx context.Context, g *Globals, o *rescoreOptions) error {
	st, run, err := openRunOf(ctx, g, "rescore", o.Run, o.Spec, false)
	if err != nil {
		return err
	}
	defer st.Close()
	path, files := o.Spec, o.Files
	if path == "" {
		// The run's own spec, with the overlays it was run with unless
		// -f gives others.
		path = run.SpecPath
		if len(files) == 0 {
			files = storedOverlays(run.Config)
		}
	}
	t, err := task.LoadWith(path, specOptions(g, files))
	if err != nil {
		return err
	}
	if d := datasetChanged(run, t.Dataset); d != "" {
		return fmt.Errorf("rescore %s: the dataset changed since the run (%s); scores must be of the cases the run measured",
			run.ID, d)
	}
	var closers []io.Closer
	defer func() {
		for _, c := range closers {
			c.Close()
		}
	}()
	set, err := compileScorers(t.Spec, g, st, o.NoCache, &closers)
	if err != nil {
		return err
	}
	cases, err := casesByID(t.Spec)
	if err != nil {
		return err
	}
	// The scoring is reserved (pending) in one write transaction, so two
	// rescores at once get distinct numbers, and only completed after every
	// score is stored: a rescore killed halfway leaves a pending scoring that
	// report, gate and baseline export never read.
	if err := requireNoWriter(ctx, g, st, "rescore "+run.ID, run); err != nil {
		return err
	}
	scoring, err := st.ReserveScoring(ctx, run.ID)
	if err != nil {
		return fmt.Errorf("rescore %s: %w", run.ID, err)
	}
	// The report of a rescored run names the definition of correct it read.
	if err := st.SetScoringScorersHash(ctx, run.ID, scoring, t.Spec.ScorersHash()); err != nil {
		return fmt.Errorf("rescore %s: %w", run.ID, err)
	}

	sum := rescoreSummary{RunID: run.ID, Scoring: scoring, Scorers: map[string]scorerCount{}}
	var mu sync.Mutex
	w := newScoreWriter(st)
	keep := func(scores []record.Score) {
		mu.Lock()
		for i := range scores {
			s := &scores[i]
			s.RunID, s.Scoring = run.ID, scoring
			c := sum.Scorers[s.Scorer]
			c.N++
			if s.Pass {
				c.Passed++
			}
			if s.Kind == scorer.KindJudgeError {
				c.JudgeErrors++
			}
			sum.Scorers[s.Scorer] = c
			sum.JudgeCostUSD += s.JudgeCost
			sum.JudgeSavedUSD += s.JudgeSaved
		}
		mu.Unlock()
		w.add(scores)
	}

	// The first Ctrl-C stops handing out results (judge calls in flight
	// finish and are stored); the second cancels the calls in flight.
	runCtx, stop, unwatch := watchInterrupts(ctx, g)
	defer unwatch()
	interrupted := false

	jobs := make(chan record.Result, o.Workers)
	var wg sync.WaitGroup
	for range o.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range jobs {
				keep(set.Score(runCtx, cases[r.CaseID], &r))
			}
		}()
	}
	err = st.Results(ctx, run.ID, func(r record.Result) error {
		if cases[r.CaseID] == nil {
			return fmt.Errorf("result for case %q, which the dataset does not have", r.CaseID)
		}
		select {
		case <-stop:
			interrupted = true
			return errStopped
		default:
		}
		sum.Results++
		select {
		case jobs <- r:
			return nil
		case <-stop:
			sum.Results--
			interrupted = true
			return errStopped
		case <-runCtx.Done():
			return runCtx.Err()
		}
	})
	close(jobs)
	wg.Wait()
	if errors.Is(err, errStopped) {
		err = nil
	}
	if err == nil && !interrupted && len(set.Pairwise()) > 0 {
		err = scoreRunPairs(runCtx, st, set, cases, run.ID, o.Workers, keep)
	}
	if err == nil && runCtx.Err() != nil {
		interrupted, err = true, nil // a second Ctrl-C: the calls in flight were dropped
	}
	if err == nil && interrupted {
		if werr := w.close(ctx); werr != nil {
			return fmt.Errorf("rescore %s: %w", run.ID, werr)
		}
		return fmt.Errorf("%w: rescore %s stopped after %d results; scoring %d stays pending and is never read (reports keep using the previous scoring); rescore again to score the run whole",
			ErrInterrupted, run.ID, sum.Results, scoring)
	}
	if werr := w.close(ctx); err == nil {
		err = werr
	}
	if err == nil {
		err = st.CompleteScoring(ctx, run.ID, scoring)
	}
	if err != nil {
		return fmt.Errorf("rescore %s: %w (scoring %d stays pending; reports keep using the previous scoring)", run.ID, err, scoring)
	}

	// A judge that mostly failed makes its scorer's rate meaningless: say
	// so on stderr whatever the output format.
	counts := map[string]*[2]int{}
	for name, c := range sum.Scorers {
		counts[name] = &[2]int{c.JudgeErrors, c.N}
	}
	warnJudgeErrors(g.Stderr, t.Spec, counts, run.ID)
	if o.JSON {
		enc := json.NewEncoder(g.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(sum)
	}
	fmt.Fprintf(g.Stdout, "run %s: scoring %d of %d results", run.ID, scoring, sum.Results)
	if sum.JudgeCostUSD > 0 || sum.JudgeSavedUSD > 0 {
		fmt.Fprintf(g.Stdout, ", judge $%.4f", sum.JudgeCostUSD)
	}
	if sum.JudgeSavedUSD > 0 {
		fmt.Fprintf(g.Stdout, " ($%.4f saved by the response cache)", sum.JudgeSavedUSD)
	}
	fmt.Fprintln(g.Stdout)
	for _, name := range set.Names() {
		c := sum.Scorers[name]
		fmt.Fprintf(g.Stdout, "  %-20s %d/%d passed", name, c.Passed, c.N)
		if c.JudgeErrors > 0 {
			fmt.Fprintf(g.Stdout, ", %d judge errors", c.JudgeErrors)
		}
		fmt.Fprintln(g.Stdout)
	}
	return nil
}

// compileScorers builds the spec's scorers with live judges: each judge's
// target gets the same wrappers as a candidate (time-out, limits, retries,
// response cache).
func compileScorers(sp *spec.Spec, g *Globals, st store.Store, noCache bool, closers *[]io.Closer) (*scorer.Set, error) {
	var perr error
	set, probs := scorer.CompileWith(sp, scorer.Options{JudgeProvider: judgeProviders(sp, g, st, noCache, closers, &perr)})
	if len(probs) > 0 {
		return nil, probs
	}
	return set, perr
}

// scoreWriter commits scores in batches from many goroutines.
type scoreWriter struct {
	st      store.Store
	replace bool // overwrite stored verdicts (Store.ReplaceScores)
	mu      sync.Mutex
	batch   []record.Score
	err     error
}

func newScoreWriter(st store.Store) *scoreWriter { return &scoreWriter{st: st} }

func (w *scoreWriter) add(scores []record.Score) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.batch = append(w.batch, scores...)
	if len(w.batch) >= 1024 {
		w.flushLocked(context.Background())
	}
}

func (w *scoreWriter) flushLocked(ctx context.Context) {
	if len(w.batch) == 0 || w.err != nil {
		return
	}
	put := w.st.PutScores
	if w.replace {
		put = w.st.ReplaceScores
	}
	if err := put(ctx, w.batch); err != nil {
		slog.Error("storing scores", "err", err)
		w.err = err
	}
	w.batch = w.batch[:0]
}

func (w *scoreWriter) close(ctx context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.flushLocked(context.WithoutCancel(ctx))
	return w.err
}
