package analysis

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store"
	"github.com/assay-eval/assay/internal/store/sqlite"
)

// pairwiseRun stores a run of targets cand and base where the pairwise
// judge "pref" (baseline: base) gave cand wins, ties, losses and judge
// errors in those numbers.
func pairwiseRun(t *testing.T, wins, ties, losses, errs int) (store.Store, *record.Run) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "assay.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	run := &record.Run{ID: "20260101-000000-pairs", Spec: "pairs", SpecHash: "sha256:s", DatasetHash: "sha256:d",
		PromptHash: "sha256:p", Targets: []string{"cand", "base"}, Epochs: 1, Status: "complete", Started: t0,
		Config: []byte(`{"scorers":[{"name":"ok","type":"is_json","primary":true},{"name":"pref","type":"judge","mode":"pairwise","baseline":"base"}]}`)}
	var cases []record.Case
	var results []record.Result
	var scores []record.Score
	n := wins + ties + losses + errs
	for i := range n {
		id := fmt.Sprintf("c%03d", i)
		cases = append(cases, record.Case{RunID: run.ID, ID: id, Line: i + 1})
		for _, tg := range run.Targets {
			results = append(results, record.Result{RunID: run.ID, CaseID: id, Target: tg, Epoch: 1, Raw: "{}", Parsed: "{}", CreatedAt: t0})
			scores = append(scores, record.Score{RunID: run.ID, Scoring: 1, CaseID: id, Target: tg, Epoch: 1, Scorer: "ok", Primary: true, Pass: true, Value: 1, Shape: "pass"})
		}
		sc := record.Score{RunID: run.ID, Scoring: 1, CaseID: id, Target: "cand", Epoch: 1, Scorer: "pref"}
		switch {
		case i < wins:
			sc.Pass, sc.Value, sc.Shape = true, 1, "pass"
		case i < wins+ties:
			sc.Value, sc.Shape, sc.Kind = 0.5, "silent", "tie"
		case i < wins+ties+losses:
			sc.Shape, sc.Kind = "silent", "worse_than_baseline"
		default:
			sc.Shape, sc.Kind = "loud", "judge_error"
		}
		scores = append(scores, sc)
	}
	run.Cases = n
	if err := st.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	if err := st.PutCases(ctx, cases); err != nil {
		t.Fatal(err)
	}
	if err := st.PutResults(ctx, results, scores); err != nil {
		t.Fatal(err)
	}
	return st, run
}

// A pairwise judge's verdicts are reported as wins, ties and losses: a tie
// is not a failure (it is neither a win nor a loss), judge errors are in
// no rate, the win and loss rates carry Wilson intervals and the lead
// (wins − losses)/n a paired score interval whose test agrees with it.
// Expected values: Wilson by its formula and the McNemar score test
// z = (w − l)/√(w + l), computed apart in Python.
func TestPairwiseWinsTiesLosses(t *testing.T) {
	st, run := pairwiseRun(t, 30, 50, 20, 3)
	rep, err := Analyze(context.Background(), st, run, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var cand, base *Target
	for i := range rep.Targets {
		switch rep.Targets[i].Name {
		case "cand":
			cand = &rep.Targets[i]
		case "base":
			base = &rep.Targets[i]
		}
	}
	if cand == nil || base == nil || len(cand.Pairwise) != 1 || len(base.Pairwise) != 0 {
		t.Fatalf("pairwise findings: cand %+v base %+v; want one for cand, none for the baseline", cand, base)
	}
	p := cand.Pairwise[0]
	if p.Scorer != "pref" || p.Baseline != "base" || p.Wins != 30 || p.Ties != 50 || p.Losses != 20 || p.Undecided != 3 || p.N != 100 {
		t.Fatalf("counts %+v, want 30 wins, 50 ties, 20 losses of 100 and 3 undecided", p)
	}
	near := func(what string, got, want, tol float64) {
		t.Helper()
		if math.Abs(got-want) > tol {
			t.Errorf("%s = %v, want %v", what, got, want)
		}
	}
	near("win rate", p.WinRate, 0.30, 1e-12)
	near("tie rate", p.TieRate, 0.50, 1e-12)
	near("loss rate", p.LossRate, 0.20, 1e-12)
	near("win CI lo", p.WinCI[0], 0.2189488529493276, 1e-9)
	near("win CI hi", p.WinCI[1], 0.3958485463334666, 1e-9)
	near("loss CI lo", p.LossCI[0], 0.1333669333310325, 1e-9)
	near("loss CI hi", p.LossCI[1], 0.2888291655931589, 1e-9)
	near("net", p.Net, 0.10, 1e-12)
	near("net p", p.NetPValue, 0.15729920705028522, 1e-9)
	if !(p.NetCI[0] < 0 && p.NetCI[1] > 0.10) {
		t.Errorf("net CI %v: with p = 0.157 it must hold 0 and the estimate 0.10", p.NetCI)
	}

	// A clear lead: 40 wins, 10 losses, 50 ties.
	st, run = pairwiseRun(t, 40, 50, 10, 0)
	rep, err = Analyze(context.Background(), st, run, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tg := range rep.Targets {
		if tg.Name != "cand" {
			continue
		}
		q := tg.Pairwise[0]
		near("net p (clear lead)", q.NetPValue, 2.2090496998750098e-05, 1e-9)
		if !(q.NetCI[0] > 0 && q.NetCI[0] < 0.30 && q.NetCI[1] > 0.30) {
			t.Errorf("net CI %v: a lead of 0.30 with p < 0.001 has its interval above 0 around 0.30", q.NetCI)
		}
	}
}
