package analysis

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store/sqlite"
)

// Targets that answered disjoint cases (a score-traces run: each model its
// own traces) are neither compared nor ranked: a ranking of ties would say
// the paired tests could not separate them, when nothing was paired. With
// cases in common they are compared and ranked again.
func TestDisjointTargetsAreNotRanked(t *testing.T) {
	ctx := context.Background()
	for _, shared := range []bool{false, true} {
		st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "assay.db"))
		if err != nil {
			t.Fatal(err)
		}
		t0 := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
		run := &record.Run{ID: "20261123-000000-aaaaaa", Spec: "s", Sample: "wk", DatasetHash: "sample:wk",
			Targets: []string{"a", "b"}, Cases: 40, Epochs: 1, Status: record.StatusComplete, Started: t0}
		if err := st.CreateRun(ctx, run); err != nil {
			t.Fatal(err)
		}
		var cases []record.Case
		var results []record.Result
		var scores []record.Score
		for i := range 40 {
			id := string(rune('A'+i/26)) + string(rune('a'+i%26))
			cases = append(cases, record.Case{RunID: run.ID, ID: id, Line: i + 1})
			targets := []string{"a"}
			if i%2 == 1 {
				targets = []string{"b"}
			}
			if shared && i < 10 {
				targets = []string{"a", "b"}
			}
			for _, tg := range targets {
				pass := tg == "a" || i%4 == 1
				results = append(results, record.Result{RunID: run.ID, CaseID: id, Target: tg, Epoch: 1, Raw: "x", CreatedAt: t0})
				shape := "pass"
				if !pass {
					shape = "silent"
				}
				scores = append(scores, record.Score{RunID: run.ID, Scoring: 1, CaseID: id, Target: tg, Epoch: 1,
					Scorer: "ok", Primary: true, Pass: pass, Value: b2f(pass), Shape: shape})
			}
		}
		if err := st.PutCases(ctx, cases); err != nil {
			t.Fatal(err)
		}
		if err := st.PutResults(ctx, results, scores); err != nil {
			t.Fatal(err)
		}
		rep, err := Analyze(ctx, st, run, Options{NoLedger: true})
		st.Close()
		if err != nil {
			t.Fatal(err)
		}
		warned := strings.Contains(strings.Join(rep.Warnings, "\n"), "no two targets answered the same case")
		if !shared && (rep.Ranking != nil || !warned || len(rep.Comparisons) != 0) {
			t.Errorf("disjoint: ranking %v, comparisons %v, warned %v", rep.Ranking, rep.Comparisons, warned)
		}
		if shared && (rep.Ranking == nil || warned || len(rep.Comparisons) != 1 || rep.Comparisons[0].N != 10) {
			t.Errorf("ten shared cases: ranking %v, comparisons %+v, warned %v", rep.Ranking, rep.Comparisons, warned)
		}
	}
}
