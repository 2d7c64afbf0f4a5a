package harness

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/load"
	"github.com/assay-eval/assay/internal/longtest"
	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/record"
)

// unsaturated runs a load test whose knee a test checks: once more when
// the harness flagged a step saturated (the shared machine was too busy to
// keep the schedule: such a step is no evidence), and skips the test when
// it was flagged both times.
func unsaturated(t *testing.T, slo load.SLO, runIt func() (*Memory, error)) (*Memory, *load.Result) {
	t.Helper()
	var why []string
	for range 2 {
		sink, err := runIt()
		if err != nil {
			t.Fatal(err)
		}
		why = why[:0]
		for _, st := range sink.steps {
			if ok, w := load.Saturated(st); ok && st.Skipped == "" {
				why = append(why, fmt.Sprintf("%s at %g: %s", st.Target, st.Level, w))
			}
		}
		if len(why) == 0 {
			return sink, analyse(t, sink, slo)
		}
		t.Logf("the harness flagged itself saturated: %s", strings.Join(why, "; "))
	}
	t.Skipf("the harness was saturated in both attempts (the machine is too busy to drive this load): %s", strings.Join(why, "; "))
	return nil, nil
}

// Past a server's capacity (8 slots × 40 ms = 200 requests/s) an open loop
// queues: the knee lands within 15% below the capacity and p95 rises
// sharply past it.
func TestKneeAtServerCapacity(t *testing.T) {
	longtest.Skip(t) // seconds of real-time load steps: CI runs it
	f := &fakeServer{Slots: 8, Service: 40 * time.Millisecond, Tokens: 20}
	slo := load.SLO{P95: 150 * time.Millisecond, Errors: 0.05, ErrorsSet: true}
	_, res := unsaturated(t, slo, func() (*Memory, error) {
		return run(t, []Target{target("fake", f, nil)}, Options{
			Mode: load.ModeRate, Levels: []float64{100, 170, 200, 240}, Duration: 2 * time.Second,
			Warmup: 300 * time.Millisecond, Seed: 3, SLO: slo,
		})
	})
	k := res.Knees[0]
	if !k.Found || k.Level < 170 || k.Level > 230 {
		t.Fatalf("knee %+v; want 170–230 requests/s (capacity 200)", k)
	}
	steps := res.Targets[0].Steps
	first, last := steps[0], steps[len(steps)-1]
	for _, s := range steps {
		if s.Skipped == "" {
			last = s
		}
	}
	if float64(last.P95.Value) < 3*float64(first.P95.Value) {
		t.Errorf("p95 %v ms at %g rps against %v ms at %g: no sharp rise past the knee", last.P95.Value, last.Level, first.P95.Value, first.Level)
	}
	// Below capacity the server keeps up with what is offered.
	if tp := float64(first.Throughput); math.Abs(tp-100) > 15 {
		t.Errorf("throughput %g at 100 rps offered", tp)
	}
	if first.TTFT95.N == 0 || math.IsNaN(float64(first.InterTokenMS)) {
		t.Errorf("streamed answers measured no TTFT or inter-token latency: %+v", first)
	}
	// (40 ms − 10 ms to the first token) over 19 gaps, plus scheduling.
	if itl := float64(first.InterTokenMS); itl < 30.0/19 || itl > 2.5 {
		t.Errorf("inter-token latency %g ms; want about %g", itl, 30.0/19)
	}
}

// Above a rate limit R the server answers 429: the knee is R's step, the
// errors past it are rate_limited with status 429, and every call is a
// recorded request (no retry was made).
func TestKneeAtRateLimit(t *testing.T) {
	longtest.Skip(t) // seconds of real-time load steps: CI runs it
	f := &fakeServer{Slots: 200, Service: 5 * time.Millisecond, Rate: 100}
	slo := load.SLO{P95: time.Second, Errors: 0.05, ErrorsSet: true}
	sink, res := unsaturated(t, slo, func() (*Memory, error) {
		f.reset() // a second attempt starts in a fresh rate window
		return run(t, []Target{target("limited", f, nil)}, Options{
			Mode: load.ModeRate, Levels: []float64{60, 90, 130, 170}, Duration: 2 * time.Second, Seed: 5, SLO: slo,
		})
	})
	if got := f.calls.Load(); got != int64(len(sink.reqs)) {
		t.Errorf("the server saw %d calls for %d requests made: a retry or an unrecorded call", got, len(sink.reqs))
	}
	if k := res.Knees[0]; !k.Found || k.Level != 90 {
		t.Fatalf("knee %+v; want 90 (limit 100)", k)
	}
	past := res.Targets[0].Steps[2]
	if len(past.ByKind) == 0 || past.ByKind[0].Kind != string(provider.KindRateLimited) || float64(past.ByKind[0].Rate) < 0.1 {
		t.Errorf("at 130 rps errors %+v; want mostly rate_limited", past.ByKind)
	}
	for _, r := range sink.reqs {
		if r.ErrorKind == string(provider.KindRateLimited) && r.Status != 429 {
			t.Fatalf("a 429 recorded with status %d", r.Status)
		}
	}
}

