package scorer

import (
	"testing"

	"github.com/assay-eval/assay/internal/spec"
)

func TestCost(t *testing.T) {
	runCases(t, spec.Output{}, spec.Scorer{Type: "cost", Max: 0.01}, []scoreCase{
		{"cheap", call{raw: "ok", cost: 0.002}, passes, ""},
		{"at the budget", call{raw: "ok", cost: 0.01}, passes, ""},
		{"over is loud", call{raw: "ok", cost: 0.0101}, loudKind(KindOverBudget), "over the budget of $0.01"},
		{"invalid recorded cost fails closed", call{raw: "ok", cost: -1}, loudKind(KindScorerError), ""},
		// A cached reply was not billed, but the budget is on the model.
		{"a cached reply counts at its price", call{raw: "ok", saved: 0.02}, loudKind(KindOverBudget), "cost $0.02, over the budget"},
		{"a cheap cached reply passes", call{raw: "ok", saved: 0.002}, passes, ""},
	})
	runCases(t, spec.Output{}, spec.Scorer{Type: "cost", Max: "$0.5"}, []scoreCase{
		{"max as a dollar string", call{raw: "ok", cost: 0.6}, loudKind(KindOverBudget), ""},
	})
}
