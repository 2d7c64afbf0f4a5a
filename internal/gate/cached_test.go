package gate

import (
	"strings"
	"testing"
)

// A latency rule over replies the response cache served compares the
// timings of the calls that first made them: the gate says so, naming how
// many on each side, and says nothing when no latency rule is checked or
// nothing came from the cache.
func TestLatencyRuleWarnsOfCachedReplies(t *testing.T) {
	pass := make([]int, 40)
	for j := range pass {
		pass[j] = 1
	}
	base := testSnap("b", "sha256:d", 1, ids(40), nil, testTarget("m", pass, nil, nil, nil, "b"))
	ct := testTarget("m", pass, nil, nil, nil, "c")
	for j := range 25 {
		ct.Cached[j] = true
	}
	cand := testSnap("c", "sha256:d", 1, ids(40), nil, ct)

	warned := func(res *Result) string {
		for _, w := range res.Warnings {
			if strings.Contains(w, "response cache") {
				return w
			}
		}
		return ""
	}
	res := evaluate(t, base, cand, mustRules(t, "latency_p95 max_rise=10%"), Options{})
	if w := warned(res); !strings.Contains(w, "0 results of the baseline and 25 of the candidate came from the response cache") {
		t.Errorf("latency rule over 25 cached replies: warning %q", w)
	}
	if w := warned(evaluate(t, base, cand, mustRules(t, "primary max_drop=5pt"), Options{})); w != "" {
		t.Errorf("no latency rule, yet: %q", w)
	}
	if w := warned(evaluate(t, base, base, mustRules(t, "latency_p95 max_rise=10%"), Options{})); w != "" {
		t.Errorf("nothing cached, yet: %q", w)
	}
}
