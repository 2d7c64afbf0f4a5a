package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/assay-eval/assay/internal/gate"
	"github.com/assay-eval/assay/internal/runview"
	"github.com/assay-eval/assay/internal/stats"
)

// planGateChurn is the share of cases assumed to change verdict in both
// directions besides a regression, when --p-disc does not say: two versions
// of a prompt or model rarely agree on every case.
const planGateChurn = 0.10

// planGateDoc is the JSON of `assay plan RUN --gate`.
type planGateDoc struct {
	Mode   planMode `json:"mode"`
	RunID  string   `json:"run_id"`
	Method string   `json:"method"` // "noninferiority_score": Tango's score test at the limit
	Alpha  float64  `json:"alpha"`
	// Checks is the gate's Holm family on this run (checks per target ×
	// targets); AlphaPerCheck = Alpha / Checks, the one-sided level a check
	// that fails alone is tested at — the power below is at it.
	Checks        int            `json:"checks"`
	AlphaPerCheck float64        `json:"alpha_per_check"`
	Rules         []planGateRule `json:"rules"`
	Notes         []string       `json:"notes"`
}

// planGateRule is one pass/fail rule's worsening on one target.
type planGateRule struct {
	Target string `json:"target"`
	Rule   string `json:"rule"`
	N      int    `json:"n"`
	// Limit is the worsening allowed (a fraction); Worsening, twice it, is
	// the true worsening the power is for.
	Limit     float64 `json:"limit"`
	Worsening float64 `json:"worsening"`
	// PDisc is the share of cases the baseline and a candidate disagree
	// on: --p-disc, or (PDiscAssumed) the worsening plus planGateChurn.
	PDisc        float64 `json:"p_disc"`
	PDiscAssumed bool    `json:"p_disc_assumed"`
	// Power is the chance the gate fails a candidate worse by Worsening
	// (null when it cannot be computed; Notes say why).
	Power *float64 `json:"power"`
	Notes []string `json:"notes"`
}

// planGatePower computes the gate's power on a stored run: for each rule
// limiting the worsening of a pass/fail rate, and each target, the chance
// that the gate's one-sided score test at the limit fails a true worsening
// of twice the limit, at alpha split over the gate's checks (Holm's first
// step: the level of a check that fails alone).
func planGatePower(ctx context.Context, g *Globals, o *planOptions) (*planGateDoc, error) {
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
	doc := &planGateDoc{Mode: planGate, RunID: run.ID, Method: "noninferiority_score", Alpha: alpha,
		Checks: gate.ChecksPerTarget(rules) * len(snap.Targets), Rules: []planGateRule{}, Notes: []string{}}
	if doc.Checks == 0 {
		return nil, fmt.Errorf("plan: run %s has no target to gate", run.ID)
	}
	doc.AlphaPerCheck = alpha / float64(doc.Checks)
	names := make([]string, 0, len(rules))
	for _, r := range rules {
		names = append(names, r.String())
	}
	doc.Notes = append(doc.Notes, fmt.Sprintf("rules from %s: %s", source, strings.Join(names, "; ")))
	clustered, epochs := false, false
	for _, t := range snap.Targets {
		for _, r := range rules {
			if !r.PassFailWorsening() {
				continue
			}
			m, ok := gate.RateFor(snap, t, r)
			row := planGateRule{Target: t.Name, Rule: r.String(), N: m.N, Limit: m.Limit, Worsening: 2 * m.Limit, Notes: []string{}}
			switch {
			case !ok:
				row.Notes = append(row.Notes, "the target has no scores of the rule's scorer")
			case m.N == 0:
				row.Notes = append(row.Notes, "no case of the run has a value for this rule")
			case m.Limit == 0:
				row.Notes = append(row.Notes, "a limit of zero: twice it is no worsening, and any drop at all is beyond it; plan the drop you need caught with assay plan --delta D --p-disc P")
			default:
				row.PDisc = o.PDisc
				if !o.set["p-disc"] {
					row.PDisc, row.PDiscAssumed = min(1, row.Worsening+planGateChurn), true
				}
				if row.Worsening > row.PDisc {
					row.Notes = append(row.Notes, fmt.Sprintf("a worsening of %s needs at least %s of cases discordant; --p-disc %v cannot hold it", planPoints(row.Worsening), planPercent(row.Worsening), o.PDisc))
				} else if pw, err := stats.NonInferiorityPower(m.N, row.PDisc, -row.Worsening, m.Limit, doc.AlphaPerCheck); err == nil {
					row.Power = &pw
				} else {
					row.Notes = append(row.Notes, err.Error())
				}
			}
			clustered = clustered || m.Clustered
			epochs = epochs || m.Epochs > 1
			doc.Rules = append(doc.Rules, row)
		}
	}
	if len(doc.Rules) == 0 {
		doc.Notes = append(doc.Notes, "no rule limits the worsening of a pass/fail rate (max_drop on a scorer, max_rise on loud_rate): the power of cost and latency rules is not planned")
	}
	if epochs {
		doc.Notes = append(doc.Notes, "the run has several epochs per case: the gate compares per-case means (paired t), with more power than this plan for one pass/fail per case")
	}
	if clustered {
		doc.Notes = append(doc.Notes, "the cases carry a cluster tag: the gate's test is cluster-robust, and this plan, which assumes independent cases, overstates its power")
	}
	if !o.set["p-disc"] {
		doc.Notes = append(doc.Notes, fmt.Sprintf("the discordance is assumed: the worsening's cases plus %s of cases changing in both directions; give the discordance you measured with --p-disc (e.g. a candidate gated against this run)", planPercent(planGateChurn)))
	}
	return doc, nil
}

func writeGateText(w io.Writer, d *planGateDoc) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Gate power on run %s: %d checks share the false-fail rate %s (Holm): a check that fails alone is tested one-sided at %v\n",
		d.RunID, d.Checks, planPercent(d.Alpha), planRoundSig(d.AlphaPerCheck))
	if len(d.Rules) > 0 {
		b.WriteString("\n")
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		io.WriteString(tw, "TARGET\tRULE\tN\tLIMIT\tWORSENING\tDISCORDANT\tPOWER\n")
		for _, r := range d.Rules {
			disc, power := "-", "-"
			if r.PDisc > 0 {
				disc = planPercent(r.PDisc)
				if r.PDiscAssumed {
					disc += " (assumed)"
				}
			}
			if r.Power != nil {
				power = planPercent(*r.Power)
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\n", r.Target, r.Rule, r.N, planFloat(100*r.Limit)+" pts", planFloat(100*r.Worsening)+" pts", disc, power)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		b.WriteString("\n" + planWrap("POWER is the chance that the gate fails a candidate whose rate is truly worse by WORSENING (twice the LIMIT) on N cases like these, "+
			"when DISCORDANT of cases change verdict: the one-sided McNemar score (Tango) test at the limit, at the level a check that fails alone faces. "+
			"Below 80%, a real regression of that size passes the gate often: add cases, or accept a wider limit.", 78, "") + "\n")
	}
	var notes []string
	for _, r := range d.Rules {
		for _, n := range r.Notes {
			notes = append(notes, r.Target+" "+r.Rule+": "+n)
		}
	}
	notes = append(notes, d.Notes...)
	return writePlanText(w, &b, notes)
}
