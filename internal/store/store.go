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
)

// ErrNotFound is returned when a run (or "latest") does not exist.
var ErrNotFound = errors.New("not found")

// Run statuses.
const (
	StatusRunning     = "running"
	StatusInterrupted = "interrupted"
	StatusComplete    = "complete"
	StatusFailed      = "failed"
)

// Run is one evaluation run.
type Run struct {
	ID       string `json:"id"`
	Spec     string `json:"spec"` // the spec's name
	SpecPath string `json:"spec_path"`
	SpecHash string `json:"spec_hash"`
	// DatasetHash is the dataset's version: the hash of its cases as
	// parsed (dataset.Info.Hash). FileHash is the hash of the file's bytes
	// (dataset.Info.FileHash); "" for runs recorded before content hashes,
	// whose DatasetHash is the byte hash (dataset.Version reads both).
	DatasetHash string `json:"dataset_hash"`
	FileHash    string `json:"file_hash,omitempty"`
	PromptHash  string `json:"prompt_hash"`
	GitCommit   string `json:"git_commit,omitempty"`
	// ScorersHash is "sha256:<hex>" over the output parser and the scorer
	// configuration: two runs with the same hash used the same definition
	// of correct.
	ScorersHash string `json:"scorers_hash,omitempty"`
	// AssayVersion is the version of assay that made the run.
	AssayVersion string `json:"assay_version,omitempty"`
	// Experiment names the experiment the run belongs to ("" when none):
	// the runs of one experiment are the variants tried before choosing.
	Experiment string    `json:"experiment,omitempty"`
	Targets    []string  `json:"targets"`
	Cases      int       `json:"cases"`
	Epochs     int       `json:"epochs"`
	Status     string    `json:"status"`
	Started    time.Time `json:"started"`
	Ended      time.Time `json:"ended,omitzero"`
	// Config is the resolved spec as JSON (no secrets: specs name env vars,
	// never keys), so a run can be re-analysed without the spec file.
	Config []byte `json:"-"`
	// Host is what the run saw of its host, as JSON (cores and load
	// samples; "" when not recorded), written with the run's status.
	Host string `json:"-"`
}

// Case is a case as the run measured it.
type Case struct {
	RunID    string            `json:"-"`
	ID       string            `json:"id"`
	Line     int               `json:"line"`
	Expected []byte            `json:"expected"` // JSON
	Tags     map[string]string `json:"tags,omitempty"`
	Weight   *float64          `json:"weight,omitempty"`
}

// Key identifies a result within a run.
type Key struct {
	CaseID string
	Target string
	Epoch  int
}

// Result is one call's outcome.
type Result struct {
	RunID        string    `json:"run_id"`
	CaseID       string    `json:"case_id"`
	Target       string    `json:"target"`
	Epoch        int       `json:"epoch"`
	Raw          string    `json:"raw"`
	Parsed       string    `json:"parsed"` // JSON-encoded parsed output ("" when unparsed)
	ParseError   string    `json:"parse_error,omitempty"`
	FinishReason string    `json:"finish_reason,omitempty"`
	InputTokens  int       `json:"input_tokens"`
	OutputTokens int       `json:"output_tokens"`
	CachedTokens int       `json:"cached_tokens"`
	CostUSD      float64   `json:"cost_usd"` // paid by this call: 0 when FromCache
	LatencyMS    float64   `json:"latency_ms"`
	FirstTokenMS float64   `json:"first_token_ms,omitempty"`
	Attempts     int       `json:"attempts"`
	ErrorKind    string    `json:"error_kind,omitempty"`
	Error        string    `json:"error,omitempty"`
	Model        string    `json:"model,omitempty"`
	Fingerprint  string    `json:"system_fingerprint,omitempty"`
	FromCache    bool      `json:"from_cache,omitempty"`
	CreatedAt    time.Time `json:"created_at"`

	// Redactions is the number of secrets replaced in Raw or Error before
	// they were stored (see provider.WithRedaction).
	Redactions int `json:"redactions,omitempty"`

	// Retries counts how many times `run --retry-errors` re-called this
	// result after a loud provider failure (0 for a first call).
	Retries int `json:"retries,omitempty"`

	// SavedUSD is what a reply served from the cache (FromCache) would have
	// cost at the target's price: spend avoided, never billed. CostUSD is 0
	// for such a reply; a reply's price is CostUSD + SavedUSD.
	SavedUSD float64 `json:"saved_usd,omitempty"`
}

// Price is what the result's reply costs at the target's price, paid in
// this run or served from the cache: the cost of the model, whatever the
// cache saved.
func (r *Result) Price() float64 { return r.CostUSD + r.SavedUSD }

// Key returns the result's key.
func (r *Result) Key() Key { return Key{r.CaseID, r.Target, r.Epoch} }

