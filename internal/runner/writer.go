package runner

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/assay-eval/assay/internal/record"
)

// Writer is the one batched writer: a single goroutine commits what Add
// hands it, in batches of Batch items or once Every has passed, whichever
// comes first, so a finished result is durable a fraction of a second
// after it completes. A run's results (Scored), the pairwise judges' and a
// rescore's scores, and a probe's twins all go through it. Add is safe
// from many goroutines.
type Writer[T any] struct {
	o    WriterOptions[T]
	in   chan T
	done chan error
}

// WriterOptions configure a Writer. Commit is required.
type WriterOptions[T any] struct {
	// Commit stores one batch. It is called from the writer's goroutine
	// only, with a context of its own (a cancelled run still keeps what
	// finished).
	Commit func(ctx context.Context, batch []T) error
	// What names the items in messages ("results", "scores", "twins").
	What string
	// Every and Batch bound how long an item waits (defaults 100ms, 256).
	Every time.Duration
	Batch int
	// Committed is told every batch once it is stored (from the writer's
	// goroutine, in commit order); may be nil.
	Committed func(batch []T)
	// Failed is told the first commit error (a run stops on it: calls whose
	// results cannot be kept must not be paid for); may be nil. Later
	// batches are still tried.
	Failed func(error)
}

// Scored is a result with its scores: the unit a run commits.
type Scored struct {
	Result record.Result
	Scores []record.Score
}

// StartWriter starts the writer's goroutine; Close stops it.
func StartWriter[T any](o WriterOptions[T]) *Writer[T] {
	if o.Every <= 0 {
		o.Every = 100 * time.Millisecond
	}
	if o.Batch <= 0 {
		o.Batch = 256
	}
	if o.What == "" {
		o.What = "records"
	}
	w := &Writer[T]{o: o, in: make(chan T, 4*o.Batch), done: make(chan error, 1)}
	go func() { w.done <- w.loop() }()
	return w
}

// Add queues items for the next commit. It must not be called after Close.
func (w *Writer[T]) Add(items ...T) {
	for _, it := range items {
		w.in <- it
	}
}

// Close commits what is queued and returns the first commit error.
func (w *Writer[T]) Close() error {
	close(w.in)
	return <-w.done
}

func (w *Writer[T]) loop() error {
	var batch []T
	var firstErr error
	tick := time.NewTicker(w.o.Every)
	defer tick.Stop()
	flush := func() {
		if len(batch) == 0 {
			return
		}
		wctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := w.o.Commit(wctx, batch)
		cancel()
		if err != nil {
			slog.Error("committing "+w.o.What, "err", err, "n", len(batch))
			if firstErr == nil {
				firstErr = fmt.Errorf("committing %s: %w", w.o.What, err)
				if w.o.Failed != nil {
					w.o.Failed(firstErr)
				}
			}
		} else if w.o.Committed != nil {
			w.o.Committed(batch)
		}
		batch = batch[:0]
	}
	for {
		select {
		case it, ok := <-w.in:
			if !ok {
				flush()
				return firstErr
			}
			batch = append(batch, it)
			if len(batch) >= w.o.Batch {
				flush()
			}
		case <-tick.C:
			flush()
		}
	}
}

// ResultCommit adapts a store's PutResults or ReplaceResults to a
// Writer[Scored]'s Commit.
func ResultCommit(put func(ctx context.Context, results []record.Result, scores []record.Score) error) func(context.Context, []Scored) error {
	var results []record.Result
	var scores []record.Score
	return func(ctx context.Context, batch []Scored) error {
		results, scores = results[:0], scores[:0]
		for i := range batch {
			results = append(results, batch[i].Result)
			scores = append(scores, batch[i].Scores...)
		}
		return put(ctx, results, scores)
	}
}
