package mock

import (
	"container/list"
	"context"
	"net/http"
	"sync"
	"time"
)

// slots model a server's capacity: at most capacity requests are served
// at once; the others wait their turn in arrival order (FIFO), up to limit
// waiting (limit < 0: no limit), beyond which they are refused.
type slots struct {
	capacity int
	limit    int

	mu      sync.Mutex
	busy    int
	waiting list.List // of *waiter, the first to arrive at the front

	maxWaiting int
	queued     int64         // requests that waited for a slot
	full       int64         // requests refused: every slot busy and the queue full
	waited     time.Duration // the time they waited, in total
}

// waiter is a request waiting for a slot. release hands the slot over by
// setting granted (under slots.mu) and closing ready, so the slot is never
// free between two requests while others wait.
type waiter struct {
	ready   chan struct{}
	granted bool
	busy    int // busy slots when it got its own
}

// admission is what take decided.
type admission int

const (
	admitted admission = iota
	refused            // the queue is full: answer 503
	gone               // the client went away while waiting
)

func newSlots(capacity, queueLimit int) *slots {
	limit := queueLimit // > 0: that many
	switch {
	case queueLimit == 0:
		limit = -1 // unlimited
	case queueLimit < 0:
		limit = 0 // no queue
	}
	return &slots{capacity: capacity, limit: limit}
}

// take waits for a slot, in arrival order. It returns the number of busy
// slots once the request holds its own (itself included), which the
// slowdown reads. A request whose client goes away while it waits leaves
// the queue; when the server closes meanwhile, the connection is dropped.
func (q *slots) take(ctx context.Context, closed <-chan struct{}) (int, admission) {
	q.mu.Lock()
	if q.busy < q.capacity && q.waiting.Len() == 0 {
		q.busy++
		b := q.busy
		q.mu.Unlock()
		return b, admitted
	}
	if q.limit >= 0 && q.waiting.Len() >= q.limit {
		q.full++
		q.mu.Unlock()
		return 0, refused
	}
	w := &waiter{ready: make(chan struct{})}
	e := q.waiting.PushBack(w)
	q.queued++
	q.maxWaiting = max(q.maxWaiting, q.waiting.Len())
	q.mu.Unlock()

	began := time.Now()
	var stop bool // the server closed
	select {
	case <-w.ready:
	case <-ctx.Done():
	case <-closed:
		stop = true
	}
	q.mu.Lock()
	q.waited += time.Since(began)
	if w.granted {
		b := w.busy
		q.mu.Unlock()
		if !stop && ctx.Err() == nil {
			return b, admitted
		}
		q.release() // handed a slot just as it gave up: pass it on
	} else {
		q.waiting.Remove(e)
		q.mu.Unlock()
	}
	if stop {
		panic(http.ErrAbortHandler) // drop the connection without an answer
	}
	return 0, gone
}

// release frees a slot, or hands it to the first request waiting.
func (q *slots) release() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if e := q.waiting.Front(); e != nil {
		w := q.waiting.Remove(e).(*waiter)
		w.granted = true
		w.busy = q.busy
		close(w.ready)
		return
	}
	q.busy--
}

// stats fills the capacity fields of st.
func (q *slots) stats(st *Stats) {
	q.mu.Lock()
	defer q.mu.Unlock()
	st.Busy = int64(q.busy)
	st.Waiting = int64(q.waiting.Len())
	st.MaxWaiting = int64(q.maxWaiting)
	st.Queued = q.queued
	st.QueueFull = q.full
	st.QueueWait = q.waited
}

// slowdown is the factor a request's service time is multiplied by when
// busy of the capacity slots are taken: 1 + Slowdown × busy/Capacity.
func (s *Server) slowdown(busy int) float64 {
	if s.opts.Slowdown <= 0 || s.opts.Capacity <= 0 {
		return 1
	}
	return 1 + s.opts.Slowdown*float64(busy)/float64(s.opts.Capacity)
}

func scale(d time.Duration, f float64) time.Duration {
	if f == 1 {
		return d
	}
	return time.Duration(float64(d) * f)
}
