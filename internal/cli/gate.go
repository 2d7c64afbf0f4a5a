package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/assay-eval/assay/internal/gate"
	"github.com/assay-eval/assay/internal/report"
	"github.com/assay-eval/assay/internal/store"
)

type gateOptions struct {
	Run         string
	Baseline    string
	Rules       []string
	Targets     string
	Strict      bool
	SharedCases bool
	// AllowIncomplete gates a candidate run that did not finish.
	AllowIncomplete bool
	Alpha           float64
	Format          string
	Output          string
	Summary         string
}

func (o *gateOptions) AddFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.Baseline, "baseline", "", "the baseline: a baseline file (assay baseline export) or a run ID, ID prefix or latest")
	f.StringArrayVar(&o.Rules, "rule", nil, "a gate rule, e.g. 'primary max_drop=5%' (repeatable; replaces the spec's gate rules)")
	f.StringVar(&o.Targets, "targets", "", "gate only these targets (comma-separated)")
	f.BoolVar(&o.Strict, "strict", false, "fail an inconclusive check too: every check must show it is within its limit (a non-inferiority test)")
	f.BoolVar(&o.SharedCases, "shared-cases", false, "when the runs measured different datasets, compare the cases both have instead of refusing")
	f.BoolVar(&o.AllowIncomplete, "allow-incomplete", false, "gate a candidate run that did not finish (interrupted or failed) on the results it stored, instead of refusing")
	f.Float64Var(&o.Alpha, "alpha", 0, "level of the one-sided tests at the limits: the run's false-fail rate over all its checks (default: the spec's gate.alpha, else 0.05)")
	f.StringVar(&o.Format, "format", "text", "output format: "+strings.Join(report.GateFormats, "|"))
	f.StringVarP(&o.Output, "output", "o", "", "write the report to FILE (the text report still goes to stdout)")
	f.StringVar(&o.Summary, "summary", "", "also write the Markdown report to FILE, e.g. \"$GITHUB_STEP_SUMMARY\" or a file to post as a pull-request comment")
}

func newGateCommand(g *Globals) *cobra.Command {
	o := &gateOptions{}
	cmd := &cobra.Command{
		Use:   "gate [RUN|latest] --baseline FILE|RUN",
		Short: "Fail on a regression versus a baseline, with paired statistics (never calls a model)",
		Long: `Gate a candidate run against a baseline: a baseline file written by
'assay baseline export' (committed beside the spec, so CI needs no database),
or a stored run. Each rule — from the candidate run's spec (gate:) or from
--rule flags — is checked on every target both runs have, paired by case,
with one-sided tests at the limit the rule sets:

  fail          the data show the limit is crossed: the one-sided 1-alpha
                bound on the good side is beyond it, after Holm over every
                check of the run (a run with no limit truly crossed fails
                with at most alpha chance)
  pass          the data show it is within the limit: the bound on the bad
                side is within it
  inconclusive  neither; it passes unless --strict (which then makes every
                check a non-inferiority test)

Pass/fail rates are compared by the McNemar score test (Tango's bounds),
per-case means (epochs) and cost by the paired t-test; when cases carry a
cluster tag, by the cluster-robust t on the clusters. The p95 latency rule
needs at least 30 paired cases (inconclusive below).

With no rules the gate checks that the primary scorer's rate does not drop
more than 5% relative to the baseline. A target of the baseline missing from
the candidate fails. Runs on different datasets are refused unless
--shared-cases. A candidate run that did not finish is refused unless
--allow-incomplete. A changed model fingerprint is flagged.

` + gate.RuleSyntax + `

Exit codes: 0 no check failed, 3 a check failed (regression), 1 error,
2 usage error.`,
		Example: `  assay gate latest --baseline baseline.json
  assay gate latest --baseline baseline.json --summary "$GITHUB_STEP_SUMMARY"
  assay gate 20261202-1135 --baseline 20261125-0910 --rule 'primary max_drop=2pt' --format junit -o gate.xml`,
		Args: rangeArgs(0, 1),
		PreRunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(o.Format, report.GateFormats); err != nil {
				return err
			}
			if o.Baseline == "" {
				return usageError{errors.New("--baseline is required: a baseline file (assay baseline export RUN -o baseline.json) or a run ID")}
			}
			if cmd.Flags().Changed("alpha") && !(o.Alpha > 0 && o.Alpha <= 0.5) {
				return usageError{fmt.Errorf("--alpha must be above 0 and at most 0.5 (got %g); the usual value is 0.05", o.Alpha)}
			}
			for _, r := range o.Rules {
				if _, err := gate.ParseRuleFlag(r); err != nil {
					return usageError{err}
				}
			}
			if _, err := splitTargets(o.Targets); err != nil {
				return usageError{err}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Run = runArg(args)
			return runGate(cmd.Context(), g, o)
		},
	}
	o.AddFlags(cmd)
	return cmd
}

