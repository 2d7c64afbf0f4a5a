package runner

import (
	"context"
	"errors"
	"fmt"
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
	var sizes []int
	calls := 0
	var failed error
	w := StartWriter(WriterOptions[Scored]{
		What:  "results",
		Every: time.Hour,
		Batch: 4,
		Commit: ResultCommit(func(_ context.Context, rs []record.Result, ss []record.Score) error {
			calls++
			if len(ss) != 2*len(rs) {
				t.Errorf("%d scores for %d results", len(ss), len(rs))
			}
			if calls == 2 {
				return errors.New("disk full")
			}
			return nil
		}),
		Committed: func(batch []Scored) { sizes = append(sizes, len(batch)) },
		Failed:    func(err error) { failed = err },
	})
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.Add(Scored{Result: record.Result{CaseID: fmt.Sprint(i)}, Scores: make([]record.Score, 2)})
		}()
	}
	wg.Wait()
	err := w.Close()
	if err == nil || failed == nil || err.Error() != "committing results: disk full" {
		t.Errorf("Close: %v, Failed told %v; want committing results: disk full", err, failed)
	}
	if calls != 3 || len(sizes) != 2 || sizes[0] != 4 || sizes[1] != 2 {
		t.Errorf("%d commits, committed sizes %v; want 3 commits, [4 2] stored", calls, sizes)
	}

	// Every bounds the wait of a batch that never fills: both scores are
	// committed by the ticker, long before Close (Add hands them over one
	// at a time, so a tick may fall between them: one commit or two).
	got := make(chan int, 2)
	w2 := StartWriter(WriterOptions[record.Score]{Every: 5 * time.Millisecond, Batch: 100, Commit: func(_ context.Context, ss []record.Score) error {
		got <- len(ss)
		return nil
	}})
	w2.Add(record.Score{}, record.Score{})
	for committed := 0; committed < 2; {
		select {
		case n := <-got:
			committed += n
		case <-time.After(5 * time.Second):
			t.Fatalf("%d of 2 scores committed 5 s after Every", committed)
		}
	}
	if err := w2.Close(); err != nil {
		t.Error(err)
	}
}
