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

	"github.com/assay-eval/assay/internal/analysis"
	"github.com/assay-eval/assay/internal/gate"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/report"
	"github.com/assay-eval/assay/internal/runview"
	"github.com/assay-eval/assay/internal/spec"
	"github.com/assay-eval/assay/internal/store"
)

type gateOptions struct {
	Run         string
	Spec        string // the spec RUN is of (latest: its newest run)
	Baseline    string
	Rules       []string
	Targets     string
	Strict      bool
	SharedCases bool
	// AllowPartial gates a side that did not finish, or that covers fewer
	// cases than the other (--allow-incomplete is its older name).
	AllowPartial bool
	// RulesFrom is whose gate rules apply: baseline (default) or candidate.
	RulesFrom string
	Alpha     float64
	Format    string
	Output    string
	Summary   string
}

func (o *gateOptions) AddFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.Baseline, "baseline", "", "the baseline: a baseline file (assay baseline export) or a run ID, ID prefix or latest")
	addSpecSelectFlag(cmd, &o.Spec)
	f.StringArrayVar(&o.Rules, "rule", nil, "a gate rule, e.g. 'primary max_drop=5%' (repeatable; replaces the specs' gate rules: for the CI configuration's own rules)")
	f.StringVar(&o.RulesFrom, "rules-from", gate.RulesBaseline, "whose spec's gate rules apply: baseline (a change cannot relax the gate it is judged by) or candidate (apply the rules the candidate's spec changed)")
	f.StringVar(&o.Targets, "targets", "", "gate only these targets (comma-separated)")
	f.BoolVar(&o.Strict, "strict", false, "fail an inconclusive check too: every check must show it is within its limit (a non-inferiority test)")
	f.BoolVar(&o.SharedCases, "shared-cases", false, "when the runs measured different datasets, compare the cases both have instead of refusing")
	addAllowPartialFlag(cmd, &o.AllowPartial, "gate a side that did not finish (interrupted, failed or running) or that covers fewer cases than the other, on the cases both have, instead of refusing")
	f.Float64Var(&o.Alpha, "alpha", 0, "level of the one-sided tests at the limits: the run's false-fail rate over all its checks (default: the spec's gate.alpha, else 0.05)")
	f.StringVar(&o.Format, "format", "text", "output format: "+strings.Join(report.NewRegistry().Gate.Names(), "|"))
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
or a stored run. The base decides the gate: the rules are the baseline's
(the gate: section of the spec it was run from, recorded in the baseline
file with its hash), so a change under review cannot loosen the gate it is
judged by. Every rule the candidate's spec changed is reported, and a
relaxed one (a larger max_drop or max_rise, a lower min, a higher max, a
lower alpha, a removed rule) fails the gate unless --rules-from candidate
is passed. --rule flags (the CI configuration's own) replace both. Each rule
is checked on every target both runs have, paired by case, with one-sided
tests at the limit the rule sets:

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
--shared-cases. Partial evidence is refused: a side that did not finish, or
that covers fewer cases than the other (a --limit run against a full
baseline), unless --allow-partial (or --shared-cases, for the cases both
have). A side more than half of whose calls of a target failed cannot be
judged (exit 1: errors are not behaviour). A changed model fingerprint is
flagged.

` + gate.RuleSyntax + `

Exit codes: 0 no check failed, 3 a check failed (regression), 1 error,
2 usage error.`,
		Example: `  assay gate latest --baseline baseline.json
  assay gate latest --baseline baseline.json --summary "$GITHUB_STEP_SUMMARY"
  assay gate 20261202-1135 --baseline 20261125-0910 --rule 'primary max_drop=2pt' --format junit -o gate.xml`,
		Args: rangeArgs(0, 1),
		PreRunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(o.Format, report.NewRegistry().Gate.Names()); err != nil {
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
			if o.RulesFrom != gate.RulesBaseline && o.RulesFrom != gate.RulesCandidate {
				return usageError{fmt.Errorf("--rules-from must be baseline or candidate (got %q)", o.RulesFrom)}
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
	st, run, err := openRunOf(ctx, g, "gate: candidate "+o.Run, o.Run, o.Spec, true)
	if err != nil {
		return err
	}
	defer st.Close()
	if run.Kind == record.KindLoad {
		return runLoadGate(ctx, g, st, run, o)
	}
	// Fail closed: a run stopped part way measured only some cases, and a
	// gate on those would pass what it never saw.
	candEv := evidence{Name: "the candidate", Run: run}
	if err := requireFinished("gate", o.AllowPartial, candEv); err != nil {
		return err
	}
	cand, err := runview.FromStore(ctx, st, run)
	if err != nil {
		return fmt.Errorf("gate: candidate: %w", err)
	}
	base, baseRun, err := loadBaselineRun(ctx, g, st, o.Baseline)
	if err != nil {
		return err
	}
	candEv = evidence{Name: "the candidate", Run: run, Source: cand.Source, DatasetHash: cand.Run.DatasetHash, Cases: caseIDs(cand)}
	baseEv := evidence{Name: "the baseline", Run: baseRun, Source: base.Source, DatasetHash: base.Run.DatasetHash, Cases: caseIDs(base)}
	if err := requireWholeEvidence("gate", baseEv, candEv, o.AllowPartial, o.SharedCases); err != nil {
		return err
	}

	targets, _ := splitTargets(o.Targets)
	for _, t := range targets {
		if base.Target(t) == nil && cand.Target(t) == nil {
			return usageError{fmt.Errorf("--targets: %q is in neither run (baseline targets: %s; candidate targets: %s)", t, targetList(base), targetList(cand))}
		}
	}
	// Errors are not behaviour: a side most of whose calls failed says
	// nothing about the model, and failing the gate on it would page
	// someone about a regression that is an outage or a bad key.
	if err := judgeable("gate", baseRun, base, targets); err != nil {
		return err
	}
	if err := judgeable("gate", run, cand, targets); err != nil {
		return err
	}

	rules, alpha, from, hash, changes, notes, err := gateRules(o, base, cand, run)
	if err != nil {
		return err
	}
	if o.Alpha != 0 {
		alpha = o.Alpha
	}
	if err := checkSlices(rules, cand); err != nil {
		if from == gate.RulesFlags {
			return usageError{err}
		}
		return fmt.Errorf("gate: the %s's gate rules: %w", from, err)
	}

	res, err := gate.Evaluate(base, cand, rules, gate.Options{Alpha: alpha, Strict: o.Strict, SharedCases: o.SharedCases, Targets: targets})
	if err != nil {
		return fmt.Errorf("gate: %w", err)
	}
	res.SetRuleChanges(from, hash, changes)
	res.Warnings = append(notes, res.Warnings...)
	for _, s := range []evidence{baseEv, candEv} {
		if s.Run != nil && s.Run.Status != record.StatusComplete {
			res.Warnings = append(res.Warnings, fmt.Sprintf("%s run %s is %s, not complete (--allow-partial): only its stored results were gated (finish it with assay run SPEC --resume %s)", s.Name, s.Run.ID, s.Run.Status, s.Run.ID))
		}
	}

	if o.Output != "" {
		if err := writeOutput(o.Output, func(w io.Writer) error { return report.Gate(w, o.Format, res) }); err != nil {
			return fmt.Errorf("gate: writing %s: %w", o.Output, err)
		}
		if err := report.GateText(g.Stdout, res); err != nil {
			return err
		}
	} else if err := report.Gate(g.Stdout, o.Format, res); err != nil {
		return err
	}
	if o.Summary != "" {
		if err := writeOutput(o.Summary, func(w io.Writer) error { return report.GateMarkdown(w, res) }); err != nil {
			return fmt.Errorf("gate: --summary %s: %w", o.Summary, err)
		}
	}
	if res.Verdict == gate.Fail {
		return &ExitError{Code: ExitFailed, Err: fmt.Errorf("gate failed: %s", failedChecks(res))}
	}
	return nil
}

// loadBaseline reads the baseline: a file when the path exists, else a run.
func loadBaseline(ctx context.Context, g *Globals, st store.Store, ref string) (*runview.View, error) {
	s, _, err := loadBaselineRun(ctx, g, st, ref)
	return s, err
}

// loadBaselineRun is loadBaseline that also returns the baseline's run
// (nil for a baseline file).
func loadBaselineRun(ctx context.Context, g *Globals, st store.Store, ref string) (*runview.View, *record.Run, error) {
	if fi, err := os.Stat(ref); err == nil {
		if fi.IsDir() {
			return nil, nil, fmt.Errorf("gate: --baseline %s is a directory, not a baseline file", ref)
		}
		s, err := runview.LoadBaseline(ref)
		if err != nil {
			return nil, nil, fmt.Errorf("gate: baseline: %w", err)
		}
		return s, nil, nil
	}
	run, err := getRun(ctx, st, "gate: baseline "+ref, ref)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, nil, fmt.Errorf("gate: --baseline %s: no such file, and no run with that ID in %s", ref, storeName(g.DB))
	case err != nil:
		return nil, nil, err
	}
	s, err := runview.FromStore(ctx, st, run)
	if err != nil {
		return nil, nil, fmt.Errorf("gate: baseline: %w", err)
	}
	return s, run, nil
}

func caseIDs(s *runview.View) []string {
	ids := make([]string, len(s.Cases))
	for i, c := range s.Cases {
		ids[i] = c.ID
	}
	return ids
}

// gateRules decides the rules the gate applies, and whose they are. The
// base decides: by default the baseline's rules (the gate: section of the
// spec it was run from), so a change under review cannot loosen the gate
// it is judged by; --rules-from candidate applies the candidate spec's
// instead, and --rule flags (the CI configuration's) replace both. It
// returns the rules, the alpha of the section applied, where they came
// from, its GateHash, what the candidate's spec changed in the baseline's
// rules, and notes for the report.
func gateRules(o *gateOptions, base, cand *runview.View, run *record.Run) (rules []gate.Rule, alpha float64, from, hash string, changes []gate.RuleChange, notes []string, err error) {
	candGate, candErr := runview.GateOfConfig(run.Config)
	baseGate := base.Run.Gate
	if baseGate != nil && candGate != nil {
		changes = gate.CompareGates(baseGate, candGate, cand.Primary)
	}
	relaxed := gate.Relaxed(changes)
	var applied *spec.Gate
	from = o.RulesFrom
	switch {
	case len(o.Rules) > 0:
		from = gate.RulesFlags
		rules, err = gate.RulesFromFlags(o.Rules, cand.Scorers, cand.TagKeys())
		if err != nil {
			return nil, 0, "", "", nil, nil, usageError{err}
		}
		if baseGate != nil {
			alpha = baseGate.Alpha
		} else if candGate != nil {
			alpha = candGate.Alpha
		}
		if len(changes) > 0 {
			notes = append(notes, fmt.Sprintf("the candidate's spec changes the baseline's gate rules (%s); not applied: the --rule flags decide", changeList(changes)))
		}
		return rules, alpha, from, "", changes, notes, nil
	case from == gate.RulesCandidate:
		applied = candGate
		s := "the candidate's gate rules were applied (--rules-from candidate), not the baseline's"
		if len(relaxed) > 0 {
			s += fmt.Sprintf(", including the rules it relaxes: %s", changeList(relaxed))
		}
		notes = append(notes, s)
	case baseGate == nil:
		from, applied = gate.RulesCandidate, candGate
		notes = append(notes, fmt.Sprintf("THE BASELINE RECORDS NO GATE RULES (%s was written by an older assay): the candidate's own rules were applied, which the change under review could have relaxed; export the baseline again (assay baseline export RUN -o FILE) so that its rules decide", base.Source))
	default:
		applied = baseGate
	}
	if from == gate.RulesCandidate && candErr != nil {
		return nil, 0, "", "", nil, nil, fmt.Errorf("gate: run %s: %w", run.ID, candErr)
	}
	rules, alpha, err = gate.RulesOf(applied, "the "+from+"'s spec", nil, nil)
	if err != nil {
		return nil, 0, "", "", nil, nil, fmt.Errorf("gate: %w", err)
	}
	return rules, alpha, from, runview.GateHash(applied), changes, notes, nil
}

func changeList(cs []gate.RuleChange) string {
	var parts []string
	for _, c := range cs {
		parts = append(parts, c.String())
	}
	return strings.Join(parts, "; ")
}

// judgeable refuses a side too unhealthy to judge: a target more than
// half of whose calls failed (an outage, a bad key) measured the
// provider, not the model, so no verdict about behaviour can come of it.
// The message is worded as drift's (analysis.DriftSides): "cannot judge:
// N of M calls of T in run R failed: KIND". run is the side's stored run
// (nil for a baseline file); only the targets named are checked (nil:
// all).
func judgeable(what string, run *record.Run, s *runview.View, targets []string) error {
	side := &analysis.DriftSide{Snap: s, Run: run}
	names := targets
	if names == nil {
		names = []string{""} // every target
	}
	for _, name := range names {
		if why := analysis.UnhealthySides(analysis.DefaultDriftMaxErrorRate, name, side); len(why) > 0 {
			return fmt.Errorf("%s: %s; errors are not behaviour: fix the cause and run again (assay run SPEC --resume %s retries the failed calls)",
				what, why[0], s.Run.ID)
		}
	}
	return nil
}

// checkSlices refuses a rule about a slice no case of the candidate is in:
// such a rule would otherwise pass forever, measuring nothing.
func checkSlices(rules []gate.Rule, cand *runview.View) error {
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

func targetList(s *runview.View) string {
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
	if res.RelaxedRules > 0 {
		parts = append(parts, "the candidate's spec relaxes the baseline's gate rules ("+changeList(gate.Relaxed(res.RuleChanges))+"); pass --rules-from candidate to apply its rules on purpose")
	}
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
