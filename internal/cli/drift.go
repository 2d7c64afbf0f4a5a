package cli

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/assay-eval/assay/internal/analysis"
	"github.com/assay-eval/assay/internal/report"
	"github.com/assay-eval/assay/internal/runview"
	"github.com/assay-eval/assay/internal/store"
)

type driftOptions struct {
	Before, After      string
	Format             string
	Target             string
	Alpha              float64
	IdenticalThreshold float64
	IgnoreFingerprints bool
	SharedCases        bool
	AllowPartial       bool
	Test               string
	Calibrate          string
	MaxErrorRate       float64
	MinPairs           int
}

func (o *driftOptions) AddFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.Format, "format", "text", "text|json|markdown")
	f.StringVar(&o.Target, "target", "", "check this target only (default: every target both runs ran)")
	f.Float64Var(&o.Alpha, "alpha", 0.05, "level of the flip test and of the intervals")
	f.StringVar(&o.Test, "test", "exact", "flip test with one epoch per case: exact (exact McNemar) or score (McNemar score test)")
	f.Float64Var(&o.IdenticalThreshold, "identical-threshold", 0.95, "uncalibrated, at temperature 0: noted (not drift) when the upper bound of the identical-output rate's interval is below this")
	f.BoolVar(&o.IgnoreFingerprints, "ignore-fingerprints", false, "show a changed model fingerprint without calling it drift (for providers that rotate fingerprints)")
	f.BoolVar(&o.SharedCases, "shared-cases", false, "when the runs measured different dataset versions, pair only the cases both measured instead of refusing")
	addAllowPartialFlag(cmd, &o.AllowPartial, "check a side that did not finish (interrupted, failed or running) or that covers fewer cases than the other, on the cases both have, instead of refusing")
	f.StringVar(&o.Calibrate, "calibrate", "", "a second run (or baseline file) of the first side's configuration on the same cases: the model's own self-agreement the canary is tested against (default: epochs 1 and 2 of the first side when it has two)")
	f.Float64Var(&o.MaxErrorRate, "max-error-rate", analysis.DefaultDriftMaxErrorRate, "a side whose calls of a target failed more often than this cannot be judged (exit 1)")
	f.IntVar(&o.MinPairs, "min-pairs", analysis.DefaultDriftMinPairs, "fewest pairs with an output on both sides a target is judged on (fewer: exit 1)")
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
  - the model and fingerprint the provider reported, before and after;
  - the flipped cases (the first 20 in text and Markdown, all in JSON).

