package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/assay-eval/assay/internal/analysis"
	"github.com/assay-eval/assay/internal/gate"
	"github.com/assay-eval/assay/internal/plan"
	"github.com/assay-eval/assay/internal/report"
	"github.com/assay-eval/assay/internal/units"
)

type planOptions struct {
	Run     string
	Delta   float64
	PDisc   float64
	P1, P2  float64
	Cases   int
	Power   float64
	Alpha   float64
	Slices  bool
	Tags    []string
	Scoring int
	JSON    bool
	// Gate plans the gate's power on the run's set; Rules replace the
	// spec's gate rules (as gate --rule).
	Gate  bool
	Rules []string

	// set records which flags the user gave (cmd.Flags().Changed).
	set  map[string]bool
	mode plan.Mode
}

func (o *planOptions) AddFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.Float64Var(&o.Delta, "delta", 0, "difference in pass rates to detect, as a fraction (0.03 = 3 points)")
	f.Float64Var(&o.PDisc, "p-disc", 0, "assumed fraction of cases the two targets disagree on (passed by exactly one)")
	f.IntVar(&o.Cases, "cases", 0, "with --p-disc: the size of a set, for its minimum detectable difference")
	f.Float64Var(&o.P1, "p1", 0, "assumed pass rate of the first target (with --p2)")
	f.Float64Var(&o.P2, "p2", 0, "assumed pass rate of the second target (with --p1)")
	f.Float64Var(&o.Power, "power", 0.8, "chance of detecting the difference when it is real")
	f.Float64Var(&o.Alpha, "alpha", 0.05, "two-sided significance level")
	f.BoolVar(&o.Slices, "slices", false, "with a run: also plan per slice (each tag value)")
	f.StringArrayVar(&o.Tags, "tag", nil, "with a run: only slices of this tag key (repeatable; implies --slices)")
	f.IntVar(&o.Scoring, "scoring", 0, "with a run: which scoring (default: the latest)")
	f.BoolVar(&o.JSON, "json", false, "print JSON instead of text")
	f.BoolVar(&o.Gate, "gate", false, "with a run: the gate's power to catch a worsening of twice each rule's limit on this set")
	f.StringArrayVar(&o.Rules, "rule", nil, "with --gate: a gate rule, e.g. 'primary max_drop=5%' (repeatable; replaces the spec's gate rules)")
}

const planLong = `Plan the size of an evaluation, before or after a run.

Two targets run on the same cases are compared by the McNemar score test,
the test the report uses: only the cases passed by exactly one of them (the
discordant cases) carry evidence, so the fraction of discordant cases
decides how many cases a difference needs (Connor 1987, Biometrics
43:207-211, is the score test's power). A report of k targets adjusts over
its k(k-1)/2 pairs (Holm): plan from a run and its numbers are at alpha split
over the run's pairs (slices: over the slices of their tag); plan from
assumptions for k targets with --alpha alpha/pairs.

  assay plan --delta 0.03 --p-disc 0.12
      cases needed to detect a 3-point difference when 12% of cases are
      discordant; add --cases N for the minimum detectable difference of N
      cases (and the power of N cases to detect --delta)
  assay plan --p-disc 0.12 --cases 500
      the minimum detectable difference of 500 cases
  assay plan --p1 0.80 --p2 0.83
      cases per target from assumed pass rates, as two independent samples
      (an upper bound: a paired run on the same cases usually needs fewer)
  assay plan RUN_ID|latest --gate [--rule RULE] [--p-disc 0.15]
      the gate's power: for each pass/fail rule of the run's spec (or
      --rule) and target, the chance that the gate fails a true worsening
      of twice the rule's limit on a set of this size, at alpha split over
      the gate's checks (Holm)
  assay plan RUN_ID|latest [--delta 0.03] [--slices] [--tag KEY]
      for every pair of targets in a stored run: the cases compared, their
      discordance, the observed difference, the minimum detectable
      difference (MDD) of the set, the cases needed to detect the observed
      difference (and --delta) at the observed discordance; with --slices,
      the same per tag value, marking slices too small to separate the
      observed difference (MDD above it)

Differences and rates are fractions (0.03 is 3 points); power and alpha
default to 0.8 and 0.05 (two-sided).

JSON (--json), one object whose "mode" says which shape it is; numbers are
fractions, absent answers are null:
  paired: {mode, method, alpha, power, p_disc, delta, cases, cases_needed,
           achieved_power, mdd, power_at_cases}
  rates:  {mode, method, alpha, power, p1, p2, delta, cases_per_target,
           p_disc_if_independent, paired_cases_if_independent, note}
  run:    {mode, run_id, scoring, alpha, alpha_per_pair, power, delta, notes,
           pairs: [{a, b, test, verdict, n, a_only, b_only, p_disc,
                    observed_delta, mdd, cases_for_observed_delta,
                    cases_for_delta, too_small, notes,
                    slices: [{key, value, verdict, alpha, n, a_only, ...same}]}]}
  gate:   {mode, run_id, method, alpha, checks, alpha_per_check, notes,
           rules: [{target, rule, n, limit, worsening, p_disc,
                    p_disc_assumed, power, notes}]}
observed_delta is rate(a) - rate(b); too_small is true when the observed
difference is non-zero and the set cannot separate it: it is below the MDD,
nothing is detectable, or too few cases are discordant for the report's
test to reach alpha (4 for the score test at alpha 0.05, 6 for --test exact).`