// A closed loop keeps N requests in flight: below the server's slots
// throughput is N/service, above them it stays at the capacity and the
// latency grows with the queue.
func TestClosedLoop(t *testing.T) {
	f := &fakeServer{Slots: 8, Service: 20 * time.Millisecond}
	// Throughput is real time: an attempt whose goroutines the machine
	// woke late is made again (as the knee tests do).
	_, res := unsaturated(t, load.SLO{}, func() (*Memory, error) {
		return run(t, []Target{target("fake", f, nil)}, Options{
			Mode: load.ModeConcurrency, Levels: []float64{2, 16}, Duration: 1500 * time.Millisecond, Warmup: 200 * time.Millisecond,
		})
	})
	low, high := res.Targets[0].Steps[0], res.Targets[0].Steps[1]
	if tp := float64(low.Throughput); tp < 0.85*100 || tp > 1.05*100 {
		t.Errorf("2 in flight × 20 ms: throughput %g; want ~100", tp)
	}
	if tp := float64(high.Throughput); tp < 0.85*400 || tp > 1.05*400 {
		t.Errorf("16 in flight on 8 slots × 20 ms: throughput %g; want ~400", tp)
	}
	if p50 := float64(high.P50.Value); p50 < 35 || p50 > 55 {
		t.Errorf("16 in flight on 8 slots: p50 %g ms; want ~40 (each waits one service time)", p50)
	}
	if k := res.Knees[0]; k.Found || !strings.Contains(k.Why, "no SLO") {
		t.Errorf("a knee without an SLO: %+v", k)
	}
}

// An open loop starts requests on schedule whether or not earlier ones
// answered: with 500 ms replies at 40 requests/s, about 20 are in flight.
func TestOpenLoopDoesNotWait(t *testing.T) {
	f := &fakeServer{Slots: 1000, Service: 500 * time.Millisecond}
	var peak atomic.Int64
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(5 * time.Millisecond):
				if n := f.inFlight.Load(); n > peak.Load() {
					peak.Store(n)
				}
			}
		}
	}()
	sink, err := run(t, []Target{target("slow", f, nil)}, Options{
		Mode: load.ModeRate, Levels: []float64{40}, Duration: 1500 * time.Millisecond, Arrivals: load.ArrivalsUniform,
	})
	close(done)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(sink.reqs); n != 60 {
		t.Errorf("%d requests in 1.5 s at 40 evenly spaced per second; want 60", n)
	}
	if p := peak.Load(); p < 15 {
		t.Errorf("at most %d requests in flight; an open loop should have ~20", p)
	}
	last := sink.reqs[len(sink.reqs)-1]
	if last.StartMS < 1400 || last.StartMS > 1500 {
		t.Errorf("the last request started at %g ms; the schedule put it at 1475", last.StartMS)
	}
}

