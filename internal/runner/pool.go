package runner

import (
	"context"
	"errors"
	"sync"
)

// ErrStopped is what a Pool's send returns once Stop is closed: the feed
// stops issuing and what was handed out finishes.
var ErrStopped = errors.New("stopped")

// ErrHalted is what a Pool's send returns once Halt is closed (a target
// given up): like ErrStopped, but for a reason of the caller's own.
var ErrHalted = errors.New("halted")

// Pool is the one worker pool: a run's per-target calls, the pairwise
// judges, a rescore's scoring and a probe's rewrites all go through it.
// Workers goroutines each call Work on the items the feed sends, in the
// order they arrive; the queue between them holds Workers items.
type Pool[T any] struct {
	// Workers is the number of items worked on at once (default 8).
	Workers int
	// Stop, when closed, makes send return ErrStopped (nil: never).
	Stop <-chan struct{}
	// Halt, when closed, makes send return ErrHalted (nil: never).
	Halt <-chan struct{}
}

// Run starts the workers and calls feed with a send that hands one item to
// them. send blocks until the queue has room; it returns ErrStopped,
// ErrHalted or ctx's error (checked before every item, and while it waits)
// instead of queueing, and feed should then return that error. Run returns
// feed's error once every queued item has been worked on. Work decides for
// itself whether a queued item is still worth doing after a stop.
func (p Pool[T]) Run(ctx context.Context, feed func(send func(T) error) error, work func(T)) error {
	workers := p.Workers
	if workers <= 0 {
		workers = 8
	}
	q := make(chan T, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for it := range q {
				work(it)
			}
		}()
	}
	send := func(it T) error {
		select {
		case <-p.Stop:
			return ErrStopped
		case <-ctx.Done():
			return ctx.Err()
		case <-p.Halt:
			return ErrHalted
		default:
		}
		select {
		case q <- it:
			return nil
		case <-p.Stop:
			return ErrStopped
		case <-ctx.Done():
			return ctx.Err()
		case <-p.Halt:
			return ErrHalted
		}
	}
	err := feed(send)
	close(q)
	wg.Wait()
	return err
}

// Closed reports whether c is closed (false for nil).
func Closed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
