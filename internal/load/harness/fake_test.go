package harness

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/load"
	"github.com/assay-eval/assay/internal/provider"
)

// fakeServer is an in-process endpoint with a server-side model of
// capacity: Slots requests are served at once, each for Service, the rest
// wait in line (FIFO: a channel's senders queue in order); above Rate
// requests per second (when set) it answers 429 at once. It streams: the
// first token comes after a quarter of the service time, Tokens in all.
type fakeServer struct {
	Slots   int
	Service time.Duration
	Rate    float64
	Tokens  int
	// Fail answers every request with a 500.
	Fail bool

	once     sync.Once
	slots    chan struct{}
	mu       sync.Mutex
	window   time.Time
	inWindow int

	calls, cancelled atomic.Int64
	inFlight         atomic.Int64
}

// reset forgets the calls and the rate window of an earlier attempt: an
// attempt started within the window the last one filled would be answered
// 429 for requests well under the rate.
func (f *fakeServer) reset() {
	f.mu.Lock()
	f.window, f.inWindow = time.Time{}, 0
	f.mu.Unlock()
	f.calls.Store(0)
}

func (f *fakeServer) Complete(ctx context.Context, req *provider.Request) (*provider.Response, error) {
	f.once.Do(func() { f.slots = make(chan struct{}, max(1, f.Slots)) })
	f.calls.Add(1)
	f.inFlight.Add(1)
	defer f.inFlight.Add(-1)
	start := time.Now()
	if f.Fail {
		return nil, &provider.Error{Kind: provider.KindServer, Status: 500, Msg: "planted"}
	}
	if f.Rate > 0 {
		f.mu.Lock()
		// A fixed one-second window, as a simple server-side limiter.
		if now := time.Now(); now.Sub(f.window) >= time.Second {
			f.window, f.inWindow = now, 0
		}
		f.inWindow++
		over := float64(f.inWindow) > f.Rate
		f.mu.Unlock()
		if over {
			return nil, &provider.Error{Kind: provider.KindRateLimited, Status: 429, Msg: "slow down"}
		}
	}
	select {
	case f.slots <- struct{}{}:
	case <-ctx.Done():
		f.cancelled.Add(1)
		return nil, ctx.Err()
	}
	defer func() { <-f.slots }()
	waited := time.Since(start)
	t := time.NewTimer(f.Service)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		f.cancelled.Add(1)
		return nil, &provider.Error{Kind: provider.KindNetwork, Msg: "cancelled", Err: ctx.Err()}
	}
	tokens := max(f.Tokens, 1)
	return &provider.Response{
		Text:       "ok",
		Usage:      provider.Usage{Input: 10, Output: tokens},
		Latency:    time.Since(start),
		FirstToken: waited + f.Service/4,
		Attempts:   1,
	}, nil
}

func target(name string, p provider.Provider, price func(in, out int) float64) Target {
	reqs := make([]provider.Request, 5)
	for i := range reqs {
		reqs[i] = provider.Request{Model: "m", CaseID: string(rune('a' + i)), Messages: []provider.Message{{Role: "user", Content: "hello"}}}
	}
	return Target{Name: name, Provider: p, Requests: reqs, Price: price}
}

func run(t *testing.T, targets []Target, o Options) (*Memory, error) {
	t.Helper()
	sink := &Memory{}
	err := Run(context.Background(), targets, o, sink, nil)
	return sink, err
}

func analyse(t *testing.T, sink *Memory, slo load.SLO) *load.Result {
	t.Helper()
	res, err := load.Analyse(sink.steps, sink.reqs, load.AnalyseOptions{SLO: slo, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	return res
}
