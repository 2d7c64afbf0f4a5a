package store

import (
	"context"
	"time"
)

// Scoring is one scoring of a run as stored: its number, whether it is
// pending, and the scorers hash it was made with.
type Scoring struct {
	Scoring int `json:"scoring"`
	// Recorded is whether the store has a row for the scoring (every
	// reserved scoring has one; scoring 1, the run's own, normally has
	// none: its status is the run's and its scorers hash the run's).
	Recorded    bool      `json:"recorded"`
	Pending     bool      `json:"pending"`
	ScorersHash string    `json:"scorers_hash,omitempty"`
	Created     time.Time `json:"created,omitzero"`
	// Scores counts the scoring's scores.
	Scores int `json:"scores"`
}

// CacheEntry is one response cache entry as stored.
type CacheEntry struct {
	Key      string
	Target   string
	Response []byte
	Created  time.Time
}

// Dump is what copying one store into another needs beyond Store: the
// enumerations Store has no call for (a run's scorings with their status
// and hash, the cache entries, the twin sets) and the writes that keep
// what the store would otherwise stamp itself (a scoring's number, a cache
// entry's time). Both stores implement it; `assay store copy` uses it.
type Dump interface {
	// Scorings lists a run's scorings in number order: every number with
	// scores or a row (a scoring reserved and not yet scored has no
	// scores). A run with none, or no such run, lists nothing.
	Scorings(ctx context.Context, runID string) ([]Scoring, error)
	// PutScoring records scoring s.Scoring of a run with s's status,
	// scorers hash and creation time, when the run has no row for that
	// number; a row already there is left as it is (CompleteScoring
	// completes one). It reports whether it stored the row. The run must
	// exist.
	PutScoring(ctx context.Context, runID string, s Scoring) (bool, error)
	// CacheEntries streams every response cache entry in key order.
	CacheEntries(ctx context.Context, fn func(CacheEntry) error) error
	// PutCacheEntries stores entries with their own times and targets in
	// one transaction; an entry whose key is stored is left as it is. It
	// returns how many were new.
	PutCacheEntries(ctx context.Context, entries []CacheEntry) (int, error)
	// TwinSets lists the names of the stored twin sets in byte order.
	TwinSets(ctx context.Context) ([]string, error)
}
