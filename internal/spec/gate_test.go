package spec

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// Each limit as written reads into the number the gate uses.
func TestGateRuleLimits(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	for _, tc := range []struct {
		rule  GateRule
		worse *GateLimit
		bound *float64
	}{
		{GateRule{Metric: "primary", MaxDrop: "5%"}, &GateLimit{0.05, true}, nil},
		{GateRule{Metric: "correct", MaxDrop: "2pt", Min: "80%"}, &GateLimit{0.02, false}, f(0.8)},
		{GateRule{Metric: "correct", MaxDrop: "2.5 points", Min: "0.75"}, &GateLimit{0.025, false}, f(0.75)},
		{GateRule{Metric: "correct", MaxDrop: "0pt"}, &GateLimit{0, false}, nil},
		{GateRule{Metric: GateCostPerCase, MaxRise: "10%", Max: "$0.002"}, &GateLimit{0.1, true}, f(0.002)},
		{GateRule{Metric: GateCostPerCase, MaxRise: "0.0005"}, &GateLimit{0.0005, false}, nil},
		{GateRule{Metric: GateLatencyP95, MaxRise: "200ms", Max: "1.5s"}, &GateLimit{200, false}, f(1500)},
		{GateRule{Metric: GateLatencyP95, MaxRise: "250", Max: "1m"}, &GateLimit{250, false}, f(60000)},
		{GateRule{Metric: GateTTFTP95, MaxRise: "15%", Max: "800ms"}, &GateLimit{0.15, true}, f(800)},
		{GateRule{Metric: "ttft_p95", MaxRise: "120"}, &GateLimit{120, false}, nil},
		{GateRule{Metric: GateLoudRate, MaxRise: "2pt", Max: "5%"}, &GateLimit{0.02, false}, f(0.05)},
		{GateRule{Metric: GateLoudRate, MaxRise: "150%", Max: "0.1"}, &GateLimit{1.5, true}, f(0.1)},
	} {
		c, probs := tc.rule.Parse([]string{"correct"}, nil)
		if len(probs) > 0 {
			t.Errorf("%s: %v", tc.rule, probs)
			continue
		}
		if fmt.Sprint(c.Worse) != fmt.Sprint(tc.worse) || (c.Bound == nil) != (tc.bound == nil) || (c.Bound != nil && *c.Bound != *tc.bound) {
			t.Errorf("%s: worse %+v bound %v, want %+v %v", tc.rule, c.Worse, deref(c.Bound), tc.worse, deref(tc.bound))
		}
	}
}

func deref(p *float64) string {
	if p == nil {
		return "nil"
	}
	return strconv.FormatFloat(*p, 'g', -1, 64)
}

// FuzzGateSection loads specs whose gate rules hold arbitrary text: the
// loader never panics, and every problem it finds about them is located in
// the spec and names the rule.
func FuzzGateSection(f *testing.F) {
	f.Add("primary", "tier", "hard", "5%", "", "80%", "")
	f.Add("cost_per_case", "", "", "", "$0.001", "", "0.002")
	f.Add("latency_p95", "", "", "", "1h", "", "-1ms")
	f.Add("loud_rate", "x", "", "1e309%", "1e309pt", "NaN", "+Inf")
	f.Add("", "", "", "", "", "", "")
	f.Fuzz(func(t *testing.T, metric, key, val, drop, rise, lo, hi string) {
		q := strconv.Quote
		slice := ""
		if key != "" {
			slice = fmt.Sprintf(", slice: {%s: %s}", q(key), q(val))
		}
		src := "dataset:\n  path: x.jsonl\n  tags: {tier: level}\nprompt: {user: q}\ntargets: [{name: a, provider: exec, command: [./run]}]\n" +
			"scorers:\n  - {name: correct, type: equals}\ngate:\n  rules:\n" +
			fmt.Sprintf("    - {metric: %s%s, max_drop: %s, max_rise: %s, min: %s, max: %s}\n", q(metric), slice, q(drop), q(rise), q(lo), q(hi))
		_, err := Parse("f.yaml", []byte(src))
		var ps Problems
		if err != nil && !errors.As(err, &ps) {
			t.Fatalf("error %v is not Problems", err)
		}
		for _, p := range ps {
			if p.Line < 1 || p.Col < 1 || p.Msg == "" {
				t.Fatalf("bad problem %#v", p)
			}
			if strings.HasPrefix(p.Msg, "gate.") && !strings.HasPrefix(p.Msg, "gate.rules[0]") {
				t.Fatalf("a gate problem that does not name its rule: %s", p)
			}
		}
	})
}
