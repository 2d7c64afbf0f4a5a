package analysis

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store"
	"github.com/assay-eval/assay/internal/store/sqlite"
)

// putErrRun stores a complete one-target ("m") run of n cases that all
// pass, except those errKind names, whose call failed with that kind (no
// output; graded as the scorer grades a failed call: a loud failure of
// that kind).
func putErrRun(t *testing.T, st store.Store, id string, n int, errKind func(c int) string) *record.Run {
	t.Helper()
	ctx := context.Background()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := &record.Run{ID: id, Spec: "s", SpecHash: "sha256:s", DatasetHash: "sha256:d", PromptHash: "sha256:p",
		Targets: []string{"m"}, Cases: n, Epochs: 1, Status: "complete", Started: t0}
	if err := st.CreateRun(ctx, r); err != nil {
		t.Fatal(err)
	}
	var cases []record.Case
	var results []record.Result
	var scores []record.Score
	for c := range n {
		cid := fmt.Sprintf("c%03d", c)
		cases = append(cases, record.Case{RunID: id, ID: cid, Line: c + 1, Expected: []byte(`"x"`)})
		res := record.Result{RunID: id, CaseID: cid, Target: "m", Epoch: 1, Raw: "x", LatencyMS: 10, CreatedAt: t0}
		sc := record.Score{RunID: id, Scoring: 1, CaseID: cid, Target: "m", Epoch: 1, Scorer: "correct", Primary: true, Pass: true, Value: 1, Shape: "pass"}
		if k := errKind(c); k != "" {
			res.Raw, res.Error, res.ErrorKind = "", "the call failed", k
			sc.Pass, sc.Value, sc.Shape, sc.Kind = false, 0, "loud", k
		}
		results = append(results, res)
		scores = append(scores, sc)
	}
	if err := st.PutCases(ctx, cases); err != nil {
		t.Fatal(err)
	}
	if err := st.PutResults(ctx, results, scores); err != nil {
		t.Fatal(err)
	}
	return r
}

// A provider error is not behaviour: 8 of 40 calls after timed out on
// cases that passed before. Counted as failures they would be 8 pass→fail
// discordant pairs (a significant drop); left out, the 32 paired cases
// show no change, and the comparison says what was left out and why. A
// side whose calls mostly failed (auth on all 40) cannot be judged.
func TestCompareLeavesProviderErrorsOut(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "assay.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	none := func(int) string { return "" }
	before := putErrRun(t, st, "before", 40, none)
	after := putErrRun(t, st, "after", 40, func(c int) string {
		if c < 8 {
			return "timeout"
		}
		return ""
	})
	rc, err := CompareRuns(ctx, st, before, after, Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := rc.Comparisons[0]
	if c.N != 32 || c.AOnly != 0 || c.BOnly != 0 || c.Delta != 0 {
		t.Errorf("comparison %+v: want 32 paired cases, no discordant pair", c)
	}
	if len(rc.Excluded) != 1 || rc.Excluded[0].Pairs != 8 || rc.Excluded[0].After["timeout"] != 8 || len(rc.Excluded[0].Before) != 0 || rc.Excluded[0].AfterCalls != 40 {
		t.Errorf("excluded %+v: want 8 left out, after: 8 timeout", rc.Excluded)
	}
	if !strings.Contains(strings.Join(rc.Warnings, "\n"), "target m: 8 results left out because a call failed (before: none; after: 8 timeout)") {
		t.Errorf("warnings %q", rc.Warnings)
	}

	down := putErrRun(t, st, "down", 40, func(int) string { return "auth" })
	for _, pair := range [][2]*record.Run{{before, down}, {down, before}} {
		_, err = CompareRuns(ctx, st, pair[0], pair[1], Options{})
		var cj *CannotJudgeError
		if !errors.As(err, &cj) || err.Error() != "cannot judge: 40 of 40 calls of m in run down failed: auth" {
			t.Errorf("%s vs %s: err %v, want cannot judge naming the run and auth", pair[0].ID, pair[1].ID, err)
		}
	}
}
