package scorer

import (
	"context"
	"fmt"
	"time"

	"github.com/assay-eval/assay/internal/spec"
)

// latency passes when the call finished within max (a duration such as
// "2s" or "800ms"). Over budget is a loud too_slow: users abandon slow
// answers, so a right answer that arrives too late still fails here.
type latency struct {
	name       string
	max        time.Duration
	allowEmpty bool
}

func buildLatency(b *builder, i int, sc *spec.Scorer) Scorer {
	s, isStr := sc.Max.(string)
	var d time.Duration
	var err error
	if isStr {
		d, err = time.ParseDuration(s)
	}
	switch {
	case sc.Max == nil:
		b.problemf(i, "max", `max is a duration, e.g. max: 2s or max: 800ms`, "latency scorer needs max:")
		return nil
	case !isStr:
		b.problemf(i, "max", fmt.Sprintf(`write a duration with its unit, e.g. max: %vs or max: %vms`, sc.Max, sc.Max), "latency max %s has no unit", quote(sc.Max))
		return nil
	case err != nil:
		b.problemf(i, "max", `max is a duration, e.g. max: 2s, 1m30s or 800ms`, "latency max %q is not a duration", s)
		return nil
	case d <= 0:
		b.problemf(i, "max", `max is a positive duration, e.g. max: 2s`, "latency max %q must be positive", s)
		return nil
	}
	return &latency{name: sc.Name, max: d, allowEmpty: sc.AllowEmpty}
}

func (s *latency) Name() string { return s.name }

func (s *latency) Score(_ context.Context, in *Input) Verdict {
	if _, v, ok := rawAnswer(in, s.allowEmpty); !ok {
		return v
	}
	if in.Result == nil {
		return loud(KindScorerError, "no call measurements to judge latency")
	}
	took := time.Duration(in.Result.LatencyMS * float64(time.Millisecond))
	if took <= s.max {
		return pass(fmt.Sprintf("%v (max %v)", took.Round(time.Millisecond), s.max))
	}
	return loud(KindTooSlow, "took %v, over the budget of %v", took.Round(time.Millisecond), s.max)
}
