package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/assay-eval/assay/internal/promote"
	"github.com/assay-eval/assay/internal/report"
	"github.com/assay-eval/assay/internal/spec"
	"github.com/assay-eval/assay/internal/store"
)

type promoteOptions struct {
	Spec   string
	Run    string
	Scorer string
	Labels bool
	Limit  int
	DryRun bool
	Format string
	Output string
}

func (o *promoteOptions) AddFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.Run, "run", "latest", "the score-traces run whose failures to promote (latest: the spec's newest score-traces run)")
	f.StringVar(&o.Scorer, "scorer", "", "promote the traces this scorer failed (default: the run's primary verdict)")
	f.BoolVar(&o.Labels, "labels", false, "also promote the traces people labeled fail (assay serve, labels import); a failure people labeled pass is kept back")
	f.IntVar(&o.Limit, "limit", 0, "add at most N cases (default: all)")
	f.BoolVar(&o.DryRun, "dry-run", false, "say what would be added and skipped, write nothing")
	f.StringVar(&o.Format, "format", "text", "output format: "+strings.Join(report.NewRegistry().Promote.Names(), "|"))
	f.StringVarP(&o.Output, "output", "o", "", "write the summary to FILE, whole or not at all")
}

func newPromoteCommand(g *Globals) *cobra.Command {
	o := &promoteOptions{}
	cmd := &cobra.Command{
		Use:   "promote SPEC [--run RUN] [--scorer NAME] [--labels] [--limit N] [--dry-run]",
		Short: "Turn failing or labeled-bad traces into dataset cases",
		Long: `Turn the production traces a score-traces run failed (the latest scoring's
primary verdict, or --scorer's) — and with --labels those people labeled
fail — into cases of the spec's dataset, so every production failure
becomes an eval item.

Each case gets the conversation's last user message in the field
traces.promote.input names (default "input"), the whole conversation in
traces.promote.messages and the system instructions in
traces.promote.context when the spec names them, and its provenance:
trace_id, trace_time, trace_model, promoted_from (the run and the verdict
or labeler) and label_reason (the scorer's failure reason, or the
person's). It gets no expected value: label it in assay serve.

A trace is skipped, and the summary says which case it repeats, when a
case of the dataset already carries its trace_id, when its input is a
case's input after normalisation (case, punctuation, white space), or
when its input's words overlap a case's at the near-duplicate threshold
of dataset health (token-set Jaccard ≥ 0.9); traces of the same batch are
checked against each other the same way.

The cases are appended in one synced write to traces.promote.to, else
labels.add_to, else the dataset itself when it is JSONL: the dataset's
hash changes, so the next run measures a new version. --dry-run writes
nothing.

` + exitCodesHelp,
		Example: `  assay score-traces assay.yaml --sample week-49
  assay promote assay.yaml --dry-run
  assay promote assay.yaml --labels --limit 20`,
		Args: exactArgs(1),
		PreRunE: func(cmd *cobra.Command, args []string) error {
			if o.Limit < 0 {
				return usageError{fmt.Errorf("--limit must not be negative (got %d)", o.Limit)}
			}
			return checkFormat(o.Format, report.NewRegistry().Promote.Names())
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Spec = args[0]
			return runPromote(cmd.Context(), g, o)
		},
	}
	o.AddFlags(cmd)
	return cmd
}

func runPromote(ctx context.Context, g *Globals, o *promoteOptions) error {
	st, err := openExistingStore(ctx, g)
	if err != nil {
		return fmt.Errorf("promote: %w", err)
	}
	defer st.Close()
	sp, err := spec.LoadWith(o.Spec, specOptions(g, nil))
	if err != nil {
		return err
	}
	ref := o.Run
	if ref == "latest" {
		if ref, err = latestTraceRun(ctx, st, sp.Name); err != nil {
			return fmt.Errorf("promote: %w", err)
		}
	}
	run, err := getRun(ctx, st, "promote", ref)
	if err != nil {
		return err
	}
	res, err := promote.Promote(ctx, st, run, sp, promote.Options{Scorer: o.Scorer, Labels: o.Labels, Limit: o.Limit, DryRun: o.DryRun})
	var unknown *promote.UnknownScorerError
	switch {
	case errors.As(err, &unknown), errors.Is(err, promote.ErrNotTraceRun):
		return usageError{fmt.Errorf("promote: %w", err)}
	case err != nil:
		return fmt.Errorf("promote: %w", err)
	}
	r, err := report.NewRegistry().Promote.Reporter(o.Format, res)
	if err != nil {
		return usageError{err}
	}
	return printOut(g.Stdout, o.Output, r)
}

// latestTraceRun is the newest score-traces run of the spec named name.
func latestTraceRun(ctx context.Context, st store.Store, name string) (string, error) {
	runs, err := st.ListRuns(ctx, 0)
	if err != nil {
		return "", err
	}
	for _, r := range runs { // newest first
		if r.Spec == name && r.Sample != "" {
			return r.ID, nil
		}
	}
	return "", fmt.Errorf("latest score-traces run of spec %q: %w (score a sample first: assay score-traces %s --sample S)", name, store.ErrNotFound, name)
}
