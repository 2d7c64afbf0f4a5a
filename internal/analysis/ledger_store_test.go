package analysis

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store"
	"github.com/assay-eval/assay/internal/store/sqlite"
)

// ledgerRun is a run of the ledger fixture: each target passes the first
// pass[target] of 100 cases.
type ledgerRun struct {
	id, experiment, dataset, scorers, status string
	targets                                  []string
	pass                                     map[string]int
}

func ledgerStore(t *testing.T, runs []ledgerRun) (store.Store, map[string]*record.Run) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "assay.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	out := map[string]*record.Run{}
	for i, lr := range runs {
		r := &record.Run{ID: lr.id, Spec: "s", SpecHash: "sha256:s", DatasetHash: lr.dataset, PromptHash: "sha256:p",
			ScorersHash: lr.scorers, Experiment: lr.experiment, Targets: lr.targets, Cases: 100, Epochs: 1,
			Status: lr.status, Started: t0.Add(time.Duration(i) * time.Minute)}
		if err := st.CreateRun(ctx, r); err != nil {
			t.Fatal(err)
		}
		var cases []record.Case
		for c := range 100 {
			cases = append(cases, record.Case{RunID: r.ID, ID: fmt.Sprintf("c%03d", c), Line: c + 1, Expected: []byte(`"x"`)})
		}
		if err := st.PutCases(ctx, cases); err != nil {
			t.Fatal(err)
		}
		var results []record.Result
		var scores []record.Score
		for _, tg := range lr.targets {
			for c := range 100 {
				id := fmt.Sprintf("c%03d", c)
				pass := c < lr.pass[tg]
				results = append(results, record.Result{RunID: r.ID, CaseID: id, Target: tg, Epoch: 1, Raw: "x", CreatedAt: t0})
				shape := "pass"
				if !pass {
					shape = "silent"
				}
				scores = append(scores, record.Score{RunID: r.ID, Scoring: 1, CaseID: id, Target: tg, Epoch: 1,
					Scorer: "correct", Primary: true, Pass: pass, Value: b2f(pass), Shape: shape})
			}
		}
		if err := st.PutResults(ctx, results, scores); err != nil {
			t.Fatal(err)
		}
		out[lr.id] = r
	}
	return st, out
}

const (
	lr1 = "20260101-000001-aaaaaa"
	lr2 = "20260101-000002-bbbbbb"
	lr3 = "20260101-000003-cccccc"
	lr4 = "20260101-000004-dddddd"
	lr5 = "20260101-000005-eeeeee"
	lr6 = "20260101-000006-ffffff"
	lr7 = "20260101-000007-999999"
)

func ledgerFixture(t *testing.T) (store.Store, map[string]*record.Run) {
	return ledgerStore(t, []ledgerRun{
		{id: lr1, experiment: "search", dataset: "sha256:d", scorers: "sha256:s", status: "complete",
			targets: []string{"base", "alt"}, pass: map[string]int{"base": 60, "alt": 62}},
		{id: lr2, experiment: "search", dataset: "sha256:OTHER", scorers: "sha256:s", status: "complete",
			targets: []string{"x"}, pass: map[string]int{"x": 90}},
		{id: lr3, experiment: "search", dataset: "sha256:d", scorers: "sha256:OTHER", status: "complete",
			targets: []string{"y"}, pass: map[string]int{"y": 95}},
		{id: lr4, experiment: "search", dataset: "sha256:d", scorers: "sha256:s", status: "interrupted",
			targets: []string{"v4"}, pass: map[string]int{"v4": 55}},
		// Not in the experiment: never counted.
		{id: lr7, experiment: "", dataset: "sha256:d", scorers: "sha256:s", status: "complete",
			targets: []string{"z"}, pass: map[string]int{"z": 99}},
		{id: lr5, experiment: "search", dataset: "sha256:d", scorers: "sha256:s", status: "complete",
			targets: []string{"b", "a"}, pass: map[string]int{"a": 70, "b": 58}},
		// Started after the chosen run: not tried before it was chosen.
		{id: lr6, experiment: "search", dataset: "sha256:d", scorers: "sha256:s", status: "complete",
			targets: []string{"later"}, pass: map[string]int{"later": 99}},
	})
}

