package harness_test

// The issue's must-show tests, end to end: the harness against `assay
// mock` (in-process, over loopback HTTP) through the openai provider as
// `assay load` builds it (the provider registry, no retries, no cache).

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/load"
	"github.com/assay-eval/assay/internal/load/harness"
	"github.com/assay-eval/assay/internal/longtest"
	"github.com/assay-eval/assay/internal/mock"
	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/provider/builtin"
	"github.com/assay-eval/assay/internal/provider/registry"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/spec"
)

// kept is what a load test handed its sink.
type kept struct {
	steps []record.LoadStep
	reqs  []record.LoadRequest
}

// startMock serves a mock for the test's duration and returns it with its
// root URL.
func startMock(t *testing.T, o mock.Options) (*mock.Server, string) {
	t.Helper()
	o.Logger = nil
	srv := mock.New(o)
	url, err := srv.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv, url
}

// mockTarget is an openai target on the mock, built as `assay load` builds
// one: through the provider registry with no retries and no cache, and a
// concurrency limit far above what the test puts in flight.
func mockTarget(t *testing.T, url string) harness.Target {
	t.Helper()
	sp := &spec.Spec{Targets: []spec.Target{{
		Name: "mock", Provider: "openai", Model: "m", BaseURL: url + "/v1",
		Limits: spec.Limits{Concurrency: 1000},
	}}}
	sp.Run.Timeout = spec.Duration(30 * time.Second)
	var closers []io.Closer
	t.Cleanup(func() {
		for _, c := range closers {
			c.Close()
		}
	})
	getenv := func(k string) string {
		if k == "OPENAI_API_KEY" {
			return "sk-mock"
		}
		return ""
	}
	p, err := builtin.Registry().Build(sp, "mock", registry.BuildOptions{Getenv: getenv, Retries: 0, Cache: nil}, &closers)
	if err != nil {
		t.Fatal(err)
	}
	tg := harness.Target{Name: "mock", Provider: p}
	for i := range 5 {
		id := fmt.Sprintf("c%d", i)
		tg.Requests = append(tg.Requests, provider.Request{
			Model: "m", CaseID: id,
			Messages: []provider.Message{{Role: "user", Content: "question " + id + ": what is two plus two"}},
		})
		tg.CaseIDs = append(tg.CaseIDs, id)
	}
	return tg
}

