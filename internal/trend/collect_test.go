package trend

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store"
	"github.com/assay-eval/assay/internal/store/sqlite"
)

// scored is one sampled trace of a score-traces run and its verdicts.
type scored struct {
	id, model, stratum string
	time               time.Time
	weight             float64
	pass               bool  // the primary scorer's verdict
	other              *bool // the "format" scorer's, when it scored it
	noVerdict          bool  // no verdict at all (a scorer that could not score it)
	untimed            bool  // its result carries no time
}

// putScoreTracesRun stores a run as `assay score-traces` does (see the
// contract in record.Run.Sample): one case per trace with its weight and
// tags, one result per trace, the primary verdicts in scoring 1.
func putScoreTracesRun(t *testing.T, st store.Store, id, spec, sampleID string, started time.Time, status string, traces []scored) {
	t.Helper()
	ctx := context.Background()
	models := map[string]bool{}
	for _, tr := range traces {
		models[tr.model] = true
	}
	var targets []string
	for m := range models {
		targets = append(targets, m)
	}
	run := &record.Run{ID: id, Spec: spec, Sample: sampleID, DatasetHash: "sample:" + sampleID, ScorersHash: "sha256:" + spec,
		Targets: targets, Cases: len(traces), Epochs: 1, Status: status, Started: started}
	if err := st.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	var cases []record.Case
	var results []record.Result
	var scores []record.Score
	smp := &record.Sample{ID: sampleID, Created: started, Strata: []record.SampleStratum{}}
	for i, tr := range traces {
		smp.Items = append(smp.Items, record.SampleItem{TraceID: tr.id, Stratum: tr.stratum, Weight: tr.weight})
		at := tr.time
		if tr.untimed {
			at = time.Time{}
		}
		cases = append(cases, record.Case{RunID: id, ID: tr.id, Line: i + 1,
			Tags: map[string]string{"model": tr.model, "stratum": tr.stratum, "day": tr.time.UTC().Format(time.DateOnly)}})
		results = append(results, record.Result{RunID: id, CaseID: tr.id, Target: tr.model, Epoch: 1, Raw: "reply", CreatedAt: at})
		if tr.noVerdict {
			continue
		}
		scores = append(scores, record.Score{RunID: id, Scoring: 1, CaseID: tr.id, Target: tr.model, Epoch: 1,
			Scorer: "judge", Primary: true, Pass: tr.pass, Value: b2f(tr.pass), Shape: shape(tr.pass)})
		if tr.other != nil {
			scores = append(scores, record.Score{RunID: id, Scoring: 1, CaseID: tr.id, Target: tr.model, Epoch: 1,
				Scorer: "format", Pass: *tr.other, Value: b2f(*tr.other), Shape: shape(*tr.other)})
		}
	}
	if err := st.PutCases(ctx, cases); err != nil {
		t.Fatal(err)
	}
	if err := st.PutResults(ctx, results, scores); err != nil {
		t.Fatal(err)
	}
	if err := st.PutSample(ctx, smp); err != nil {
		t.Fatal(err)
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func shape(pass bool) string {
	if pass {
		return "pass"
	}
	return "silent"
}

func openStore(t *testing.T) store.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "assay.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// Collect reads the complete score-traces runs (not evaluation runs, not
// runs still going), each trace once with the newest run's verdict, its
// model, time, weight and its sample's stratum; --spec and --scorer
// choose whose verdicts.
func TestCollectReadsScoreTracesRuns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := openStore(t)
	day := time.Date(2026, 11, 10, 9, 0, 0, 0, time.UTC)
	no := false
	putScoreTracesRun(t, st, "20261111-000000-aaaaaa", "support", "S1", day.Add(24*time.Hour), record.StatusComplete, []scored{
		{id: "t1", model: "m1", stratum: "route=a", time: day, weight: 4, pass: true},
		{id: "t2", model: "m1", stratum: "route=b", time: day, weight: 1.5, pass: false, other: &no},
		{id: "t3", model: "m2", stratum: "route=a", time: day, weight: 4, pass: true},
		{id: "t4", model: "m2", stratum: "route=a", time: day, weight: 4, noVerdict: true},
		{id: "t5", model: "m2", stratum: "route=a", time: day, weight: 4, pass: true, untimed: true},
	})
	// A newer run scored t1 again and failed it; t4 still has no verdict.
	putScoreTracesRun(t, st, "20261112-000000-bbbbbb", "support", "S2", day.Add(48*time.Hour), record.StatusComplete, []scored{
		{id: "t1", model: "m1", stratum: "route=a", time: day, weight: 2, pass: false},
		{id: "t4", model: "m2", stratum: "route=a", time: day, weight: 4, noVerdict: true},
	})
	// Still running: left out. Another spec's: left out with --spec.
	putScoreTracesRun(t, st, "20261113-000000-cccccc", "support", "S3", day.Add(72*time.Hour), record.StatusRunning, []scored{
		{id: "t9", model: "m1", stratum: "route=a", time: day, weight: 1, pass: true},
	})
	putScoreTracesRun(t, st, "20261109-000000-dddddd", "billing", "S4", day, record.StatusComplete, []scored{
		{id: "b1", model: "m1", stratum: "all", time: day, weight: 1, pass: true},
	})
	// An evaluation run (no sample): never read.
	if err := st.CreateRun(ctx, &record.Run{ID: "20261114-000000-eeeeee", Spec: "support", Status: record.StatusComplete, Started: day.Add(96 * time.Hour)}); err != nil {
		t.Fatal(err)
	}

	obs, rep, err := Collect(ctx, st, Source{Spec: "support"})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Observation{}
	for _, o := range obs {
		got[o.TraceID] = o
	}
	if len(obs) != 3 {
		t.Fatalf("%d observations %+v, want t1, t2 and t3", len(obs), obs)
	}
	if o := got["t1"]; o.RunID != "20261112-000000-bbbbbb" || o.Pass || o.Weight != 2 || o.Sample != "S2" || o.Stratum != "route=a" || o.Model != "m1" || !o.Time.Equal(day) {
		t.Errorf("t1 = %+v, want the newer run's failing verdict, weight 2, sample S2", o)
	}
	if o := got["t2"]; o.Pass || o.Weight != 1.5 || o.Sample != "S1" || o.Stratum != "route=b" || o.ScorersHash != "sha256:support" {
		t.Errorf("t2 = %+v", o)
	}
	if strings.Join(rep.Runs, " ") != "20261112-000000-bbbbbb 20261111-000000-aaaaaa" {
		t.Errorf("runs %v, want the two complete support runs, newest first", rep.Runs)
	}
	if rep.Duplicates != 1 || rep.NoVerdict != 1 || rep.Untimed != 1 || len(rep.Notes) != 2 {
		t.Errorf("duplicates %d, no verdict %d, untimed %d, notes %q; want 1, 1, 1 and two notes (a run not complete, an untimed trace)",
			rep.Duplicates, rep.NoVerdict, rep.Untimed, rep.Notes)
	}
	if strings.Join(rep.Scorers, ",") != "judge" {
		t.Errorf("scorers %v, want judge (the primary)", rep.Scorers)
	}

	// Every spec's: the billing run too.
	obs, _, err = Collect(ctx, st, Source{})
	if err != nil || len(obs) != 4 {
		t.Errorf("every spec: %d observations, %v; want 4", len(obs), err)
	}
	// --scorer format: only t2 has its verdict.
	obs, rep, err = Collect(ctx, st, Source{Spec: "support", Scorer: "format"})
	if err != nil || len(obs) != 1 || obs[0].TraceID != "t2" || obs[0].Pass || rep.NoVerdict != 4 {
		t.Errorf("--scorer format: %+v, %v, no verdict %d; want t2 failing, 4 without a verdict", obs, err, rep.NoVerdict)
	}
	// An unknown scorer names the ones there are.
	_, _, err = Collect(ctx, st, Source{Spec: "support", Scorer: "tone"})
	var us *UnknownScorerError
	if !errors.As(err, &us) || err.Error() != `scorer "tone": no score-traces run has its verdicts; their scorers are format, judge` {
		t.Errorf("unknown scorer: %v", err)
	}
	// A spec with no score-traces run.
	if _, _, err := Collect(ctx, st, Source{Spec: "nope"}); !errors.Is(err, ErrNoTraces) {
		t.Errorf("no runs: %v, want ErrNoTraces", err)
	}
}