func newPlanCommand(g *Globals) *cobra.Command {
	o := &planOptions{}
	cmd := &cobra.Command{
		Use:   "plan [RUN_ID|latest]",
		Short: "Cases needed to detect a difference; the minimum detectable difference of a set",
		Long:  planLong,
		Args:  rangeArgs(0, 1),
		PreRunE: func(cmd *cobra.Command, args []string) error {
			o.set = map[string]bool{}
			for _, name := range []string{"delta", "p-disc", "cases", "p1", "p2", "slices", "tag", "scoring", "gate", "rule", "alpha"} {
				o.set[name] = cmd.Flags().Changed(name)
			}
			if len(args) == 1 {
				o.Run = args[0]
			}
			return o.check()
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runPlan(cmd.Context(), g, o)
		},
	}
	o.AddFlags(cmd)
	return cmd
}

// check decides the mode from the flags given and validates them; every
// problem is a usage error naming what would be valid.
func (o *planOptions) check() error {
	has := func(names ...string) []string {
		var out []string
		for _, n := range names {
			if o.set[n] {
				out = append(out, "--"+n)
			}
		}
		return out
	}
	var problems []error
	bad := func(format string, a ...any) { problems = append(problems, fmt.Errorf(format, a...)) }

	rates := o.set["p1"] || o.set["p2"]
	if o.set["rule"] && !o.set["gate"] {
		return usageError{errors.New("--rule goes with --gate (assay plan RUN --gate --rule 'primary max_drop=5%'): it names a gate rule whose power to plan")}
	}
	switch {
	case o.Run != "" && o.set["gate"]:
		o.mode = plan.ModeGate
		if c := has("delta", "cases", "p1", "p2", "slices", "tag"); len(c) > 0 {
			return usageError{fmt.Errorf("%s cannot be combined with --gate: the gate's power is for a worsening of twice each rule's limit, on the run's cases", strings.Join(c, ", "))}
		}
		for _, r := range o.Rules {
			if _, err := gate.ParseRuleFlag(r); err != nil {
				return usageError{err}
			}
		}
	case o.set["gate"]:
		return usageError{errors.New("--gate needs a run (assay plan RUN_ID|latest --gate): its cases and rates are what the gate's power is computed on")}
	case o.Run != "":
		o.mode = plan.ModeRun
		if c := has("p-disc", "p1", "p2", "cases"); len(c) > 0 {
			return usageError{fmt.Errorf("%s cannot be combined with a run (%s): a run's pairs supply their own cases and discordance; drop the run to plan from assumptions", strings.Join(c, ", "), o.Run)}
		}
	case rates:
		o.mode = plan.ModeRates
		if c := has("p-disc", "delta", "cases"); len(c) > 0 {
			return usageError{fmt.Errorf("%s cannot be combined with --p1/--p2: assumed rates already give the difference; use either --p1 and --p2, or --delta with --p-disc", strings.Join(c, ", "))}
		}
		if !o.set["p1"] || !o.set["p2"] {
			return usageError{errors.New("--p1 and --p2 go together: the assumed pass rates of the two targets, e.g. --p1 0.80 --p2 0.83")}
		}
	case o.set["p-disc"]:
		o.mode = plan.ModePaired
		if !o.set["delta"] && !o.set["cases"] {
			return usageError{errors.New("--p-disc needs --delta (the cases needed to detect it) or --cases (the minimum detectable difference of that many cases)")}
		}
	case o.set["delta"] || o.set["cases"]:
		f := has("delta", "cases")
		return usageError{fmt.Errorf("%s needs a discordance: assume one with --p-disc (the fraction of cases the two targets disagree on), or give a run (RUN_ID or latest) to take it from", strings.Join(f, " and "))}
	default:
		return usageError{errors.New("nothing to plan: give --delta and --p-disc (paired), --p1 and --p2 (assumed rates), or a run (RUN_ID or latest); see 'assay plan --help'")}
	}
	if o.mode != plan.ModeRun && o.mode != plan.ModeGate {
		if c := has("slices", "tag", "scoring"); len(c) > 0 {
			problems = append(problems, fmt.Errorf("%s only apply to a run (assay plan RUN_ID|latest ...)", strings.Join(c, ", ")))
		}
	}

	if !(o.Alpha > 0 && o.Alpha < 1) {
		bad("--alpha %s: the significance level is a fraction in (0, 1), e.g. 0.05", units.Plain(o.Alpha))
	}
	if !(o.Power > 0 && o.Power < 1) {
		bad("--power %s: power is a fraction in (0, 1), e.g. 0.8 for 80%%", units.Plain(o.Power))
	} else if o.Alpha > 0 && o.Alpha < 1 && o.Power <= o.Alpha {
		bad("--power %s must exceed --alpha %s: a test rejects with probability alpha even when there is no difference", units.Plain(o.Power), units.Plain(o.Alpha))
	}
	if o.set["delta"] {
		switch {
		case o.Delta >= 1 && o.Delta < 100:
			bad("--delta %s: differences are fractions in (0, 1); for %s points write --delta %s", units.Plain(o.Delta), units.Plain(o.Delta), units.Plain(o.Delta/100))
		case !(o.Delta > 0 && o.Delta < 1):
			bad("--delta %s: the difference to detect is a size in (0, 1), e.g. 0.03 for 3 points (its sign does not matter)", units.Plain(o.Delta))
		}
	}
	if o.mode == plan.ModeGate && o.set["p-disc"] && !(o.PDisc > 0 && o.PDisc <= 1) {
		bad("--p-disc %s: the discordance is the fraction of cases passed by exactly one run, in (0, 1], e.g. 0.15", units.Plain(o.PDisc))
	}
	if o.mode == plan.ModePaired {
		switch {
		case !(o.PDisc > 0 && o.PDisc <= 1):
			bad("--p-disc %s: the discordance is the fraction of cases passed by exactly one target, in (0, 1], e.g. 0.12", units.Plain(o.PDisc))
		case o.set["delta"] && o.Delta > 0 && o.Delta < 1 && o.Delta > o.PDisc:
			bad("--delta %s with --p-disc %s is impossible: two targets can differ by at most the fraction of cases they disagree on (--p-disc must be at least --delta)", units.Plain(o.Delta), units.Plain(o.PDisc))
		}
		if o.set["cases"] && o.Cases < 1 {
			bad("--cases %d: the set needs at least 1 case", o.Cases)
		}
	}
	if o.mode == plan.ModeRates {
		for _, p := range []struct {
			name string
			v    float64
		}{{"p1", o.P1}, {"p2", o.P2}} {
			switch {
			case p.v > 1 && p.v <= 100:
				bad("--%s %s: pass rates are fractions in [0, 1]; for %s%% write --%s %s", p.name, units.Plain(p.v), units.Plain(p.v), p.name, units.Plain(p.v/100))
			case !(p.v >= 0 && p.v <= 1):
				bad("--%s %s: pass rates are fractions in [0, 1], e.g. 0.80", p.name, units.Plain(p.v))
			}
		}
		if o.P1 == o.P2 {
			bad("--p1 and --p2 are both %s: there is no difference to detect", units.Plain(o.P1))
		}
	}
	if o.Scoring < 0 {
		bad("--scoring %d: scorings are numbered from 1 (0 means the latest)", o.Scoring)
	}
	if len(o.Tags) > 0 {
		o.Slices = true
	}
	if len(problems) > 0 {
		return usageError{errors.Join(problems...)}
	}
	return nil
}

