package probe

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/stats"
	"github.com/assay-eval/assay/internal/store/sqlite"
)

func reportOf(t *testing.T, names []string, tables []stats.PairTable) *Report {
	t.Helper()
	fs, err := Assess(names, tables, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	r := &Report{Spec: "s", Targets: fs, Method: NewMethod(DefaultOptions(), len(names))}
	r.Finish()
	return r
}

func hasWarning(r *Report, sub string) bool {
	for _, w := range r.Warnings {
		if strings.Contains(w, sub) {
			return true
		}
	}
	return false
}

func TestReportWarnings(t *testing.T) {
	// Every target drops: the twins are the likelier cause.
	r := reportOf(t, []string{"a", "b"}, []stats.PairTable{{Both: 60, AOnly: 20, BOnly: 2, Neither: 18}, {Both: 50, AOnly: 15, BOnly: 3, Neither: 32}})
	if !hasWarning(r, "every target dropped") || strings.Join(r.Flagged, ",") != "a,b" {
		t.Errorf("both drop: flagged %v, warnings %v", r.Flagged, r.Warnings)
	}
	// One rises beyond the noise; one is clean on too few cases to rule
	// out a drop.
	r = reportOf(t, []string{"up", "small"}, []stats.PairTable{{Both: 60, AOnly: 2, BOnly: 20, Neither: 18}, {Both: 10, AOnly: 2, BOnly: 2, Neither: 6}})
	if !hasWarning(r, "target up did better on the twins") || !hasWarning(r, "target small: 20 paired cases cannot rule out a drop of up to") || len(r.Flagged) != 0 {
		t.Errorf("warnings %v, flagged %v", r.Warnings, r.Flagged)
	}
	if hasWarning(r, "every target dropped") {
		t.Error("the every-target warning fired without drops")
	}
	// Joined by line number.
	r = &Report{TwinSet: SetInfo{JoinField: "line"}, Method: NewMethod(DefaultOptions(), 0)}
	r.Finish()
	if !hasWarning(r, "joined to the cases by line number") || r.Flagged == nil {
		t.Errorf("line join: %v (flagged %v: must be [] in JSON, not null)", r.Warnings, r.Flagged)
	}
}

// Verdicts and Tables pair two stored runs by target and case, over the
// cases answered in both, from each run's latest scoring's primary score; a
// call that failed with an error is left out and counted.
func TestTablesFromStoredRuns(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "a.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// Each result has a primary score and another scorer's opposite
	// verdict; case "e" failed with a time-out (scored as a failure).
	put := func(run string, scoring int, pass map[string]bool) {
		var res []record.Result
		var sc []record.Score
		for id, p := range pass {
			r := record.Result{RunID: run, CaseID: id, Target: "t", Epoch: 1}
			if id == "e" {
				r.ErrorKind = "timeout"
			}
			res = append(res, r)
			sc = append(sc, record.Score{RunID: run, Scoring: scoring, CaseID: id, Target: "t", Epoch: 1, Scorer: "c", Primary: true, Pass: p},
				record.Score{RunID: run, Scoring: scoring, CaseID: id, Target: "t", Epoch: 1, Scorer: "d", Pass: !p})
		}
		if scoring == 1 {
			if err := st.PutResults(ctx, res, sc); err != nil {
				t.Fatal(err)
			}
		} else if err := st.PutScores(ctx, sc); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{"o", "w"} {
		if err := st.CreateRun(ctx, &record.Run{ID: id, Targets: []string{"t"}, Status: record.StatusComplete}); err != nil {
			t.Fatal(err)
		}
	}
	put("o", 1, map[string]bool{"1": true, "2": true, "3": false, "4": true, "e": true})
	put("w", 1, map[string]bool{"1": true, "2": true, "3": true, "e": false})
	put("w", 2, map[string]bool{"1": true, "2": false, "3": true, "e": false}) // a rescore: the latest counts
	vo, err := Verdicts(ctx, st, "o")
	if err != nil {
		t.Fatal(err)
	}
	vw, err := Verdicts(ctx, st, "w")
	if err != nil {
		t.Fatal(err)
	}
	got := Tables([]string{"t", "absent"}, vo, vw)
	want := []stats.PairTable{{Both: 1, AOnly: 1, BOnly: 1}, {}}
	if got[0] != want[0] || got[1] != want[1] {
		t.Errorf("tables %+v, want %+v (case 4 has no twin result; e failed)", got, want)
	}
	fs, err := Assess([]string{"t"}, got[:1], DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	SetErrors(fs, vo, vw)
	if fs[0].OriginalErrors != 1 || fs[0].TwinErrors != 1 || fs[0].N != 3 {
		t.Errorf("finding %+v, want n 3 and one error in each run", fs[0])
	}
	r := &Report{Targets: fs, Method: NewMethod(DefaultOptions(), 1)}
	r.Finish()
	if !hasWarning(r, "target t: 1 calls on the originals and 1 on the twins failed with an error") {
		t.Errorf("warnings %v", r.Warnings)
	}
}
