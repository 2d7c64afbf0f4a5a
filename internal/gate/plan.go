package gate

import (
	"github.com/assay-eval/assay/internal/runview"
	"github.com/assay-eval/assay/internal/spec"
)

// What `assay plan --gate` needs of a run to say how likely the gate is to
// catch a regression: the checks a gate run makes (its Holm family) and,
// for each pass/fail rule with a worsening limit, the cases and the rate
// on one target.

// ChecksPerTarget is the number of checks the rules make on each target
// (a rule with a worsening limit and a floor or ceiling makes two).
func ChecksPerTarget(rules []Rule) int {
	n := 0
	for _, r := range rules {
		n += len(r.checks())
	}
	return n
}

// PassFailWorsening reports whether the rule limits the worsening of a
// pass/fail rate (a scorer's rate or the loud rate): the kind of check
// whose power is the McNemar non-inferiority test's.
func (r Rule) PassFailWorsening() bool {
	return r.Check.Worse != nil && (r.Check.Kind == "rate" || r.Check.Kind == spec.GateLoudRate)
}

// RuleRate is a pass/fail rule measured on one target of one run, as the
// baseline of a future gate.
type RuleRate struct {
	// N is the number of cases with a value (in the rule's slice).
	N int
	// Rate is the mean over those cases of their pass (or loud) fraction.
	Rate float64
	// Limit is the largest worsening allowed, as a fraction: a relative
	// limit taken of Rate.
	Limit float64
	// Epochs is the run's epochs per case (the plan is for one).
	Epochs int
	// Clustered says the cases carry a cluster tag.
	Clustered bool
}

// RateFor measures a pass/fail worsening rule on one target of a run. ok
// is false when the rule is not one (PassFailWorsening) or the target has
// no scores of its scorer.
func RateFor(s *runview.View, t *runview.Target, r Rule) (RuleRate, bool) {
	c := r.Check
	if !r.PassFailWorsening() {
		return RuleRate{}, false
	}
	val := loudVal(t)
	if c.Kind == "rate" {
		sc := c.Scorer
		if sc == spec.GatePrimary {
			sc = s.Primary
		}
		if _, ok := t.Pass[sc]; !ok {
			return RuleRate{}, false
		}
		val = passVal(t, sc)
	}
	pairs := make([][2]int, len(s.Cases))
	for i := range pairs {
		pairs[i] = [2]int{i, i}
	}
	e := &evaluator{base: s, cand: s, bt: t, ct: t, pairs: pairs}
	x, _ := e.sideMeans(e.sliced(c), 1, val)
	out := RuleRate{N: len(x), Epochs: s.Epochs, Clustered: clusterOf(s, s) != nil}
	if out.N == 0 {
		return out, true
	}
	out.Rate = mean(x)
	out.Limit = threshold(c, out.Rate)
	return out, true
}
