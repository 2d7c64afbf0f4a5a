package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/assay-eval/assay/internal/engine"
	"github.com/assay-eval/assay/internal/spec"
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

	// The first Ctrl-C stops handing out results (judge calls in flight
	// finish and are stored); the second cancels the calls in flight.
	runCtx, stop, unwatch := watchInterrupts(ctx, g)
	defer unwatch()
	sc, err := newEngine(g, st).Rescore(runCtx, run, t, engine.RescoreOptions{NoCache: o.NoCache, Workers: o.Workers, Stop: stop})
	if err != nil {
		return err
	}
	if sc.Interrupted {
		return fmt.Errorf("%w: rescore %s stopped after %d results; scoring %d stays pending and is never read (reports keep using the previous scoring); rescore again to score the run whole",
			ErrInterrupted, run.ID, sc.Results, sc.Scoring)
	}
	sum := rescoreSummary{RunID: sc.RunID, Scoring: sc.Scoring, Results: sc.Results, Scorers: map[string]scorerCount{},
		JudgeCostUSD: sc.JudgeCostUSD, JudgeSavedUSD: sc.JudgeSavedUSD}
	for name, c := range sc.Scorers {
		sum.Scorers[name] = scorerCount{Passed: c.Passed, N: c.N, JudgeErrors: c.JudgeErrors}
	}

	// A judge that mostly failed makes its scorer's rate meaningless: say
	// so on stderr whatever the output format.
	counts := map[string]*[2]int{}
	for name, c := range sum.Scorers {
		counts[name] = &[2]int{c.JudgeErrors, c.N}
	}
	warnJudgeErrors(g.Stderr, t.Spec, counts, run.ID)
	if o.JSON {
		return writeJSONOut(g.Stdout, sum)
	}
	fmt.Fprintf(g.Stdout, "run %s: scoring %d of %d results", run.ID, sum.Scoring, sum.Results)
	if sum.JudgeCostUSD > 0 || sum.JudgeSavedUSD > 0 {
		fmt.Fprintf(g.Stdout, ", judge $%.4f", sum.JudgeCostUSD)
	}
	if sum.JudgeSavedUSD > 0 {
		fmt.Fprintf(g.Stdout, " ($%.4f saved by the response cache)", sum.JudgeSavedUSD)
	}
	fmt.Fprintln(g.Stdout)
	for _, name := range sc.Names {
		c := sum.Scorers[name]
		fmt.Fprintf(g.Stdout, "  %-20s %d/%d passed", name, c.Passed, c.N)
		if c.JudgeErrors > 0 {
			fmt.Fprintf(g.Stdout, ", %d judge errors", c.JudgeErrors)
		}
		fmt.Fprintln(g.Stdout)
	}
	return nil
}
