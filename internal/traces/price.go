package traces

import (
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/spec"
)

// Price sets t's cost from prices by its model — the requested model's
// price, else the responding model's — at spec.Price.Cost of its input and
// output tokens. A trace whose models have no price gets cost 0 and Priced
// false, so a report can count it apart instead of calling it free.
func Price(t *record.Trace, prices map[string]spec.Price) {
	t.CostUSD, t.Priced = 0, false
	p, ok := prices[t.Model]
	if !ok && t.ResponseModel != "" {
		p, ok = prices[t.ResponseModel]
	}
	if !ok {
		return
	}
	t.CostUSD = p.Cost(t.InputTokens, t.OutputTokens, 0)
	t.Priced = true
}
