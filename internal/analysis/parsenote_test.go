package analysis

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store/sqlite"
)

// ParseTolerated counts a target's results whose headline score says the
// json parser tolerated a fence or prose; notes on other scorers' scores of
// the same result are not counted again, and a target whose outputs were all
// bare JSON counts 0.
func TestParseTolerated(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "assay.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	run := &record.Run{ID: "r1", Spec: "s", SpecPath: "assay.yaml", Targets: []string{"chatty", "clean"}, Cases: 6, Epochs: 1,
		Status: record.StatusComplete, Started: time.Now()}
	if err := st.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	// chatty: cases 0-1 fenced, 2 prose, the rest bare: 3 tolerated.
	notes := map[string][]string{"chatty": {"fenced", "fenced", "prose", "", "", ""}, "clean": {"", "", "", "", "", ""}}
	var cases []record.Case
	var results []record.Result
	var scores []record.Score
	for c := range 6 {
		id := fmt.Sprintf("c%d", c)
		cases = append(cases, record.Case{RunID: "r1", ID: id, Line: c + 1})
		for _, tg := range run.Targets {
			results = append(results, record.Result{RunID: "r1", CaseID: id, Target: tg, Epoch: 1, Raw: "x", Attempts: 1})
			for _, sc := range []string{"correct", "schema"} {
				scores = append(scores, record.Score{RunID: "r1", Scoring: 1, CaseID: id, Target: tg, Epoch: 1, Scorer: sc,
					Primary: sc == "correct", Pass: true, Value: 1, Shape: "pass", ParseNote: notes[tg][c]})
			}
		}
	}
	if err := st.PutCases(ctx, cases); err != nil {
		t.Fatal(err)
	}
	if err := st.PutResults(ctx, results, scores); err != nil {
		t.Fatal(err)
	}
	rep, err := Analyze(ctx, st, run, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, tg := range rep.Targets {
		got[tg.Name] = tg.ParseTolerated
	}
	if got["chatty"] != 3 || got["clean"] != 0 {
		t.Errorf("parse_tolerated %v, want chatty 3, clean 0", got)
	}
}
