package runner

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/assay-eval/assay/internal/record"
)

// Writer is the one batched writer: a single goroutine commits what Add
// hands it, in batches of Batch results (of Batch scores when it writes
// scores alone) or once Every has passed, whichever comes first, so a
// finished result is durable a fraction of a second after it completes.
// A run's results, the pairwise judges' and a rescore's scores all go
// through it. Add is safe from many goroutines.
type Writer struct {
	o    WriterOptions
	in   chan entry
	done chan error
}

// WriterOptions configure a Writer. Commit is required.
type WriterOptions struct {
	// Commit stores one batch: results with their scores, or scores alone.
	// It is called from the writer's goroutine only, with a context of its
	// own (a cancelled run still keeps what finished).
	Commit func(ctx context.Context, results []record.Result, scores []record.Score) error
	// Every and Batch bound how long an entry waits (defaults 100ms, 256).
	Every time.Duration
	Batch int
	// Committed is told every batch once it is stored (from the writer's
	// goroutine, in commit order); may be nil.
	Committed func(results []record.Result, scores []record.Score)
	// Failed is told the first commit error (a run stops on it: calls whose
	// results cannot be kept must not be paid for); may be nil. Later
	// batches are still tried.
	Failed func(error)
}

type entry struct {
	res    []record.Result
	scores []record.Score
}

// StartWriter starts the writer's goroutine; Close stops it.
func StartWriter(o WriterOptions) *Writer {
	if o.Every <= 0 {
		o.Every = 100 * time.Millisecond
	}
	if o.Batch <= 0 {
		o.Batch = 256
	}
	w := &Writer{o: o, in: make(chan entry, 4*o.Batch), done: make(chan error, 1)}
	go func() { w.done <- w.loop() }()
	return w
}

// Add queues results and their scores (or scores alone) for the next
// commit. It must not be called after Close.
func (w *Writer) Add(results []record.Result, scores []record.Score) {
	if len(results) == 0 && len(scores) == 0 {
		return
	}
	w.in <- entry{res: results, scores: scores}
}

// Close commits what is queued and returns the first commit error.
func (w *Writer) Close() error {
	close(w.in)
	return <-w.done
}

func (w *Writer) loop() error {
	var results []record.Result
	var scores []record.Score
	var firstErr error
	tick := time.NewTicker(w.o.Every)
	defer tick.Stop()
	flush := func() {
		if len(results) == 0 && len(scores) == 0 {
			return
		}
		wctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := w.o.Commit(wctx, results, scores)
		cancel()
		if err != nil {
			what := "results"
			if len(results) == 0 {
				what = "scores"
			}
			slog.Error("committing "+what, "err", err, "n", max(len(results), len(scores)))
			if firstErr == nil {
				firstErr = fmt.Errorf("committing %s: %w", what, err)
				if w.o.Failed != nil {
					w.o.Failed(firstErr)
				}
			}
		} else if w.o.Committed != nil {
			w.o.Committed(results, scores)
		}
		results = results[:0]
		scores = scores[:0]
	}
	full := func() bool {
		if len(results) > 0 {
			return len(results) >= w.o.Batch
		}
		return len(scores) >= w.o.Batch
	}
	for {
		select {
		case e, ok := <-w.in:
			if !ok {
				flush()
				return firstErr
			}
			results = append(results, e.res...)
			scores = append(scores, e.scores...)
			if full() {
				flush()
			}
		case <-tick.C:
			flush()
		}
	}
}
