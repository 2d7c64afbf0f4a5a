package runview

import (
	"fmt"
	"time"
)

// The helpers below build views for the tests, as the gate's tests build
// them (internal/gate/helpers_test.go).

// testSnap builds a view of n cases (IDs c1…cn, with tags when given)
// and the targets given, for one or more epochs.
func testSnap(id, dataset string, epochs int, caseIDs []string, tags []map[string]string, targets ...*Target) *View {
	s := &View{
		Run: RunInfo{ID: id, Spec: "test", SpecHash: "sha256:spec", DatasetHash: dataset, PromptHash: "sha256:prompt",
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
func testTarget(name string, pass []int, loud []int, cost, latency []float64, salt string) *Target {
	n := len(pass)
	t := NewTarget(name, []string{"correct"}, n)
	for j := range n {
		t.Pass["correct"][j] = int8(pass[j])
		switch {
		case pass[j] == 1:
			t.Shape[j] = ShapePass
		case loud != nil && loud[j] == 1:
			t.Shape[j] = ShapeLoud
			t.SetKind(j, "timeout")
		default:
			t.Shape[j] = ShapeSilent
			t.SetKind(j, "wrong")
		}
		t.CostUSD[j], t.LatencyMS[j] = 0.001, 100
		if cost != nil {
			t.CostUSD[j] = cost[j]
		}
		if latency != nil {
			t.LatencyMS[j] = latency[j]
		}
		t.OutputHash[j] = OutputSum(fmt.Sprintf("out-%d-%s", j, salt))
	}
	t.Fingerprints = []Fingerprint{{Model: "m-1", System: "fp_1", Count: n}}
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

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