// options are the plan's assumptions, as the plan package takes them: a
// flag not given is zero.
func (o *planOptions) options() plan.Options {
	p := plan.Options{Alpha: o.Alpha, Power: o.Power, P1: o.P1, P2: o.P2, Slices: o.Slices, Tags: o.Tags, AlphaGiven: o.set["alpha"]}
	if o.set["delta"] {
		p.Delta = o.Delta
	}
	if o.set["p-disc"] {
		p.PDisc = o.PDisc
	}
	if o.set["cases"] {
		p.Cases = o.Cases
	}
	return p
}

func runPlan(ctx context.Context, g *Globals, o *planOptions) error {
	var res plan.Result
	var err error
	switch o.mode {
	case plan.ModePaired:
		res, err = plan.FromDiscordance(o.options())
	case plan.ModeRates:
		res, err = plan.FromRates(o.options())
	case plan.ModeGate:
		res, err = planGatePower(ctx, g, o)
	case plan.ModeRun:
		res, err = planFromRun(ctx, g, o)
	default:
		return fmt.Errorf("plan: no mode chosen (flags were not checked)")
	}
	if err != nil {
		return err
	}
	format := "text"
	if o.JSON {
		format = "json"
	}
	r, err := report.NewRegistry().Plan.Reporter(format, res)
	if err != nil {
		return err
	}
	return printOut(g.Stdout, "", r)
}

func planFromRun(ctx context.Context, g *Globals, o *planOptions) (*plan.Run, error) {
	st, run, err := openRun(ctx, g, "plan", o.Run)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	if err := requireScoring(ctx, st, "plan", run, o.Scoring); err != nil {
		return nil, err
	}
	rep, err := analysis.Analyze(ctx, st, run, analysis.Options{Scoring: o.Scoring, Alpha: o.Alpha, Worst: 1})
	if err != nil {
		return nil, fmt.Errorf("plan: analysing run %s: %w", run.ID, err)
	}
	if o.Slices {
		if err := plan.CheckTags(rep, o.Tags); err != nil {
			return nil, usageError{err}
		}
	}
	return plan.FromReport(rep, o.options()), nil
}