// Score is one scorer's verdict on one result in one scoring of a run.
// Scoring 1 is made during the run; each rescore adds the next number.
type Score struct {
	RunID     string  `json:"run_id"`
	Scoring   int     `json:"scoring"`
	CaseID    string  `json:"case_id"`
	Target    string  `json:"target"`
	Epoch     int     `json:"epoch"`
	Scorer    string  `json:"scorer"`
	Primary   bool    `json:"primary,omitempty"`
	Pass      bool    `json:"pass"`
	Value     float64 `json:"value"`          // in [0,1]; 1/0 for pass/fail scorers
	Shape     string  `json:"shape"`          // pass | loud | silent
	Kind      string  `json:"kind,omitempty"` // failure kind: wrong, empty, unparseable, timeout, ...
	Reason    string  `json:"reason,omitempty"`
	ErrorCost float64 `json:"error_cost,omitempty"`
	// JudgeCost is what the judge calls behind this score cost (0 for a
	// verdict served from the cache); JudgeSaved is what such cached
	// verdicts would have cost: spend avoided, never billed.
	JudgeCost  float64 `json:"judge_cost_usd,omitempty"`
	JudgeSaved float64 `json:"judge_saved_usd,omitempty"`
	// ParseNote says what the scoring's parser tolerated around the value
	// ("fenced", "prose"; "" when the output was the value alone or was not
	// parsed). The Set sets it on every score of a result.
	ParseNote string `json:"parse_note,omitempty"`
	// Fields is a field scorer's per-field outcome, in the scorer's field
	// order (nil for other scorers).
	Fields []FieldVerdict `json:"fields,omitempty"`
}

// FieldVerdict is one field's outcome in a field scorer's verdict.
type FieldVerdict struct {
	Field  string `json:"field"`
	Status string `json:"status"` // ok | wrong | missing
}

// Twin is one case's twin in a twin set: the same question written anew
// (a user-supplied twin dataset joined by ID, or a rewriter's paraphrase).
type Twin struct {
	// Set names the twin set by a content hash of what made it.
	Set    string `json:"set"`
	CaseID string `json:"case_id"`
	// Source is "file:<path>" or "rewriter:<target>".
	Source string `json:"source"`
	// Fields is the twin case's fields as a JSON object.
	Fields    []byte    `json:"fields"`
	CreatedAt time.Time `json:"created_at"`
}

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
	CreateRun(ctx context.Context, r *Run) error
	// UpdateRun sets status, ended, cases, targets and epochs.
	UpdateRun(ctx context.Context, r *Run) error
	// GetRun returns the run with this ID; "latest" names the newest. A unique
	// ID prefix is accepted. ErrNotFound when none.
	GetRun(ctx context.Context, id string) (*Run, error)
	ListRuns(ctx context.Context, limit int) ([]Run, error)
	// ExperimentRuns returns the runs of an experiment, oldest first.
	ExperimentRuns(ctx context.Context, experiment string) ([]Run, error)

	// PutCases records the cases of a run (idempotent on run+case ID).
	PutCases(ctx context.Context, cases []Case) error
	Cases(ctx context.Context, runID string, fn func(Case) error) error

	// PutResults commits results and their scores in one transaction.
	// Putting a result whose key already exists in the run is a no-op for
	// that result (and its scores): results are never duplicated.
	PutResults(ctx context.Context, results []Result, scores []Score) error
	// Results streams a run's results ordered by case, target, epoch.
	Results(ctx context.Context, runID string, fn func(Result) error) error
	// Result returns one stored result (ErrNotFound when there is none).
	Result(ctx context.Context, runID string, key Key) (*Result, error)
	// DoneKeys returns the keys of every stored result of a run.
	DoneKeys(ctx context.Context, runID string) (map[Key]struct{}, error)

	// ReplaceResults stores results and their scores in one transaction
	// (all or none), replacing a stored result with the same key: `run
	// --retry-errors` re-calls a result that failed and keeps the new call.
	// The replaced result's scores in every scoring are deleted (they
	// judged an output that is gone) and the given scores stored; a result
	// not stored yet is inserted. Until the transaction commits, readers
	// see the old result. Every score must belong to a result of the call.
	ReplaceResults(ctx context.Context, results []Result, scores []Score) error
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
	PutScores(ctx context.Context, scores []Score) error
	// ReplaceScores stores scores like PutScores but overwrites a stored
	// verdict with the same run, scoring, result and scorer: a pairwise
	// judge's verdicts on a case whose baseline result --retry-errors
	// replaced compared with the old output.
	ReplaceScores(ctx context.Context, scores []Score) error
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
	// the run's own (Run.ScorersHash) for scoring 1, the recorded one for a
	// rescore, "" when none was recorded.
	ScoringScorersHash(ctx context.Context, runID string, scoring int) (string, error)
	// ResultsWithoutCase counts a run's results whose case is not recorded
	// (PutCases), the sign of a run killed before its cases were stored.
	ResultsWithoutCase(ctx context.Context, runID string) (int, error)
	// Scores streams the scores of one scoring of a run.
	Scores(ctx context.Context, runID string, scoring int, fn func(Score) error) error

	// PutTwins stores twins (idempotent on set + case ID: a stored twin is
	// kept, never overwritten).
	PutTwins(ctx context.Context, twins []Twin) error
	// Twins streams a twin set in case-ID order; a set with no twins
	// streams nothing.
	Twins(ctx context.Context, set string, fn func(Twin) error) error

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
