// Package record holds the records a run leaves: the run itself, the cases it
// measured, results (one per case × target × epoch), scores (one per result ×
// scorer × scoring) and probe twins. They are plain data: consumers that read
// or compute with them (analysis, gate, report, export, scorer, runner) import
// record, not the store that keeps them.
package record

import (
	"crypto/rand"
	"encoding/hex"
	"time"
)

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
	Experiment string `json:"experiment,omitempty"`
	// Sample is the ID of the trace sample the run scored (assay
	// score-traces): its cases are production traces, its targets the
	// models that answered them, each case answered by one target only.
	// "" for an evaluation run.
	Sample string `json:"sample,omitempty"`
	// Kind is what the run measured: "" (KindEval) an evaluation, every
	// run stored before kinds; "load" (KindLoad) a load test, whose
	// measurements are its LoadSteps and LoadRequests.
	Kind    string    `json:"kind,omitempty"`
	Targets []string  `json:"targets"`
	Cases   int       `json:"cases"`
	Epochs  int       `json:"epochs"`
	Status  string    `json:"status"`
	Started time.Time `json:"started"`
	Ended   time.Time `json:"ended,omitzero"`
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

	// ToolCalls are the calls the model made, in its order (nil when it
	// made none or was offered no tools).
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`

	// Turns is an agent loop's trajectory, one entry per model call in
	// order (nil for a single call). For such a result Raw is the last
	// reply's text, ToolCalls every call of every turn in order, and the
	// tokens, cost and latency the sums over the turns.
	Turns []Turn `json:"turns,omitempty"`
}

// Turn is one model call of an agent loop and the tool results that
// answered its calls.
type Turn struct {
	Text         string       `json:"text"`
	ToolCalls    []ToolCall   `json:"tool_calls,omitempty"`
	Results      []ToolResult `json:"results,omitempty"`
	FinishReason string       `json:"finish_reason,omitempty"`
	InputTokens  int          `json:"input_tokens"`
	OutputTokens int          `json:"output_tokens"`
	CostUSD      float64      `json:"cost_usd"`
	LatencyMS    float64      `json:"latency_ms"`
	FirstTokenMS float64      `json:"first_token_ms,omitempty"`
	FromCache    bool         `json:"from_cache,omitempty"`
}

// ToolResult is a handler's answer to one tool call: the text sent back to
// the model, or the error that ended the loop (Error set, Content what the
// handler wrote before it failed, clipped).
type ToolResult struct {
	CallID    string  `json:"call_id,omitempty"`
	Name      string  `json:"name"`
	Content   string  `json:"content"`
	Error     string  `json:"error,omitempty"`
	LatencyMS float64 `json:"latency_ms"`
}

// ToolCall is one tool call a model made: the tool's name and the text of
// its arguments as the model wrote them (possibly invalid JSON: scorers parse
// it and call an invalid one a loud failure), with the provider's ID for the
// call when it gave one.
type ToolCall struct {
	ID        string `json:"id,omitempty"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// String is the call as reports show it, name(arguments), the arguments as
// the model wrote them (a renderer escapes it like any model output).
func (c ToolCall) String() string { return c.Name + "(" + c.Arguments + ")" }

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
	Field string `json:"field"`
	// Status is ok, wrong, missing (absent from the output), or unscored:
	// the scorer could not compare the field in this output (tool_call
	// when the expected tool was not called, or its arguments were
	// invalid), which counts as not ok.
	Status string `json:"status"`
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

// runIDTime is the layout of the time part of a run ID.
const runIDTime = "20060102-150405"

// NewRunID returns a new ID for a run started at now: the UTC time to the
// second, a dash and six random hex digits from crypto/rand, e.g.
// "20261202-113512-3fa9c1". IDs of runs started in different seconds sort as
// strings in the order the runs started; IDs are safe in file names, URLs and
// shells, and any unique prefix of one names the run.
func NewRunID(now time.Time) string {
	var b [3]byte
	// crypto/rand.Read never returns an error: it fills b or crashes the program.
	_, _ = rand.Read(b[:])
	return now.UTC().Format(runIDTime) + "-" + hex.EncodeToString(b[:])
}
