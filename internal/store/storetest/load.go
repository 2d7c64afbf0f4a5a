package storetest

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store"
)

// loadTests cover store.Loads: a load test is a run of kind "load" with
// its steps and requests.
var loadTests = []struct {
	name string
	fn   func(*testing.T, store.Store)
}{
	{"LoadRoundTrip", testLoadRoundTrip},
	{"RunKinds", testRunKinds},
	{"LoadStepReplaced", testLoadStepReplaced},
	{"LoadRequestsAtomic", testLoadRequestsAtomic},
	{"LoadMissingRun", testLoadMissingRun},
	{"DeleteLoadRun", testDeleteLoadRun},
}

func newLoadRun(id string, started time.Time) *record.Run {
	r := newRun(id, started)
	r.Kind = record.KindLoad
	r.Cases, r.Epochs = 0, 0
	return r
}

func loadSteps(run string) []record.LoadStep {
	return []record.LoadStep{
		{RunID: run, Target: "zeta", Step: 0, Mode: "rate", Level: 2.5, Started: t0(), DurationMS: 10_000.25,
			Sent: 25, Done: 24, ClientCPU: 0.125, Cores: 2, LatenessP95MS: 1.75},
		{RunID: run, Target: "alpha", Step: 1, Mode: "rate", Level: 5, Started: t0().Add(11 * time.Second), DurationMS: 10_000,
			Sent: 50, Done: 50, ClientCPU: 1.9, Cores: 2, LatenessP95MS: 40, Saturated: true},
		{RunID: run, Target: "alpha", Step: 0, Mode: "rate", Level: 2.5, Started: t0(), DurationMS: 10_000,
			Sent: 25, Done: 25, ClientCPU: 0.1, Cores: 2},
		{RunID: run, Target: "zeta", Step: 1, Mode: "rate", Level: 5,
			Skipped: "past the knee: 62% errors at 2.5/s"},
	}
}

func loadRequests(run string) []record.LoadRequest {
	return []record.LoadRequest{
		{RunID: run, Target: "zeta", Step: 0, Seq: 1, CaseID: "c2", StartMS: 400.5, LatencyMS: 30, FirstTokenMS: math.NaN(),
			InterTokenMS: math.NaN(), ErrorKind: "rate_limited", Status: 429},
		{RunID: run, Target: "zeta", Step: 0, Seq: 0, CaseID: "c1", StartMS: 0.25, LatencyMS: 812.5, FirstTokenMS: 301.25,
			InterTokenMS: 12.5, InputTokens: 120, OutputTokens: 7, CostUSD: 0.00042},
		{RunID: run, Target: "alpha", Step: 1, Seq: 0, CaseID: "c\xff3", StartMS: 1, LatencyMS: 700, FirstTokenMS: math.NaN(),
			InterTokenMS: math.NaN(), InputTokens: 100, OutputTokens: 9, CostUSD: 0.001},
		{RunID: run, Target: "alpha", Step: 0, Seq: 0, CaseID: "c1", StartMS: 2, LatencyMS: 60_000, FirstTokenMS: math.NaN(),
			InterTokenMS: math.NaN(), ErrorKind: "timeout"},
	}
}

func readLoad(t *testing.T, s store.Store, run string) ([]record.LoadStep, []record.LoadRequest) {
	t.Helper()
	ctx := context.Background()
	var steps []record.LoadStep
	if err := s.LoadSteps(ctx, run, func(st record.LoadStep) error { steps = append(steps, st); return nil }); err != nil {
		t.Fatalf("LoadSteps: %v", err)
	}
	var reqs []record.LoadRequest
	if err := s.LoadRequests(ctx, run, func(r record.LoadRequest) error { reqs = append(reqs, r); return nil }); err != nil {
		t.Fatalf("LoadRequests: %v", err)
	}
	return steps, reqs
}

// sameFloat is equality where NaN equals NaN.
func sameFloat(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }

func sameRequest(a, b record.LoadRequest) bool {
	fa, fb := a, b
	fa.FirstTokenMS, fa.InterTokenMS, fb.FirstTokenMS, fb.InterTokenMS = 0, 0, 0, 0
	return fa == fb && sameFloat(a.FirstTokenMS, b.FirstTokenMS) && sameFloat(a.InterTokenMS, b.InterTokenMS)
}

func testLoadRoundTrip(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustCreate(t, s, newLoadRun("load-1", t0()), newLoadRun("load-2", t0().Add(time.Hour)))
	if err := s.PutLoadSteps(ctx, loadSteps("load-1")); err != nil {
		t.Fatalf("PutLoadSteps: %v", err)
	}
	if err := s.PutLoadRequests(ctx, loadRequests("load-1")); err != nil {
		t.Fatalf("PutLoadRequests: %v", err)
	}
	// Another run's data is not read back.
	if err := s.PutLoadSteps(ctx, loadSteps("load-2")[:1]); err != nil {
		t.Fatalf("PutLoadSteps: %v", err)
	}
	if err := s.PutLoadRequests(ctx, loadRequests("load-2")[:1]); err != nil {
		t.Fatalf("PutLoadRequests: %v", err)
	}
	steps, reqs := readLoad(t, s, "load-1")

	want := loadSteps("load-1")
	// By target, then step; times to the microsecond in UTC.
	order := []int{2, 1, 0, 3}
	if len(steps) != len(want) {
		t.Fatalf("LoadSteps returned %d steps, want %d: %+v", len(steps), len(want), steps)
	}
	for i, j := range order {
		w := want[j]
		g := steps[i]
		if !g.Started.Equal(w.Started.Truncate(time.Microsecond)) || g.Started.IsZero() != w.Started.IsZero() {
			t.Errorf("step %d: started %v, want %v", i, g.Started, w.Started)
		}
		g.Started, w.Started = time.Time{}, time.Time{}
		if g != w {
			t.Errorf("step %d = %+v, want %+v", i, g, w)
		}
	}
	wantReqs := loadRequests("load-1")
	rorder := []int{3, 2, 1, 0}
	if len(reqs) != len(wantReqs) {
		t.Fatalf("LoadRequests returned %d requests, want %d", len(reqs), len(wantReqs))
	}
	for i, j := range rorder {
		if !sameRequest(reqs[i], wantReqs[j]) {
			t.Errorf("request %d = %+v, want %+v", i, reqs[i], wantReqs[j])
		}
	}
	// A run without load data streams nothing.
	mustCreate(t, s, newRun("eval", t0()))
	if steps, reqs := readLoad(t, s, "eval"); len(steps)+len(reqs) != 0 {
		t.Errorf("an evaluation run has load data: %v %v", steps, reqs)
	}
}

