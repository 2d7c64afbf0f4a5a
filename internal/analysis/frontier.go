package analysis

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/spec"
)

// pareto names the targets no other target beats on all of quality (primary
// rate, higher is better), cost per case and p95 latency (lower is better)
// while being strictly better on one.
func pareto(ts []Target) []string {
	var out []string
	for i, a := range ts {
		if a.N == 0 {
			continue
		}
		dominated := false
		for j, b := range ts {
			if i == j || b.N == 0 {
				continue
			}
			noWorse := b.Primary.Rate >= a.Primary.Rate && b.CostUSD.PerCase <= a.CostUSD.PerCase && b.LatencyMS.P95 <= a.LatencyMS.P95
			better := b.Primary.Rate > a.Primary.Rate || b.CostUSD.PerCase < a.CostUSD.PerCase || b.LatencyMS.P95 < a.LatencyMS.P95
			if noWorse && better {
				dominated = true
				break
			}
		}
		if !dominated {
			out = append(out, a.Name)
		}
	}
	return out
}

// Buckets a case set should cover, and the fewest cases each needs before
// its rate means much.
var buckets = []string{"common", "edge", "hostile", "should-refuse"}

const minBucketCases = 30

// coverageWarnings says where the evidence is thin: a bucket missing or
// under 30 cases, and a target sampled with temperature > 0 on one epoch.
func coverageWarnings(run *record.Run, ci *caseIndex) []string {
	var ws []string
	count := map[string]int{}
	bk, tagged := ci.keyOf["bucket"]
	if tagged {
		for _, v := range ci.tagOf[bk] {
			if v > 0 {
				count[ci.vals[bk][v-1]]++
			}
		}
	}
	if !tagged {
		ws = append(ws, fmt.Sprintf("no case has a bucket tag: tag cases as %v to see how each target does on the hard and hostile ones, not only the common", buckets))
	} else {
		for _, b := range buckets {
			switch n := count[b]; {
			case n == 0:
				ws = append(ws, fmt.Sprintf("bucket %q has no cases", b))
			case n < minBucketCases:
				ws = append(ws, fmt.Sprintf("bucket %q has %d cases (fewer than %d): its rate has a wide interval", b, n, minBucketCases))
			}
		}
	}
	var sp spec.Spec
	if len(run.Config) > 0 && json.Unmarshal(run.Config, &sp) == nil {
		if run.Epochs <= 1 {
			for _, t := range sp.Targets {
				if t.Params.Temperature != nil && *t.Params.Temperature > 0 {
					ws = append(ws, fmt.Sprintf("target %s samples at temperature %g with one epoch: its score varies from run to run; use --epochs 3 or more to measure that variance", t.Name, *t.Params.Temperature))
				}
			}
		}
		for _, sc := range sp.Scorers {
			if sc.Type == "judge" && slices.Contains(run.Targets, sc.Target) {
				ws = append(ws, fmt.Sprintf("judge %s is graded by %s, which is also a candidate: models tend to favour their own answers; use a judge that is not under test", sc.Name, sc.Target))
			}
		}
	}
	return ws
}
