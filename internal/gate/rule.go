package gate

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/assay-eval/assay/internal/spec"
)

// DefaultAlpha is the significance level of the paired tests that confirm
// a worsening, unless the spec's gate.alpha or --alpha says otherwise.
const DefaultAlpha = 0.05

// Rule is a rule ready to evaluate: as written, and read into numbers.
type Rule struct {
	Written spec.GateRule
	Check   spec.GateCheck
}

// String is the rule in the --rule syntax.
func (r Rule) String() string { return r.Written.String() }

// DefaultRules is the gate with no rules configured: the primary scorer's
// rate must not drop more than 5% relative to the baseline.
func DefaultRules() []Rule {
	w := spec.GateRule{Metric: spec.GatePrimary, MaxDrop: "5%"}
	c, _ := w.Parse(nil, nil)
	return []Rule{{Written: w, Check: c}}
}

// RuleSyntax describes the --rule syntax, for usage errors and help.
const RuleSyntax = `a rule is METRIC[TAG=VALUE] SETTING=VALUE ...
  METRIC   a scorer's name or primary (its pass rate), cost_per_case, latency_p95, ttft_p95 (time to first token, streamed calls), loud_rate
  [TAG=VALUE] optional: only the cases with this tag value
  SETTING  max_drop (rates: 5% relative, or 2pt)  min (rates: 80% or 0.8)
           max_rise (cost_per_case: 10% or USD; latency_p95, ttft_p95: 10%, 200ms or ms; loud_rate: 10% or 2pt)
           max (cost_per_case: USD; latency_p95, ttft_p95: 2s or ms; loud_rate: 5% or 0.05)
  e.g. --rule 'primary max_drop=5%' --rule 'correct[tier=hard] max_drop=3pt min=60%'
       --rule 'cost_per_case max_rise=10%' --rule 'latency_p95 max=2s'`

// RuleFlagError is a --rule flag that does not parse or does not fit the
// run; the command line reports it as a usage error.
type RuleFlagError struct {
	Flag string
	Msg  string
	Hint string
}

func (e *RuleFlagError) Error() string {
	s := fmt.Sprintf("--rule %q: %s", e.Flag, e.Msg)
	if e.Hint != "" {
		s += " (" + e.Hint + ")"
	}
	return s + "\n" + RuleSyntax
}

var ruleSettings = []string{"max_drop", "max_rise", "min", "max"}

// ParseRuleFlag reads the syntax of one --rule flag into a rule as written:
// METRIC, an optional [TAG=VALUE], then SETTING=VALUE pairs separated by
// spaces or commas. It does not check the rule against a run (see
// CheckRules).
func ParseRuleFlag(s string) (spec.GateRule, error) {
	var r spec.GateRule
	bad := func(msg, hint string) (spec.GateRule, error) {
		return spec.GateRule{}, &RuleFlagError{Flag: s, Msg: msg, Hint: hint}
	}
	rest := strings.TrimSpace(s)
	if rest == "" {
		return bad("the rule is empty", "")
	}
	sep := func(c rune) bool { return unicode.IsSpace(c) || c == ',' }
	end := strings.IndexFunc(rest, func(c rune) bool { return sep(c) || c == '[' })
	if end < 0 {
		end = len(rest)
	}
	r.Metric, rest = rest[:end], rest[end:]
	if r.Metric == "" {
		return bad("the rule does not start with a metric", "write the metric first, e.g. primary max_drop=5%")
	}
	if strings.Contains(r.Metric, "=") {
		return bad(fmt.Sprintf("the rule starts with %q, not a metric", r.Metric), "write the metric first, e.g. primary max_drop=5%")
	}
	if strings.HasPrefix(rest, "[") {
		close := strings.IndexByte(rest, ']')
		if close < 0 {
			return bad("the slice [TAG=VALUE] is not closed with ]", "")
		}
		key, val, ok := strings.Cut(rest[1:close], "=")
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		if !ok || key == "" || val == "" {
			return bad(fmt.Sprintf("the slice [%s] is not TAG=VALUE", rest[1:close]), "e.g. correct[tier=hard] max_drop=5%")
		}
		r.Slice = map[string]string{key: val}
		rest = rest[close+1:]
		if strings.HasPrefix(rest, "[") {
			return bad("a rule takes one slice [TAG=VALUE]", "")
		}
	}
	seen := map[string]bool{}
	for _, tok := range strings.FieldsFunc(rest, sep) {
		key, val, ok := strings.Cut(tok, "=")
		if !ok || val == "" {
			return bad(fmt.Sprintf("%q is not SETTING=VALUE", tok), "e.g. max_drop=5%")
		}
		if seen[key] {
			return bad(fmt.Sprintf("%s is set twice", key), "")
		}
		seen[key] = true
		switch key {
		case "max_drop":
			r.MaxDrop = val
		case "max_rise":
			r.MaxRise = val
		case "min":
			r.Min = val
		case "max":
			r.Max = val
		default:
			hint := "settings are " + strings.Join(ruleSettings, ", ")
			if near := spec.Nearest(key, ruleSettings); near != "" {
				hint = fmt.Sprintf("did you mean %q? %s", near, hint)
			}
			return bad(fmt.Sprintf("unknown setting %q", key), hint)
		}
	}
	return r, nil
}

