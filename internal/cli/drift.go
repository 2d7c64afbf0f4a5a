package cli

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/assay-eval/assay/internal/analysis"
	"github.com/assay-eval/assay/internal/gate"
	"github.com/assay-eval/assay/internal/report"
)

type driftOptions struct {
	Before, After      string
	Format             string
	Target             string
	Alpha              float64
	IdenticalThreshold float64
	IgnoreFingerprints bool
	SharedCases        bool
	Test               string
}

func (o *driftOptions) AddFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.Format, "format", "text", "text|json|markdown")
	f.StringVar(&o.Target, "target", "", "check this target only (default: every target both runs ran)")
	f.Float64Var(&o.Alpha, "alpha", 0.05, "level of the flip test and of the intervals")
	f.StringVar(&o.Test, "test", "exact", "flip test with one epoch per case: exact (exact McNemar) or score (McNemar score test)")
	f.Float64Var(&o.IdenticalThreshold, "identical-threshold", 0.95, "at temperature 0, drifted when the upper bound of the identical-output rate's interval is below this")
	f.BoolVar(&o.IgnoreFingerprints, "ignore-fingerprints", false, "show a changed model fingerprint without calling it drift (for providers that rotate fingerprints)")
	f.BoolVar(&o.SharedCases, "shared-cases", false, "when the runs measured different dataset versions, pair only the cases both measured instead of refusing")
}

func newDriftCommand(g *Globals) *cobra.Command {
	o := &driftOptions{}
	cmd := &cobra.Command{
		Use:   "drift RUN_A|BASELINE_FILE RUN_B",
		Short: "Test whether a target's outputs on the same cases changed between two runs (exit 3 on drift)",
		Long: `Test whether the same target answered the same cases differently in two
runs: a silent vendor update under the same model name, caught by re-running
a frozen canary set (run it with --no-cache, or the response cache answers
and nothing can change). For each target both runs ran, paired by case and
epoch:

  - the verdict flip rate (flipped / paired) with its Wilson interval, and
    a test of whether the flips lean one way, with its direction: McNemar's
    exact test on the primary verdicts (--test score: the score test); with
    several epochs the paired t-test on per-case mean verdicts; with a
    cluster tag a cluster-robust t-test on G−1 degrees of freedom;
  - the rate of byte-identical raw outputs, with its interval;
  - the model and fingerprint the provider reported, before and after.

The first argument may be a baseline file written by 'assay baseline
export' (read as a file when the path exists, else as a run), so a
scheduled canary job needs no database: commit the canary's baseline file
and check each new canary run against it. A file holds no response-cache
record, no expected values and a hash of each target's settings rather
than the settings; drift says so where it matters.

A target has drifted when its reported model or fingerprint changed, when
both runs asked for temperature 0 and the interval of its identical-output
rate lies wholly below --identical-threshold, or when the flip test's
p < --alpha.
Above temperature 0 identical outputs are expected to be rare, and the rate
decides nothing.

Exit codes: 0 no target drifted, 3 a target drifted (fail a CI canary job
on it), 1 error (e.g. runs on different dataset versions without
--shared-cases, or an unreadable baseline file), 2 usage.`,
		Example: `  assay drift 20250301-0900 latest
  assay baseline export latest -o canary-baseline.json   # once; commit the file
  assay drift canary-baseline.json latest --format markdown`,
		Args: exactArgs(2),
		PreRunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(o.Format, report.DriftFormats); err != nil {
				return err
			}
			if !(o.Alpha > 0 && o.Alpha < 1) {
				return usageError{fmt.Errorf("--alpha must be in (0, 1) (got %g)", o.Alpha)}
			}
			if !(o.IdenticalThreshold > 0 && o.IdenticalThreshold <= 1) {
				return usageError{fmt.Errorf("--identical-threshold must be in (0, 1] (got %g)", o.IdenticalThreshold)}
			}
			t, err := analysis.ParseTest(o.Test)
			if err != nil {
				return usageError{fmt.Errorf("--test: %w", err)}
			}
			o.Test = t
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Before, o.After = args[0], args[1]
			return runDrift(cmd.Context(), g, o)
		},
	}
	o.AddFlags(cmd)
	return cmd
}

func runDrift(ctx context.Context, g *Globals, o *driftOptions) error {
	ao := analysis.DriftOptions{
		Alpha: o.Alpha, IdenticalThreshold: o.IdenticalThreshold, Target: o.Target,
		IgnoreFingerprints: o.IgnoreFingerprints, SharedCases: o.SharedCases, Test: o.Test,
	}
	var r *analysis.DriftReport
	var beforeTargets, afterTargets []string
	if fi, err := os.Stat(o.Before); err == nil {
		// A baseline file: the canary's frozen run, with no database kept.
		if fi.IsDir() {
			return fmt.Errorf("drift: %s is a directory, not a baseline file", o.Before)
		}
		snap, err := gate.LoadBaseline(o.Before)
		if err != nil {
			return fmt.Errorf("drift: baseline: %w", err)
		}
		st, run, err := openRun(ctx, g, "drift", o.After)
		if err != nil {
			return err
		}
		defer st.Close()
		before := analysis.BaselineDriftSide(snap)
		after, err := analysis.StoredDriftSide(ctx, st, run)
		if err != nil {
			return fmt.Errorf("drift: %w", err)
		}
		if r, err = analysis.DriftSides(before, after, ao); err != nil {
			return fmt.Errorf("drift: %w", withSharedCasesHint(err))
		}
		beforeTargets, afterTargets = before.Targets(), after.Targets()
	} else {
		st, b, a, err := openRunPair(ctx, g, "drift", o.Before, o.After)
		if err != nil {
			return err
		}
		defer st.Close()
		if r, err = analysis.Drift(ctx, st, b, a, ao); err != nil {
			return fmt.Errorf("drift: %w", withSharedCasesHint(err))
		}
		beforeTargets, afterTargets = b.Targets, a.Targets
	}
	bid, aid := r.Before.ID, r.After.ID
	if len(r.Targets) == 0 {
		return fmt.Errorf("drift: runs %s and %s share no target (%s; %s): nothing to check",
			bid, aid, strings.Join(beforeTargets, ", "), strings.Join(afterTargets, ", "))
	}
	if err := report.Drift(g.Stdout, o.Format, r); err != nil {
		return err
	}
	if !slices.ContainsFunc(r.Targets, func(t analysis.TargetDrift) bool { return t.Verdict != analysis.DriftUnpaired }) {
		return fmt.Errorf("drift: runs %s and %s share no result of any target: nothing was compared", bid, aid)
	}
	if len(r.Drifted) > 0 {
		return &ExitError{Code: ExitFailed, Err: fmt.Errorf("drift: %s drifted", strings.Join(r.Drifted, ", "))}
	}
	return nil
}