// The request cap is never exceeded, and the steps after it are recorded
// as skipped, naming the flag.
func TestMaxRequests(t *testing.T) {
	f := &fakeServer{Slots: 100, Service: 2 * time.Millisecond}
	sink, err := run(t, []Target{target("a", f, nil), target("b", f, nil)}, Options{
		Mode: load.ModeRate, Levels: []float64{100, 100}, Duration: time.Second, Warmup: 200 * time.Millisecond, MaxRequests: 40,
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := f.calls.Load(); got != 40 {
		t.Errorf("%d calls with --max-requests 40", got)
	}
	if len(sink.steps) != 4 {
		t.Fatalf("%d steps recorded; want 4 (2 targets × 2 levels)", len(sink.steps))
	}
	for _, st := range sink.steps[1:] {
		if !strings.Contains(st.Skipped, "--max-requests 40 reached") {
			t.Errorf("step %d of %s: skipped %q", st.Step, st.Target, st.Skipped)
		}
	}
	if st := sink.steps[0]; st.Skipped != "" || st.DurationMS >= 1000 {
		t.Errorf("the step cut by the cap: %+v (its window should end at the cut)", st)
	}
}

// The spend cap is never exceeded: the test stops while what was spent plus
// every request in flight at the dearest price could still fit.
func TestMaxSpend(t *testing.T) {
	f := &fakeServer{Slots: 100, Service: 30 * time.Millisecond}
	price := func(in, out int) float64 { return 0.01 }
	sink, err := run(t, []Target{target("a", f, price)}, Options{
		Mode: load.ModeRate, Levels: []float64{200}, Duration: time.Second, MaxSpend: 0.255,
	})
	if err != nil {
		t.Fatal(err)
	}
	spent := 0.0
	for _, r := range sink.reqs {
		spent += r.CostUSD
	}
	if calls := f.calls.Load(); float64(calls)*0.01 > 0.255 || spent > 0.255 {
		t.Errorf("%d calls, $%g recorded, with --max-spend 0.255", calls, spent)
	}
	if spent < 0.15 {
		t.Errorf("spent $%g: the cap stopped the test far too early", spent)
	}
}

// The first Ctrl-C (the stop channel) stops at once: requests in flight
// are cancelled (not measured, so neither recorded nor counted sent), what
// finished is kept, the rest is recorded as skipped.
func TestStopAtOnce(t *testing.T) {
	f := &fakeServer{Slots: 1000, Service: 150 * time.Millisecond}
	stop := make(chan struct{})
	sink := &Memory{}
	var stopped time.Time
	go func() {
		time.Sleep(600 * time.Millisecond)
		stopped = time.Now()
		close(stop)
	}()
	err := Run(context.Background(), []Target{target("a", f, nil), target("b", f, nil)}, Options{
		Mode: load.ModeRate, Levels: []float64{50, 100}, Duration: 10 * time.Second,
	}, sink, stop)
	took := time.Since(stopped)
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("err %v; want ErrInterrupted", err)
	}
	if took > 200*time.Millisecond {
		t.Errorf("Run returned %s after the stop", took)
	}
	if n := f.inFlight.Load(); n != 0 {
		t.Errorf("%d calls still in flight after Run returned", n)
	}
	if f.cancelled.Load() == 0 {
		t.Error("no request in flight was cancelled")
	}
	if len(sink.reqs) == 0 || int64(len(sink.reqs))+f.cancelled.Load() != f.calls.Load() {
		t.Errorf("%d recorded + %d cancelled ≠ %d calls", len(sink.reqs), f.cancelled.Load(), f.calls.Load())
	}
	for _, r := range sink.reqs {
		if r.ErrorKind != "" {
			t.Fatalf("a request cancelled by the stop was recorded: %+v", r)
		}
	}
	if len(sink.steps) != 4 {
		t.Fatalf("%d steps; want 4", len(sink.steps))
	}
	if st := sink.steps[0]; st.Skipped != "" || st.DurationMS < 500 || st.DurationMS > 800 || st.Sent != len(sink.reqs) {
		t.Errorf("the interrupted step: %+v", st)
	}
	for _, st := range sink.steps[1:] {
		if st.Skipped != "interrupted before this step" {
			t.Errorf("step %d of %s: skipped %q", st.Step, st.Target, st.Skipped)
		}
	}
}

// A target clearly past its knee (every request failing) is not loaded
// further; the other target is.
func TestEarlyStop(t *testing.T) {
	bad := &fakeServer{Fail: true}
	good := &fakeServer{Slots: 10, Service: time.Millisecond}
	sink, err := run(t, []Target{target("bad", bad, nil), target("good", good, nil)}, Options{
		Mode: load.ModeRate, Levels: []float64{20, 40, 80}, Duration: 500 * time.Millisecond,
		SLO: load.SLO{P95: time.Second},
	})
	if err != nil {
		t.Fatal(err)
	}
	var skipped []string
	for _, st := range sink.steps {
		if st.Skipped != "" {
			skipped = append(skipped, st.Target)
			if !strings.HasPrefix(st.Skipped, "skipped: past the knee at 20 rps (errors 100.0% of") {
				t.Errorf("skipped %q", st.Skipped)
			}
		}
	}
	if strings.Join(skipped, ",") != "bad,bad" {
		t.Errorf("skipped steps of %v; want bad's last two", skipped)
	}
	if c := bad.calls.Load(); c > 15 {
		t.Errorf("%d calls to a failing endpoint; 20 rps for 0.5 s is ~10", c)
	}
	for _, r := range sink.reqs {
		if r.Target == "bad" && (r.ErrorKind != string(provider.KindServer) || r.Status != 500) {
			t.Fatalf("a failure recorded as %q %d", r.ErrorKind, r.Status)
		}
	}
}

// starved runs fn with the harness starved of CPU on purpose: one core
// for Go code (GOMAXPROCS 1), taken by three busy goroutines.
func starved(fn func()) {
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	stop := make(chan struct{})
	defer close(stop)
	for range 3 {
		go func() {
			x := 0
			for {
				select {
				case <-stop:
					return
				default:
					for i := range 100000 {
						x += i
					}
				}
			}
		}()
	}
	fn()
}

// A harness starved of CPU is flagged saturated, in an open loop (it
// starts requests late against the schedule) and in a closed one (its
// goroutines wake late), and such a step is not a knee's evidence; the
// same load with the CPU free is not flagged (in one of two tries: the
// shared machine may be busy).
func TestSaturatedClientFlagged(t *testing.T) {
	f := &fakeServer{Slots: 1000, Service: time.Millisecond}
	slo := load.SLO{P95: 5 * time.Second}
	for _, o := range []Options{
		{Mode: load.ModeRate, Levels: []float64{200}, Duration: 1500 * time.Millisecond, SLO: slo, Seed: 9},
		{Mode: load.ModeConcurrency, Levels: []float64{4}, Duration: 1500 * time.Millisecond, SLO: slo},
	} {
		t.Run(o.Mode, func(t *testing.T) {
			var free record.LoadStep
			for range 2 {
				sink, err := run(t, []Target{target("fake", f, nil)}, o)
				if err != nil {
					t.Fatal(err)
				}
				if free = sink.steps[0]; !free.Saturated {
					break
				}
			}
			if free.Saturated {
				t.Errorf("an idle harness flagged saturated twice: cpu %.2f of %d, lateness p95 %.1f ms", free.ClientCPU, free.Cores, free.LatenessP95MS)
			}

			var sink *Memory
			var err error
			starved(func() { sink, err = run(t, []Target{target("fake", f, nil)}, o) })
			if err != nil {
				t.Fatal(err)
			}
			st := sink.steps[0]
			t.Logf("free: cpu %.2f of %d cores, lateness p95 %.1f ms; starved: cpu %.2f of %d, lateness p95 %.1f ms",
				free.ClientCPU, free.Cores, free.LatenessP95MS, st.ClientCPU, st.Cores, st.LatenessP95MS)
			if !st.Saturated || st.Cores != 1 {
				t.Fatalf("a starved harness not flagged: cpu %.2f of %d cores, lateness p95 %.1f ms", st.ClientCPU, st.Cores, st.LatenessP95MS)
			}
			res := analyse(t, sink, slo)
			s := res.Targets[0].Steps[0]
			if s.MeetsSLO || !strings.Contains(s.Why, "not evidence: the harness was the bottleneck") || res.Knees[0].Found {
				t.Errorf("a saturated step judged as evidence: %q, knee %+v", s.Why, res.Knees[0])
			}
			if !strings.Contains(strings.Join(res.Warnings, "\n"), "the harness was saturated at "+map[string]string{load.ModeRate: "200 rps", load.ModeConcurrency: "4 concurrent"}[o.Mode]) {
				t.Errorf("warnings %q", res.Warnings)
			}
		})
	}
}

// Requests still in flight when the drain ends are cancelled and recorded
// as time-outs (they did not answer within the step): not as done.
func TestDrainCancelsAsTimeouts(t *testing.T) {
	f := &fakeServer{Slots: 1000, Service: 2 * time.Second}
	start := time.Now()
	sink, err := run(t, []Target{target("hang", f, nil)}, Options{
		Mode: load.ModeRate, Levels: []float64{20}, Duration: 500 * time.Millisecond, Drain: 300 * time.Millisecond, Arrivals: load.ArrivalsUniform,
	})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 1500*time.Millisecond {
		t.Errorf("the step took %s: the drain did not cut it", took)
	}
	st := sink.steps[0]
	if st.Sent != 10 || st.Done != 0 || len(sink.reqs) != 10 {
		t.Fatalf("sent %d, done %d, recorded %d; want 10, 0, 10", st.Sent, st.Done, len(sink.reqs))
	}
	for _, r := range sink.reqs {
		if r.ErrorKind != string(provider.KindTimeout) || r.Status != 0 || r.LatencyMS < 300 {
			t.Fatalf("a request cut by the drain recorded as %+v", r)
		}
	}
}

func TestOptionsRefused(t *testing.T) {
	f := &fakeServer{}
	err := Run(context.Background(), []Target{{Name: "x", Provider: f}}, Options{Mode: "burst", Levels: []float64{0, 2.5}, Arrivals: "bursty"}, &Memory{}, nil)
	want := []string{
		`mode "burst": want rate or concurrency`,
		"level 0: must be above 0",
		"duration 0s: must be above 0",
		`arrivals "bursty": want poisson or uniform`,
		"target x: no request to send",
	}
	if err == nil {
		t.Fatal("bad options accepted")
	}
	if got := err.Error(); got != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", got, strings.Join(want, "\n"))
	}
	err = Run(context.Background(), []Target{target("x", f, nil)}, Options{Mode: load.ModeConcurrency, Levels: []float64{2.5}, Duration: time.Second}, &Memory{}, nil)
	if err == nil || err.Error() != "concurrency 2.5: must be a whole number" {
		t.Errorf("err %v", err)
	}
	if f.calls.Load() != 0 {
		t.Error("a call was made with refused options")
	}
}
