package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/assay-eval/assay/internal/analysis"
	"github.com/assay-eval/assay/internal/report"
)

type compareOptions struct {
	Before, After string
	Format        string
	Margin        float64
	SharedCases   bool
	AllowPartial  bool
	Test          string
	test          string // parsed
}

func (o *compareOptions) AddFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.Format, "format", "text", "text|json")
	f.Float64Var(&o.Margin, "margin", 0.02, "equivalence margin: a difference whose interval lies inside ±margin is called equivalent")
	f.StringVar(&o.Test, "test", "score", "paired pass/fail test: score (McNemar score test with Tango's interval) or exact (exact McNemar with Newcombe's interval)")
	f.BoolVar(&o.SharedCases, "shared-cases", false, "when the runs measured different dataset versions, compare only the cases both measured (by ID) instead of refusing")
	addAllowPartialFlag(cmd, &o.AllowPartial, "compare a run that did not finish (interrupted, failed or running) or that covers fewer cases than the other, on the cases both have, instead of refusing")
}

func newCompareCommand(g *Globals) *cobra.Command {
	o := &compareOptions{}
	cmd := &cobra.Command{
		Use:   "compare RUN_BEFORE RUN_AFTER",
		Short: "Compare the same targets across two runs, paired by case (never calls a model)",
		Long: `Compare each target that two runs share — before and after a change of
prompt, parser, parameters or model version — paired by case and epoch, on
each run's primary scorer: the difference (after − before) with its interval,
a paired test, Holm-adjusted over the targets, a verdict, and the same per
slice (Holm-adjusted over the slices of each tag) so you see where the change
helped or hurt. One pass/fail per case: the McNemar score test with Tango's
interval, which agree by construction (--test exact: exact McNemar with
Newcombe's interval, and a verdict needs both); several epochs: the paired
t-test on per-case means; cases with a cluster tag: a cluster-robust (CR1)
t-test on G−1 degrees of freedom.

Runs on different dataset versions (different dataset hashes) are refused:
the same case ID may ask a different question. --shared-cases compares
them on the cases both runs measured, and says so. A changed scorer
configuration is compared with a warning: the runs then use two
definitions of correct.`,
		Args: exactArgs(2),
		PreRunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(o.Format, report.NewRegistry().Compare.Names()); err != nil {
				return err
			}
			if o.Margin < 0 || o.Margin >= 1 {
				return usageError{fmt.Errorf("--margin must be in [0, 1) (got %g)", o.Margin)}
			}
			t, err := analysis.ParseTest(o.Test)
			if err != nil {
				return usageError{fmt.Errorf("--test: %w", err)}
			}
			o.test = t
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Before, o.After = args[0], args[1]
			return runCompare(cmd.Context(), g, o)
		},
	}
	o.AddFlags(cmd)
	return cmd
}

func runCompare(ctx context.Context, g *Globals, o *compareOptions) error {
	st, before, after, err := openRunPair(ctx, g, "compare", o.Before, o.After)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := requireRunPairWhole(ctx, st, "compare", before, after, o.AllowPartial, o.SharedCases); err != nil {
		return err
	}
	margin := o.Margin
	if margin == 0 {
		margin = -1 // equivalence off
	}
	compare := analysis.CompareRuns
	if o.SharedCases {
		compare = analysis.CompareSharedCases
	}
	rc, err := compare(ctx, st, before, after, analysis.Options{Margin: margin, Test: o.test})
	if err != nil {
		return fmt.Errorf("compare: %w", withSharedCasesHint(err))
	}
	r, err := report.NewRegistry().Compare.Reporter(o.Format, rc)
	if err != nil {
		return err
	}
	return printOut(g.Stdout, "", r)
}

// withSharedCasesHint adds to a refusal of runs on different dataset
// versions the flag that compares them on their shared cases.
func withSharedCasesHint(err error) error {
	var dm *analysis.DatasetMismatchError
	if !errors.As(err, &dm) {
		return err
	}
	if dm.Cases.Shared == 0 {
		return fmt.Errorf("%w; they share no case, so there is nothing to pair", err)
	}
	return fmt.Errorf("%w; pass --shared-cases to compare only the %d cases both runs measured", err, dm.Cases.Shared)
}
