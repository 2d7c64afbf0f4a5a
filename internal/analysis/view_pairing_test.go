package analysis

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/runview"
	"github.com/assay-eval/assay/internal/store"
	"github.com/assay-eval/assay/internal/store/sqlite"
)

// putViewRun stores a complete run of n cases × targets a and b: pass
// says which results pass, errKind which calls failed (graded as a loud
// failure of that kind).
func putViewRun(t *testing.T, st store.Store, id string, n int, pass func(target string, c int) bool, errKind func(target string, c int) string) *record.Run {
	t.Helper()
	ctx := context.Background()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	targets := []string{"a", "b"}
	r := &record.Run{ID: id, Spec: "s", SpecHash: "sha256:s", DatasetHash: "sha256:d", PromptHash: "sha256:p",
		Targets: targets, Cases: n, Epochs: 1, Status: "complete", Started: t0}
	if err := st.CreateRun(ctx, r); err != nil {
		t.Fatal(err)
	}
	var cases []record.Case
	var results []record.Result
	var scores []record.Score
	for c := range n {
		cid := fmt.Sprintf("c%03d", c)
		cases = append(cases, record.Case{RunID: id, ID: cid, Line: c + 1, Expected: []byte(`"x"`),
			Tags: map[string]string{"tier": fmt.Sprint("t", c%3)}})
		for _, tg := range targets {
			res := record.Result{RunID: id, CaseID: cid, Target: tg, Epoch: 1, Raw: "x", LatencyMS: float64(10 + c), CreatedAt: t0}
			sc := record.Score{RunID: id, Scoring: 1, CaseID: cid, Target: tg, Epoch: 1, Scorer: "correct", Primary: true, Pass: true, Value: 1, Shape: "pass"}
			if !pass(tg, c) {
				sc.Pass, sc.Value, sc.Shape, sc.Kind = false, 0, "silent", "wrong"
			}
			if k := errKind(tg, c); k != "" {
				res.Raw, res.Error, res.ErrorKind = "", "the call failed", k
				sc.Pass, sc.Value, sc.Shape, sc.Kind = false, 0, "loud", k
			}
			results = append(results, res)
			scores = append(scores, sc)
		}
	}
	if err := st.PutCases(ctx, cases); err != nil {
		t.Fatal(err)
	}
	if err := st.PutResults(ctx, results, scores); err != nil {
		t.Fatal(err)
	}
	return r
}

// viewPairs counts, from the primary verdict columns of two targets of
// views (x at case i is paired with y at case rows[i]), the pairs where
// both are scored — leaving out failed calls when behavedOnly — and the
// discordant ones: what the gate and drift read of a run.
func viewPairs(xv *runview.View, x *runview.Target, yv *runview.View, y *runview.Target, rows []int, behavedOnly bool) (n, xOnly, yOnly int) {
	px, py := x.Pass[xv.Primary], y.Pass[yv.Primary]
	for i := range xv.Cases {
		k := i
		if rows != nil {
			k = rows[i]
		}
		if k < 0 || px[i] < 0 || py[k] < 0 {
			continue
		}
		if behavedOnly && (x.Failed(i) || y.Failed(k)) {
			continue
		}
		n++
		switch {
		case px[i] == 1 && py[k] == 0:
			xOnly++
		case px[i] == 0 && py[k] == 1:
			yOnly++
		}
	}
	return n, xOnly, yOnly
}

// The report's rates and paired comparison and assay compare's pairing
// count exactly what the run's view (the gate's and drift's runview.View
// from the store) holds: the same scored cases, the same discordant pairs,
// the same failed calls left out of a comparison of runs.
func TestReportAndCompareCountTheView(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "assay.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	none := func(string, int) string { return "" }
	before := putViewRun(t, st, "before", 60, func(tg string, c int) bool { return c%5 != 0 }, none)
	after := putViewRun(t, st, "after", 60, func(tg string, c int) bool {
		if tg == "a" {
			return c%7 != 0
		}
		return c%4 != 0
	}, func(tg string, c int) string {
		if tg == "a" && c%11 == 3 {
			return "timeout"
		}
		return ""
	})
	av, err := runview.FromStore(ctx, st, after)
	if err != nil {
		t.Fatal(err)
	}
	bv, err := runview.FromStore(ctx, st, before)
	if err != nil {
		t.Fatal(err)
	}

	rep, err := Analyze(ctx, st, after, Options{NoLedger: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, tg := range rep.Targets {
		passed, n := (&verdicts{epochs: 1, v: av.Target(tg.Name).Pass[av.Primary]}).count()
		if tg.Primary.Passed != passed || tg.Primary.N != n {
			t.Errorf("target %s: report %d of %d, the view %d of %d", tg.Name, tg.Primary.Passed, tg.Primary.N, passed, n)
		}
	}
	if len(rep.Comparisons) != 1 {
		t.Fatalf("report comparisons %+v, want a vs b", rep.Comparisons)
	}
	c := rep.Comparisons[0]
	n, aOnly, bOnly := viewPairs(av, av.Target(c.A), av, av.Target(c.B), nil, false)
	if c.N != n || c.AOnly != aOnly || c.BOnly != bOnly {
		t.Errorf("report pairs %s and %s on %d cases (%d, %d discordant), the view on %d (%d, %d)", c.A, c.B, c.N, c.AOnly, c.BOnly, n, aOnly, bOnly)
	}

	rc, err := CompareRuns(ctx, st, before, after, Options{})
	if err != nil {
		t.Fatal(err)
	}
	at := make(map[string]int, len(bv.Cases))
	for i, cs := range bv.Cases {
		at[cs.ID] = i
	}
	rows := make([]int, len(av.Cases))
	for i, cs := range av.Cases {
		rows[i] = at[cs.ID]
	}
	if len(rc.Comparisons) != 2 {
		t.Fatalf("run comparisons %+v, want a and b", rc.Comparisons)
	}
	for _, c := range rc.Comparisons {
		name := c.A[:1]
		n, aOnly, bOnly := viewPairs(av, av.Target(name), bv, bv.Target(name), rows, true)
		if c.N != n || c.AOnly != aOnly || c.BOnly != bOnly {
			t.Errorf("compare pairs %s on %d cases (%d, %d discordant), the views on %d (%d, %d)", name, c.N, c.AOnly, c.BOnly, n, aOnly, bOnly)
		}
	}
	if rc.Comparisons[0].N == 60 || rc.Comparisons[1].N != 60 {
		t.Errorf("compare paired %d and %d cases: want a's failed calls left out, all of b's paired", rc.Comparisons[0].N, rc.Comparisons[1].N)
	}
}