// The report of a run in an experiment counts the comparable variants of
// the runs that started up to it, sets the others apart with a note, and
// judges its top target against the experiment's first variant.
func TestSelectionLedgerFromStore(t *testing.T) {
	ctx := context.Background()
	st, runs := ledgerFixture(t)
	rep, err := Analyze(ctx, st, runs[lr5], Options{})
	if err != nil {
		t.Fatal(err)
	}
	l := rep.Ledger
	if l == nil {
		t.Fatal("no ledger for a run in an experiment")
	}
	var tried []string
	for _, v := range l.Tried {
		tried = append(tried, v.Name())
	}
	want := "base@" + lr1 + " alt@" + lr1 + " v4@" + lr4 + " b@" + lr5 + " a@" + lr5
	if strings.Join(tried, " ") != want || l.Variants != 5 || l.Runs != 3 || l.Family != 4 {
		t.Fatalf("tried %v (N %d from %d runs, family %d); want %s, N 5 from 3 runs, family 4", tried, l.Variants, l.Runs, l.Family, want)
	}
	if l.Experiment != "search" || l.Scorer != "correct" || l.ReferenceFrom != "first_variant" {
		t.Errorf("ledger %+v", l)
	}
	if l.Chosen.Name() != "a@"+lr5 || l.Reference.Name() != "base@"+lr1 || l.Chosen.Rate != 0.7 || l.Reference.Rate != 0.6 {
		t.Errorf("chosen %+v reference %+v; want a@run5 (70%%) against base@run1 (60%%)", l.Chosen, l.Reference)
	}
	// a passes every case base does and 10 more: the McNemar score test
	// (the default) has z = (10 − 0)/√10 = √10, two-sided p = erfc(√10/√2)
	// = erfc(√5); the smallest of the four p-values, Holm multiplies it by 4.
	c := l.Chosen.VsReference
	p := math.Erfc(math.Sqrt(5))
	if c == nil || c.Scorer != "correct" || c.AOnly != 10 || c.BOnly != 0 || c.Test != "mcnemar_score" || !near(c.PValue, p, 1e-12) || !near(c.PAdjusted, 4*p, 1e-12) {
		t.Fatalf("chosen vs reference %+v; want 10/0 discordant, score test p %.6g, adjusted %.6g", c, p, 4*p)
	}
	if !l.Survives || l.Verdict != "a_better" || !strings.Contains(l.Summary, "survives the correction for 5 variants") {
		t.Errorf("survives %v verdict %s: %s", l.Survives, l.Verdict, l.Summary)
	}
	ex := map[string]string{}
	for _, e := range l.Excluded {
		ex[e.Target+"@"+e.Run] = e.Reason
	}
	if len(ex) != 2 || ex["x@"+lr2] != ExcludedDataset || ex["y@"+lr3] != ExcludedScorers {
		t.Errorf("excluded %v; want x (dataset) and y (scorers)", l.Excluded)
	}
	notes := strings.Join(l.Notes, "\n")
	for _, w := range []string{"1 variant measured another dataset", "1 variant used another definition of correct", "N is really 7",
		"1 run of the experiment did not complete", "1 run of the experiment started after this one"} {
		if !strings.Contains(notes, w) {
			t.Errorf("notes %q do not say %q", notes, w)
		}
	}
	if !near(l.ExpectedMaxZ, 1.1629644736405196, 1e-6) {
		t.Errorf("E[max of 5] = %v", l.ExpectedMaxZ)
	}
	if !near(l.DeflatedRate, 0.7-l.Sigma*l.ExpectedMaxZ, 1e-5) || l.Sigma <= 0.04 || l.Sigma >= 0.06 {
		t.Errorf("σ %v, deflated %v", l.Sigma, l.DeflatedRate)
	}

	// An earlier run's report counts only what had been tried by then.
	rep, err = Analyze(ctx, st, runs[lr4], Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Ledger.Variants != 3 || rep.Ledger.Chosen.Name() != "v4@"+lr4 {
		t.Errorf("run 4: N %d chosen %s; want 3 and v4", rep.Ledger.Variants, rep.Ledger.Chosen.Name())
	}
	// A run outside any experiment has no ledger; NoLedger skips it.
	if rep, err := Analyze(ctx, st, runs[lr7], Options{}); err != nil || rep.Ledger != nil {
		t.Errorf("run without experiment: ledger %+v, %v", rep.Ledger, err)
	}
	if rep, err := Analyze(ctx, st, runs[lr5], Options{NoLedger: true}); err != nil || rep.Ledger != nil {
		t.Errorf("NoLedger: ledger %+v, %v", rep.Ledger, err)
	}
}

// --reference names the variant to compare with: a run (ID or unique
// prefix) and optionally a target; a name that is not a counted variant is
// an error listing the variants.
func TestSelectionLedgerReference(t *testing.T) {
	ctx := context.Background()
	st, runs := ledgerFixture(t)
	for _, tc := range []struct {
		ref, want string
	}{
		{lr4, "v4@" + lr4},
		{"20260101-000004", "v4@" + lr4},
		{lr1 + ":alt", "alt@" + lr1},
		{lr5 + ":b", "b@" + lr5},
	} {
		ref, err := ParseVariantRef(tc.ref)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := Analyze(ctx, st, runs[lr5], Options{Reference: ref})
		if err != nil {
			t.Errorf("--reference %s: %v", tc.ref, err)
			continue
		}
		l := rep.Ledger
		if l.Reference.Name() != tc.want || l.ReferenceFrom != "option" || !l.Tried[indexOf(l.Tried, tc.want)].Reference {
			t.Errorf("--reference %s: reference %s (%s), want %s", tc.ref, l.Reference.Name(), l.ReferenceFrom, tc.want)
		}
		if l.Family != 4 || l.Reference.VsReference != nil {
			t.Errorf("--reference %s: family %d, reference compared with itself: %+v", tc.ref, l.Family, l.Reference.VsReference)
		}
	}
	for _, tc := range []struct{ ref, want string }{
		{lr6, "no run of the experiment up to this one"},
		{lr2, "has no variant"},
		{lr1 + ":nope", "has no variant \"nope\""},
		{"20260101-00000", "starts the IDs of 5 runs"},
		{lr7, "no run of the experiment up to this one"},
	} {
		ref, _ := ParseVariantRef(tc.ref)
		_, err := Analyze(ctx, st, runs[lr5], Options{Reference: ref})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("--reference %s: error %v, want %q", tc.ref, err, tc.want)
		}
		if err != nil && strings.Contains(tc.want, "has no variant") && !strings.Contains(err.Error(), "base") {
			t.Errorf("--reference %s: error %q does not list the variants", tc.ref, err)
		}
	}
}

func indexOf(vs []LedgerVariant, name string) int {
	for i, v := range vs {
		if v.Name() == name {
			return i
		}
	}
	return 0
}
