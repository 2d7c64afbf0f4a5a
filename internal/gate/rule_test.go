package gate

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/spec"
)

func TestParseRuleFlag(t *testing.T) {
	for _, tc := range []struct {
		flag string
		want spec.GateRule
		text string // String() of the parsed rule
	}{
		{"primary max_drop=5%", spec.GateRule{Metric: "primary", MaxDrop: "5%"}, "primary max_drop=5%"},
		{"  correct[tier=hard] max_drop=3pt,min=60% ", spec.GateRule{Metric: "correct", Slice: map[string]string{"tier": "hard"}, MaxDrop: "3pt", Min: "60%"}, "correct[tier=hard] max_drop=3pt min=60%"},
		{"correct[bucket = should refuse] min=0.9", spec.GateRule{Metric: "correct", Slice: map[string]string{"bucket": "should refuse"}, Min: "0.9"}, "correct[bucket=should refuse] min=0.9"},
		{"cost_per_case max_rise=$0.0005 max=0.002", spec.GateRule{Metric: "cost_per_case", MaxRise: "$0.0005", Max: "0.002"}, "cost_per_case max_rise=$0.0005 max=0.002"},
		{"latency_p95\tmax=2s", spec.GateRule{Metric: "latency_p95", Max: "2s"}, "latency_p95 max=2s"},
	} {
		got, err := ParseRuleFlag(tc.flag)
		if err != nil {
			t.Errorf("%q: %v", tc.flag, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) || got.String() != tc.text {
			t.Errorf("%q: %+v %q, want %+v %q", tc.flag, got, got.String(), tc.want, tc.text)
		}
	}
}

// A bad --rule says what is wrong, what would be valid, and shows the syntax.
func TestRuleFlagErrors(t *testing.T) {
	for _, tc := range []struct{ flag, want string }{
		{"", `--rule "": the rule is empty`},
		{"max_drop=5%", `--rule "max_drop=5%": the rule starts with "max_drop=5%", not a metric (write the metric first, e.g. primary max_drop=5%)`},
		{"primary max_dorp=5%", `--rule "primary max_dorp=5%": unknown setting "max_dorp" (did you mean "max_drop"? settings are max_drop, max_rise, min, max)`},
		{"primary max_drop", `--rule "primary max_drop": "max_drop" is not SETTING=VALUE (e.g. max_drop=5%)`},
		{"primary[tier=hard max_drop=5%", `--rule "primary[tier=hard max_drop=5%": the slice [TAG=VALUE] is not closed with ]`},
		{"primary[hard] max_drop=5%", `--rule "primary[hard] max_drop=5%": the slice [hard] is not TAG=VALUE (e.g. correct[tier=hard] max_drop=5%)`},
		{"primary[a=b][c=d] max_drop=5%", `--rule "primary[a=b][c=d] max_drop=5%": a rule takes one slice [TAG=VALUE]`},
		{"primary max_drop=5% max_drop=3%", `--rule "primary max_drop=5% max_drop=3%": max_drop is set twice`},
		// Checked against the run's scorers and tags:
		{"corect max_drop=5%", `--rule "corect max_drop=5%": metric "corect" is neither a scorer of the spec nor a gate metric (did you mean "correct"? metrics are a scorer's name (correct), primary, cost_per_case, latency_p95, ttft_p95 or loud_rate)`},
		{"primary[tire=hard] max_drop=5%", `--rule "primary[tire=hard] max_drop=5%": slice tag "tire" is not a tag of the dataset (did you mean "tier"? tags are: tier)`},
		{"primary", `--rule "primary": the rule sets no limit (set max_drop (5% or 2pt) or min (80%) on a rate; max_rise or max on cost_per_case, latency_p95, ttft_p95 or loud_rate)`},
		{"primary max_drop=0.05", `--rule "primary max_drop=0.05": max_drop "0.05" needs a unit (write 5% (relative to the baseline's rate) or 2pt (percentage points))`},
		{"primary max_drop=120%", `--rule "primary max_drop=120%": max_drop "120%" is out of range: a rate cannot drop by more than 100% (write 5% (relative to the baseline's rate) or 2pt (percentage points))`},
		{"cost_per_case max_drop=5%", `--rule "cost_per_case max_drop=5%": max_drop: cost_per_case is lower-is-better and cannot get worse by dropping (use max_rise: a worsening of cost_per_case is a rise)`},
		{"latency_p95 max=fast", `--rule "latency_p95 max=fast": max "fast" is not a duration (write a duration, e.g. 2s or 800ms (a bare number is milliseconds))`},
		{"primary min=Inf%", `--rule "primary min=Inf%": min "Inf%" is not a rate (write a rate as 80% or 0.8)`},
	} {
		_, err := RulesFromFlags([]string{tc.flag}, []string{"correct"}, []string{"tier"})
		var fe *RuleFlagError
		if !errors.As(err, &fe) {
			t.Errorf("%q: err %v, want a RuleFlagError", tc.flag, err)
			continue
		}
		first, rest, _ := strings.Cut(err.Error(), "\n")
		if first != tc.want {
			t.Errorf("%q:\n got %s\nwant %s", tc.flag, first, tc.want)
		}
		if !strings.Contains(rest, "a rule is METRIC[TAG=VALUE] SETTING=VALUE") {
			t.Errorf("%q: the error does not show the syntax", tc.flag)
		}
	}
}

func TestRulesFromConfig(t *testing.T) {
	cfg := []byte(`{"name":"x","gate":{"alpha":0.01,"rules":[{"metric":"primary","max_drop":"2pt"},{"metric":"correct","slice":{"tier":"3"},"min":"50%"}]}}`)
	rs, alpha, err := RulesFromConfig(cfg, nil, nil)
	if err != nil || alpha != 0.01 || len(rs) != 2 || rs[1].String() != "correct[tier=3] min=50%" || rs[0].Check.Worse.Amount != 0.02 {
		t.Errorf("rules %v alpha %v err %v", rs, alpha, err)
	}
	if rs, _, err := RulesFromConfig([]byte(`{"name":"x"}`), nil, nil); err != nil || rs != nil {
		t.Errorf("no gate section: %v %v", rs, err)
	}
	if _, _, err := RulesFromConfig([]byte(`{"gate":{"rules":[{"metric":"primary","max_drop":"lots"}]}}`), nil, nil); err == nil || !strings.Contains(err.Error(), `gate.rules[0] (primary max_drop=lots): max_drop "lots"`) {
		t.Errorf("bad stored rule: %v", err)
	}
}

// Any flag text parses or fails with a RuleFlagError; what parses writes
// back (String) to text that parses to the same rule, and reading it into
// numbers never panics.
func FuzzParseRuleFlag(f *testing.F) {
	for _, s := range []string{"primary max_drop=5%", "correct[tier=hard] max_drop=3pt min=60%", "cost_per_case max_rise=$0.0005 max=0.002",
		"latency_p95 max_rise=200ms max=2s", "loud_rate max_rise=2pt,max=5%", "x[=]", "a[b=c]]", "p max_drop=1e400%", "p min=-0", "p max=1h2m"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRuleFlag(s)
		if err != nil {
			var fe *RuleFlagError
			if !errors.As(err, &fe) {
				t.Fatalf("%q: %T %v", s, err, err)
			}
			return
		}
		again, err := ParseRuleFlag(r.String())
		if err != nil || !reflect.DeepEqual(again, r) {
			t.Fatalf("%q → %q → %+v, %v; want %+v", s, r.String(), again, err, r)
		}
		c, probs := r.Parse([]string{"correct"}, []string{"tier"})
		if len(probs) == 0 && c.Worse == nil && c.Bound == nil {
			t.Fatalf("%q: a valid rule with no limit", s)
		}
	})
}