// runAgainst runs a load test of one target and analyses it.
func runAgainst(t *testing.T, tg harness.Target, o harness.Options) (*kept, *load.Result) {
	t.Helper()
	var m harness.Memory
	if err := harness.Run(context.Background(), []harness.Target{tg}, o, &m, nil); err != nil {
		t.Fatalf("harness.Run: %v", err)
	}
	sink := &kept{}
	sink.steps, sink.reqs = m.Kept()
	res, err := load.Analyse(sink.steps, sink.reqs, load.AnalyseOptions{SLO: o.SLO, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	return sink, res
}

// describe is one line per step, for failure messages.
func describe(res *load.Result) string {
	var b strings.Builder
	for _, s := range res.Targets[0].Steps {
		if s.Skipped != "" {
			fmt.Fprintf(&b, "\n  %6g req/s: %s", s.Level, s.Skipped)
			continue
		}
		fmt.Fprintf(&b, "\n  %6g req/s: %4d sent, %6.1f req/s done, p95 %6.1f ms [%6.1f, %6.1f], errors %d/%d (%v), cpu %.2f, late p95 %.1f ms, saturated %v, meets SLO %v %s",
			s.Level, s.Sent, float64(s.Throughput), float64(s.P95.Value), float64(s.P95.Lo), float64(s.P95.Hi),
			s.Errors.Count, s.Errors.N, kinds(s.ByKind), float64(s.ClientCPU), float64(s.LatenessP95MS), s.Saturated, s.MeetsSLO, s.Why)
	}
	k := res.Knees[0]
	fmt.Fprintf(&b, "\n  knee: found %v at %g (%s)", k.Found, k.Level, k.Why)
	return b.String()
}

func kinds(rs []load.ErrorRate) string {
	var parts []string
	for _, r := range rs {
		parts = append(parts, fmt.Sprintf("%s %d", r.Kind, r.Count))
	}
	return strings.Join(parts, ", ")
}

// stepAt returns the step run at level.
func stepAt(t *testing.T, res *load.Result, level float64) load.StepResult {
	t.Helper()
	for _, s := range res.Targets[0].Steps {
		if s.Level == level {
			return s
		}
	}
	t.Fatalf("no step at %g", level)
	return load.StepResult{}
}

// anySaturated says whether the harness flagged itself the bottleneck of a
// step: then a busy machine, not the code under test, may have moved the
// knee.
func anySaturated(res *load.Result) bool {
	for _, s := range res.Targets[0].Steps {
		if s.Saturated {
			return true
		}
	}
	return false
}

// mustShow runs attempt and holds its result to check, which lists what
// is wrong. A step the harness flags as saturated (a machine too busy to
// keep the schedule) is never the knee's evidence, so such a run may find
// no knee or a lower one: it is made once more, and when the second is
// saturated too the test is skipped with the harness's own reasons. A run
// that fails the check without a saturated step fails the test.
func mustShow(t *testing.T, attempt func() *load.Result, check func(*load.Result) []string) {
	t.Helper()
	for i := 1; ; i++ {
		res := attempt()
		problems := check(res)
		t.Logf("attempt %d:%s", i, describe(res))
		if len(problems) == 0 {
			return
		}
		if !anySaturated(res) {
			t.Fatalf("%s:%s", strings.Join(problems, "; "), describe(res))
		}
		if i == 2 {
			t.Skipf("the harness flagged itself saturated in both attempts (the machine is too busy to drive the load), so it could not show: %s", strings.Join(problems, "; "))
		}
	}
}

// Must show: against `assay mock --capacity 8 --latency 50ms` the knee is
// within ±15% of the capacity, 8 slots / 50 ms = 160 requests/s, and p95
// rises sharply past it.
//
// Where the steps land (an M/D/8 queue under Poisson arrivals over 2.5 s
// steps, 200 runs each in testdata/mock_knee_sim.py): p95 is about 100 ms
// at 145 req/s, 370 ms at 180 and 970 ms at 220. With 57 ms of service (a
// busy machine's late timers: capacity 140) it is still under 400 ms at
// 145 in 96% of runs and over it at 180 and 220 in all. Under a 400 ms SLO
// the knee is 145 or 180, both within 15% of 160, and 220 is far past it.
func TestMustShowKneeAtMockCapacity(t *testing.T) {
	longtest.Skip(t)       // seconds of real-time load steps: CI runs it
	const capacity = 160.0 // requests/s: 8 slots / 50 ms
	slo := load.SLO{P95: 400 * time.Millisecond, Errors: 0.05, ErrorsSet: true}
	var srv *mock.Server
	var sink *kept
	attempt := func() *load.Result {
		if srv != nil {
			srv.Close()
		}
		var url string
		srv, url = startMock(t, mock.Options{Capacity: 8, Latency: 50 * time.Millisecond, Default: "four"})
		var res *load.Result
		sink, res = runAgainst(t, mockTarget(t, url), harness.Options{
			Mode: load.ModeRate, Levels: []float64{145, 180, 220}, Duration: 2 * time.Second,
			Warmup: 500 * time.Millisecond, Drain: 5 * time.Second, Seed: 20, SLO: slo,
		})
		return res
	}
	mustShow(t, attempt, func(res *load.Result) []string {
		var problems []string
		k := res.Knees[0]
		if !k.Found || k.Level < 0.85*capacity || k.Level > 1.15*capacity {
			return []string{fmt.Sprintf("knee %g req/s (found %v); want within 15%% of the mock's capacity of %g req/s", k.Level, k.Found, capacity)}
		}
		// p95 rises sharply past the knee: the next step run misses the
		// SLO, and at 220 req/s p95 is several times that at 145, while
		// the throughput stays at the capacity (the queue grows, not the
		// server's work).
		steps := res.Targets[0].Steps
		if k.Step+1 >= len(steps) || steps[k.Step+1].Skipped != "" {
			return []string{"no step ran past the knee"}
		}
		if next := steps[k.Step+1]; next.MeetsSLO || float64(next.P95.Value) <= float64(slo.P95.Milliseconds()) {
			problems = append(problems, fmt.Sprintf("p95 %.0f ms at %g req/s, just past the knee; want above the SLO's %v", float64(next.P95.Value), next.Level, slo.P95))
		}
		low, high := steps[0], steps[len(steps)-1]
		if high.Skipped == "" {
			if lo, hi := float64(low.P95.Value), float64(high.P95.Value); hi < 3*lo {
				problems = append(problems, fmt.Sprintf("p95 %.0f ms at %g req/s against %.0f ms at %g: want a sharp rise (at least 3×)", hi, high.Level, lo, low.Level))
			}
			if tp := float64(high.Throughput); tp > 1.08*capacity {
				problems = append(problems, fmt.Sprintf("throughput %.1f req/s at %g offered; the mock serves at most %g", tp, high.Level, capacity))
			}
		}
		if st := srv.Stats(); st.MaxWaiting == 0 || st.QueueFull != 0 {
			problems = append(problems, fmt.Sprintf("mock stats %+v: want requests queued past the capacity and no 503", st))
		}
		for _, r := range sink.reqs {
			if r.ErrorKind != "" {
				problems = append(problems, fmt.Sprintf("request %d of step %d failed (%s); the capacity model only queues", r.Seq, r.Step, r.ErrorKind))
				break
			}
		}
		return problems
	})
}

// Must show: against a mock rate limit of R requests/s the knee is R ±
// 15% with errors (429) past it, and no retries are made: the mock
// received exactly the requests the harness recorded.
//
// The limit is a token bucket of R = 100 a second holding 20 (`assay mock
// --rate 100 --burst 20`). testdata/mock_knee_sim.py simulates it under
// Poisson arrivals over 2 s steps: the errors' Wilson upper bound stays
// below the 5% SLO at 90 req/s (in 99% of runs), exceeds it at 110 in 62%
// (then the knee is 90, else 110) and at 140 in all (23% of requests
// refused).
func TestMustShowKneeAtMockRateLimit(t *testing.T) {
	longtest.Skip(t) // seconds of real-time load steps: CI runs it
	const limit = 100.0
	slo := load.SLO{P95: time.Second, Errors: 0.05, ErrorsSet: true}
	var srv *mock.Server
	var sink *kept
	attempt := func() *load.Result {
		if srv != nil {
			srv.Close()
		}
		var url string
		srv, url = startMock(t, mock.Options{Rate: limit, Burst: 20, Latency: 5 * time.Millisecond, Default: "four"})
		// No warm-up: every request the harness sends is recorded, so the
		// mock's count can be held to the records.
		var res *load.Result
		sink, res = runAgainst(t, mockTarget(t, url), harness.Options{
			Mode: load.ModeRate, Levels: []float64{50, 90, 110, 140}, Duration: 2 * time.Second, Seed: 20, SLO: slo,
		})
		return res
	}
	mustShow(t, attempt, func(res *load.Result) []string {
		var problems []string
		// No retries: one request at the mock per request recorded, and
		// one 429 per rate_limited record.
		st := srv.Stats()
		sent, limited := 0, 0
		for _, s := range sink.steps {
			sent += s.Sent
		}
		for _, r := range sink.reqs {
			if r.ErrorKind == string(provider.KindRateLimited) {
				limited++
				if r.Status != 429 {
					problems = append(problems, fmt.Sprintf("a rate_limited request recorded with status %d, want 429", r.Status))
				}
			}
		}
		if st.Requests != int64(len(sink.reqs)) || sent != len(sink.reqs) {
			problems = append(problems, fmt.Sprintf("the mock received %d requests, the harness sent %d and recorded %d: want all equal (no retry, nothing unrecorded)", st.Requests, sent, len(sink.reqs)))
		}
		if st.RateLimit != int64(limited) || limited == 0 {
			problems = append(problems, fmt.Sprintf("the mock answered %d 429s, the harness recorded %d rate_limited", st.RateLimit, limited))
		}

		k := res.Knees[0]
		if !k.Found || k.Level < 0.85*limit || k.Level > 1.15*limit {
			return append(problems, fmt.Sprintf("knee %g req/s (found %v); want within 15%% of the mock's limit of %g req/s", k.Level, k.Found, limit))
		}
		// Past the knee the errors are 429s, over the SLO.
		ran := 0
		for _, s := range res.Targets[0].Steps[k.Step+1:] {
			if s.Skipped != "" {
				continue
			}
			ran++
			if len(s.ByKind) == 0 || s.ByKind[0].Kind != string(provider.KindRateLimited) || s.Errors.Count != s.ByKind[0].Count {
				problems = append(problems, fmt.Sprintf("at %g req/s errors %s; want every error rate_limited", s.Level, kinds(s.ByKind)))
			}
			if s.MeetsSLO {
				problems = append(problems, fmt.Sprintf("at %g req/s, past the knee, the SLO is met", s.Level))
			}
		}
		if ran == 0 {
			problems = append(problems, "no step ran past the knee")
		}
		if r := float64(stepAt(t, res, 140).Errors.Rate); r < 0.1 {
			problems = append(problems, fmt.Sprintf("at 140 req/s against a limit of 100, %.1f%% refused; want about 23%%", 100*r))
		}
		return problems
	})
}
