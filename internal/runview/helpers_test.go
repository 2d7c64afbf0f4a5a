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

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
