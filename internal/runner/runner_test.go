package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/spec"
	"github.com/assay-eval/assay/internal/store"
)

// memStore keeps results in memory and rejects duplicates the way the
// Store contract says (a duplicate key is a no-op).
type memStore struct {
	store.Store
	mu      sync.Mutex
	results map[record.Key]record.Result
	dups    int
	commits []time.Time
}

func newMemStore() *memStore { return &memStore{results: map[record.Key]record.Result{}} }

func (m *memStore) PutResults(ctx context.Context, rs []record.Result, _ []record.Score) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, r := range rs {
		if _, ok := m.results[r.Key()]; ok {
			m.dups++
			continue
		}
		m.results[r.Key()] = r
	}
	m.commits = append(m.commits, time.Now())
	return nil
}

func (m *memStore) len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.results)
}

func cases(n int) func(fn func(*dataset.Case) error) error {
	return func(fn func(*dataset.Case) error) error {
		for i := 1; i <= n; i++ {
			c := &dataset.Case{ID: fmt.Sprint(i), Line: i, Vars: map[string]any{"q": fmt.Sprint("question ", i)}}
			if err := fn(c); err != nil {
				return err
			}
		}
		return nil
	}
}

func render(c *dataset.Case) ([]provider.Message, error) {
	q, ok := c.Vars["q"].(string)
	if !ok {
		return nil, errors.New("no q")
	}
	return []provider.Message{{Role: "user", Content: q}}, nil
}

func noScore(context.Context, *dataset.Case, *record.Result) []record.Score { return nil }

type countingProvider struct {
	calls    atomic.Int64
	inflight atomic.Int64
	peak     atomic.Int64
	delay    time.Duration
	fail     func(req *provider.Request) error
}

