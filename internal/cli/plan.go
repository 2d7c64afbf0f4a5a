package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/assay-eval/assay/internal/analysis"
	"github.com/assay-eval/assay/internal/gate"
	"github.com/assay-eval/assay/internal/stats"
)

// planMode is what `assay plan` was asked.
type planMode string

const (
	// planPaired: two targets on the same cases, from an assumed discordance.
	planPaired planMode = "paired"
	// planRates: two independent samples, from assumed pass rates.
	planRates planMode = "rates"
	// planRun: every pair of targets of a stored run, from what it observed.
	planRun planMode = "run"
	// planGate: the gate's power on a stored run's set (--gate).
	planGate planMode = "gate"
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
	mode planMode
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
		o.mode = planGate
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
		o.mode = planRun
		if c := has("p-disc", "p1", "p2", "cases"); len(c) > 0 {
			return usageError{fmt.Errorf("%s cannot be combined with a run (%s): a run's pairs supply their own cases and discordance; drop the run to plan from assumptions", strings.Join(c, ", "), o.Run)}
		}
	case rates:
		o.mode = planRates
		if c := has("p-disc", "delta", "cases"); len(c) > 0 {
			return usageError{fmt.Errorf("%s cannot be combined with --p1/--p2: assumed rates already give the difference; use either --p1 and --p2, or --delta with --p-disc", strings.Join(c, ", "))}
		}
		if !o.set["p1"] || !o.set["p2"] {
			return usageError{errors.New("--p1 and --p2 go together: the assumed pass rates of the two targets, e.g. --p1 0.80 --p2 0.83")}
		}
	case o.set["p-disc"]:
		o.mode = planPaired
		if !o.set["delta"] && !o.set["cases"] {
			return usageError{errors.New("--p-disc needs --delta (the cases needed to detect it) or --cases (the minimum detectable difference of that many cases)")}
		}
	case o.set["delta"] || o.set["cases"]:
		f := has("delta", "cases")
		return usageError{fmt.Errorf("%s needs a discordance: assume one with --p-disc (the fraction of cases the two targets disagree on), or give a run (RUN_ID or latest) to take it from", strings.Join(f, " and "))}
	default:
		return usageError{errors.New("nothing to plan: give --delta and --p-disc (paired), --p1 and --p2 (assumed rates), or a run (RUN_ID or latest); see 'assay plan --help'")}
	}
	if o.mode != planRun && o.mode != planGate {
		if c := has("slices", "tag", "scoring"); len(c) > 0 {
			problems = append(problems, fmt.Errorf("%s only apply to a run (assay plan RUN_ID|latest ...)", strings.Join(c, ", ")))
		}
	}

	if !(o.Alpha > 0 && o.Alpha < 1) {
		bad("--alpha %v: the significance level is a fraction in (0, 1), e.g. 0.05", o.Alpha)
	}
	if !(o.Power > 0 && o.Power < 1) {
		bad("--power %v: power is a fraction in (0, 1), e.g. 0.8 for 80%%", o.Power)
	} else if o.Alpha > 0 && o.Alpha < 1 && o.Power <= o.Alpha {
		bad("--power %v must exceed --alpha %v: a test rejects with probability alpha even when there is no difference", o.Power, o.Alpha)
	}
	if o.set["delta"] {
		switch {
		case o.Delta >= 1 && o.Delta < 100:
			bad("--delta %v: differences are fractions in (0, 1); for %v points write --delta %v", o.Delta, o.Delta, o.Delta/100)
		case !(o.Delta > 0 && o.Delta < 1):
			bad("--delta %v: the difference to detect is a size in (0, 1), e.g. 0.03 for 3 points (its sign does not matter)", o.Delta)
		}
	}
	if o.mode == planGate && o.set["p-disc"] && !(o.PDisc > 0 && o.PDisc <= 1) {
		bad("--p-disc %v: the discordance is the fraction of cases passed by exactly one run, in (0, 1], e.g. 0.15", o.PDisc)
	}
	if o.mode == planPaired {
		switch {
		case !(o.PDisc > 0 && o.PDisc <= 1):
			bad("--p-disc %v: the discordance is the fraction of cases passed by exactly one target, in (0, 1], e.g. 0.12", o.PDisc)
		case o.set["delta"] && o.Delta > 0 && o.Delta < 1 && o.Delta > o.PDisc:
			bad("--delta %v with --p-disc %v is impossible: two targets can differ by at most the fraction of cases they disagree on (--p-disc must be at least --delta)", o.Delta, o.PDisc)
		}
		if o.set["cases"] && o.Cases < 1 {
			bad("--cases %d: the set needs at least 1 case", o.Cases)
		}
	}
	if o.mode == planRates {
		for _, p := range []struct {
			name string
			v    float64
		}{{"p1", o.P1}, {"p2", o.P2}} {
			switch {
			case p.v > 1 && p.v <= 100:
				bad("--%s %v: pass rates are fractions in [0, 1]; for %v%% write --%s %v", p.name, p.v, p.v, p.name, p.v/100)
			case !(p.v >= 0 && p.v <= 1):
				bad("--%s %v: pass rates are fractions in [0, 1], e.g. 0.80", p.name, p.v)
			}
		}
		if o.P1 == o.P2 {
			bad("--p1 and --p2 are both %v: there is no difference to detect", o.P1)
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

// planPairedDoc is the JSON of `assay plan --p-disc ...`.
type planPairedDoc struct {
	Mode   planMode `json:"mode"`
	Method string   `json:"method"` // "mcnemar_score" (power by Connor 1987)
	Alpha  float64  `json:"alpha"`
	Power  float64  `json:"power"`
	PDisc  float64  `json:"p_disc"`
	Delta  *float64 `json:"delta"` // the difference to detect (--delta)
	Cases  *int     `json:"cases"` // the set size asked about (--cases)
	// CasesNeeded is the paired cases needed to detect Delta; AchievedPower
	// is the power of exactly that many cases (at least Power).
	CasesNeeded   *int     `json:"cases_needed"`
	AchievedPower *float64 `json:"achieved_power"`
	// MDD is the minimum detectable difference of Cases; PowerAtCases the
	// power of Cases to detect Delta (both given).
	MDD          *float64 `json:"mdd"`
	PowerAtCases *float64 `json:"power_at_cases"`
}

// planRatesDoc is the JSON of `assay plan --p1 ... --p2 ...`.
type planRatesDoc struct {
	Mode   planMode `json:"mode"`
	Method string   `json:"method"` // "two_proportion_cohen_h"
	Alpha  float64  `json:"alpha"`
	Power  float64  `json:"power"`
	P1     float64  `json:"p1"`
	P2     float64  `json:"p2"`
	Delta  float64  `json:"delta"` // |p1 − p2|
	// CasesPerTarget: each target on its own independent sample of cases.
	CasesPerTarget int `json:"cases_per_target"`
	// PDiscIfIndependent is the discordance two targets with these rates
	// would show if their outcomes were independent, p1(1−p2) + p2(1−p1);
	// PairedCasesIfIndependent the paired cases needed at it (null when
	// not computable). Real models fail the same hard cases, so observed
	// discordance, and the paired cases needed, are usually lower.
	PDiscIfIndependent       float64 `json:"p_disc_if_independent"`
	PairedCasesIfIndependent *int    `json:"paired_cases_if_independent"`
	Note                     string  `json:"note"`
}

// planRunDoc is the JSON of `assay plan RUN_ID|latest`.
type planRunDoc struct {
	Mode    planMode `json:"mode"`
	RunID   string   `json:"run_id"`
	Scoring int      `json:"scoring"`
	Alpha   float64  `json:"alpha"`
	// AlphaPerPair is the level the report's test faces for one pair: alpha
	// split over the k(k−1)/2 pairs of k targets (Holm's first step: the
	// first pair declared different is tested at alpha/pairs). The plan's
	// numbers for pairs are at it.
	AlphaPerPair float64    `json:"alpha_per_pair"`
	Power        float64    `json:"power"`
	Delta        *float64   `json:"delta"`
	Pairs        []planPair `json:"pairs"`
	Notes        []string   `json:"notes"`
}

// planPair is one pair of targets of a run.
type planPair struct {
	A    string `json:"a"`
	B    string `json:"b"`
	Test string `json:"test"` // the report's test: mcnemar_score, mcnemar_exact, paired_t or cluster_t
	// Verdict is the report's paired verdict (p-values Holm-adjusted).
	Verdict string `json:"verdict"`
	planEstimate
	// Slices are present with --slices: one per tag key and value, keys in
	// alphabetical order and values in tier order.
	Slices []planSlice `json:"slices,omitempty"`
}

// planSlice is one pair of targets on one tag value.
type planSlice struct {
	Key   string `json:"key"`
	Value string `json:"value"`
	// Verdict is the slice's paired verdict (Holm over the tag's slices).
	Verdict string `json:"verdict"`
	// Alpha is the level the slice faces: alpha split over every slice
	// comparison of its tag (pairs × values), as the report's Holm does.
	Alpha float64 `json:"alpha"`
	planEstimate
}

// planEstimate is what a set of paired cases can detect.
type planEstimate struct {
	N     int `json:"n"`
	AOnly int `json:"a_only"`
	BOnly int `json:"b_only"`
	// PDisc is (a_only + b_only) / n; ObservedDelta (a_only − b_only) / n,
	// the difference in pass rates, positive when a passed more. Both are
	// null, like everything below, when the pair was not compared by
	// McNemar (several epochs per case).
	PDisc         *float64 `json:"p_disc"`
	ObservedDelta *float64 `json:"observed_delta"`
	// MDD is the minimum detectable difference of these n cases at p_disc.
	MDD *float64 `json:"mdd"`
	// CasesForObservedDelta: paired cases needed to detect a difference as
	// large as the observed one, at the observed discordance.
	CasesForObservedDelta *int `json:"cases_for_observed_delta"`
	// CasesForDelta: the same for --delta.
	CasesForDelta *int `json:"cases_for_delta"`
	// TooSmall: the observed difference is non-zero, the report's verdict
	// is inconclusive, and the set cannot separate it: the MDD is above
	// it, there is no MDD at all, or too few cases are discordant for the
	// exact McNemar test to reach alpha. (A difference the report's test
	// did find is never too small, though it may lie below the MDD.)
	TooSmall bool     `json:"too_small"`
	Notes    []string `json:"notes"`
}

func runPlan(ctx context.Context, g *Globals, o *planOptions) error {
	switch o.mode {
	case planPaired:
		doc, err := planFromDiscordance(o)
		if err != nil {
			return err
		}
		if o.JSON {
			return writePlanJSON(g.Stdout, doc)
		}
		return writePairedText(g.Stdout, doc)
	case planRates:
		doc, err := planFromRates(o)
		if err != nil {
			return err
		}
		if o.JSON {
			return writePlanJSON(g.Stdout, doc)
		}
		return writeRatesText(g.Stdout, doc)
	case planGate:
		doc, err := planGatePower(ctx, g, o)
		if err != nil {
			return err
		}
		if o.JSON {
			return writePlanJSON(g.Stdout, doc)
		}
		return writeGateText(g.Stdout, doc)
	case planRun:
		doc, err := planFromRun(ctx, g, o)
		if err != nil {
			return err
		}
		if o.JSON {
			return writePlanJSON(g.Stdout, doc)
		}
		return writeRunText(g.Stdout, doc, o.Slices)
	}
	return fmt.Errorf("plan: no mode chosen (flags were not checked)")
}

func planFromDiscordance(o *planOptions) (*planPairedDoc, error) {
	doc := &planPairedDoc{Mode: planPaired, Method: stats.TestMcNemarScore, Alpha: o.Alpha, Power: o.Power, PDisc: o.PDisc}
	if o.set["delta"] {
		d := o.Delta
		doc.Delta = &d
		n, err := stats.McNemarScoreSampleSize(o.PDisc, d, o.Alpha, o.Power)
		if err != nil {
			// The arguments were checked: only the size can be out of reach.
			return nil, fmt.Errorf("detecting %s at %s discordance with %s power would need more cases than any evaluation set could hold; plan for a larger difference",
				planInPoints(d), planInPercent(o.PDisc), planInPercent(o.Power))
		}
		doc.CasesNeeded = &n
		if pw, err := stats.McNemarScorePower(n, o.PDisc, d, o.Alpha); err == nil {
			doc.AchievedPower = &pw
		}
	}
	if o.set["cases"] {
		c := o.Cases
		doc.Cases = &c
		mdd, err := stats.MinDetectableDifference(c, o.PDisc, o.Alpha, o.Power)
		if err != nil {
			return nil, fmt.Errorf("%d cases at %s discordance cannot detect any difference with %s power (alpha %v), not even %s (every discordant case favouring one target); use more cases or accept less power",
				c, planInPercent(o.PDisc), planInPercent(o.Power), o.Alpha, planInPoints(o.PDisc))
		}
		doc.MDD = &mdd
		if o.set["delta"] {
			if pw, err := stats.McNemarScorePower(c, o.PDisc, o.Delta, o.Alpha); err == nil {
				doc.PowerAtCases = &pw
			}
		}
	}
	return doc, nil
}

func planFromRates(o *planOptions) (*planRatesDoc, error) {
	n, err := stats.TwoProportionSampleSize(o.P1, o.P2, o.Alpha, o.Power)
	if err != nil {
		return nil, fmt.Errorf("detecting the difference between pass rates %v and %v with %s power would need more cases than any evaluation set could hold; plan for a larger difference",
			o.P1, o.P2, planInPercent(o.Power))
	}
	doc := &planRatesDoc{Mode: planRates, Method: "two_proportion_cohen_h", Alpha: o.Alpha, Power: o.Power,
		P1: o.P1, P2: o.P2, Delta: math.Abs(o.P1 - o.P2), CasesPerTarget: n}
	doc.PDiscIfIndependent = o.P1*(1-o.P2) + o.P2*(1-o.P1)
	if m, err := stats.McNemarScoreSampleSize(doc.PDiscIfIndependent, doc.Delta, o.Alpha, o.Power); err == nil {
		doc.PairedCasesIfIndependent = &m
	}
	doc.Note = fmt.Sprintf("%d cases per target assumes each target gets its own independent cases. "+
		"Run both on the same cases and a paired (McNemar) test needs fewer: the cases both pass or both fail cancel out, "+
		"and only the discordant ones, passed by exactly one target, carry evidence. "+
		"Were the two targets' outcomes independent, %s of cases would be discordant and the paired design would need about as many cases; "+
		"but models tend to fail the same hard cases, so far fewer disagree and fewer cases are needed. "+
		"Measure the discordance on a pilot run and plan with 'assay plan --delta %v --p-disc X' or 'assay plan RUN --delta %v'.",
		n, planPercent(doc.PDiscIfIndependent), planRoundSig(doc.Delta), planRoundSig(doc.Delta))
	return doc, nil
}

func planFromRun(ctx context.Context, g *Globals, o *planOptions) (*planRunDoc, error) {
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
	doc := &planRunDoc{Mode: planRun, RunID: rep.Run.ID, Scoring: rep.Run.Scoring, Alpha: o.Alpha, AlphaPerPair: o.Alpha, Power: o.Power,
		Pairs: []planPair{}, Notes: []string{}}
	if m := len(rep.Comparisons); m > 1 {
		doc.AlphaPerPair = o.Alpha / float64(m)
	}
	// The report's slice families: every value of a tag in every pair.
	sliceFamily := map[string]int{}
	for _, c := range rep.Comparisons {
		for k, vals := range c.Slices {
			sliceFamily[k] += len(vals)
		}
	}
	if o.set["delta"] {
		d := o.Delta
		doc.Delta = &d
	}
	if o.Slices && len(o.Tags) > 0 && len(rep.Comparisons) > 0 {
		keys := map[string]bool{}
		for _, c := range rep.Comparisons {
			for k := range c.Slices {
				keys[k] = true
			}
		}
		for _, t := range o.Tags {
			if !keys[t] {
				known := planSortedKeys(keys)
				if len(known) == 0 {
					return nil, usageError{fmt.Errorf("--tag %q: run %s has no tagged cases (tags come from the spec's dataset.tags)", t, run.ID)}
				}
				return nil, usageError{fmt.Errorf("--tag %q: run %s has no such tag key; its keys are: %s", t, run.ID, strings.Join(known, ", "))}
			}
		}
	}
	for _, c := range rep.Comparisons {
		p := planPair{A: c.A, B: c.B, Test: c.Test, Verdict: c.Verdict}
		p.planEstimate = planEstimateOf(c, o, doc.AlphaPerPair)
		if o.Slices {
			for _, k := range planSortedKeys(c.Slices) {
				if len(o.Tags) > 0 && !slices.Contains(o.Tags, k) {
					continue
				}
				vals := make([]string, 0, len(c.Slices[k]))
				for v := range c.Slices[k] {
					vals = append(vals, v)
				}
				analysis.SortValues(vals)
				for _, v := range vals {
					sc := c.Slices[k][v]
					a := o.Alpha / float64(max(1, sliceFamily[k]))
					p.Slices = append(p.Slices, planSlice{Key: k, Value: v, Verdict: sc.Verdict, Alpha: a, planEstimate: planEstimateOf(sc, o, a)})
				}
			}
			if p.Slices == nil {
				p.Slices = []planSlice{}
			}
		}
		doc.Pairs = append(doc.Pairs, p)
	}
	switch {
	case len(rep.Comparisons) == 0 && len(rep.Targets) < 2:
		doc.Notes = append(doc.Notes, fmt.Sprintf("run %s has %d target(s): there is no pair to plan for; plan from an assumed discordance with --delta and --p-disc", run.ID, len(rep.Targets)))
	case len(rep.Comparisons) == 0:
		doc.Notes = append(doc.Notes, fmt.Sprintf("run %s has no two targets scored on the same cases: there is no pair to plan for", run.ID))
	case len(rep.Comparisons) > 1:
		m := len(rep.Comparisons)
		doc.Notes = append(doc.Notes, fmt.Sprintf("the report adjusts the p-values of these %d pairs (Holm): the first pair it declares different is tested at alpha/%d = %v, so every number here is at that level",
			m, m, planRoundSig(doc.AlphaPerPair)))
	}
	if o.Slices {
		doc.Notes = append(doc.Notes, "the report adjusts slice p-values over every slice of a tag (Holm over pairs × values): each slice is planned at alpha split over its tag's slices (in --json, its alpha)")
	}
	return doc, nil
}

// estimate is what the cases of one comparison can detect, at the level
// alpha it faces in the report (alpha split over its family): the power
// of the McNemar score test the report uses (Connor's formula is its
// asymptotic power).
func planEstimateOf(c analysis.Comparison, o *planOptions, alpha float64) planEstimate {
	e := planEstimate{N: c.N, AOnly: c.AOnly, BOnly: c.BOnly, Notes: []string{}}
	switch c.Test {
	case stats.TestMcNemarScore, stats.TestMcNemarExact:
	case stats.TestClusterT:
		e.Notes = append(e.Notes, "the cases carry a cluster tag and were compared by the cluster-robust t: a McNemar plan would assume independent cases and overstate what they detect, so it is not computed")
		return e
	default:
		e.Notes = append(e.Notes, "compared on per-case means of several epochs (paired t): the McNemar plan needs one pass/fail per case, so it is not computed")
		return e
	}
	if c.N < 1 {
		return e
	}
	n := float64(c.N)
	pDisc, obs := float64(c.AOnly+c.BOnly)/n, float64(c.AOnly-c.BOnly)/n
	e.PDisc, e.ObservedDelta = &pDisc, &obs
	gap := math.Abs(obs)
	if pDisc == 0 {
		e.Notes = append(e.Notes, fmt.Sprintf("the targets agreed on all %d cases: with no discordance there is nothing to plan from; assume one with --p-disc", c.N))
		return e
	}
	if mdd, err := stats.MinDetectableDifference(c.N, pDisc, alpha, o.Power); err == nil {
		e.MDD = &mdd
	} else {
		e.Notes = append(e.Notes, fmt.Sprintf("%d cases at %s discordance cannot detect any difference with %s power, not even %s",
			c.N, planPercent(pDisc), planInPercent(o.Power), planPoints(pDisc)))
	}
	if gap > 0 {
		if m, err := stats.McNemarScoreSampleSize(pDisc, gap, alpha, o.Power); err == nil {
			e.CasesForObservedDelta = &m
		}
		e.TooSmall = e.MDD == nil || *e.MDD > gap
		// Connor's formula is a normal approximation; the report's test
		// cannot reach alpha at all with too few discordant cases,
		// however they split.
		if disc := c.AOnly + c.BOnly; disc < planMinDiscordant(c.Test, alpha) {
			e.TooSmall = true
			e.Notes = append(e.Notes, fmt.Sprintf("only %d discordant cases: the report's %s cannot reach p < %v with fewer than %d, however they split",
				disc, planTestName(c.Test), planRoundSig(alpha), planMinDiscordant(c.Test, alpha)))
		}
		// The MDD is at the chosen power: a difference below it is still
		// found sometimes. When the report's test found it, the cases were
		// enough, and "too few cases" beside a verdict would contradict it.
		if c.Verdict != "" && c.Verdict != stats.VerdictInconclusive {
			e.TooSmall = false
		}
	}
	if o.set["delta"] {
		if o.Delta > pDisc {
			e.Notes = append(e.Notes, fmt.Sprintf("a difference of %s needs at least %s of cases discordant; these targets disagreed on %s, so at this discordance it cannot occur",
				planInPoints(o.Delta), planInPercent(o.Delta), planPercent(pDisc)))
		} else if m, err := stats.McNemarScoreSampleSize(pDisc, o.Delta, alpha, o.Power); err == nil {
			e.CasesForDelta = &m
		} else {
			e.Notes = append(e.Notes, fmt.Sprintf("detecting %s at %s discordance would need more cases than any evaluation set could hold", planInPoints(o.Delta), planPercent(pDisc)))
		}
	}
	return e
}

func writePlanJSON(w io.Writer, doc any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

func writePairedText(w io.Writer, d *planPairedDoc) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Paired design: both targets on the same cases, the McNemar score test the report uses (power by Connor 1987), two-sided alpha %v, power %s\n", d.Alpha, planInPercent(d.Power))
	b.WriteString("  (for one pair; a report of k targets splits alpha over k(k-1)/2 pairs: plan with --alpha alpha/pairs)\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  discordant cases\t%s\n", planInPercent(d.PDisc))
	if d.Delta != nil {
		fmt.Fprintf(tw, "  difference to detect\t%s\n", planInPoints(*d.Delta))
		fmt.Fprintf(tw, "  cases needed\t%d", *d.CasesNeeded)
		if d.AchievedPower != nil {
			fmt.Fprintf(tw, " (power at that size %s)", planPercent(*d.AchievedPower))
		}
		fmt.Fprintln(tw)
	}
	if d.Cases != nil {
		fmt.Fprintf(tw, "  minimum detectable difference of %d cases\t%s\n", *d.Cases, planPoints(*d.MDD))
		if d.PowerAtCases != nil {
			fmt.Fprintf(tw, "  power of %d cases to detect %s\t%s\n", *d.Cases, planInPoints(*d.Delta), planPercent(*d.PowerAtCases))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeRatesText(w io.Writer, d *planRatesDoc) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Two independent samples (Cohen's h), two-sided alpha %v, power %s\n", d.Alpha, planInPercent(d.Power))
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  pass rates\t%s vs %s (difference %s)\n", planInPercent(d.P1), planInPercent(d.P2), planInPoints(d.Delta))
	fmt.Fprintf(tw, "  cases needed\t%d per target\n", d.CasesPerTarget)
	if d.PairedCasesIfIndependent != nil {
		fmt.Fprintf(tw, "  paired, if outcomes were independent\t%d cases (%s discordant)\n", *d.PairedCasesIfIndependent, planPercent(d.PDiscIfIndependent))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	b.WriteString("\n" + planWrap(d.Note, 78, "") + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func writeRunText(w io.Writer, d *planRunDoc, bySlice bool) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Run %s (scoring %d): McNemar score test, two-sided alpha %v", d.RunID, d.Scoring, d.Alpha)
	if d.AlphaPerPair > 0 && d.AlphaPerPair != d.Alpha {
		fmt.Fprintf(&b, " split over %d pairs (%v each)", planPairs(d), planRoundSig(d.AlphaPerPair))
	}
	fmt.Fprintf(&b, ", power %s", planInPercent(d.Power))
	if d.Delta != nil {
		fmt.Fprintf(&b, ", difference to detect %s", planInPoints(*d.Delta))
	}
	b.WriteString("\n")
	header := func(first string) string {
		h := first + "\tN\tDISCORDANT\tOBSERVED\tMDD\tCASES FOR OBSERVED"
		if d.Delta != nil {
			h += "\tCASES FOR " + strings.ToUpper(planInPoints(*d.Delta))
		}
		return h + "\tVERDICT\t\n"
	}
	row := func(name, verdict string, e planEstimate) string {
		cells := []string{name, fmt.Sprint(e.N)}
		if e.PDisc == nil { // epochs: not planned, see the notes
			cells = append(cells, "-", "-", "-", "-")
		} else {
			cells = append(cells, fmt.Sprintf("%d (%s)", e.AOnly+e.BOnly, planPercent(*e.PDisc)),
				planSignedPoints(*e.ObservedDelta), planOptPoints(e.MDD), planOptInt(e.CasesForObservedDelta))
		}
		if d.Delta != nil {
			cells = append(cells, planOptInt(e.CasesForDelta))
		}
		flag := ""
		if e.TooSmall {
			// No verdict beside it: "too few cases" is why there is none.
			verdict, flag = "-", "too few cases"
		}
		cells = append(cells, verdict, flag)
		return strings.Join(cells, "\t") + "\n"
	}
	if len(d.Pairs) > 0 {
		b.WriteString("\n")
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		io.WriteString(tw, header("PAIR"))
		for _, p := range d.Pairs {
			io.WriteString(tw, row(p.A+" vs "+p.B, p.Verdict, p.planEstimate))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if bySlice {
		for _, p := range d.Pairs {
			fmt.Fprintf(&b, "\n%s vs %s by slice:\n", p.A, p.B)
			if len(p.Slices) == 0 {
				b.WriteString("  (no tagged cases)\n")
				continue
			}
			tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
			io.WriteString(tw, header("SLICE"))
			for _, s := range p.Slices {
				io.WriteString(tw, row(s.Key+"="+s.Value, s.Verdict, s.planEstimate))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
		}
	}
	var notes []string
	for _, p := range d.Pairs {
		for _, n := range p.Notes {
			notes = append(notes, p.A+" vs "+p.B+": "+n)
		}
	}
	notes = append(notes, d.Notes...)
	if len(d.Pairs) > 0 {
		legend := "OBSERVED is the first target's pass rate minus the second's, in points. " +
			"MDD is the smallest difference these cases detect with this power at their discordance (none: not even a difference as large as the discordance). " +
			"CASES FOR ... are the paired cases needed at the observed discordance (-: no difference observed, or the difference exceeds the discordance, so it cannot occur). " +
			fmt.Sprintf("\"too few cases\" (in place of a verdict): the report found no difference, and the observed one is below the MDD, or fewer than %d cases are discordant, too few for the McNemar score test at alpha %v.", planMinDiscordant(stats.TestMcNemarScore, d.AlphaPerPair), planRoundSig(d.AlphaPerPair))
		if bySlice {
			legend += " Each slice's reasons are in --json."
		}
		b.WriteString("\n" + planWrap(legend, 78, "") + "\n")
	}
	return writePlanText(w, &b, notes)
}

// writePlanText writes a plan's text with its notes after it, without the
// trailing blanks tables pad their last column with (they help no reader).
func writePlanText(w io.Writer, b *strings.Builder, notes []string) error {
	if len(notes) > 0 {
		b.WriteString("\nNotes:\n")
		for _, n := range notes {
			b.WriteString(planWrap("- "+n, 78, "  ") + "\n")
		}
	}
	lines := strings.Split(b.String(), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	_, err := io.WriteString(w, strings.Join(lines, "\n"))
	return err
}

// planMinDiscordant is the fewest discordant cases with which the report's
// two-sided test can reach alpha (all of them favouring one target): the
// exact McNemar test, or the score test, whose p-value is then
// 2·Φ(−√k).
func planMinDiscordant(test string, alpha float64) int {
	p := func(k int) float64 {
		if test == stats.TestMcNemarExact {
			return stats.McNemarExact(k, 0)
		}
		return math.Erfc(math.Sqrt(float64(k)) / math.Sqrt2)
	}
	k := 1
	for k < 1<<20 && !(p(k) < alpha) {
		k++
	}
	return k
}

// planTestName names the report's pass/fail test in a note.
func planTestName(test string) string {
	if test == stats.TestMcNemarExact {
		return "exact McNemar test"
	}
	return "McNemar score test"
}

// planPairs is the number of pairs the run's alpha is split over.
func planPairs(d *planRunDoc) int { return int(math.Round(d.Alpha / d.AlphaPerPair)) }

// points renders a difference given as a fraction in percentage points.
func planPoints(x float64) string { return planFloat(100*x) + " points" }

func planSignedPoints(x float64) string {
	s := planFloat(100 * x)
	if x > 0 {
		s = "+" + s
	}
	return s
}

func planPercent(x float64) string {
	s := planFloat(100 * x)
	if s == "100" && x < 1 {
		// A power of 99.99% is not certainty.
		s = fmt.Sprintf("%.6g", 100*x)
	}
	return s + "%"
}

// planInPoints and planInPercent quote the user's own numbers back, to as
// many digits as they were given (0.999999 is 99.9999%, not 100%).
func planInPoints(x float64) string { return fmt.Sprintf("%.6g", 100*x) + " points" }

func planInPercent(x float64) string { return fmt.Sprintf("%.6g", 100*x) + "%" }

func planOptPoints(x *float64) string {
	if x == nil {
		return "none"
	}
	return planFloat(100 * *x)
}

func planOptInt(x *int) string {
	if x == nil {
		return "-"
	}
	return fmt.Sprint(*x)
}

// planFloat prints one decimal (none when it is zero), more when the value
// is small and one decimal would hide it.
func planFloat(x float64) string {
	if x != 0 && math.Abs(x) < 0.1 {
		return fmt.Sprintf("%.2g", x)
	}
	return strings.TrimSuffix(fmt.Sprintf("%.1f", x), ".0")
}

// roundSig rounds to 4 significant digits, for flag values quoted back.
func planRoundSig(x float64) float64 {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	p := math.Pow(10, 3-math.Floor(math.Log10(math.Abs(x))))
	return math.Round(x*p) / p
}

// planWrap breaks s at spaces into lines of at most width runes;
// continuation lines start with indent.
func planWrap(s string, width int, indent string) string {
	var b strings.Builder
	line := 0
	for i, word := range strings.Fields(s) {
		wl := len([]rune(word))
		if i > 0 {
			if line+1+wl > width {
				b.WriteString("\n" + indent)
				line = len(indent)
			} else {
				b.WriteByte(' ')
				line++
			}
		}
		b.WriteString(word)
		line += wl
	}
	return b.String()
}

func planSortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
