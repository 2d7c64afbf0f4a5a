package runner

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/record"
)

// Every item sent is worked on once, by at most Workers at a time.
func TestPoolWorksEveryItem(t *testing.T) {
	var inFlight, most, done atomic.Int64
	err := Pool[int]{Workers: 3}.Run(context.Background(), func(send func(int) error) error {
		for i := range 50 {
			if err := send(i); err != nil {
				return err
			}
		}
		return nil
	}, func(int) {
		n := inFlight.Add(1)
		for {
			m := most.Load()
			if n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
		time.Sleep(time.Millisecond)
		inFlight.Add(-1)
		done.Add(1)
	})
	if err != nil || done.Load() != 50 || most.Load() > 3 {
		t.Errorf("err %v, %d worked on, at most %d at once; want nil, 50, ≤ 3", err, done.Load(), most.Load())
	}
}

// send says why it stopped: Stop, Halt or the context; what was queued
// before is still worked on.
func TestPoolSendStops(t *testing.T) {
	for _, c := range []struct {
		name string
		pool func(stop, halt chan struct{}) Pool[int]
		want error
	}{
		{"stop", func(stop, _ chan struct{}) Pool[int] { return Pool[int]{Workers: 1, Stop: stop} }, ErrStopped},
		{"halt", func(_, halt chan struct{}) Pool[int] { return Pool[int]{Workers: 1, Halt: halt} }, ErrHalted},
	} {
		t.Run(c.name, func(t *testing.T) {
			stop, halt := make(chan struct{}), make(chan struct{})
			var worked atomic.Int64
			err := c.pool(stop, halt).Run(context.Background(), func(send func(int) error) error {
				if err := send(1); err != nil {
					return err
				}
				close(stop)
				close(halt)
				return send(2)
			}, func(int) { worked.Add(1) })
			if !errors.Is(err, c.want) || worked.Load() != 1 {
				t.Errorf("err %v, %d worked on; want %v, 1", err, worked.Load(), c.want)
			}
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := Pool[int]{}.Run(ctx, func(send func(int) error) error { return send(1) }, func(int) { t.Error("worked on after cancel") })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// The writer commits in batches of Batch, tells Committed in order, and
// keeps going after a failed commit, returning the first error.
func TestWriterBatchesAndReportsFirstError(t *testing.T) {
	var mu sync.Mutex
	var sizes []int
	calls := 0
	var failed error
	w := StartWriter(WriterOptions{
		Every: time.Hour,
		Batch: 4,
		Commit: func(_ context.Context, rs []record.Result, ss []record.Score) error {
			mu.Lock()
			defer mu.Unlock()
			calls++
			if calls == 2 {
				return errors.New("disk full")
			}
			return nil
		},
		Committed: func(rs []record.Result, _ []record.Score) { sizes = append(sizes, len(rs)) },
		Failed:    func(err error) { failed = err },
	})
	for i := range 10 {
		w.Add([]record.Result{{CaseID: string(rune('a' + i))}}, nil)
	}
	err := w.Close()
	if err == nil || failed == nil || err.Error() != "committing results: disk full" {
		t.Errorf("Close: %v, Failed told %v; want committing results: disk full", err, failed)
	}
	if calls != 3 || len(sizes) != 2 || sizes[0] != 4 || sizes[1] != 2 {
		t.Errorf("%d commits, committed sizes %v; want 3 commits, [4 2] stored", calls, sizes)
	}

	// Scores alone batch by scores.
	var n []int
	w = StartWriter(WriterOptions{Every: time.Hour, Batch: 3, Commit: func(_ context.Context, rs []record.Result, ss []record.Score) error {
		n = append(n, len(ss))
		return nil
	}})
	for range 7 {
		w.Add(nil, []record.Score{{}})
	}
	if err := w.Close(); err != nil || len(n) != 3 || n[0] != 3 || n[2] != 1 {
		t.Errorf("score batches %v, %v; want [3 3 1]", n, err)
	}
}
