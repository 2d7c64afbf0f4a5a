package gate

import (
	"fmt"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/runview"
)

// testSnap builds a snapshot of n cases (IDs c1…cn, with tags when given)
// and the targets given, for one or more epochs.
func testSnap(id, dataset string, epochs int, caseIDs []string, tags []map[string]string, targets ...*runview.Target) *runview.View {
	s := &runview.View{
		Run: runview.RunInfo{ID: id, Spec: "test", SpecHash: "sha256:spec", DatasetHash: dataset, PromptHash: "sha256:prompt",
			ScorersHash: "sha256:scorers", Epochs: epochs, Scoring: 1, Created: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)},
		Source: "run " + id, Scorers: []string{"correct"}, Primary: "correct", Epochs: epochs, Targets: targets,
	}
	for i, cid := range caseIDs {
		var tg map[string]string
		if tags != nil {
			tg = tags[i]
		}
		s.AddCase(cid, tg)
	}
	return s
}

func ids(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("c%d", i+1)
	}
	return out
}

// testTarget makes a target whose results all exist: pass[j] (1/0) under
// "correct", failures silent unless loud[j], cost and latency from the
// slices (or 0.001 USD and 100 ms), and outputs "out-<j>-<salt>".
func testTarget(name string, pass []int, loud []int, cost, latency []float64, salt string) *runview.Target {
	n := len(pass)
	t := runview.NewTarget(name, []string{"correct"}, n)
	for j := range n {
		t.Pass["correct"][j] = int8(pass[j])
		switch {
		case pass[j] == 1:
			t.Shape[j] = runview.ShapePass
		case loud != nil && loud[j] == 1:
			t.Shape[j] = runview.ShapeLoud
			t.SetKind(j, "timeout")
		default:
			t.Shape[j] = runview.ShapeSilent
			t.SetKind(j, "wrong")
		}
		t.CostUSD[j], t.LatencyMS[j] = 0.001, 100
		if cost != nil {
			t.CostUSD[j] = cost[j]
		}
		if latency != nil {
			t.LatencyMS[j] = latency[j]
		}
		t.OutputHash[j] = runview.OutputSum(fmt.Sprintf("out-%d-%s", j, salt))
	}
	t.Fingerprints = []runview.Fingerprint{{Model: "m-1", System: "fp_1", Count: n}}
	return t
}

// passes returns n verdicts of which the first k pass.
func passes(n, k int) []int {
	out := make([]int, n)
	for i := range k {
		out[i] = 1
	}
	return out
}

func mustRules(t *testing.T, flags ...string) []Rule {
	t.Helper()
	rs, err := RulesFromFlags(flags, []string{"correct"}, []string{"tier"})
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

func evaluate(t *testing.T, base, cand *runview.View, rules []Rule, o Options) *Result {
	t.Helper()
	r, err := Evaluate(base, cand, rules, o)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func onlyCheck(t *testing.T, r *Result) Check {
	t.Helper()
	if len(r.Targets) != 1 || len(r.Targets[0].Checks) != 1 {
		t.Fatalf("want one target with one check, got %+v", r.Targets)
	}
	return r.Targets[0].Checks[0]
}

// isHash reports whether h is 16 lowercase hex digits (a view's short hash).
func isHash(h string) bool {
	if len(h) != 16 {
		return false
	}
	for _, c := range h {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
