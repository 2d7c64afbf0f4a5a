package load

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/stats"
	"github.com/assay-eval/assay/internal/units"
)

// Gate metrics.
const (
	MetricP95    = "p95"
	MetricP99    = "p99"
	MetricTTFT95 = "ttft95"
	MetricErrors = "errors"
)

// Verdicts, as the gate writes them.
const (
	Pass         = "pass"
	Fail         = "fail"
	Inconclusive = "inconclusive"
)

// Rule holds the candidate's Metric at level At against the base's: it may
// rise by at most MaxRise ("20%" of the base's, "300ms", or for errors
// "2pt", percentage points).
type Rule struct {
	Metric  string  `json:"metric"`
	At      float64 `json:"at"`
	MaxRise string  `json:"max_rise"`
}

// Data is a load test as stored.
type Data struct {
	Steps    []record.LoadStep
	Requests []record.LoadRequest
}

// GateOptions tune Gate.
type GateOptions struct {
	Alpha     float64 // one-sided level (default 0.05)
	Resamples int     // default 2000
	Seed      uint64
}

// Check is one rule judged on one target.
type Check struct {
	Rule   Rule   `json:"rule"`
	Target string `json:"target"`
	// Base and Cand are the metric at the level (ms, or a fraction for
	// errors); Rise Cand − Base; Allowed the rise the rule allows.
	Base    Num `json:"base"`
	Cand    Num `json:"cand"`
	Rise    Num `json:"rise"`
	Allowed Num `json:"allowed"`
	// Lo and Hi are the one-sided bounds of the rise beyond what is
	// allowed (excess = rise − allowed): pass when Hi ≤ 0, fail when Lo > 0.
	Lo      Num    `json:"excess_lo"`
	Hi      Num    `json:"excess_hi"`
	NBase   int    `json:"n_base"`
	NCand   int    `json:"n_cand"`
	Verdict string `json:"verdict"`
	Why     string `json:"why"`
}

// GateResult is every check and the verdict: fail when any check fails,
// inconclusive when none fails and any is inconclusive, else pass.
type GateResult struct {
	Checks  []Check `json:"checks"`
	Verdict string  `json:"verdict"`
}

// MinGateN is the fewest measurements on each side on which a p95 or
// p99 rule decides: below it the bootstrap of a tail percentile does not
// hold its level, and the check is inconclusive.
const MinGateN = 30

// rise is a rule's allowance: a share of the base's value, or an amount
// (ms, or a fraction for errors).
type rise struct {
	rel, abs float64
	isRel    bool
}

func (r rise) allowed(base float64) float64 {
	if r.isRel {
		return r.rel * base
	}
	return r.abs
}

// Check reports every problem of a rule at once (nil when it is valid).
func (r Rule) Check() error {
	_, err := parseRule(r)
	return err
}

// parseRule checks a rule and reads its allowance.
func parseRule(r Rule) (rise, error) {
	var problems []string
	switch r.Metric {
	case MetricP95, MetricP99, MetricTTFT95, MetricErrors:
	default:
		problems = append(problems, fmt.Sprintf("metric %q: want %s, %s, %s or %s", r.Metric, MetricP95, MetricP99, MetricTTFT95, MetricErrors))
	}
	if !(r.At > 0) || math.IsInf(r.At, 0) {
		problems = append(problems, fmt.Sprintf("at %g: want the level of a step (above 0)", r.At))
	}
	var out rise
	s := strings.TrimSpace(r.MaxRise)
	switch {
	case strings.HasSuffix(s, "%"):
		v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(s, "%")), 64)
		if err != nil || !(v >= 0) || math.IsInf(v, 0) {
			problems = append(problems, fmt.Sprintf("max_rise %q: want a percentage of the base's value such as 20%%", r.MaxRise))
		}
		out = rise{rel: v / 100, isRel: true}
	case strings.HasSuffix(s, "pt"):
		v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(s, "pt")), 64)
		switch {
		case r.Metric != MetricErrors:
			problems = append(problems, fmt.Sprintf("max_rise %q: points are for the errors metric; %s rises by a duration (300ms) or a percentage (20%%)", r.MaxRise, r.Metric))
		case err != nil || !(v >= 0 && v <= 100):
			problems = append(problems, fmt.Sprintf("max_rise %q: want percentage points such as 1pt", r.MaxRise))
		}
		out = rise{abs: v / 100}
	default:
		d, err := time.ParseDuration(s)
		switch {
		case r.Metric == MetricErrors:
			problems = append(problems, fmt.Sprintf("max_rise %q: the errors metric rises by points (1pt) or a percentage of the base's rate (50%%)", r.MaxRise))
		case err != nil || d < 0:
			problems = append(problems, fmt.Sprintf("max_rise %q: want a duration (300ms) or a percentage of the base's value (20%%)", r.MaxRise))
		}
		out = rise{abs: ms(d)}
	}
	if len(problems) > 0 {
		return rise{}, fmt.Errorf("load rule %s at %g: %s", r.Metric, r.At, strings.Join(problems, "; "))
	}
	return out, nil
}

