package analysis

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
)

// With epochs, a case's repeats are one piece of evidence, not several:
// 30 cases judged 3 times each with identical verdicts (10 won, 20 tied)
// carry the information of 30 verdicts, so the intervals are those of 30
// cases, not of 90 results. References (scipy/statsmodels): the net lead's
// paired t interval over the 30 per-case (win − loss) means is
// [0.154299, 0.512368], p = 0.000672279 (scipy.stats.ttest_1samp); the
// win rate's Wilson interval on 10 of 30 is [0.1923, 0.5122], on 10·3 of
// 90 results [0.2445, 0.4358] (too narrow).
func TestPairwiseEpochsAreNotIndependent(t *testing.T) {
	p := &Pairwise{Scorer: "vs_base", Baseline: "base", cases: map[string]*pairCase{}}
	for i := range 30 {
		c := &pairCase{decided: 3}
		if i < 10 {
			c.wins = 3
			p.Wins += 3
		} else {
			p.Ties += 3
		}
		p.cases[fmt.Sprintf("c%02d", i)] = c
	}
	p.finish(0.05, 3)
	if p.N != 90 || math.Abs(p.WinRate-1.0/3) > 1e-12 || math.Abs(p.Net-1.0/3) > 1e-12 {
		t.Fatalf("counts: n %d, win rate %v, net %v", p.N, p.WinRate, p.Net)
	}
	if math.Abs(p.NetCI[0]-0.154299) > 1e-5 || math.Abs(p.NetCI[1]-0.512368) > 1e-5 || math.Abs(p.NetPValue-0.000672279) > 1e-8 {
		t.Errorf("net lead CI %v p %v; want [0.154299, 0.512368], p 0.000672279 (paired t over cases)", p.NetCI, p.NetPValue)
	}
	if w := p.WinCI[1] - p.WinCI[0]; w < 0.9*(0.5122-0.1923) {
		t.Errorf("win rate interval %v (width %.4f) is as narrow as 90 independent results (%.4f); want about 30 cases' (%.4f)",
			p.WinCI, w, 0.4358-0.2445, 0.5122-0.1923)
	}
	if b, _ := json.Marshal(p); strings.Contains(string(b), "per_result") {
		t.Errorf("the JSON says the intervals are per result though they are per case: %s", b)
	}
}
