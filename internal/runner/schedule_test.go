package runner

import (
	"context"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/record"
)

// epochProvider records the epoch of every request it gets.
type epochProvider struct {
	countingProvider
	mu     sync.Mutex
	epochs map[string][]int // case ID → epochs requested
}

func (p *epochProvider) Complete(ctx context.Context, req *provider.Request) (*provider.Response, error) {
	p.mu.Lock()
	if p.epochs == nil {
		p.epochs = map[string][]int{}
	}
	p.epochs[req.CaseID] = append(p.epochs[req.CaseID], req.Epoch)
	p.mu.Unlock()
	return p.countingProvider.Complete(ctx, req)
}

// The request's epoch is what docs/spec.md and the exec protocol promise a
// program: 1 for the first call of a case, up to run.epochs — never 0.
func TestRequestEpochsCountFromOne(t *testing.T) {
	for _, epochs := range []int{1, 3} {
		p := &epochProvider{}
		_, err := Run(context.Background(), Options{
			RunID: "r", Targets: []Target{target("a", p, 2)}, Epochs: epochs,
			Cases: cases(4), Render: render, Score: noScore, Store: newMemStore(),
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.epochs) != 4 {
			t.Fatalf("%d epochs: calls for %d cases, want 4", epochs, len(p.epochs))
		}
		for id, got := range p.epochs {
			sort.Ints(got)
			if len(got) != epochs {
				t.Fatalf("%d epochs: case %s asked %v", epochs, id, got)
			}
			for i, e := range got {
				if e != i+1 {
					t.Errorf("%d epochs: case %s got epochs %v, want 1..%d", epochs, id, got, epochs)
					break
				}
			}
		}
	}
}

// overlapMeter is shared by several targets' providers: it counts the calls
// in flight per target and notes every moment two targets had calls in
// flight at once.
type overlapMeter struct {
	mu       sync.Mutex
	inflight map[string]int
	peak     map[string]int
	overlaps int
	order    []string // targets in the order of their first call
}

func newOverlapMeter() *overlapMeter {
	return &overlapMeter{inflight: map[string]int{}, peak: map[string]int{}}
}

type meteredProvider struct {
	m     *overlapMeter
	name  string
	delay time.Duration
}

func (p *meteredProvider) Complete(ctx context.Context, req *provider.Request) (*provider.Response, error) {
	m := p.m
	m.mu.Lock()
	if _, seen := m.peak[p.name]; !seen {
		m.order = append(m.order, p.name)
	}
	m.inflight[p.name]++
	m.peak[p.name] = max(m.peak[p.name], m.inflight[p.name])
	for other, n := range m.inflight {
		if other != p.name && n > 0 {
			m.overlaps++
		}
	}
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		m.inflight[p.name]--
		m.mu.Unlock()
	}()
	select {
	case <-time.After(p.delay):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return &provider.Response{Text: "ok", Attempts: 1}, nil
}

func meteredTargets(m *overlapMeter, names ...string) []Target {
	var ts []Target
	for _, n := range names {
		ts = append(ts, target(n, &meteredProvider{m: m, name: n, delay: 2 * time.Millisecond}, 4))
	}
	return ts
}

// run.schedule sequential: no two targets ever have calls in flight at
// once, the targets run in the spec's order, each still uses its own
// concurrency, and every key is stored. Parallel (the default) overlaps
// them, which shows the meter sees an overlap when there is one.
func TestSequentialScheduleNeverOverlapsTargets(t *testing.T) {
	for _, sequential := range []bool{true, false} {
		m := newOverlapMeter()
		st := newMemStore()
		sum, err := Run(context.Background(), Options{
			RunID: "r", Targets: meteredTargets(m, "a", "b", "c"), Epochs: 2,
			Cases: cases(30), Render: render, Score: noScore, Store: st,
			Sequential: sequential,
		})
		if err != nil {
			t.Fatal(err)
		}
		if sum.Stored != 180 || st.len() != 180 {
			t.Fatalf("sequential=%v: stored %d (%d in the store), want 3 targets × 30 cases × 2 epochs = 180", sequential, sum.Stored, st.len())
		}
		if sequential {
			if m.overlaps != 0 {
				t.Errorf("sequential: %d calls started while another target had calls in flight, want 0", m.overlaps)
			}
			if strings.Join(m.order, ",") != "a,b,c" {
				t.Errorf("sequential: targets ran in the order %v, want the spec's a,b,c", m.order)
			}
			for _, n := range []string{"a", "b", "c"} {
				if m.peak[n] < 2 || m.peak[n] > 4 {
					t.Errorf("sequential: target %s peaked at %d calls in flight, want its own concurrency (2–4 of 4)", n, m.peak[n])
				}
			}
		} else if m.overlaps == 0 {
			t.Error("parallel: the targets' calls never overlapped; the meter cannot tell the schedules apart")
		}
	}
}

// An interrupt during the first target of a sequential run keeps what
// finished and never starts the later targets.
func TestSequentialStopSkipsLaterTargets(t *testing.T) {
	m := newOverlapMeter()
	stop := make(chan struct{})
	st := newMemStore()
	var once sync.Once
	sum, err := Run(context.Background(), Options{
		RunID: "r", Targets: meteredTargets(m, "a", "b"), Cases: cases(200),
		Render: render, Score: noScore, Store: st, Stop: stop, Sequential: true,
		Progress: func(*record.Result) { once.Do(func() { close(stop) }) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if !sum.Interrupted {
		t.Error("summary not marked interrupted")
	}
	if _, ran := m.peak["b"]; ran {
		t.Error("target b was called after the interrupt")
	}
	if sum.Stored == 0 || sum.Stored >= 200 {
		t.Errorf("stored %d, want what target a finished before the interrupt", sum.Stored)
	}
}
