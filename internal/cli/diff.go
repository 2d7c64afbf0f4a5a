package cli

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/assay-eval/assay/internal/analysis"
	"github.com/assay-eval/assay/internal/report"
	"github.com/assay-eval/assay/internal/runview"
	"github.com/assay-eval/assay/internal/store"
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
		Use:   "diff RUN_A|BASELINE_FILE RUN_B|BASELINE_FILE",
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

Either side may be a baseline file written by 'assay baseline export' (read
as a file when the path exists, else as a run), so an alert (a gate or a
drift check against a committed baseline) can be triaged without the old
database. A file holds verdicts and output hashes, not outputs, expected
values or the resolved spec: for its side a flipped case shows the output's
hash, the expected value comes from the stored side, and the spec is
compared by its hashes.

Outputs are shown quoted and escaped: control characters and terminal escape
sequences cannot act on your terminal. diff is information, not a verdict:
it exits 0. For a verdict use compare (paired statistics), drift (has the
model changed under its name?) or gate.`,
		Args: exactArgs(2),
		PreRunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(o.Format, report.NewRegistry().Diff.Names()); err != nil {
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
	limit := o.Limit
	if limit == 0 {
		limit = -1 // DiffOptions: 0 means the default
	}
	do := analysis.DiffOptions{Limit: limit, Target: o.Target}
	beforeFile, afterFile := isFile(o.Before), isFile(o.After)
	if !beforeFile && !afterFile {
		st, before, after, err := openRunPair(ctx, g, "diff", o.Before, o.After)
		if err != nil {
			return err
		}
		defer st.Close()
		d, err := analysis.DiffRuns(ctx, st, before, after, do)
		if err != nil {
			return fmt.Errorf("diff: %w", err)
		}
		return report.RunDiff(g.Stdout, o.Format, d)
	}
	// A baseline file on either side: the store is opened only for a side
	// that is a run.
	var st store.Store
	if !beforeFile || !afterFile {
		var err error
		if st, err = openExistingStore(ctx, g); err != nil {
			return fmt.Errorf("diff: %w", err)
		}
		defer st.Close()
	}
	side := func(ref string, file bool) (*analysis.DriftSide, error) {
		if file {
			snap, err := runview.LoadBaseline(ref)
			if err != nil {
				return nil, fmt.Errorf("diff: %w", err)
			}
			return analysis.BaselineDriftSide(snap), nil
		}
		run, err := getRun(ctx, st, "diff", ref)
		if err != nil {
			return nil, err
		}
		s, err := analysis.StoredDriftSide(ctx, st, run)
		if err != nil {
			return nil, fmt.Errorf("diff: %w", err)
		}
		return s, nil
	}
	before, err := side(o.Before, beforeFile)
	if err != nil {
		return err
	}
	after, err := side(o.After, afterFile)
	if err != nil {
		return err
	}
	d, err := analysis.DiffSides(ctx, st, before, after, do)
	if err != nil {
		return fmt.Errorf("diff: %w", err)
	}
	return report.RunDiff(g.Stdout, o.Format, d)
}

// isFile reports whether ref names an existing file (a baseline file)
// rather than a run.
func isFile(ref string) bool {
	fi, err := os.Stat(ref)
	return err == nil && !fi.IsDir()
}
