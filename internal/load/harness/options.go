// Package harness is the load engine behind `assay load`: it sends a
// target's rendered prompts at a schedule — an open loop of seeded Poisson
// (or evenly spaced) arrivals that never wait for replies, or a closed loop
// at a fixed concurrency — one step after another, measures every request
// (latency, time to first token, inter-token latency, tokens, cost, the
// provider error's kind) and its own health (CPU, and how late it started
// requests), and hands both to a Sink (the store, through the caller). The
// analysis of what it measured is its parent, internal/load, which imports
// no provider so that the report can render it.
//
// It calls providers already built by the caller (without retries or
// cache: a 429 under load is a finding); it renders and stores nothing
// itself and must not import internal/store, internal/cli,
// internal/report, internal/engine or internal/runner.
package harness

import (
	"errors"
	"sync"
	"time"

	"github.com/assay-eval/assay/internal/load"
	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/record"
)

// Options configure a load test.
type Options struct {
	// Mode is load.ModeRate or load.ModeConcurrency; Levels the requests per second
	// or concurrent requests of each step, run in the order given.
	Mode   string
	Levels []float64
	// Duration is each step's measured window; Warmup is run before it at
	// the same level and not measured (nor recorded).
	Duration, Warmup time.Duration
	// Drain is how long requests still in flight at the window's end may
	// take before they are cancelled and recorded as time-outs (default:
	// Duration, at least 5s).
	Drain    time.Duration
	Arrivals string // load.ArrivalsPoisson (default) or load.ArrivalsUniform
	Seed     uint64
	// MaxRequests caps the requests of the whole test (warm-up included),
	// MaxSpend its cost in USD: the test stops before either would be
	// exceeded (0 is no cap).
	MaxRequests int
	MaxSpend    float64
	SLO         load.SLO
	// RunID is written on every record.
	RunID string
	// Cores is the cores the harness may use (default GOMAXPROCS, at most
	// the machine's): a step using 90% of them is flagged saturated.
	Cores int
	// Now is the wall clock for the steps' start times (default time.Now).
	Now func() time.Time
	// Progress, when set, is told of each step as it ends.
	Progress func(record.LoadStep)
}

// Target is one endpoint under test.
type Target struct {
	Name string
	// Provider is built without retries or cache.
	Provider provider.Provider
	// Requests are the rendered prompts, sent in order and cycled (the
	// caller samples them, seeded); CaseIDs name them (same length, or nil).
	Requests []provider.Request
	CaseIDs  []string
	// Price gives a call's cost in USD from its tokens; nil is free.
	Price func(in, out int) float64
}

// Sink receives what a load test measured, one step at a time: the step's
// requests first, then the step. The store, through the caller.
type Sink interface {
	Steps([]record.LoadStep) error
	Requests([]record.LoadRequest) error
}

// Memory is a Sink that keeps what it is handed, in order, for a caller
// that stores nothing (bench/load, tests).
type Memory struct {
	mu    sync.Mutex
	steps []record.LoadStep
	reqs  []record.LoadRequest
}

// Steps keeps the steps handed.
func (m *Memory) Steps(s []record.LoadStep) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.steps = append(m.steps, s...)
	return nil
}

// Requests keeps the requests handed.
func (m *Memory) Requests(r []record.LoadRequest) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reqs = append(m.reqs, r...)
	return nil
}

// Kept is every step and request handed so far.
func (m *Memory) Kept() ([]record.LoadStep, []record.LoadRequest) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.steps, m.reqs
}

// ErrInterrupted is returned by Run when the stop channel closed: what
// was measured until then has been given to the sink.
var ErrInterrupted = errors.New("load test interrupted")
