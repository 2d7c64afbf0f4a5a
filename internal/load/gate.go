package load

import (
	"fmt"

	"github.com/assay-eval/assay/internal/record"
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

// Gate holds the candidate load test against the base.
func Gate(base, cand Data, rules []Rule, o GateOptions) (*GateResult, error) {
	return nil, fmt.Errorf("load: gate not implemented yet")
}
