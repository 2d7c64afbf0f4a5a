package gate

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/assay-eval/assay/internal/spec"
)

// The base decides the gate: a baseline (a run, or a baseline file made
// of one) carries the gate: section of the spec it was run from, so a
// change under review cannot loosen the rules it is gated by. This file
// reads a run's gate section, hashes it, and lists what a candidate's
// spec changed in it, and whether the change relaxes the gate.

// Rule sources: where the rules a gate applied came from.
const (
	RulesBaseline  = "baseline"
	RulesCandidate = "candidate"
	RulesFlags     = "flags"
)

// RulesOf reads a gate section into rules, checked against the scorers
// and tag keys given (nil lists are not checked), and its alpha (0 when
// unset). what names the section in errors ("the baseline's spec").
func RulesOf(g *spec.Gate, what string, scorers, tagKeys []string) ([]Rule, float64, error) {
	if g == nil {
		return nil, 0, nil
	}
	var out []Rule
	var errs []string
	for i, w := range g.Rules {
		c, probs := w.Parse(scorers, tagKeys)
		for _, p := range probs {
			errs = append(errs, fmt.Sprintf("gate.rules[%d] (%s): %s", i, w.String(), p.Msg))
		}
		out = append(out, Rule{Written: w, Check: c})
	}
	if len(errs) > 0 {
		return nil, g.Alpha, fmt.Errorf("%s has gate rules that do not fit the candidate run: %s", what, strings.Join(errs, "; "))
	}
	return out, g.Alpha, nil
}

// RuleChange is one difference between the baseline's gate rules and the
// candidate spec's, per limit: a rule's max_drop (or max_rise) and its
// min (or max) are compared apart, and gate.alpha too.
type RuleChange struct {
	// Rule names the limit: "primary max_drop", "correct[tier=hard] min",
	// "gate.alpha".
	Rule string `json:"rule"`
	// Baseline and Candidate are the limit as written on each side (""
	// when the side has none).
	Baseline  string `json:"baseline"`
	Candidate string `json:"candidate"`
	// Change is added, removed, loosened, tightened or changed (a limit
	// whose unit changed between relative and absolute: not comparable).
	Change string `json:"change"`
	// Relaxed is true when the candidate's rule lets through what the
	// baseline's would have failed: a larger max_drop or max_rise, a lower
	// min, a higher max, a lower alpha, a removed limit, or a change of
	// unit (which cannot be shown not to relax it).
	Relaxed bool `json:"relaxed"`
}

func (c RuleChange) String() string {
	var s string
	switch c.Change {
	case "added":
		s = fmt.Sprintf("%s=%s added", c.Rule, c.Candidate)
	case "removed":
		s = fmt.Sprintf("%s=%s removed", c.Rule, c.Baseline)
	default:
		s = fmt.Sprintf("%s %s → %s (%s)", c.Rule, c.Baseline, c.Candidate, c.Change)
	}
	if c.Relaxed {
		s += ": relaxed"
	}
	return s
}

// limitOf is one limit of a rule, for comparing two rule sets.
type limitOf struct {
	key     string // metric[slice] and bound or worse: what is limited
	name    string // metric[slice] setting, for display
	written string
	worse   *spec.GateLimit
	bound   *float64
	higher  bool // the metric is higher-is-better
}

// limits splits effective rules into their limits, keyed by what they
// limit; "primary" is read as the primary scorer's name when known. Of two
// limits on the same thing the tighter is kept (the first when their units
// differ).
func limits(rules []Rule, primary string) (map[string]limitOf, []string) {
	out := map[string]limitOf{}
	var order []string
	for _, r := range rules {
		metric := strings.TrimSpace(r.Written.Metric)
		if metric == spec.GatePrimary && primary != "" {
			metric = primary
		}
		var slice string
		for _, k := range slices.Sorted(maps.Keys(r.Written.Slice)) {
			slice += "[" + k + "=" + r.Written.Slice[k] + "]"
		}
		add := func(l limitOf) {
			prev, ok := out[l.key]
			if !ok {
				out[l.key] = l
				order = append(order, l.key)
				return
			}
			if _, tighter, comparable := compareLimit(prev, l); comparable && tighter {
				out[l.key] = l
			}
		}
		c := r.Check
		if c.Worse != nil {
			setting, written := "max_drop", r.Written.MaxDrop
			if r.Written.MaxDrop == "" {
				setting, written = "max_rise", r.Written.MaxRise
			}
			add(limitOf{key: metric + slice + " worse", name: strings.TrimSpace(r.Written.Metric) + slice + " " + setting,
				written: strings.TrimSpace(written), worse: c.Worse, higher: c.HigherIsBetter()})
		}
		if c.Bound != nil {
			setting, written := "min", r.Written.Min
			if r.Written.Min == "" {
				setting, written = "max", r.Written.Max
			}
			add(limitOf{key: metric + slice + " bound", name: strings.TrimSpace(r.Written.Metric) + slice + " " + setting,
				written: strings.TrimSpace(written), bound: c.Bound, higher: c.HigherIsBetter()})
		}
	}
	return out, order
}

