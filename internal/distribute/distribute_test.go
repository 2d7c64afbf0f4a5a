package distribute

import (
	"context"
	"encoding/json"
	"reflect"
	"regexp"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/spec"
	"github.com/assay-eval/assay/internal/store/pgtest"
	"github.com/assay-eval/assay/internal/store/postgres"
)

// River's rule for a queue name (client.go's nameRegex, v0.51.2).
var riverQueueName = regexp.MustCompile(`^(?:[a-z0-9])+(?:[_|\-]?[a-z0-9]+)*$`)

func TestQueueOf(t *testing.T) {
	names := []string{"oa", "OA", "gpt-4o mini", "gpt_4o_mini", "модель", "", "a/b", "a b", "x" + string(make([]byte, 80))}
	seen := map[string]string{}
	for _, n := range names {
		q := QueueOf(n)
		if !riverQueueName.MatchString(q) || len(q) > 64 {
			t.Errorf("QueueOf(%q) = %q: not a River queue name", n, q)
		}
		if other, dup := seen[q]; dup {
			t.Errorf("targets %q and %q share queue %q", other, n, q)
		}
		seen[q] = n
		if QueueOf(n) != q {
			t.Errorf("QueueOf(%q) is not stable", n)
		}
	}
}

// A job's cases reach the worker as the dataset gave them: numbers as
// written, nested values, weights, text PostgreSQL's jsonb would refuse.
func TestCasesRoundTrip(t *testing.T) {
	cases := []*dataset.Case{
		{ID: "c1", Line: 3, Vars: map[string]any{"n": json.Number("1e2"), "x": json.Number("0.10"), "s": "nul \x00 and ü",
			"list": []any{json.Number("1"), map[string]any{"k": true}}}, Expected: json.Number("100"), Tags: map[string]string{"t": "v"}},
		{ID: "c2", Line: 4, Vars: map[string]any{"q": "?"}, Weight: 2.5, HasWeight: true},
	}
	b, err := json.Marshal(cases)
	if err != nil {
		t.Fatal(err)
	}
	// Through the job's JSON, as River stores and reads it.
	args, err := json.Marshal(UnitsArgs{Run: "r", Target: "t", Cases: b})
	if err != nil {
		t.Fatal(err)
	}
	var back UnitsArgs
	if err := json.Unmarshal(args, &back); err != nil {
		t.Fatal(err)
	}
	got, err := back.decodeCases()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, cases) {
		t.Errorf("cases changed on the way:\n got %#v\nwant %#v", got, cases)
	}
}

// limiterRun opens a store with its queue tables and a run to limit.
func limiterRun(t *testing.T) (*postgres.DB, string) {
	t.Helper()
	ctx := context.Background()
	db, err := postgres.Open(ctx, pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := Setup(ctx, db.Pool()); err != nil {
		t.Fatal(err)
	}
	run := &record.Run{ID: record.NewRunID(time.Now()), Spec: "s", Targets: []string{"t"}, Cases: 1, Epochs: 1,
		Status: record.StatusRunning, Started: time.Now().UTC()}
	if err := db.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	return db, run.ID
}

// Three processes' limiters (three holders) on one target with rpm 1200:
// the calls they let through are spaced 50 ms apart between them all.
func TestSharedRPMSpacing(t *testing.T) {
	db, runID := limiterRun(t)
	target := &spec.Target{Name: "t", Limits: spec.Limits{RPM: 1200}}
	const per, calls = 10, 3
	var mu sync.Mutex
	var at []time.Time
	var wg sync.WaitGroup
	for i := range calls {
		ls := NewLimiters(db.Pool(), "holder-"+string(rune('a'+i)))
		defer ls.Close()
		l := ls.For(runID)(target)
		for range per {
			wg.Add(1)
			go func() {
				defer wg.Done()
				release, err := l.Acquire(context.Background(), 0)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				at = append(at, time.Now())
				mu.Unlock()
				release(0)
			}()
		}
	}
	wg.Wait()
	sort.Slice(at, func(i, j int) bool { return at[i].Before(at[j]) })
	// n calls spaced 50 ms apart span at least (n-1) × 50 ms; a window of
	// 10 consecutive calls never fits in less than 9 × 50 ms (less a
	// margin for timers on a loaded machine).
	for i := 9; i < len(at); i++ {
		if d := at[i].Sub(at[i-9]); d < 9*50*time.Millisecond-100*time.Millisecond {
			t.Errorf("calls %d..%d went through in %s: faster than rpm 1200", i-9, i, d)
		}
	}
}

// Slots hold a target's concurrency across holders: never more calls
// at once than limits.concurrency.
func TestSharedConcurrency(t *testing.T) {
	db, runID := limiterRun(t)
	target := &spec.Target{Name: "t", Limits: spec.Limits{Concurrency: 2}}
	var inFlight, most atomic.Int32
	var wg sync.WaitGroup
	for i := range 3 {
		ls := NewLimiters(db.Pool(), "holder-"+string(rune('a'+i)))
		defer ls.Close()
		l := ls.For(runID)(target)
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				release, err := l.Acquire(context.Background(), 0)
				if err != nil {
					t.Error(err)
					return
				}
				n := inFlight.Add(1)
				for {
					m := most.Load()
					if n <= m || most.CompareAndSwap(m, n) {
						break
					}
				}
				time.Sleep(20 * time.Millisecond)
				inFlight.Add(-1)
				release(0)
			}()
		}
	}
	wg.Wait()
	if m := most.Load(); m != 2 {
		t.Errorf("at most %d calls in flight at once; want 2 (the limit, reached)", m)
	}
}

// TPM across holders: a second's worth of tokens goes at once, the rest
// as the bucket refills, and usage above the estimate delays later calls.
func TestSharedTPM(t *testing.T) {
	db, runID := limiterRun(t)
	target := &spec.Target{Name: "t", Limits: spec.Limits{TPM: 6000}} // 100 tokens a second
	a := NewLimiters(db.Pool(), "holder-a")
	defer a.Close()
	b := NewLimiters(db.Pool(), "holder-b")
	defer b.Close()
	la, lb := a.For(runID)(target), b.For(runID)(target)
	if !la.Estimates() {
		t.Fatal("a TPM limit does not ask for estimates")
	}
	start := time.Now()
	take := func(l interface {
		Acquire(context.Context, int) (func(int), error)
	}, tokens, used int) time.Duration {
		release, err := l.Acquire(context.Background(), tokens)
		if err != nil {
			t.Fatal(err)
		}
		release(used)
		return time.Since(start)
	}
	if d := take(la, 100, 100); d > 150*time.Millisecond {
		t.Errorf("the first second's 100 tokens waited %s", d)
	}
	// 50 more from the other holder: half a second of refill.
	if d := take(lb, 50, 150); d < 450*time.Millisecond {
		t.Errorf("50 tokens past the burst went after %s; want ≥ 0.5 s", d)
	}
	// That call used 100 more than it asked: charged, so 10 more tokens
	// wait for a further 1.1 s.
	if d := take(la, 10, 0); d < 1550*time.Millisecond {
		t.Errorf("after 100 tokens of extra usage, 10 more went at %s; want ≥ 1.6 s", d)
	}
}
