// Package scorer owns the definition of correct: output parsers (text, regex,
// JSON, last number), the built-in scorers (one file each), refusal
// detection, and the failure shape of every result (pass; loud: error,
// timeout, refusal, empty, unparseable, invalid format; silent: well-formed
// and wrong), the LLM judge (single verdicts and pairwise comparisons with a
// baseline target, parsed strictly) and the price of each failure
// (error_costs and case weights). The scorers of tool calls (toolcall.go)
// read the calls a result stores, arguments parsed strictly and compared by
// field as field_equals compares, with their own failure kinds (no_call,
// invalid_arguments, wrong_tool, unexpected_call). Compile turns a spec's output, scorers and
// error_costs sections into a Set, reporting every misuse at once;
// Set.Score parses a stored result and scores it; Set.ScorePairs scores the
// pairwise judges once a case's results all exist.
//
// Values compare as what they are (compare.go): JSON numbers by the exact
// value of their written form, never through float64, in equals,
// field_equals, one_of, number and CEL alike; a failure says what differed.
// The JSON parser records what it tolerated around the value (a fence or
// prose) on every score, refuses it all under output.strict, and fails an
// object that repeats a key.
//
// Every scorer fails closed: empty output, whitespace, `{}`, a parse failure,
// a missing expected value or a scorer error never passes unless the scorer
// is configured to allow it (allow_empty). Model output is hostile input: it
// is parsed and matched, never executed or templated; CEL expressions come
// from the spec and run with a cost limit and a time-out.
//
// It reads stored results and never calls a candidate model; the only model
// it calls is a judge, through the provider.Provider the caller hands to
// CompileWith (already wrapped with time-out, limits, retries and cache). It
// may import spec, dataset, store (for their types) and provider (for the
// Provider interface and error kinds); it must not import the runner, a
// provider implementation (its tests use the openai provider against the mock
// server), analysis, report or cli.
package scorer

import (
	"context"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/record"
)

// Failure shapes.
const (
	ShapePass   = "pass"
	ShapeLoud   = "loud"
	ShapeSilent = "silent"
)

// Input is what a scorer sees for one result.
type Input struct {
	Raw      string // the model's raw text
	Parsed   any    // the parsed output (string for text/regex/last_number, JSON value for json)
	ParseErr error  // non-nil when the parser failed
	// ParseNote says what the json parser tolerated around the value
	// (NoteFenced, NoteProse), "" when nothing.
	ParseNote string
	Expected  any // the case's expected value
	Case      *dataset.Case
	Result    *record.Result // latency, cost, tokens, error kind
}

// Verdict is one scorer's judgement of one result.
type Verdict struct {
	Pass   bool
	Value  float64 // in [0,1]
	Shape  string  // pass | loud | silent
	Kind   string  // "" on pass; wrong, empty, unparseable, error kinds ...
	Reason string
	// Cost is what judging this result cost in USD (judge calls: the judge
	// target's price × usage); 0 for scorers that call no model. It is
	// stored as the score's JudgeCost, never added to the candidate's cost.
	// A judge reply served from the response cache costs 0: its price is
	// Saved (the score's JudgeSaved), spend avoided.
	Cost  float64
	Saved float64
	// Fields are a field scorer's per-field verdicts, in field order
	// (field_equals sets them whenever it compares; nil otherwise).
	Fields []record.FieldVerdict
}

// Scorer judges one result.
type Scorer interface {
	Name() string
	Score(ctx context.Context, in *Input) Verdict
}
