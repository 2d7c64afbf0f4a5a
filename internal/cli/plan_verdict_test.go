package cli

import (
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/analysis"
	"github.com/assay-eval/assay/internal/plan"
	"github.com/assay-eval/assay/internal/report"
	"github.com/assay-eval/assay/internal/stats"
)

// A slice whose difference the report's exact test found (b_better) is
// not "too few cases", though the difference is below the MDD at 80%
// power; a slice the report could not decide is, and its row shows no
// verdict beside the flag. Before, plan --slices printed "b_better  too
// few cases" on one row.
func TestPlanNoVerdictBesideTooFewCases(t *testing.T) {
	t.Parallel()
	o := plan.Options{Alpha: 0.05, Power: 0.8, Slices: true}
	// 40 cases, 1 passed only by A, 9 only by B: McNemar exact p < 0.05,
	// yet the MDD at 25% discordance is above the 20-point gap.
	if p := stats.McNemarExact(1, 9); p >= 0.05 {
		t.Fatalf("premise: McNemar p %v", p)
	}
	if mdd, err := stats.MinDetectableDifference(40, 0.25, 0.05, 0.8); err == nil && mdd <= 0.2 {
		t.Fatalf("premise: MDD %v", mdd)
	}
	found := analysis.Comparison{A: "a", B: "b", Test: "mcnemar_exact", N: 40, AOnly: 1, BOnly: 9, Verdict: stats.VerdictBBetter}
	if e := plan.EstimateOf(found, o, 0.05); e.TooSmall {
		t.Error("a difference the report found is flagged too small")
	}
	// 40 cases, 3 against 7: p ≈ 0.34, inconclusive, and too small.
	undecided := analysis.Comparison{A: "a", B: "b", Test: "mcnemar_exact", N: 40, AOnly: 3, BOnly: 7, Verdict: stats.VerdictInconclusive}
	e := plan.EstimateOf(undecided, o, 0.05)
	if !e.TooSmall {
		t.Fatal("an undecided 3-vs-7 slice of 40 is not flagged too small")
	}

	doc := &plan.Run{Mode: plan.ModeRun, RunID: "r1", Scoring: 1, Alpha: 0.05, AlphaPerPair: 0.05, Power: 0.8, BySlice: true,
		Pairs: []plan.Pair{{A: "a", B: "b", Test: "mcnemar_exact", Verdict: stats.VerdictBBetter, Estimate: plan.EstimateOf(found, o, 0.05),
			Slices: []plan.Slice{
				{Key: "tier", Value: "easy", Verdict: stats.VerdictBBetter, Estimate: plan.EstimateOf(found, o, 0.05)},
				{Key: "tier", Value: "hard", Verdict: stats.VerdictInconclusive, Estimate: e},
			}}}}
	var b strings.Builder
	if err := report.PlanRunText(&b, doc); err != nil {
		t.Fatal(err)
	}
	flagged := 0
	for _, l := range strings.Split(b.String(), "\n") {
		if !strings.Contains(l, "too few cases") || strings.HasPrefix(l, "\"too few") || !strings.Contains(l, "tier=") {
			continue
		}
		flagged++
		for _, v := range []string{stats.VerdictABetter, stats.VerdictBBetter, stats.VerdictEquivalent, stats.VerdictInconclusive} {
			if strings.Contains(l, v) {
				t.Errorf("verdict %s beside too few cases: %q", v, l)
			}
		}
	}
	if flagged != 1 {
		t.Errorf("%d rows flagged too few cases, want 1 (tier=hard):\n%s", flagged, b.String())
	}
	if l := planLineWith(b.String(), "tier=easy"); !strings.Contains(l, stats.VerdictBBetter) || strings.Contains(l, "too few") {
		t.Errorf("tier=easy row %q: want its verdict and no flag", l)
	}
}