// RulesFromFlags parses --rule flags and checks them against the scorers
// and tag keys of the candidate run. Errors are *RuleFlagError.
func RulesFromFlags(flags []string, scorers, tagKeys []string) ([]Rule, error) {
	var out []Rule
	for _, f := range flags {
		w, err := ParseRuleFlag(f)
		if err != nil {
			return nil, err
		}
		c, probs := w.Parse(scorers, tagKeys)
		if len(probs) > 0 {
			p := probs[0]
			msg := p.Msg
			if p.Field == "" {
				msg = "the rule " + p.Msg
			}
			return nil, &RuleFlagError{Flag: f, Msg: msg, Hint: strings.ReplaceAll(p.Hint, "of the spec", "of the run")}
		}
		out = append(out, Rule{Written: w, Check: c})
	}
	return out, nil
}

// RulesFromConfig reads the gate: section of a run's stored resolved spec
// (record.Run.Config), checked against the run's scorers and tag keys (nil
// lists are not checked), and gate.alpha (0 when not set; it is returned
// even when a rule is in error). It returns no rules when the spec had no
// gate section.
func RulesFromConfig(config []byte, scorers, tagKeys []string) ([]Rule, float64, error) {
	if len(config) == 0 {
		return nil, 0, nil
	}
	var sp struct {
		Gate *spec.Gate `json:"gate"`
	}
	if err := json.Unmarshal(config, &sp); err != nil {
		return nil, 0, fmt.Errorf("reading the gate rules of the run's spec: %w", err)
	}
	if sp.Gate == nil {
		return nil, 0, nil
	}
	var out []Rule
	var errs []error
	for i, w := range sp.Gate.Rules {
		c, probs := w.Parse(scorers, tagKeys)
		for _, p := range probs {
			errs = append(errs, fmt.Errorf("gate.rules[%d] (%s): %s", i, w.String(), p.Msg))
		}
		out = append(out, Rule{Written: w, Check: c})
	}
	if len(errs) > 0 {
		return nil, sp.Gate.Alpha, fmt.Errorf("the run's spec has gate rules that do not fit the run: %w", errors.Join(errs...))
	}
	return out, sp.Gate.Alpha, nil
}

// checks splits a rule into what it checks: the worsening versus the
// baseline and the bound, each named in the --rule syntax.
func (r Rule) checks() []Rule {
	var out []Rule
	if r.Check.Worse != nil {
		w := r.Written
		w.Min, w.Max = "", ""
		c := r.Check
		c.Bound = nil
		out = append(out, Rule{Written: w, Check: c})
	}
	if r.Check.Bound != nil {
		w := r.Written
		w.MaxDrop, w.MaxRise = "", ""
		c := r.Check
		c.Worse = nil
		out = append(out, Rule{Written: w, Check: c})
	}
	return out
}
