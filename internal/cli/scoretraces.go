package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/assay-eval/assay/internal/engine"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/report"
	"github.com/assay-eval/assay/internal/sample"
	"github.com/assay-eval/assay/internal/spec"
)

type scoreTracesOptions struct {
	Files   []string
	Spec    string
	Sample  string
	Level   float64
	NoCache bool
	Workers int
	Format  string
	Output  string
}

func (o *scoreTracesOptions) AddFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	addOverlayFlag(cmd, &o.Files)
	f.StringVar(&o.Sample, "sample", "", "the sample to score: its ID (assay sample prints it) (required)")
	f.Float64Var(&o.Level, "level", 0.95, "confidence level of the intervals")
	f.BoolVar(&o.NoCache, "no-cache", false, "call every judge anew and store the fresh verdicts in the response cache")
	f.IntVar(&o.Workers, "workers", 8, "traces scored at once (judge calls are further bounded by the judge's limits)")
	f.StringVar(&o.Format, "format", "text", "output format: "+strings.Join(report.NewRegistry().TraceScores.Names(), "|"))
	f.StringVarP(&o.Output, "output", "o", "", "write the rates to FILE, whole or not at all")
}

func newScoreTracesCommand(g *Globals) *cobra.Command {
	o := &scoreTracesOptions{}
	cmd := &cobra.Command{
		Use:   "score-traces SPEC --sample S",
		Short: "Score a trace sample with the spec's reference-free scorers",
		Long: `Score a recorded sample of production traces (assay sample) with the spec's
scorers that need no expected value — format, regex, is_json, json_schema,
required_fields, one_of, not_contains, max_length, latency, cost, cel,
no_tool_call and single judges — and store the scoring as an ordinary run,
so assay report, assay gate and assay serve work on it. Scorers that
compare with an expected value (equals, number, similarity, field_equals,
tool_call, tool_calls) and pairwise judges cannot score a trace; they are
listed as skipped.

The run has one case per sampled trace (its ID, its sampling weight, tags
model, stratum, time and each strata key) and one result per trace, whose
target is the trace's model. Judges are called through the spec's judge
targets and the response cache, as in assay run.

It prints, per model and scorer (and over every model), the pass rate over
the sample's population — each trace weighted by its stratum's population
over its draws — with its interval (Wilson's on the design's effective
sample size, with each stratum's finite population correction), beside the
unweighted share of sampled traces that passed, the traces scored and the
population they stand for. docs/sampling.md explains the numbers.

The first Ctrl-C stops handing out traces (the judge calls in flight finish
and are stored; the run is interrupted and the rates are of what was
scored); the second cancels the calls in flight.

` + exitCodesHelp,
		Example: `  assay score-traces eval.yaml --sample s-20261130-000000-1a2b3c
  assay score-traces eval.yaml --sample week48 --format markdown -o week48.md`,
		Args: exactArgs(1),
		PreRunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(o.Format, report.NewRegistry().TraceScores.Names()); err != nil {
				return err
			}
			if o.Sample == "" {
				return usageError{errors.New("--sample is required: the ID assay sample printed (assay sample --window 7d --per model=50 draws one)")}
			}
			if !(o.Level > 0 && o.Level < 1) {
				return usageError{fmt.Errorf("--level %g: must be strictly between 0 and 1 (0.95 for 95%% intervals)", o.Level)}
			}
			if o.Workers < 1 || o.Workers > spec.MaxConcurrency {
				return usageError{fmt.Errorf("--workers must be between 1 and %d (got %d)", spec.MaxConcurrency, o.Workers)}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Spec = args[0]
			return runScoreTraces(cmd.Context(), g, o)
		},
	}
	o.AddFlags(cmd)
	return cmd
}

func runScoreTraces(ctx context.Context, g *Globals, o *scoreTracesOptions) error {
	st, err := openExistingStore(ctx, g)
	if err != nil {
		return fmt.Errorf("score-traces: %w", err)
	}
	defer st.Close()
	sp, err := spec.LoadWith(o.Spec, specOptions(g, o.Files))
	if err != nil {
		return err
	}
	if err := refuseReadOnly(st, g, "score-traces", "nothing was scored"); err != nil {
		return err
	}
	if _, err := st.Sample(ctx, o.Sample); errors.Is(err, record.ErrNotFound) {
		return usageError{fmt.Errorf("score-traces: --sample %s: %w (assay sample draws one and prints its ID)", o.Sample, err)}
	}
	runCtx, stop, unwatch := watchInterrupts(ctx, g)
	defer unwatch()
	ts, err := newEngine(g, st).ScoreTraces(runCtx, sp, o.Sample, engine.TraceOptions{NoCache: o.NoCache, Workers: o.Workers, Stop: stop})
	if err != nil {
		return fmt.Errorf("score-traces: %w", err)
	}
	rates, err := sample.Rates(ts.Verdicts, ts.Models, ts.Scorers, o.Level)
	if err != nil {
		return fmt.Errorf("score-traces: %w", err)
	}
	traces := 0
	if len(ts.Scorers) > 0 {
		for _, v := range ts.Verdicts {
			if v.Scorer == ts.Scorers[0] {
				traces++
			}
		}
	}
	rep := &sample.ScoreReport{
		RunID: ts.Run.ID, Status: ts.Run.Status, SampleID: ts.Sample.ID,
		Since: ts.Sample.Since, Until: ts.Sample.Until, Level: o.Level, Traces: traces,
		Scorers: ts.Scorers, Primary: ts.Primary, Rates: rates, Skipped: ts.Skipped,
		Redacted: ts.Redacted, Redactions: ts.Redactions,
	}
	r, err := report.NewRegistry().TraceScores.Reporter(o.Format, rep)
	if err != nil {
		return usageError{err}
	}
	if err := printOut(g.Stdout, o.Output, r); err != nil {
		return err
	}
	if ts.Run.Status == record.StatusInterrupted {
		return fmt.Errorf("%w: score-traces stopped after %d of %d traces; run %s is interrupted and its rates are of the traces scored",
			ErrInterrupted, traces, len(ts.Sample.Items), ts.Run.ID)
	}
	return nil
}