// Gate holds the candidate load test against the base, rule by rule and
// target by target (targets matched by name): at the rule's level, the
// candidate's metric may rise by at most the rule's allowance. Each side's
// requests at that step are resampled independently (a percentile bootstrap
// over requests, stats.RankQuantile for the percentiles); the excess (rise
// minus allowance) of each pair of resamples gives one-sided bounds at
// Alpha: pass when the upper bound is at most 0, fail when the lower bound
// is above 0, inconclusive otherwise.
func Gate(base, cand Data, rules []Rule, o GateOptions) (*GateResult, error) {
	if o.Alpha == 0 {
		o.Alpha = 0.05
	}
	if !(o.Alpha > 0 && o.Alpha < 0.5) {
		return nil, fmt.Errorf("alpha %g: must be in (0, 0.5)", o.Alpha)
	}
	if o.Resamples == 0 {
		o.Resamples = 2000
	}
	var problems []error
	rises := make([]rise, len(rules))
	for i, r := range rules {
		var err error
		if rises[i], err = parseRule(r); err != nil {
			problems = append(problems, err)
		}
	}
	if len(rules) == 0 {
		problems = append(problems, errors.New("no load rule to check"))
	}
	if err := errors.Join(problems...); err != nil {
		return nil, err
	}
	if bm, cm := modeOf(base), modeOf(cand); bm != "" && cm != "" && bm != cm {
		return nil, fmt.Errorf("the base is a %s test and the candidate a %s test: their levels do not compare", bm, cm)
	}
	var targets []string
	for _, st := range base.Steps {
		if !slices.Contains(targets, st.Target) && slices.ContainsFunc(cand.Steps, func(c record.LoadStep) bool { return c.Target == st.Target }) {
			targets = append(targets, st.Target)
		}
	}
	if len(targets) == 0 {
		return nil, errors.New("the base and the candidate share no target")
	}
	res := &GateResult{Verdict: Pass}
	for ri, r := range rules {
		for ti, t := range targets {
			c := gateCheck(base, cand, r, rises[ri], t, o, StepSeed(o.Seed, ri, ti))
			res.Checks = append(res.Checks, c)
			switch {
			case c.Verdict == Fail:
				res.Verdict = Fail
			case c.Verdict == Inconclusive && res.Verdict == Pass:
				res.Verdict = Inconclusive
			}
		}
	}
	return res, nil
}

func modeOf(d Data) string {
	if len(d.Steps) == 0 {
		return ""
	}
	return d.Steps[0].Mode
}

