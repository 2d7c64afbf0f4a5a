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

// ErrNotFound is returned when a run (or "latest") does not exist.
var ErrNotFound = errors.New("not found")

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

// Store persists runs and results. Implementations are safe for concurrent use.
type Store interface {
	CreateRun(ctx context.Context, r *record.Run) error
	// UpdateRun sets status, ended, cases, targets and epochs.
	UpdateRun(ctx context.Context, r *record.Run) error
	// GetRun returns the run with this ID; "latest" names the newest. A unique
	// ID prefix is accepted. ErrNotFound when none.
	GetRun(ctx context.Context, id string) (*record.Run, error)
	ListRuns(ctx context.Context, limit int) ([]record.Run, error)
	// ExperimentRuns returns the runs of an experiment, oldest first.
	ExperimentRuns(ctx context.Context, experiment string) ([]record.Run, error)

	// PutCases records the cases of a run (idempotent on run+case ID).
	PutCases(ctx context.Context, cases []record.Case) error
	Cases(ctx context.Context, runID string, fn func(record.Case) error) error

	// PutResults commits results and their scores in one transaction.
	// Putting a result whose key already exists in the run is a no-op for
	// that result (and its scores): results are never duplicated.
	PutResults(ctx context.Context, results []record.Result, scores []record.Score) error
	// Results streams a run's results ordered by case, target, epoch.
	Results(ctx context.Context, runID string, fn func(record.Result) error) error
	// Result returns one stored result (ErrNotFound when there is none).
	Result(ctx context.Context, runID string, key record.Key) (*record.Result, error)
	// DoneKeys returns the keys of every stored result of a run.
	DoneKeys(ctx context.Context, runID string) (map[record.Key]struct{}, error)

	// ReplaceResults stores results and their scores in one transaction
	// (all or none), replacing a stored result with the same key: `run
	// --retry-errors` re-calls a result that failed and keeps the new call.
	// The replaced result's scores in every scoring are deleted (they
	// judged an output that is gone) and the given scores stored; a result
	// not stored yet is inserted. Until the transaction commits, readers
	// see the old result. Every score must belong to a result of the call.
	ReplaceResults(ctx context.Context, results []record.Result, scores []record.Score) error
	// DeleteRun deletes the run with this exact ID and everything stored
	// under it: cases, results, scores, scorings and its lease. The
	// response cache, shared by every run, is left as it is. It returns
	// what it deleted, or an error wrapping ErrNotFound (nothing deleted)
	// when there is no such run.
	DeleteRun(ctx context.Context, runID string) (Deleted, error)
	// ScorerNames returns the names of the scorers with scores in one
	// scoring of a run, sorted (nil when the scoring has none).
	ScorerNames(ctx context.Context, runID string, scoring int) ([]string, error)

	// PutScores stores scores of a later scoring (rescore).
	PutScores(ctx context.Context, scores []record.Score) error
	// ReplaceScores stores scores like PutScores but overwrites a stored
	// verdict with the same run, scoring, result and scorer: a pairwise
	// judge's verdicts on a case whose baseline result --retry-errors
	// replaced compared with the old output.
	ReplaceScores(ctx context.Context, scores []record.Score) error
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
	// LatestScoring is the highest complete scoring number of a run with
	// scores (0 when none). A pending scoring (reserved, not completed: a
	// rescore still writing or killed halfway) is never returned; a scoring
	// that was never reserved (scoring 1, made during the run, and scorings
	// of older stores) counts as complete.
	LatestScoring(ctx context.Context, runID string) (int, error)
	// ScoringPending reports whether a scoring of a run is reserved and not
	// completed.
	ScoringPending(ctx context.Context, runID string, scoring int) (bool, error)
	// SetScoringScorersHash records the scorers hash (Spec.ScorersHash) a
	// reserved scoring is made with; it is an error for a scoring that was
	// never reserved.
	SetScoringScorersHash(ctx context.Context, runID string, scoring int, hash string) error
	// ScoringScorersHash returns the scorers hash a scoring was made with:
	// the run's own (record.Run.ScorersHash) for scoring 1, the recorded one for a
	// rescore, "" when none was recorded.
	ScoringScorersHash(ctx context.Context, runID string, scoring int) (string, error)
	// ResultsWithoutCase counts a run's results whose case is not recorded
	// (PutCases), the sign of a run killed before its cases were stored.
	ResultsWithoutCase(ctx context.Context, runID string) (int, error)
	// Scores streams the scores of one scoring of a run.
	Scores(ctx context.Context, runID string, scoring int, fn func(record.Score) error) error

	// PutTwins stores twins (idempotent on set + case ID: a stored twin is
	// kept, never overwritten).
	PutTwins(ctx context.Context, twins []record.Twin) error
	// Twins streams a twin set in case-ID order; a set with no twins
	// streams nothing.
	Twins(ctx context.Context, set string, fn func(record.Twin) error) error

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