A failed call (a provider error: auth, timeout, rate limit …) is not
behaviour: a pair where either call failed is left out of the flips and the
identical outputs, and counted apart by side and error kind. A side whose
calls of a target failed more often than --max-error-rate (default: more
than half), or fewer than --min-pairs (10) pairs with an output on both
sides, cannot be judged: drift says why ("cannot judge: 152 of 152 calls of
x in run R failed: auth") and exits 1, never 3.

Calibration: hosted APIs are not deterministic at temperature 0, so the
identical-output rate is tested against the model's own self-agreement,
learnt from two runs of the same configuration on the same cases:
--calibrate RUN (a second run of the first side's configuration), or the
first side's epochs 1 and 2 when it has two or more. The canary's
identical-output rate (one-sided: lower) and flip rate (one-sided: higher)
are each tested against the calibration's by a two-sample z test of
proportions (pooled variance: the calibration's own uncertainty counts),
and with the flips' direction test these three tests each decide at
--alpha/3, so a model that is merely non-deterministic is flagged at most
--alpha of the time. Without a calibration the identical-output rate is
reported as uncalibrated and decides nothing alone.

The first argument may be a baseline file written by 'assay baseline
export' (read as a file when the path exists, else as a run), so a
scheduled canary job needs no database: commit the canary's baseline file
and check each new canary run against it. A file holds no response-cache
record, no expected values and a hash of each target's settings rather
than the settings; drift says so where it matters.

A target has drifted when its reported model or fingerprint changed, when
the flip test's p < --alpha (--alpha/3 when calibrated), or, with a
calibration, when its flip rate is above or its identical-output rate below
the model's own. Uncalibrated, an identical-output rate whose interval lies
below --identical-threshold at temperature 0 is noted, not called drift.

Exit codes: 0 no target drifted, 3 a target drifted (fail a CI canary job
on it), 1 error (a side too unhealthy to judge, runs on different dataset
versions without --shared-cases, an unreadable baseline file), 2 usage.`,
		Example: `  assay drift 20250301-0900 latest
  assay baseline export latest -o canary-baseline.json   # once; commit the file
  assay drift canary-baseline.json latest --format markdown
  assay drift 20250301-0900 latest --calibrate 20250301-0930   # two runs of the baseline's config`,
		Args: exactArgs(2),
		PreRunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(o.Format, report.NewRegistry().Drift.Names()); err != nil {
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
			if !(o.MaxErrorRate > 0 && o.MaxErrorRate < 1) {
				return usageError{fmt.Errorf("--max-error-rate must be in (0, 1) (got %g)", o.MaxErrorRate)}
			}
			if o.MinPairs < 1 {
				return usageError{fmt.Errorf("--min-pairs must be 1 or more (got %d)", o.MinPairs)}
			}
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
		MaxErrorRate: o.MaxErrorRate, MinPairs: o.MinPairs,
	}
	st, run, err := openRun(ctx, g, "drift", o.After)
	if err != nil {
		return err
	}
	defer st.Close()
	after, err := analysis.StoredDriftSide(ctx, st, run)
	if err != nil {
		return fmt.Errorf("drift: %w", err)
	}
	before, err := driftSide(ctx, st, o.Before, "baseline")
	if err != nil {
		return err
	}
	if err := requireWholeEvidence("drift", driftEvidence("the first side", before), driftEvidence("the second side", after), o.AllowPartial, o.SharedCases); err != nil {
		// A side its provider stopped early (the circuit breaker after a
		// few failed calls) is partial because its calls failed: say that
		// first.
		if why := analysis.UnhealthySides(o.MaxErrorRate, o.Target, before, after); len(why) > 0 {
			return fmt.Errorf("drift: %s; and %s", strings.Join(why, "; "), strings.TrimPrefix(err.Error(), "drift: "))
		}
		return err
	}
	if o.Calibrate != "" {
		if ao.Calibration, err = driftSide(ctx, st, o.Calibrate, "--calibrate"); err != nil {
			return err
		}
	}
	r, err := analysis.DriftSides(before, after, ao)
	if err != nil {
		return fmt.Errorf("drift: %w", withSharedCasesHint(err))
	}
	bid, aid := r.Before.ID, r.After.ID
	if len(r.Targets) == 0 {
		return fmt.Errorf("drift: runs %s and %s share no target (%s; %s): nothing to check",
			bid, aid, strings.Join(before.Targets(), ", "), strings.Join(after.Targets(), ", "))
	}
	if err := report.Drift(g.Stdout, o.Format, r); err != nil {
		return err
	}
	if len(r.CannotJudge) > 0 {
		// A side whose calls failed says nothing of the model: an error
		// (exit 1), never drift (exit 3).
		return fmt.Errorf("drift: %s", strings.Join(r.CannotJudge, "; "))
	}
	if !slices.ContainsFunc(r.Targets, func(t analysis.TargetDrift) bool { return t.Verdict != analysis.DriftUnpaired }) {
		return fmt.Errorf("drift: runs %s and %s share no result of any target: nothing was compared", bid, aid)
	}
	if len(r.Drifted) > 0 {
		return &ExitError{Code: ExitFailed, Err: fmt.Errorf("drift: %s drifted", strings.Join(r.Drifted, ", "))}
	}
	return nil
}

// driftSide reads a side of a drift check: a baseline file when the path
// exists (a canary job needs no database), else a run in the store.
func driftSide(ctx context.Context, st store.Store, ref, what string) (*analysis.DriftSide, error) {
	if fi, err := os.Stat(ref); err == nil {
		if fi.IsDir() {
			return nil, fmt.Errorf("drift: %s is a directory, not a baseline file", ref)
		}
		snap, err := runview.LoadBaseline(ref)
		if err != nil {
			return nil, fmt.Errorf("drift: %s: %w", what, err)
		}
		return analysis.BaselineDriftSide(snap), nil
	}
	run, err := getRun(ctx, st, "drift", ref)
	if err != nil {
		return nil, err
	}
	s, err := analysis.StoredDriftSide(ctx, st, run)
	if err != nil {
		return nil, fmt.Errorf("drift: %w", err)
	}
	return s, nil
}
