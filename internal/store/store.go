// Package store owns durable records: runs, the cases they measured, results
// (one per case × target × epoch), scores (one per result × scorer × scoring)
// and the response cache. Store is the interface; sqlite is the embedded
// default; storetest is the conformance suite every implementation passes.
// The store knows nothing of providers, scorers or statistics.
package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/assay-eval/assay/internal/record"
)

// ErrNotFound is returned when a run (or "latest") does not exist; it is
// record.ErrNotFound, so a consumer holding a record.Reader tests for it
// without importing the store.
var ErrNotFound = record.ErrNotFound

// CachedResponse is a stored provider response, keyed by a hash of everything
// that decides the reply.
type CachedResponse struct {
	Key      string
	Response []byte // JSON of provider.Response
}

// CacheStats describes one target's entries in the response cache.
type CacheStats struct {
	Target  string    `json:"target"` // "" for entries stored before targets were recorded
	Entries int64     `json:"entries"`
	Bytes   int64     `json:"bytes"` // of the stored replies
	Oldest  time.Time `json:"oldest"`
	Newest  time.Time `json:"newest"`
}

// Store persists runs and results. It is record.Reader and record.Writer
// (what consumers of records read and write; their contracts are written
// there) plus what only the code that owns a run's lifecycle needs: runs
// created and updated, scorings reserved, the one lease per run, the
// response cache, deletion. Implementations are safe for concurrent use.
type Store interface {
	record.Reader
	record.Writer
	Labels
	Traces
	Loads
	Browse
	Keys

	CreateRun(ctx context.Context, r *record.Run) error
	// UpdateRun sets status, ended, cases, targets and epochs.
	UpdateRun(ctx context.Context, r *record.Run) error

	// DeleteRun deletes the run with this exact ID and everything stored
	// under it: cases, results, scores, scorings, its lease and its
	// labeling queues and labels. The
	// response cache, shared by every run, is left as it is. It returns
	// what it deleted, or an error wrapping ErrNotFound (nothing deleted)
	// when there is no such run.
	DeleteRun(ctx context.Context, runID string) (Deleted, error)

	// ReserveScoring reserves the next scoring number of a run (above every
	// stored or reserved one, and at least 2: scoring 1 is the run's own,
	// written as results are stored) inside a write transaction, so concurrent
	// callers get distinct numbers, and records it as pending: a pending
	// scoring is invisible to LatestScoring until CompleteScoring. A rescore
	// reserves, writes its scores with PutScores, then completes.
	ReserveScoring(ctx context.Context, runID string) (int, error)
	// CompleteScoring marks a reserved scoring complete. It is an error for a
	// scoring that was never reserved.
	CompleteScoring(ctx context.Context, runID string, scoring int) error
	// SetScoringScorersHash records the scorers hash (Spec.ScorersHash) a
	// reserved scoring is made with; it is an error for a scoring that was
	// never reserved.
	SetScoringScorersHash(ctx context.Context, runID string, scoring int, hash string) error

	// AcquireLease takes the lease on l.RunID for l.Holder: when nobody
	// holds it, when l.Holder already does (the heartbeat is renewed), when
	// the holder's heartbeat is older than staleBefore, or when force is
	// set. Otherwise it returns a *LeaseHeldError naming the holder. The
	// check and the take are one write transaction.
	AcquireLease(ctx context.Context, l Lease, staleBefore time.Time, force bool) error
	// RenewLease sets the heartbeat of holder's lease on a run to now; it
	// returns ErrLeaseLost when holder no longer holds it (it was broken).
	RenewLease(ctx context.Context, runID, holder string, now time.Time) error
	// ReleaseLease gives up holder's lease on a run (a no-op when holder
	// does not hold it).
	ReleaseLease(ctx context.Context, runID, holder string) error
	// GetLease returns the lease on a run, nil when none is held.
	GetLease(ctx context.Context, runID string) (*Lease, error)

	CacheGet(ctx context.Context, key string) ([]byte, bool, error)
	// CachePut stores response under key (replacing what was there) with
	// the name of the target whose reply it is.
	CachePut(ctx context.Context, key, target string, response []byte) error
	// CacheStats counts the cache's entries per target, sorted by target
	// (entries stored before targets were recorded have target ""). With
	// only set, it counts the entries of target alone.
	CacheStats(ctx context.Context, target string, only bool) ([]CacheStats, error)
	// CacheClear deletes every cache entry (with only set, the entries of
	// target alone) and returns how many it deleted.
	CacheClear(ctx context.Context, target string, only bool) (int64, error)

	Close() error
}

// Deleted counts what DeleteRun removed.
type Deleted struct {
	Cases    int  `json:"cases"`
	Results  int  `json:"results"`
	Scores   int  `json:"scores"`
	Scorings int  `json:"scorings"` // distinct scoring numbers with scores
	Lease    bool `json:"lease"`    // a lease was held on the run
	Queues   int  `json:"queues"`   // labeling queues
	Labels   int  `json:"labels"`
}

// Lease says which process may write a run's results: one writer per run,
// so two resumes of one run never both pay for every call.
type Lease struct {
	RunID string `json:"run_id"`
	// Holder identifies the process (unique per process and acquisition).
	Holder    string    `json:"holder"`
	PID       int       `json:"pid"`
	Host      string    `json:"host"`
	Acquired  time.Time `json:"acquired"`
	Heartbeat time.Time `json:"heartbeat"`
}

// LeaseHeldError is AcquireLease's answer when another process holds the
// lease.
type LeaseHeldError struct{ Lease Lease }

func (e *LeaseHeldError) Error() string {
	return fmt.Sprintf("run %s is being written by another process (pid %d on %s, since %s, last heartbeat %s)",
		e.Lease.RunID, e.Lease.PID, e.Lease.Host, e.Lease.Acquired.UTC().Format(time.RFC3339), e.Lease.Heartbeat.UTC().Format(time.RFC3339))
}

// ErrLeaseLost is RenewLease's answer when the lease was broken by another
// process (--force): the caller must stop writing.
var ErrLeaseLost = errors.New("the lease on the run was taken by another process")
