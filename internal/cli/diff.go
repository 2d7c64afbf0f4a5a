package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/assay-eval/assay/internal/analysis"
	"github.com/assay-eval/assay/internal/report"
)

type diffOptions struct {
	Before, After string
	Limit         int
	Target        string
	Format        string
}

func (o *diffOptions) AddFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.IntVar(&o.Limit, "limit", 20, "flipped cases listed per target, with both outputs (0 lists none; the counts are always complete)")
	f.StringVar(&o.Target, "target", "", "show models and flips of this target only")
	f.StringVar(&o.Format, "format", "text", "text|json|markdown")
}

func newDiffCommand(g *Globals) *cobra.Command {
	o := &diffOptions{}
	cmd := &cobra.Command{
		Use:   "diff RUN_A RUN_B",
		Short: "Show what changed between two runs: versions, spec, cases, models, flipped verdicts (never calls a model)",
		Long: `Show what changed between two runs (A before, B after):

  - the spec, prompt, dataset and scorer hashes, the git commit and the
    assay version, each marked same or changed, and, from the resolved specs
    the runs carry, the fields that changed: targets added, removed or
    reconfigured (model, params, provider …), prompt text, scorer settings;
  - the cases added and removed (by ID), and shared cases whose expected
    value or tags changed;
  - the models and fingerprints each target's provider reported;
  - per target both runs ran, the cases whose primary verdict flipped
    (pass→fail first), paired by case and epoch, with both outputs.

Outputs are shown quoted and escaped: control characters and terminal escape
sequences cannot act on your terminal. diff is information, not a verdict:
it exits 0. For a verdict use compare (paired statistics), drift (has the
model changed under its name?) or gate.`,
		Args: exactArgs(2),
		PreRunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(o.Format, report.DiffFormats); err != nil {
				return err
			}
			if o.Limit < 0 {
				return usageError{fmt.Errorf("--limit must be 0 or more (got %d)", o.Limit)}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Before, o.After = args[0], args[1]
			return runDiff(cmd.Context(), g, o)
		},
	}
	o.AddFlags(cmd)
	return cmd
}

func runDiff(ctx context.Context, g *Globals, o *diffOptions) error {
	st, before, after, err := openRunPair(ctx, g, "diff", o.Before, o.After)
	if err != nil {
		return err
	}
	defer st.Close()
	limit := o.Limit
	if limit == 0 {
		limit = -1 // DiffOptions: 0 means the default
	}
	d, err := analysis.DiffRuns(ctx, st, before, after, analysis.DiffOptions{Limit: limit, Target: o.Target})
	if err != nil {
		return fmt.Errorf("diff: %w", err)
	}
	return report.RunDiff(g.Stdout, o.Format, d)
}
