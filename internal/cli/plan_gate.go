package cli

import (
	"context"
	"fmt"

	"github.com/assay-eval/assay/internal/gate"
	"github.com/assay-eval/assay/internal/plan"
	"github.com/assay-eval/assay/internal/runview"
)

// planGatePower reads what the gate's power is planned on — the run's
// targets, its rules (the spec's gate rules, --rule, or the default) and
// its alpha (--alpha, else the spec's gate alpha) — and has plan compute it.
func planGatePower(ctx context.Context, g *Globals, o *planOptions) (*plan.Gate, error) {
	st, run, err := openRun(ctx, g, "plan", o.Run)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	snap, err := runview.FromStore(ctx, st, run)
	if err != nil {
		return nil, fmt.Errorf("plan: run %s: %w", run.ID, err)
	}
	rules, specAlpha, err := gate.RulesFromConfig(run.Config, nil, nil)
	source := "the run's spec"
	switch {
	case len(o.Rules) > 0:
		rules, err = gate.RulesFromFlags(o.Rules, snap.Scorers, snap.TagKeys())
		if err != nil {
			return nil, usageError{err}
		}
		source = "--rule"
	case err != nil:
		return nil, fmt.Errorf("plan: run %s: %w", run.ID, err)
	}
	if len(rules) == 0 {
		rules, source = gate.DefaultRules(), "the default (no gate rules in the spec)"
	}
	alpha := o.Alpha
	if !o.set["alpha"] && specAlpha > 0 {
		alpha = specAlpha
	}
	in := plan.GateRun{RunID: run.ID, Rules: rules, Source: source,
		Rate: func(i int, r gate.Rule) (gate.RuleRate, bool) { return gate.RateFor(snap, snap.Targets[i], r) }}
	for _, t := range snap.Targets {
		in.Targets = append(in.Targets, t.Name)
	}
	return plan.GatePower(in, alpha, o.options())
}
