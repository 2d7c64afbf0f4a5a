package scorer

import (
	"context"
	"math"
	"strconv"

	"github.com/assay-eval/assay/internal/spec"
)

// cost passes when the call cost at most max USD. Over budget is a loud
// over_budget.
type cost struct {
	name       string
	max        float64
	allowEmpty bool
}

func buildCost(b *builder, i int, sc *spec.Scorer) Scorer {
	f, err := maxNumber(sc.Max)
	if err != nil || f <= 0 {
		b.problemf(i, "max", "max is the most one call may cost in USD, e.g. max: 0.002", "cost scorer needs max: %s", describeMax(sc.Max, err))
		return nil
	}
	return &cost{name: sc.Name, max: f, allowEmpty: sc.AllowEmpty}
}

func (s *cost) Name() string { return s.name }

func (s *cost) Score(_ context.Context, in *Input) Verdict {
	if _, v, ok := rawAnswer(in, s.allowEmpty); !ok {
		return v
	}
	if in.Result == nil {
		return loud(KindScorerError, "no call measurements to judge cost")
	}
	// The reply's price, whether paid now or served from the cache (where
	// it cost 0 this time): the budget is on the model, not on the cache.
	c := in.Result.Price()
	if math.IsNaN(c) || c < 0 {
		return loud(KindScorerError, "the call's recorded cost %v is invalid", c)
	}
	if c <= s.max {
		return pass("$" + usd(c) + " (max $" + usd(s.max) + ")")
	}
	return loud(KindOverBudget, "cost $%s, over the budget of $%s", usd(c), usd(s.max))
}

func usd(f float64) string { return strconv.FormatFloat(f, 'g', 6, 64) }
