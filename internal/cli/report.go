package cli

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/assay-eval/assay/internal/analysis"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/report"
	"github.com/assay-eval/assay/internal/runview"
	"github.com/assay-eval/assay/internal/spec"
	"github.com/assay-eval/assay/internal/store"
)

type reportOptions struct {
	Run string
	// Spec, when set, is the spec RUN is of (latest: its newest run).
	Spec    string
	Format  string
	Output  string
	Scoring int
	// Reference names the selection ledger's reference variant
	// (RUN or RUN:TARGET); empty means the experiment's first variant.
	Reference string
	reference analysis.VariantRef
	// Baseline, when set, is a baseline file or run the report checks the
	// targets' reported models against.
	Baseline string
	// Failures is how many of the worst failures to list: a count or "all".
	Failures string
	worst    int // parsed from Failures; -1: all
	// Test is the paired pass/fail test (score or exact) and CI the rate
	// interval of one verdict per case (wilson, cp or jeffreys).
	Test, CI     string
	test, rateCI string // parsed
}

func (o *reportOptions) AddFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.Format, "format", "text", "report format: "+strings.Join(report.NewRegistry().Report.Names(), "|"))
	f.StringVarP(&o.Output, "output", "o", "", "write to FILE instead of stdout")
	f.IntVar(&o.Scoring, "scoring", 0, "which scoring of the run (default: the latest)")
	addSpecSelectFlag(cmd, &o.Spec)
	f.StringVar(&o.Baseline, "baseline", "", "a baseline file (assay baseline export) or run: warn about every target whose reported model or fingerprint changed since it")
	f.StringVar(&o.Failures, "failures", strconv.Itoa(analysis.DefaultWorst), "how many of the worst failures to list (costliest first), N or all")
	f.StringVar(&o.Test, "test", "score", "paired pass/fail test: score (McNemar score test with Tango's interval, which agree by construction) or exact (exact McNemar with Newcombe's interval; a verdict needs both)")
	f.StringVar(&o.CI, "ci", "wilson", "interval of a rate when each case ran once, unclustered: wilson, cp (Clopper–Pearson, exact) or jeffreys")
	f.StringVar(&o.Reference, "reference", "", "the selection ledger's reference variant, RUN or RUN:TARGET, a run of the experiment (default: the experiment's first variant)")
}

func newReportCommand(g *Globals) *cobra.Command {
	o := &reportOptions{}
	cmd := &cobra.Command{
		Use:   "report [RUN_ID|latest]",
		Short: "Render the decision report of a run (never calls a model)",
		Args:  rangeArgs(0, 1),
		PreRunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(o.Format, report.NewRegistry().Report.Names()); err != nil {
				return err
			}
			n, err := parseFailures(o.Failures)
			if err != nil {
				return usageError{err}
			}
			o.worst = n
			if o.test, err = analysis.ParseTest(o.Test); err != nil {
				return usageError{fmt.Errorf("--test: %w", err)}
			}
			if o.rateCI, err = analysis.ParseRateCI(o.CI); err != nil {
				return usageError{fmt.Errorf("--ci: %w", err)}
			}
			if cmd.Flags().Changed("reference") {
				ref, err := analysis.ParseVariantRef(o.Reference)
				if err != nil {
					return usageError{fmt.Errorf("--reference: %w", err)}
				}
				o.reference = ref
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Run = runArg(args)
			return runReport(cmd.Context(), g, o)
		},
	}
	o.AddFlags(cmd)
	return cmd
}

func runReport(ctx context.Context, g *Globals, o *reportOptions) error {
	st, run, err := openRunOf(ctx, g, "report", o.Run, o.Spec, true)
	if err != nil {
		return err
	}
	defer st.Close()
	if run.Kind == record.KindLoad {
		return reportLoad(ctx, g, st, run, o.Format, o.Output)
	}
	if err := requireScoring(ctx, st, "report", run, o.Scoring); err != nil {
		return err
	}
	var volume float64
	var sp spec.Spec
	if len(run.Config) > 0 && jsonUnmarshal(run.Config, &sp) == nil {
		volume = sp.Volume.RequestsPerMonth
	}
	if !o.reference.IsZero() && run.Experiment == "" {
		return usageError{fmt.Errorf("--reference: run %s belongs to no experiment, so it has no selection ledger (assay run --experiment NAME records one)", run.ID)}
	}
	rep, err := analysis.Analyze(ctx, st, run, analysis.Options{Scoring: o.Scoring, RequestsPerMonth: volume, Reference: o.reference, Worst: o.worst, Test: o.test, RateCI: o.rateCI})
	if errors.Is(err, analysis.ErrUnknownReference) {
		return usageError{err}
	}
	if err != nil {
		return err
	}
	if o.Baseline != "" {
		warnings, err := fingerprintWarnings(ctx, g, st, run, o.Baseline)
		if err != nil {
			return fmt.Errorf("report: %w", err)
		}
		rep.Warnings = append(rep.Warnings, warnings...)
	}
	doc := report.RunReport{Report: rep}
	if o.Format == "junit" {
		// JUnit lists every result, which the analysis does not carry.
		if doc.Rows, err = analysis.Rows(ctx, st, run, rep.Run.Scoring); err != nil {
			return err
		}
	}
	r, err := report.NewRegistry().Report.Reporter(o.Format, doc)
	if err != nil {
		return err
	}
	return printOut(g.Stdout, o.Output, r)
}

// parseFailures reads --failures: a positive count, or "all" (-1).
func parseFailures(s string) (int, error) {
	if s == "all" {
		return -1, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("--failures %q: give a number of failures from 1, or all", s)
	}
	return n, nil
}

// fingerprintWarnings compares the models each target reported in the run
// with those it reported in the baseline: a provider serving another model
// (or build) under the same name is a change the scores alone may not show.
func fingerprintWarnings(ctx context.Context, g *Globals, st store.Store, run *record.Run, baseline string) ([]string, error) {
	base, err := loadBaseline(ctx, g, st, baseline)
	if err != nil {
		return nil, err
	}
	cand, err := runview.FromStore(ctx, st, run)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, ct := range cand.Targets {
		bt := base.Target(ct.Name)
		if bt == nil {
			continue
		}
		if runview.FingerprintsChanged(bt.Fingerprints, ct.Fingerprints) {
			out = append(out, fmt.Sprintf("target %s: the reported model changed since the baseline %s (%s → %s): the provider may serve a different model under the same name; assay drift measures whether its outputs changed",
				ct.Name, base.Run.ID, runview.FingerprintList(bt.Fingerprints), runview.FingerprintList(ct.Fingerprints)))
		}
	}
	return out, nil
}