// splitTargets reads a comma-separated --targets list (nil when empty).
func splitTargets(s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []string
	for _, t := range strings.Split(s, ",") {
		t = strings.TrimSpace(t)
		if t == "" {
			return nil, fmt.Errorf("--targets %q has an empty name; write e.g. --targets a,b", s)
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out, nil
}

func runGate(ctx context.Context, g *Globals, o *gateOptions) error {
	st, run, err := openRun(ctx, g, "gate: candidate "+o.Run, o.Run)
	if err != nil {
		return err
	}
	defer st.Close()
	// Fail closed: a run stopped part way measured only some cases, and a
	// gate on those would pass what it never saw.
	if err := requireComplete("gate: the candidate run", run, o.AllowIncomplete); err != nil {
		return err
	}
	cand, err := gate.FromStore(ctx, st, run)
	if err != nil {
		return fmt.Errorf("gate: candidate: %w", err)
	}
	base, err := loadBaseline(ctx, g, st, o.Baseline)
	if err != nil {
		return err
	}

	targets, _ := splitTargets(o.Targets)
	for _, t := range targets {
		if base.Target(t) == nil && cand.Target(t) == nil {
			return usageError{fmt.Errorf("--targets: %q is in neither run (baseline targets: %s; candidate targets: %s)", t, targetList(base), targetList(cand))}
		}
	}

	// The candidate's spec gives the rules and alpha; --rule replaces its
	// rules (a stale rule there does not matter then), --alpha its alpha.
	rules, specAlpha, err := gate.RulesFromConfig(run.Config, nil, nil)
	fromFlags := len(o.Rules) > 0
	switch {
	case fromFlags:
		rules, err = gate.RulesFromFlags(o.Rules, cand.Scorers, cand.TagKeys())
		if err != nil {
			return usageError{err}
		}
	case err != nil:
		return fmt.Errorf("gate: run %s: %w", run.ID, err)
	}
	alpha := o.Alpha
	if alpha == 0 {
		alpha = specAlpha
	}
	if err := checkSlices(rules, cand); err != nil {
		if fromFlags {
			return usageError{err}
		}
		return fmt.Errorf("gate: the spec's gate rules: %w", err)
	}

	res, err := gate.Evaluate(base, cand, rules, gate.Options{Alpha: alpha, Strict: o.Strict, SharedCases: o.SharedCases, Targets: targets})
	if err != nil {
		return fmt.Errorf("gate: %w", err)
	}
	if run.Status != store.StatusComplete {
		res.Warnings = append(res.Warnings, fmt.Sprintf("the candidate run %s is %s, not complete (--allow-incomplete): only its stored results were gated (finish it with assay run SPEC --resume %s)", run.ID, run.Status, run.ID))
	}

	if o.Output != "" {
		if err := writeFileAtomic(o.Output, func(w io.Writer) error { return report.Gate(w, o.Format, res) }); err != nil {
			return fmt.Errorf("gate: writing %s: %w", o.Output, err)
		}
		if err := report.GateText(g.Stdout, res); err != nil {
			return err
		}
	} else if err := report.Gate(g.Stdout, o.Format, res); err != nil {
		return err
	}
	if o.Summary != "" {
		if err := writeOut(o.Summary, func(w io.Writer) error { return report.GateMarkdown(w, res) }); err != nil {
			return fmt.Errorf("gate: --summary %s: %w", o.Summary, err)
		}
	}
	if res.Verdict == gate.Fail {
		return &ExitError{Code: ExitFailed, Err: fmt.Errorf("gate failed: %s", failedChecks(res))}
	}
	return nil
}

// loadBaseline reads the baseline: a file when the path exists, else a run.
func loadBaseline(ctx context.Context, g *Globals, st store.Store, ref string) (*gate.Snapshot, error) {
	if fi, err := os.Stat(ref); err == nil {
		if fi.IsDir() {
			return nil, fmt.Errorf("gate: --baseline %s is a directory, not a baseline file", ref)
		}
		s, err := gate.LoadBaseline(ref)
		if err != nil {
			return nil, fmt.Errorf("gate: baseline: %w", err)
		}
		return s, nil
	}
	run, err := getRun(ctx, st, "gate: baseline "+ref, ref)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, fmt.Errorf("gate: --baseline %s: no such file, and no run with that ID in %s", ref, g.DB)
	case err != nil:
		return nil, err
	}
	s, err := gate.FromStore(ctx, st, run)
	if err != nil {
		return nil, fmt.Errorf("gate: baseline: %w", err)
	}
	return s, nil
}

// checkSlices refuses a rule about a slice no case of the candidate is in:
// such a rule would otherwise pass forever, measuring nothing.
func checkSlices(rules []gate.Rule, cand *gate.Snapshot) error {
	for _, r := range rules {
		k, v := r.Check.SliceKey, r.Check.SliceValue
		if k == "" {
			continue
		}
		var values []string
		found := false
		for i := range cand.Cases {
			tv, ok := cand.Tag(i, k)
			if !ok {
				continue
			}
			if tv == v {
				found = true
				break
			}
			if !slices.Contains(values, tv) && len(values) < 12 {
				values = append(values, tv)
			}
		}
		if found {
			continue
		}
		if len(values) == 0 {
			return fmt.Errorf("rule %q: no case of the candidate run has the tag %q", r.String(), k)
		}
		slices.Sort(values)
		return fmt.Errorf("rule %q: no case of the candidate run has %s=%q (values seen: %s)", r.String(), k, v, strings.Join(values, ", "))
	}
	return nil
}

func targetList(s *gate.Snapshot) string {
	var names []string
	for _, t := range s.Targets {
		names = append(names, t.Name)
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// failedChecks names what failed, for the error line of a failed gate.
func failedChecks(res *gate.Result) string {
	var parts []string
	for _, t := range res.Targets {
		if t.Missing {
			parts = append(parts, fmt.Sprintf("target %q not measured", t.Name))
		}
		for _, c := range t.Checks {
			if c.Verdict == gate.Fail {
				parts = append(parts, fmt.Sprintf("%s on target %q", c.Rule, t.Name))
			}
		}
	}
	return strings.Join(parts, "; ")
}
