package plan

import (
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/analysis"
	"github.com/assay-eval/assay/internal/gate"
	"github.com/assay-eval/assay/internal/stats"
)

// A run of three targets has three pairs: each is planned at alpha/3 (the
// report's Holm first step), and the note says so; each slice at alpha
// split over every slice of its tag in every pair.
func TestFromReportSplitsAlpha(t *testing.T) {
	cmp := func(a, b string) analysis.Comparison {
		return analysis.Comparison{A: a, B: b, Test: stats.TestMcNemarScore, N: 100, AOnly: 12, BOnly: 4, Verdict: stats.VerdictInconclusive,
			Slices: map[string]map[string]analysis.Comparison{"tier": {
				"easy": {Test: stats.TestMcNemarScore, N: 50, AOnly: 6, BOnly: 2},
				"hard": {Test: stats.TestMcNemarScore, N: 50, AOnly: 6, BOnly: 2},
			}}}
	}
	rep := &analysis.Report{Run: analysis.RunInfo{ID: "r1", Scoring: 1},
		Comparisons: []analysis.Comparison{cmp("a", "b"), cmp("a", "c"), cmp("b", "c")}}
	d := FromReport(rep, Options{Alpha: 0.05, Power: 0.8, Slices: true})
	if d.AlphaPerPair != 0.05/3 || PairsOf(d) != 3 || len(d.Pairs) != 3 {
		t.Fatalf("alpha per pair %v, pairs %d (%d)", d.AlphaPerPair, PairsOf(d), len(d.Pairs))
	}
	if !strings.Contains(strings.Join(d.Notes, "\n"), "alpha/3 = 0.01667") {
		t.Errorf("notes: %q", d.Notes)
	}
	for _, p := range d.Pairs {
		if len(p.Slices) != 2 || p.Slices[0].Alpha != 0.05/6 || p.Slices[0].Value != "easy" {
			t.Errorf("slices of %s vs %s: %+v", p.A, p.B, p.Slices)
		}
		if p.PDisc == nil || *p.PDisc != 0.16 || *p.ObservedDelta != 0.08 {
			t.Errorf("estimate %+v", p.Estimate)
		}
	}
	if err := CheckTags(rep, []string{"bucket"}); err == nil || !strings.Contains(err.Error(), "its keys are: tier") {
		t.Errorf("an unknown tag: %v", err)
	}
	if err := CheckTags(rep, []string{"tier"}); err != nil {
		t.Error(err)
	}
}

// The gate's power is computed per pass/fail rule and target at alpha
// split over the gate's checks; a discordance not given is assumed (the
// worsening plus GateChurn) and said to be; a target without the rule's
// scores gets a note, not a number.
func TestGatePower(t *testing.T) {
	rules, err := gate.RulesFromFlags([]string{"primary max_drop=5%"}, []string{"correct"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	in := GateRun{RunID: "r1", Targets: []string{"a", "b"}, Rules: rules, Source: "--rule",
		Rate: func(i int, r gate.Rule) (gate.RuleRate, bool) {
			if i == 1 {
				return gate.RuleRate{}, false
			}
			return gate.RuleRate{N: 400, Rate: 0.8, Limit: 0.05, Epochs: 1}, true
		}}
	d, err := GatePower(in, 0.05, Options{Alpha: 0.05, Power: 0.8})
	if err != nil {
		t.Fatal(err)
	}
	if d.Checks != 2 || d.AlphaPerCheck != 0.025 || len(d.Rules) != 2 {
		t.Fatalf("checks %d, alpha per check %v, rules %d", d.Checks, d.AlphaPerCheck, len(d.Rules))
	}
	a, b := d.Rules[0], d.Rules[1]
	if a.Power == nil || !a.PDiscAssumed || a.PDisc != 0.2 || a.Worsening != 0.1 {
		t.Errorf("target a: %+v", a)
	}
	want, _ := stats.NonInferiorityPower(400, 0.2, -0.1, 0.05, 0.025)
	if a.Power != nil && *a.Power != want {
		t.Errorf("power %v, want stats.NonInferiorityPower's %v", *a.Power, want)
	}
	if b.Power != nil || len(b.Notes) != 1 || !strings.Contains(b.Notes[0], "no scores") {
		t.Errorf("target b: %+v", b)
	}
	if !strings.Contains(strings.Join(d.Notes, "\n"), "the discordance is assumed") {
		t.Errorf("notes %q", d.Notes)
	}
	if _, err := GatePower(GateRun{RunID: "r0", Rules: rules}, 0.05, Options{}); err == nil {
		t.Error("a run without targets was planned")
	}
}