// sideValues are one side's measurements of the metric at the rule's
// level: latencies or first-token times of answers in ms, or 0/1 per
// request for errors. ok is false (with why) when there is no such step.
func sideValues(d Data, r Rule, target, side string) ([]float64, string) {
	i := slices.IndexFunc(d.Steps, func(s record.LoadStep) bool {
		return s.Target == target && math.Abs(s.Level-r.At) <= 1e-9*r.At
	})
	if i < 0 {
		return nil, fmt.Sprintf("the %s has no step of %s at %s", side, target, formatLevel(modeOf(d), r.At))
	}
	st := d.Steps[i]
	if st.Skipped != "" {
		return nil, fmt.Sprintf("the %s's step of %s at %s was not run (%s)", side, target, formatLevel(st.Mode, r.At), st.Skipped)
	}
	if st.Saturated {
		return nil, fmt.Sprintf("the %s's step of %s at %s measured a saturated harness, not the server", side, target, formatLevel(st.Mode, r.At))
	}
	var xs []float64
	for _, q := range d.Requests {
		if q.Target != target || q.Step != st.Step {
			continue
		}
		switch r.Metric {
		case MetricErrors:
			xs = append(xs, b2f(q.ErrorKind != ""))
		case MetricTTFT95:
			if q.ErrorKind == "" && !math.IsNaN(q.FirstTokenMS) {
				xs = append(xs, q.FirstTokenMS)
			}
		default:
			if q.ErrorKind == "" {
				xs = append(xs, q.LatencyMS)
			}
		}
	}
	return xs, ""
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func gateCheck(base, cand Data, r Rule, rs rise, target string, o GateOptions, seed uint64) Check {
	nan := Num(math.NaN())
	c := Check{Rule: r, Target: target, Base: nan, Cand: nan, Rise: nan, Allowed: nan, Lo: nan, Hi: nan, Verdict: Inconclusive}
	bx, why := sideValues(base, r, target, "base")
	if why == "" {
		var cx []float64
		cx, why = sideValues(cand, r, target, "candidate")
		if why == "" {
			return decide(c, bx, cx, r, rs, o, seed)
		}
	}
	c.Why = why + "; nothing decided"
	return c
}

func decide(c Check, bx, cx []float64, r Rule, rs rise, o GateOptions, seed uint64) Check {
	c.NBase, c.NCand = len(bx), len(cx)
	q := map[string]float64{MetricP95: 0.95, MetricP99: 0.99, MetricTTFT95: 0.95}[r.Metric]
	point := func(xs []float64) float64 {
		if r.Metric == MetricErrors {
			return mean(xs)
		}
		return stats.Quantile(slices.Clone(xs), q)
	}
	pb, pc := point(bx), point(cx)
	c.Base, c.Cand, c.Rise, c.Allowed = Num(pb), Num(pc), Num(pc-pb), Num(rs.allowed(pb))
	minN := MinGateN
	if r.Metric == MetricErrors {
		minN = 1
	}
	if len(bx) < minN || len(cx) < minN {
		c.Why = fmt.Sprintf("%d measurements in the base and %d in the candidate: a %s needs at least %d on each side; nothing decided", len(bx), len(cx), r.Metric, minN)
		return c
	}
	reps := func(xs []float64, rng *rand.Rand) []float64 {
		if r.Metric == MetricErrors {
			return stats.BootstrapMean(rng, xs, o.Resamples)
		}
		return quantileReps(rng, rankQuantile(xs), len(xs), q, o.Resamples)
	}
	rb := reps(bx, rand.New(rand.NewPCG(seed, 1)))
	rc := reps(cx, rand.New(rand.NewPCG(seed, 2)))
	excess := make([]float64, len(rb))
	for i := range rb {
		excess[i] = rc[i] - rb[i] - rs.allowed(rb[i])
	}
	slices.Sort(excess)
	lo, hi := stats.QuantileSorted(excess, o.Alpha), stats.QuantileSorted(excess, 1-o.Alpha)
	c.Lo, c.Hi = Num(lo), Num(hi)
	show := func(v float64) string {
		if r.Metric == MetricErrors {
			return units.Pct(v)
		}
		return fmtMS(v)
	}
	conf := strconv.FormatFloat(100*(1-o.Alpha), 'g', -1, 64) + "%"
	rose := fmt.Sprintf("%s %s → %s (allowed rise %s)", r.Metric, show(pb), show(pc), show(rs.allowed(pb)))
	switch {
	case hi <= 0:
		c.Verdict = Pass
		c.Why = fmt.Sprintf("%s: the rise beyond the allowance is at most %s (%s one-sided)", rose, show(hi), conf)
	case lo > 0:
		c.Verdict = Fail
		c.Why = fmt.Sprintf("%s: the rise exceeds the allowance by at least %s (%s one-sided)", rose, show(lo), conf)
	default:
		c.Why = fmt.Sprintf("%s: the excess lies between %s and %s (%s one-sided): more requests would decide", rose, show(lo), show(hi), conf)
	}
	return c
}