func (p *countingProvider) Complete(ctx context.Context, req *provider.Request) (*provider.Response, error) {
	p.calls.Add(1)
	n := p.inflight.Add(1)
	defer p.inflight.Add(-1)
	for {
		old := p.peak.Load()
		if n <= old || p.peak.CompareAndSwap(old, n) {
			break
		}
	}
	if p.delay > 0 {
		select {
		case <-time.After(p.delay):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if p.fail != nil {
		if err := p.fail(req); err != nil {
			return nil, err
		}
	}
	return &provider.Response{Text: "echo " + req.Messages[0].Content, Attempts: 1, Usage: provider.Usage{Input: 10, Output: 5}}, nil
}

func target(name string, p provider.Provider, workers int) Target {
	return Target{Spec: &spec.Target{Name: name, Price: spec.Price{InputPerMTok: 1, OutputPerMTok: 2}}, Provider: p, Workers: workers}
}

func TestRunStoresEveryKeyOnce(t *testing.T) {
	st := newMemStore()
	pa, pb := &countingProvider{}, &countingProvider{}
	sum, err := Run(context.Background(), Options{
		RunID:   "r1",
		Targets: []Target{target("a", pa, 4), target("b", pb, 3)},
		Epochs:  2, Cases: cases(50), Render: render, Score: noScore, Store: st,
	})
	if err != nil {
		t.Fatal(err)
	}
	if st.len() != 200 || st.dups != 0 || sum.Stored != 200 {
		t.Fatalf("stored %d (dups %d, summary %d), want 200 results once each", st.len(), st.dups, sum.Stored)
	}
	for _, tg := range []string{"a", "b"} {
		for i := 1; i <= 50; i++ {
			for e := 1; e <= 2; e++ {
				r, ok := st.results[record.Key{CaseID: fmt.Sprint(i), Target: tg, Epoch: e}]
				if !ok {
					t.Fatalf("missing %s case %d epoch %d", tg, i, e)
				}
				if want := fmt.Sprintf("echo question %d", i); r.Raw != want {
					t.Fatalf("raw %q, want %q", r.Raw, want)
				}
			}
		}
	}
	if pa.calls.Load() != 100 || pb.calls.Load() != 100 {
		t.Errorf("calls a=%d b=%d, want 100 each", pa.calls.Load(), pb.calls.Load())
	}
	if pa.peak.Load() > 4 || pb.peak.Load() > 3 {
		t.Errorf("in flight peaked at a=%d b=%d, over the limits 4 and 3", pa.peak.Load(), pb.peak.Load())
	}
	// price: 10 in, 5 out at $1/$2 per Mtok = 2e-5 per call, 200 calls.
	if d := sum.SpendUSD - 200*2e-5; d > 1e-12 || d < -1e-12 {
		t.Errorf("spend %g, want %g", sum.SpendUSD, 200*2e-5)
	}
}

func TestRunSkipsDoneKeys(t *testing.T) {
	st := newMemStore()
	p := &countingProvider{}
	done := map[record.Key]struct{}{}
	for i := 1; i <= 30; i += 2 {
		done[record.Key{CaseID: fmt.Sprint(i), Target: "a", Epoch: 1}] = struct{}{}
	}
	sum, err := Run(context.Background(), Options{
		RunID: "r1", Targets: []Target{target("a", p, 2)}, Cases: cases(30),
		Render: render, Score: noScore, Store: st, Done: done,
	})
	if err != nil {
		t.Fatal(err)
	}
	if p.calls.Load() != 15 || sum.Skipped != 15 || st.len() != 15 {
		t.Fatalf("calls %d skipped %d stored %d; want 15, 15, 15", p.calls.Load(), sum.Skipped, st.len())
	}
	for k := range st.results {
		if _, ok := done[k]; ok {
			t.Errorf("%v was done already and was called again", k)
		}
	}
}

// The first interrupt stops issuing; calls in flight finish and are kept.
func TestRunStopKeepsInFlight(t *testing.T) {
	st := newMemStore()
	stop := make(chan struct{})
	var once sync.Once
	p := &countingProvider{delay: 20 * time.Millisecond}
	p.fail = func(req *provider.Request) error {
		if p.calls.Load() >= 10 {
			once.Do(func() { close(stop) })
		}
		return nil
	}
	sum, err := Run(context.Background(), Options{
		RunID: "r1", Targets: []Target{target("a", p, 4)}, Cases: cases(1000),
		Render: render, Score: noScore, Store: st, Stop: stop,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !sum.Interrupted {
		t.Error("not reported as interrupted")
	}
	calls := int(p.calls.Load())
	if calls >= 1000 || calls < 10 {
		t.Fatalf("%d calls after stop at 10", calls)
	}
	if st.len() != calls || sum.Discarded != 0 {
		t.Errorf("%d calls made but %d stored (%d discarded): a finished call was lost", calls, st.len(), sum.Discarded)
	}
}

// A stop that comes after every unit was handed to the pool, while some
// still wait in its queue for a worker, is an interrupt: the waiting units
// are never called, and a caller that took the run for finished would
// lose them (a distributed worker completed its job without them).
func TestRunStopAfterIssuedIsInterrupted(t *testing.T) {
	st := newMemStore()
	stop := make(chan struct{})
	arrived, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	p := &countingProvider{}
	p.fail = func(*provider.Request) error {
		once.Do(func() { close(arrived) })
		<-release
		return nil
	}
	go func() {
		<-arrived
		// The one worker holds case 1; case 2 goes into the pool's queue
		// and the issuer returns, all issued.
		time.Sleep(50 * time.Millisecond)
		close(stop)
		close(release)
	}()
	sum, err := Run(context.Background(), Options{
		RunID: "r1", Targets: []Target{target("a", p, 1)}, Cases: cases(2),
		Render: render, Score: noScore, Store: st, Stop: stop,
	})
	if err != nil {
		t.Fatal(err)
	}
	if st.len() != 1 || p.calls.Load() != 1 {
		t.Fatalf("stored %d after %d calls; want the call in flight stored and the queued case not called", st.len(), p.calls.Load())
	}
	if !sum.Interrupted {
		t.Error("a queued unit was dropped by the stop, but the run is not reported as interrupted")
	}
}

// Cancelling aborts calls in flight; they are not stored, so a resume redoes them.
func TestRunCancelDropsAborted(t *testing.T) {
	st := newMemStore()
	ctx, cancel := context.WithCancel(context.Background())
	p := &countingProvider{delay: time.Hour}
	go func() {
		for p.inflight.Load() < 3 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	sum, err := Run(ctx, Options{
		RunID: "r1", Targets: []Target{target("a", p, 3)}, Cases: cases(10),
		Render: render, Score: noScore, Store: st,
	})
	if err != nil {
		t.Fatal(err)
	}
	if st.len() != 0 || sum.Discarded != 3 || !sum.Interrupted {
		t.Errorf("stored %d discarded %d interrupted %v; want 0, 3, true", st.len(), sum.Discarded, sum.Interrupted)
	}
}

// A failed call is a result (loud), never dropped; a prompt that cannot be
// rendered is too, and costs no call.
func TestRunKeepsFailures(t *testing.T) {
	st := newMemStore()
	p := &countingProvider{fail: func(req *provider.Request) error {
		if req.CaseID == "3" {
			return &provider.Error{Kind: provider.KindBadRequest, Status: 400, Msg: "bad"}
		}
		return nil
	}}
	src := func(fn func(*dataset.Case) error) error {
		if err := cases(4)(fn); err != nil {
			return err
		}
		return fn(&dataset.Case{ID: "nq", Vars: map[string]any{}})
	}
	sum, err := Run(context.Background(), Options{
		RunID: "r1", Targets: []Target{target("a", p, 2)}, Cases: src,
		Render: render, Score: noScore, Store: st,
	})
	if err != nil {
		t.Fatal(err)
	}
	if st.len() != 5 || sum.Errors != 2 {
		t.Fatalf("stored %d with %d errors, want 5 with 2", st.len(), sum.Errors)
	}
	if k := st.results[record.Key{CaseID: "3", Target: "a", Epoch: 1}].ErrorKind; k != "bad_request" {
		t.Errorf("case 3 error kind %q, want bad_request", k)
	}
	if k := st.results[record.Key{CaseID: "nq", Target: "a", Epoch: 1}].ErrorKind; k != "prompt_error" {
		t.Errorf("unrenderable case error kind %q, want prompt_error", k)
	}
	if p.calls.Load() != 4 {
		t.Errorf("%d calls, want 4 (no call for an unrenderable prompt)", p.calls.Load())
	}
}

// A finished result is committed within the commit window, long before the
// run ends.
func TestRunCommitsPromptly(t *testing.T) {
	st := newMemStore()
	fast := &countingProvider{}
	slow := &countingProvider{delay: 400 * time.Millisecond}
	start := time.Now()
	_, err := Run(context.Background(), Options{
		RunID: "r1", Targets: []Target{target("fast", fast, 1), target("slow", slow, 1)},
		Cases: cases(1), Render: render, Score: noScore, Store: st, CommitEvery: 20 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(st.commits) < 2 {
		t.Fatalf("%d commits; the fast result waited for the slow one", len(st.commits))
	}
	if first := st.commits[0].Sub(start); first > 300*time.Millisecond {
		t.Errorf("first result committed after %v", first)
	}
}

type failingStore struct{ store.Store }

func (failingStore) PutResults(context.Context, []record.Result, []record.Score) error {
	return errors.New("disk full")
}

// When results cannot be committed the run stops: no more calls are paid
// for results that would be lost.
func TestRunStopsWhenStoreFails(t *testing.T) {
	p := &countingProvider{delay: 5 * time.Millisecond}
	_, err := Run(context.Background(), Options{
		RunID: "r1", Targets: []Target{target("a", p, 2)}, Cases: cases(2000),
		Render: render, Score: noScore, Store: failingStore{}, CommitEvery: 10 * time.Millisecond,
	})
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("err = %v, want the store's error", err)
	}
	if n := p.calls.Load(); n > 200 {
		t.Errorf("%d calls made after the store failed", n)
	}
}

// Scores made during the run are its first scoring.
func TestRunScoresAreScoringOne(t *testing.T) {
	var got []record.Score
	var mu sync.Mutex
	st := &scoreStore{memStore: newMemStore(), put: func(s []record.Score) { mu.Lock(); got = append(got, s...); mu.Unlock() }}
	score := func(_ context.Context, c *dataset.Case, r *record.Result) []record.Score {
		return []record.Score{{CaseID: r.CaseID, Target: r.Target, Epoch: r.Epoch, Scorer: "s", Pass: true}}
	}
	if _, err := Run(context.Background(), Options{RunID: "r9", Targets: []Target{target("a", &countingProvider{}, 2)},
		Cases: cases(5), Render: render, Score: score, Store: st}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 5 {
		t.Fatalf("%d scores", len(got))
	}
	for _, s := range got {
		if s.Scoring != 1 || s.RunID != "r9" {
			t.Errorf("score %+v: want scoring 1 of run r9", s)
		}
	}
}

type scoreStore struct {
	*memStore
	put func([]record.Score)
}

func (s *scoreStore) PutResults(ctx context.Context, rs []record.Result, sc []record.Score) error {
	s.put(sc)
	return s.memStore.PutResults(ctx, rs, sc)
}

// halfCached serves odd cases as cache hits (Cached set, as the cache
// wrapper does), even ones as paid calls.
type halfCached struct{}

func (halfCached) Complete(ctx context.Context, req *provider.Request) (*provider.Response, error) {
	var n int
	fmt.Sscan(req.CaseID, &n)
	return &provider.Response{Text: "x", Usage: provider.Usage{Input: 1_000_000, Output: 500_000}, Cached: n%2 == 1}, nil
}

// A reply served from the cache is never billed again: its result costs 0
// and keeps the price it avoided as saved; the summary's spend counts only
// the calls paid. At $1/Mtok in and $2/Mtok out each reply is priced $2.
func TestCacheHitsCostNothing(t *testing.T) {
	st := newMemStore()
	sum, err := Run(context.Background(), Options{
		RunID: "r1", Targets: []Target{target("a", halfCached{}, 2)},
		Epochs: 1, Cases: cases(10), Render: render, Score: noScore, Store: st,
	})
	if err != nil {
		t.Fatal(err)
	}
	for k, r := range st.results {
		var n int
		fmt.Sscan(k.CaseID, &n)
		cost, saved := 2.0, 0.0
		if n%2 == 1 {
			cost, saved = 0, 2
		}
		if r.FromCache != (n%2 == 1) || r.CostUSD != cost || r.SavedUSD != saved || r.Price() != 2 {
			t.Errorf("case %d: from cache %v, cost %v, saved %v; want cost %v saved %v", n, r.FromCache, r.CostUSD, r.SavedUSD, cost, saved)
		}
	}
	if sum.SpendUSD != 10 || sum.SavedUSD != 10 {
		t.Errorf("spend %v, saved %v; want 10 paid (5 calls × $2) and 10 saved", sum.SpendUSD, sum.SavedUSD)
	}
}