// compareLimit says whether b is looser or tighter than a; comparable is
// false when one is relative and the other absolute.
func compareLimit(a, b limitOf) (looser, tighter, comparable bool) {
	switch {
	case a.worse != nil && b.worse != nil:
		if a.worse.Relative != b.worse.Relative {
			return false, false, false
		}
		return b.worse.Amount > a.worse.Amount, b.worse.Amount < a.worse.Amount, true
	case a.bound != nil && b.bound != nil:
		if a.higher { // a floor: lower is looser
			return *b.bound < *a.bound, *b.bound > *a.bound, true
		}
		return *b.bound > *a.bound, *b.bound < *a.bound, true
	}
	return false, false, false
}

// effectiveRules is a gate section's rules as the gate applies them: the
// default rules when it sets none. Rules that do not parse are left out
// (they are reported where the rules are applied).
func effectiveRules(g *spec.Gate) []Rule {
	var out []Rule
	for _, w := range g.Rules {
		c, probs := w.Parse(nil, nil)
		if len(probs) == 0 {
			out = append(out, Rule{Written: w, Check: c})
		}
	}
	if len(g.Rules) == 0 {
		return DefaultRules()
	}
	return out
}

// CompareGates lists what the candidate's gate section changed in the
// baseline's, limit by limit (the default rules standing in for a section
// with none), in the baseline's order then the candidate's additions.
// primary is the primary scorer's name, which "primary" in a rule means.
func CompareGates(base, cand *spec.Gate, primary string) []RuleChange {
	if base == nil || cand == nil {
		return nil
	}
	var out []RuleChange
	ba, bc := base.Alpha, cand.Alpha
	if ba == 0 {
		ba = DefaultAlpha
	}
	if bc == 0 {
		bc = DefaultAlpha
	}
	if ba != bc {
		c := RuleChange{Rule: "gate.alpha", Baseline: strconv.FormatFloat(ba, 'g', -1, 64), Candidate: strconv.FormatFloat(bc, 'g', -1, 64), Change: "tightened"}
		// A lower alpha asks for stronger evidence before failing: it
		// lets more regressions through.
		if bc < ba {
			c.Change, c.Relaxed = "loosened", true
		}
		out = append(out, c)
	}
	bl, border := limits(effectiveRules(base), primary)
	cl, corder := limits(effectiveRules(cand), primary)
	for _, k := range border {
		b := bl[k]
		c, ok := cl[k]
		if !ok {
			out = append(out, RuleChange{Rule: b.name, Baseline: b.written, Change: "removed", Relaxed: true})
			continue
		}
		looser, tighter, comparable := compareLimit(b, c)
		switch {
		case !comparable:
			out = append(out, RuleChange{Rule: b.name, Baseline: b.written, Candidate: c.written, Change: "changed", Relaxed: true})
		case looser:
			out = append(out, RuleChange{Rule: b.name, Baseline: b.written, Candidate: c.written, Change: "loosened", Relaxed: true})
		case tighter:
			out = append(out, RuleChange{Rule: b.name, Baseline: b.written, Candidate: c.written, Change: "tightened"})
		}
	}
	for _, k := range corder {
		if _, ok := bl[k]; !ok {
			c := cl[k]
			out = append(out, RuleChange{Rule: c.name, Candidate: c.written, Change: "added"})
		}
	}
	return out
}

// Relaxed is the changes that relax the gate.
func Relaxed(changes []RuleChange) []RuleChange {
	return slices.DeleteFunc(slices.Clone(changes), func(c RuleChange) bool { return !c.Relaxed })
}

// SetRuleChanges records where the rules came from and what the
// candidate's spec changed in the baseline's; with the baseline's rules
// applied, a relaxed rule fails the gate: a change under review may not
// loosen the gate it is judged by.
func (r *Result) SetRuleChanges(from, hash string, changes []RuleChange) {
	r.RulesFrom, r.RulesHash, r.RuleChanges = from, hash, changes
	if from != RulesBaseline {
		return
	}
	r.RelaxedRules = len(Relaxed(changes))
	if r.RelaxedRules > 0 {
		r.Verdict = Fail
	}
}
