package plan

import (
	"errors"
	"fmt"
	"strings"

	"github.com/assay-eval/assay/internal/gate"
	"github.com/assay-eval/assay/internal/stats"
	"github.com/assay-eval/assay/internal/units"
)

// GateChurn is the share of cases assumed to change verdict in both
// directions besides a regression, when --p-disc does not say: two
// versions of a prompt or model rarely agree on every case.
const GateChurn = 0.10

// Gate is the JSON of `assay plan RUN --gate`.
type Gate struct {
	Mode   Mode    `json:"mode"`
	RunID  string  `json:"run_id"`
	Method string  `json:"method"` // "noninferiority_score": Tango's score test at the limit
	Alpha  float64 `json:"alpha"`
	// Checks is the gate's Holm family on this run (checks per target ×
	// targets); AlphaPerCheck = Alpha / Checks, the one-sided level a check
	// that fails alone is tested at — the power below is at it.
	Checks        int        `json:"checks"`
	AlphaPerCheck float64    `json:"alpha_per_check"`
	Rules         []GateRule `json:"rules"`
	Notes         []string   `json:"notes"`
}

// GateRule is one pass/fail rule's worsening on one target.
type GateRule struct {
	Target string `json:"target"`
	Rule   string `json:"rule"`
	N      int    `json:"n"`
	// Limit is the worsening allowed (a fraction); Worsening, twice it, is
	// the true worsening the power is for.
	Limit     float64 `json:"limit"`
	Worsening float64 `json:"worsening"`
	// PDisc is the share of cases the baseline and a candidate disagree
	// on: --p-disc, or (PDiscAssumed) the worsening plus GateChurn.
	PDisc        float64 `json:"p_disc"`
	PDiscAssumed bool    `json:"p_disc_assumed"`
	// Power is the chance the gate fails a candidate worse by Worsening
	// (null when it cannot be computed; Notes say why).
	Power *float64 `json:"power"`
	Notes []string `json:"notes"`
}

// GateRun is what the gate's power is planned on: a run's targets, the
// rules (and where they came from, for the notes), and each pass/fail
// rule measured on each target (gate.RateFor).
type GateRun struct {
	RunID   string
	Targets []string
	Rules   []gate.Rule
	// Source says where the rules came from ("the run's spec", "--rule" …).
	Source string
	// Rate measures rule r on target i; ok is false when the target has no
	// scores of the rule's scorer.
	Rate func(target int, r gate.Rule) (m gate.RuleRate, ok bool)
}

// GatePower computes the gate's power on a run: for each rule limiting
// the worsening of a pass/fail rate, and each target, the chance that the
// gate's one-sided score test at the limit fails a true worsening of twice
// the limit, at alpha split over the gate's checks (Holm's first step: the
// level of a check that fails alone). o.PDisc, when given, is the
// discordance assumed; else the worsening plus GateChurn.
func GatePower(in GateRun, alpha float64, o Options) (*Gate, error) {
	doc := &Gate{Mode: ModeGate, RunID: in.RunID, Method: "noninferiority_score", Alpha: alpha,
		Checks: gate.ChecksPerTarget(in.Rules) * len(in.Targets), Rules: []GateRule{}, Notes: []string{}}
	if doc.Checks == 0 {
		return nil, errors.New("plan: run " + in.RunID + " has no target to gate")
	}
	doc.AlphaPerCheck = alpha / float64(doc.Checks)
	names := make([]string, 0, len(in.Rules))
	for _, r := range in.Rules {
		names = append(names, r.String())
	}
	doc.Notes = append(doc.Notes, fmt.Sprintf("rules from %s: %s", in.Source, strings.Join(names, "; ")))
	clustered, epochs := false, false
	for i, t := range in.Targets {
		for _, r := range in.Rules {
			if !r.PassFailWorsening() {
				continue
			}
			m, ok := in.Rate(i, r)
			row := GateRule{Target: t, Rule: r.String(), N: m.N, Limit: m.Limit, Worsening: 2 * m.Limit, Notes: []string{}}
			switch {
			case !ok:
				row.Notes = append(row.Notes, "the target has no scores of the rule's scorer")
			case m.N == 0:
				row.Notes = append(row.Notes, "no case of the run has a value for this rule")
			case m.Limit == 0:
				row.Notes = append(row.Notes, "a limit of zero: twice it is no worsening, and any drop at all is beyond it; plan the drop you need caught with assay plan --delta D --p-disc P")
			default:
				row.PDisc = o.PDisc
				if o.PDisc == 0 {
					row.PDisc, row.PDiscAssumed = min(1, row.Worsening+GateChurn), true
				}
				if row.Worsening > row.PDisc {
					row.Notes = append(row.Notes, fmt.Sprintf("a worsening of %s needs at least %s of cases discordant; --p-disc %s cannot hold it", units.Points(row.Worsening), units.PctShort(row.Worsening), units.Plain(o.PDisc)))
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
	if o.PDisc == 0 {
		doc.Notes = append(doc.Notes, fmt.Sprintf("the discordance is assumed: the worsening's cases plus %s of cases changing in both directions; give the discordance you measured with --p-disc (e.g. a candidate gated against this run)", units.PctShort(GateChurn)))
	}
	return doc, nil
}
