package calibrate

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store/sqlite"
)

// plainReader hides a store's light streams (ResultKeys, Verdicts), so
// Calibrate reads it through Results and Scores as any record.Reader.
type plainReader struct{ record.Reader }

// A store is calibrated through its light streams, reading only the
// labeled outputs, and the report is the one the full streams give:
// failed calls and judge errors left out of the raw rate, a stale label
// counted, a label of an output never stored counted missing.
func TestCalibrateStoreSameAsReader(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "assay.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := &record.Run{ID: "r", Spec: "s", Config: cfg, Targets: []string{"a", "b"}, Cases: 60, Epochs: 1, Status: record.StatusComplete, Started: t0}
	if err := db.CreateRun(ctx, r); err != nil {
		t.Fatal(err)
	}
	var cases []record.Case
	var results []record.Result
	var scores []record.Score
	var labels []record.Label
	for i := range 60 {
		id := fmt.Sprintf("c%02d", i)
		cases = append(cases, record.Case{RunID: "r", ID: id, Line: i + 1})
		for _, tg := range []string{"a", "b"} {
			res := record.Result{RunID: "r", CaseID: id, Target: tg, Epoch: 1, Raw: fmt.Sprintf("%s says %d", tg, i)}
			if i%17 == 3 && tg == "b" {
				res.ErrorKind, res.Error, res.Raw = "timeout", "timed out", ""
			}
			results = append(results, res)
			judge := record.Score{RunID: "r", Scoring: 1, CaseID: id, Target: tg, Epoch: 1, Scorer: "grader", Pass: i%4 != 0, Shape: "pass"}
			if !judge.Pass {
				judge.Shape, judge.Kind = "silent", "wrong"
			}
			if i%13 == 5 {
				judge.Pass, judge.Shape, judge.Kind = false, "loud", kindJudgeError
			}
			scores = append(scores, judge, record.Score{RunID: "r", Scoring: 1, CaseID: id, Target: tg, Epoch: 1, Scorer: "exact", Primary: true, Pass: true, Shape: "pass"})
			if i%2 == 0 && res.ErrorKind == "" {
				v := record.LabelPass
				if i%3 == 0 {
					v = record.LabelFail
				}
				l := record.Label{RunID: "r", CaseID: id, Target: tg, Epoch: 1, OutputHash: record.LabelOutputHash(&res),
					Labeler: "ann", Verdict: v, Reason: "r", Created: t0.Add(time.Duration(i) * time.Minute)}
				if i == 10 {
					l.OutputHash = "0000000000000000" // stale
				}
				labels = append(labels, l)
			}
		}
	}
	labels = append(labels, record.Label{RunID: "r", CaseID: "gone", Target: "a", Epoch: 1, OutputHash: "1111111111111111", Labeler: "ann", Verdict: record.LabelPass, Created: t0})
	if err := db.PutCases(ctx, cases); err != nil {
		t.Fatal(err)
	}
	if err := db.PutResults(ctx, results, scores); err != nil {
		t.Fatal(err)
	}
	if _, ok := any(db).(keyReader); !ok {
		t.Fatal("the SQLite store has no light streams: this test would compare the full streams with themselves")
	}
	th := Thresholds{MinKappa: 0.6, MinTNR: 0.8, MinTPR: 0.8, Width: 0.1, Level: 0.95}
	light, err := Calibrate(ctx, db, r, "grader", labels, th, nil)
	if err != nil {
		t.Fatal(err)
	}
	full, err := Calibrate(ctx, plainReader{db}, r, "grader", labels, th, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(light, full) {
		t.Errorf("the light streams' report differs from the full streams':\nlight %+v\nfull  %+v", light, full)
	}
	// 120 outputs, 4 failed calls (b of c03, c20, c37, c54), judge errors
	// on c05, c18, c31, c44, c57 (both targets, b of none failed among
	// them): 120 − 4 − 10 = 106 judged.
	if light.Raw.Of != 106 {
		t.Errorf("raw rate over %d outputs; want 106 (failed calls and judge errors left out)", light.Raw.Of)
	}
	if light.Counts.Stale != 2 || light.Counts.Missing != 1 {
		t.Errorf("stale %d, missing %d; want 2 (c10 on both targets) and 1 (an output never stored)", light.Counts.Stale, light.Counts.Missing)
	}
}
