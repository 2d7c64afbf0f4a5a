package record

import (
	"context"
	"errors"
)

// ErrNotFound is returned when a run (or "latest"), or one result, does not
// exist. store.ErrNotFound is this same value.
var ErrNotFound = errors.New("not found")

// Reader is what a consumer of stored records reads: runs, their cases,
// results, scorings and twins. store.Store includes it, so a consumer that
// only reads (analysis, gate, export, probe) takes a Reader and depends on
// the records, not on storage (leases, the response cache, how a store is
// opened). Implementations are safe for concurrent use.
type Reader interface {
	// GetRun returns the run with this ID; "latest" names the newest. A unique
	// ID prefix is accepted. ErrNotFound when none.
	GetRun(ctx context.Context, id string) (*Run, error)
	ListRuns(ctx context.Context, limit int) ([]Run, error)
	// ExperimentRuns returns the runs of an experiment, oldest first.
	ExperimentRuns(ctx context.Context, experiment string) ([]Run, error)

	Cases(ctx context.Context, runID string, fn func(Case) error) error
	// Results streams a run's results ordered by case, target, epoch.
	Results(ctx context.Context, runID string, fn func(Result) error) error
	// Result returns one stored result (ErrNotFound when there is none).
	Result(ctx context.Context, runID string, key Key) (*Result, error)
	// DoneKeys returns the keys of every stored result of a run.
	DoneKeys(ctx context.Context, runID string) (map[Key]struct{}, error)
	// ResultsWithoutCase counts a run's results whose case is not recorded
	// (PutCases), the sign of a run killed before its cases were stored.
	ResultsWithoutCase(ctx context.Context, runID string) (int, error)

	// ScorerNames returns the names of the scorers with scores in one
	// scoring of a run, sorted (nil when the scoring has none).
	ScorerNames(ctx context.Context, runID string, scoring int) ([]string, error)
	// LatestScoring is the highest complete scoring number of a run with
	// scores (0 when none). A pending scoring (reserved, not completed: a
	// rescore still writing or killed halfway) is never returned; a scoring
	// that was never reserved (scoring 1, made during the run, and scorings
	// of older stores) counts as complete.
	LatestScoring(ctx context.Context, runID string) (int, error)
	// ScoringPending reports whether a scoring of a run is reserved and not
	// completed.
	ScoringPending(ctx context.Context, runID string, scoring int) (bool, error)
	// ScoringScorersHash returns the scorers hash a scoring was made with:
	// the run's own (Run.ScorersHash) for scoring 1, the recorded one for a
	// rescore, "" when none was recorded.
	ScoringScorersHash(ctx context.Context, runID string, scoring int) (string, error)
	// Scores streams the scores of one scoring of a run.
	Scores(ctx context.Context, runID string, scoring int, fn func(Score) error) error

	// Twins streams a twin set in case-ID order; a set with no twins
	// streams nothing.
	Twins(ctx context.Context, set string, fn func(Twin) error) error
}

// Writer is what a producer of records writes: cases, results with their
// scores, later scorings' scores and twins. store.Store includes it; the
// runner's single writer takes a Writer. The contracts (idempotence,
// replacement, one transaction per call) are store.Store's.
type Writer interface {
	// PutCases records the cases of a run (idempotent on run+case ID).
	PutCases(ctx context.Context, cases []Case) error
	// PutResults commits results and their scores in one transaction.
	// Putting a result whose key already exists in the run is a no-op for
	// that result (and its scores): results are never duplicated.
	PutResults(ctx context.Context, results []Result, scores []Score) error
	// ReplaceResults stores results and their scores in one transaction
	// (all or none), replacing a stored result with the same key: `run
	// --retry-errors` re-calls a result that failed and keeps the new call.
	// The replaced result's scores in every scoring are deleted (they
	// judged an output that is gone) and the given scores stored; a result
	// not stored yet is inserted. Until the transaction commits, readers
	// see the old result. Every score must belong to a result of the call.
	ReplaceResults(ctx context.Context, results []Result, scores []Score) error
	// PutScores stores scores of a later scoring (rescore).
	PutScores(ctx context.Context, scores []Score) error
	// ReplaceScores stores scores like PutScores but overwrites a stored
	// verdict with the same run, scoring, result and scorer: a pairwise
	// judge's verdicts on a case whose baseline result --retry-errors
	// replaced compared with the old output.
	ReplaceScores(ctx context.Context, scores []Score) error
	// PutTwins stores twins (idempotent on set + case ID: a stored twin is
	// kept, never overwritten).
	PutTwins(ctx context.Context, twins []Twin) error
}