func testRunKinds(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustCreate(t, s, newRun("eval", t0()), newLoadRun("load", t0().Add(time.Minute)))
	got, err := s.GetRun(ctx, "load")
	if err != nil || got.Kind != record.KindLoad {
		t.Fatalf("GetRun(load) = %+v, %v; want kind %q", got, err, record.KindLoad)
	}
	got, err = s.GetRun(ctx, "eval")
	if err != nil || got.Kind != "" {
		t.Fatalf("GetRun(eval) kind = %q, %v; want \"\"", got.Kind, err)
	}
	latest, err := s.GetRun(ctx, "latest")
	if err != nil || latest.ID != "load" || latest.Kind != record.KindLoad {
		t.Errorf("latest = %+v, %v; want the load run with its kind", latest, err)
	}
	runs, err := s.ListRuns(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, r := range runs {
		kinds = append(kinds, r.ID+":"+r.Kind)
	}
	if want := []string{"load:load", "eval:"}; !slices.Equal(kinds, want) {
		t.Errorf("ListRuns kinds = %q, want %q", kinds, want)
	}
	// UpdateRun keeps the kind.
	latest.Status = record.StatusComplete
	if err := s.UpdateRun(ctx, latest); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.GetRun(ctx, "load"); got.Kind != record.KindLoad || got.Status != record.StatusComplete {
		t.Errorf("after UpdateRun: %+v", got)
	}
}

func testLoadStepReplaced(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustCreate(t, s, newLoadRun("load", t0()))
	begun := record.LoadStep{RunID: "load", Target: "m", Step: 0, Mode: "concurrency", Level: 4, Started: t0()}
	if err := s.PutLoadSteps(ctx, []record.LoadStep{begun}); err != nil {
		t.Fatal(err)
	}
	done := begun
	done.DurationMS, done.Sent, done.Done, done.ClientCPU, done.Cores = 5000, 80, 79, 0.3, 4
	if err := s.PutLoadSteps(ctx, []record.LoadStep{done}); err != nil {
		t.Fatalf("PutLoadSteps of a stored step: %v", err)
	}
	steps, _ := readLoad(t, s, "load")
	if len(steps) != 1 || steps[0].Sent != 80 || steps[0].Done != 79 || steps[0].DurationMS != 5000 || steps[0].Cores != 4 {
		t.Errorf("after replacing: %+v; want the completed step once", steps)
	}
}

func testLoadRequestsAtomic(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustCreate(t, s, newLoadRun("load", t0()))
	reqs := loadRequests("load")
	if err := s.PutLoadRequests(ctx, reqs[:1]); err != nil {
		t.Fatal(err)
	}
	// The second batch repeats the stored request: none of it is stored.
	if err := s.PutLoadRequests(ctx, reqs); err == nil {
		t.Fatal("PutLoadRequests stored a request twice")
	}
	if _, got := readLoad(t, s, "load"); len(got) != 1 {
		t.Errorf("a failed batch stored %d requests; want only the first batch's 1", len(got))
	}
}

func testLoadMissingRun(t *testing.T, s store.Store) {
	ctx := context.Background()
	if err := s.PutLoadSteps(ctx, loadSteps("ghost")); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("PutLoadSteps of a missing run = %v; want ErrNotFound", err)
	}
	if err := s.PutLoadRequests(ctx, loadRequests("ghost")); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("PutLoadRequests of a missing run = %v; want ErrNotFound", err)
	}
}

func testDeleteLoadRun(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustCreate(t, s, newLoadRun("load", t0()), newLoadRun("keep", t0()))
	for _, id := range []string{"load", "keep"} {
		if err := s.PutLoadSteps(ctx, loadSteps(id)); err != nil {
			t.Fatal(err)
		}
		if err := s.PutLoadRequests(ctx, loadRequests(id)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.DeleteRun(ctx, "load"); err != nil {
		t.Fatal(err)
	}
	if steps, reqs := readLoad(t, s, "load"); len(steps)+len(reqs) != 0 {
		t.Errorf("DeleteRun left %d steps and %d requests", len(steps), len(reqs))
	}
	if steps, reqs := readLoad(t, s, "keep"); len(steps) != 4 || len(reqs) != 4 {
		t.Errorf("DeleteRun of another run took this one's data: %d steps, %d requests", len(steps), len(reqs))
	}
}
