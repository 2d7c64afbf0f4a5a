// Package spec owns the evaluation spec (assay.yaml): its types, strict YAML
// loading with defaults, and validation that reports every problem at once as
// FILE:LINE:COL: message. LoadWith also merges overlay files over the spec,
// expands ${VAR} under dataset, run and targets, and takes a hosted target's
// base URL from OPENAI_BASE_URL / ANTHROPIC_BASE_URL when it sets none
// (interp.go, overlay.go). It also reads what a request offers besides its
// messages — tools (inline or file://), tool_choice and response_format —
// and checks each tool's name and schema (tools.go). It must not import the
// runner, providers or store.
package spec

import (
	"encoding/json"
	"fmt"
	"time"
)

// Spec is a loaded, defaulted evaluation spec. Paths inside it are resolved
// relative to the spec file's directory.
type Spec struct {
	// File is the path the spec was loaded from (as given); Dir is its directory.
	File string `yaml:"-" json:"-"`
	Dir  string `yaml:"-" json:"-"`
	// Hash is "sha256:<hex>" over the spec bytes and the file:// prompts and
	// rubrics it references, so the same spec gives the same hash on any
	// machine.
	Hash string `yaml:"-" json:"-"`

	Name    string  `yaml:"name" json:"name"`
	Dataset Dataset `yaml:"dataset" json:"dataset"`
	Prompt  Prompt  `yaml:"prompt" json:"prompt"`
	// Tools are the functions every target's model may call, ToolChoice
	// how it must choose among them (auto, none, required, or a tool's
	// name; "" is the provider's default), and ResponseFormat the JSON
	// Schema its reply must fill. They decide replies, so they are hashed
	// into the run with the prompt.
	Tools          []Tool          `yaml:"-" json:"tools,omitempty"`
	ToolChoice     string          `yaml:"tool_choice,omitempty" json:"tool_choice,omitempty"`
	ResponseFormat *ResponseFormat `yaml:"-" json:"response_format,omitempty"`
	// Agent, when set, makes each case a loop: the model is called, the
	// tool calls it makes are answered by the handlers named here, and it
	// is called again with the results, until it answers without a call or
	// MaxTurns model calls were made (see Agent).
	Agent   *Agent     `yaml:"agent,omitempty" json:"agent,omitempty"`
	Targets []Target   `yaml:"targets" json:"targets"`
	Output  Output     `yaml:"output" json:"output"`
	Scorers []Scorer   `yaml:"scorers" json:"scorers"`
	Run     RunConfig  `yaml:"run" json:"run"`
	Volume  Volume     `yaml:"volume" json:"volume"`
	Refusal *Refusal   `yaml:"refusal,omitempty" json:"refusal,omitempty"`
	Errors  *ErrorCost `yaml:"error_costs,omitempty" json:"error_costs,omitempty"`
	// Combine says how several primary scorers make the one headline score
	// named "primary": all (default) passes when every primary scorer passes,
	// any when at least one does.
	Combine string `yaml:"combine,omitempty" json:"combine,omitempty"`
	// Experiment names the experiment the spec's runs belong to: the runs of
	// one experiment are the variants tried before one is chosen, and the
	// report of a chosen variant counts them (assay run --experiment
	// overrides it).
	Experiment string `yaml:"experiment,omitempty" json:"experiment,omitempty"`
	// Gate holds the regression gate's rules (assay gate); nil when the
	// spec has no gate: section.
	Gate *Gate `yaml:"gate,omitempty" json:"gate,omitempty"`
	// Calibration holds the thresholds a judge is held to against
	// people's labels (assay calibrate); nil when the spec has no
	// calibration: section (the defaults apply). Labels says where "add to
	// dataset" appends; nil when the spec has no labels: section.
	Calibration *Calibration `yaml:"calibration,omitempty" json:"calibration,omitempty"`
	Labels      *Labels      `yaml:"labels,omitempty" json:"labels,omitempty"`
	// Traces says how production traces are read, priced and redacted
	// (assay collect, ingest, sample, score-traces, trend, promote); nil
	// when the spec has no traces: section.
	Traces *Traces `yaml:"traces,omitempty" json:"traces,omitempty"`
	// Difficulty says where a case's difficulty comes from and answers the
	// divergence rubric (assay difficulty, mismatch); nil when absent.
	Difficulty *Difficulty `yaml:"difficulty,omitempty" json:"difficulty,omitempty"`
	// Load says what a load test (assay load) may target and holds it to; nil when absent.
	Load *LoadTest `yaml:"load,omitempty" json:"load,omitempty"`
	// Candidates names the targets under test when it is set; otherwise
	// every target that is not only a judge is one (see CandidateNames).
	Candidates []string `yaml:"candidates,omitempty" json:"candidates,omitempty"`

	// Files lists every file read for the prompt or the scorers (file://
	// prompts and rubrics, JSON schemas and every file they $ref), each with
	// the hash of its content. PromptHash and ScorersHash cover them by
	// content; the run record's resolved spec carries the list, so diff can
	// name the file that changed. Scorer files are added when the scorers
	// are compiled (task.Load does).
	Files []FileDigest `yaml:"-" json:"files,omitempty"`
	// read holds the content of the scorer files read (ReadFile), by
	// absolute path.
	read map[string][]byte

	// Overlays are the overlay files merged over the spec (assay run -f),
	// in order, as given.
	Overlays []string `yaml:"-" json:"overlays,omitempty"`
	// EnvVars names every variable ${VAR} interpolated into the spec
	// (sorted; names only, never values).
	EnvVars []string `yaml:"-" json:"env_vars,omitempty"`

	// pos maps a path ("targets[0].limits.rpm") to where it is written, so
	// Problemf can locate problems found after loading.
	pos map[string]position
	// overlays are the overlay files whose lines pos holds moved up by
	// k×lineBase (see overlay.go).
	overlays []string
	// providers describe the providers a target may name (Options.Providers).
	providers []ProviderInfo
	// toolItems are tools: as written and formatJSON response_format: as
	// JSON, until the validator reads them into Tools and ResponseFormat
	// (tools.go).
	toolItems  []toolItem
	formatJSON []byte
	// agentFiles are the files agent handlers read (a replay file, an
	// exec handler's program), each its path in the spec and the hash of
	// its content, for PromptHash (agent.go).
	agentFiles [][2]string
}

// Dataset says where the cases are and which fields mean what.
type Dataset struct {
	Path            string `yaml:"path" json:"path"`
	Format          string `yaml:"format,omitempty" json:"format,omitempty"` // jsonl | csv (from the extension when empty)
	ID              string `yaml:"id,omitempty" json:"id,omitempty"`         // a field name, or "line" (default)
	Expected        string `yaml:"expected,omitempty" json:"expected,omitempty"`
	ExpectedExtract string `yaml:"expected_extract,omitempty" json:"expected_extract,omitempty"`
	// Tags maps a slice key to a field name or a CEL expression over `case`,
	// in the order written in the spec.
	Tags   []Tag  `yaml:"-" json:"tags,omitempty"`
	Weight string `yaml:"weight,omitempty" json:"weight,omitempty"`
	// Limit, when > 0, reads only the first Limit cases.
	Limit int `yaml:"limit,omitempty" json:"limit,omitempty"`
}

// Tag is one slice key of a case. Expr is either a bare field name or a CEL
// expression over `case`.
type Tag struct {
	Key  string `json:"key"`
	Expr string `json:"expr"`
}

// Prompt holds the chat templates after file:// references are read:
// either System and User, or Messages (a whole list of templates). Either
// way MessagesField may name a dataset field holding a message history,
// sent as data after the leading system messages.
type Prompt struct {
	System string `yaml:"system,omitempty" json:"system,omitempty"`
	User   string `yaml:"user" json:"user"`
	// SystemFile and UserFile are the file:// paths as written (relative to
	// the spec), or "" when the template was written inline.
	SystemFile string `yaml:"-" json:"system_file,omitempty"`
	UserFile   string `yaml:"-" json:"user_file,omitempty"`
	// Messages are chat message templates in order (prompt.messages); set,
	// they replace System and User.
	Messages []MessageTemplate `yaml:"messages,omitempty" json:"messages,omitempty"`
	// MessagesField names the dataset field holding each case's message
	// history: a JSON list of {role, content, tool_calls?, tool_call_id?},
	// never rendered as a template.
	MessagesField string `yaml:"messages_field,omitempty" json:"messages_field,omitempty"`
}

// MessageTemplate is one message of prompt.messages: a role and a Go
// template for its content (after a file:// reference is read; ContentFile
// is the path as written). ToolCallID is what a "tool" message answers.
type MessageTemplate struct {
	Role        string `yaml:"role" json:"role"`
	Content     string `yaml:"content" json:"content"`
	ToolCallID  string `yaml:"tool_call_id,omitempty" json:"tool_call_id,omitempty"`
	ContentFile string `yaml:"-" json:"content_file,omitempty"`
}

// Message roles a template or a history may use.
var MessageRoles = []string{"system", "user", "assistant", "tool"}

// Tool is one function definition offered to the model: its name, what it
// does, and the JSON Schema of its arguments (after file:// references are
// read). File is the file:// path it came from, or "" when inline.
type Tool struct {
	Name        string          `yaml:"name" json:"name"`
	Description string          `yaml:"description,omitempty" json:"description,omitempty"`
	Parameters  json.RawMessage `yaml:"-" json:"parameters,omitempty"`
	File        string          `yaml:"-" json:"file,omitempty"`
}

// Agent runs each case as a tool-calling loop. Tools maps every tool the
// spec offers (tools:) to the handler that answers its calls.
type Agent struct {
	MaxTurns int                    `yaml:"max_turns" json:"max_turns"`
	Tools    map[string]ToolHandler `yaml:"tools" json:"tools"`
}

// ToolHandler answers one tool's calls in an agent loop: exactly one of
// Exec (the user's program, run isolated like an exec target: a fresh
// temporary directory, only the variables Env names, killed at Timeout,
// output bounded by MaxOutputBytes), Replay (a JSONL file of recorded
// results, path relative to the spec) or Mock (a fixed result).
type ToolHandler struct {
	Exec           []string  `yaml:"exec,omitempty" json:"exec,omitempty"`
	Replay         string    `yaml:"replay,omitempty" json:"replay,omitempty"`
	Mock           *ToolMock `yaml:"mock,omitempty" json:"mock,omitempty"`
	Timeout        Duration  `yaml:"timeout,omitempty" json:"timeout,omitempty"`
	MaxOutputBytes int64     `yaml:"max_output_bytes,omitempty" json:"max_output_bytes,omitempty"`
	Env            []string  `yaml:"env,omitempty" json:"env,omitempty"`
}

// ToolMock is a handler that answers every call with Result.
type ToolMock struct {
	Result string `yaml:"result" json:"result"`
}

// ResponseFormat is the JSON Schema a reply must fill (structured outputs).
// SchemaFile is the file:// path of the schema, or "" when inline.
type ResponseFormat struct {
	Name       string          `yaml:"name" json:"name"`
	Schema     json.RawMessage `yaml:"-" json:"schema"`
	Strict     bool            `yaml:"strict,omitempty" json:"strict,omitempty"`
	SchemaFile string          `yaml:"-" json:"schema_file,omitempty"`
}

// Target is one model (or pipeline) under test.
type Target struct {
	Name      string `yaml:"name" json:"name"`
	Provider  string `yaml:"provider" json:"provider"` // openai | anthropic | exec | replay
	Model     string `yaml:"model,omitempty" json:"model,omitempty"`
	BaseURL   string `yaml:"base_url,omitempty" json:"base_url,omitempty"`
	APIKeyEnv string `yaml:"api_key_env,omitempty" json:"api_key_env,omitempty"`
	// APIKeyFile is a file holding the key (relative to the spec), read
	// when the provider is built; one trailing newline is dropped.
	APIKeyFile string `yaml:"api_key_file,omitempty" json:"api_key_file,omitempty"`
	// Headers are extra HTTP headers sent with every request of an openai
	// or anthropic target, values after ${VAR} interpolation. Their values
	// are never stored (json:"-"): HeaderNames records the names.
	Headers map[string]string `yaml:"headers,omitempty" json:"-"`
	// HeaderNames are the names in Headers, sorted (what the run records).
	HeaderNames []string `yaml:"-" json:"headers,omitempty"`
	// HeaderVars name the variables interpolated into header values: their
	// values are secrets, redacted like keys.
	HeaderVars []string `yaml:"-" json:"header_vars,omitempty"`
	// BaseURLEnv names the variable (OPENAI_BASE_URL, ANTHROPIC_BASE_URL)
	// BaseURL was taken from when the spec sets no base_url.
	BaseURLEnv string   `yaml:"-" json:"base_url_env,omitempty"`
	Stream     bool     `yaml:"stream,omitempty" json:"stream,omitempty"`
	Params     Params   `yaml:"params,omitempty" json:"params,omitempty"`
	Price      Price    `yaml:"price,omitempty" json:"price,omitempty"`
	Limits     Limits   `yaml:"limits,omitempty" json:"limits,omitempty"`
	Replay     *Replay  `yaml:"replay,omitempty" json:"replay,omitempty"`
	Command    []string `yaml:"command,omitempty" json:"command,omitempty"`
	// Timeout overrides run.timeout for this target.
	Timeout Duration `yaml:"timeout,omitempty" json:"timeout,omitempty"`
	// MaxOutputBytes bounds what a target may send back: an exec target's
	// stdout (default 1 MiB), an HTTP target's response body as read from
	// the wire, streams and error bodies alike (default 16 MiB). 0 means the
	// provider's default.
	MaxOutputBytes int64 `yaml:"max_output_bytes,omitempty" json:"max_output_bytes,omitempty"`
	// Env names the environment variables an exec target's program is given
	// (its environment is otherwise empty but for PATH and HOME/TMPDIR set
	// to its own temporary directory).
	Env []string `yaml:"env,omitempty" json:"env,omitempty"`
}

// Params are the sampling parameters sent with every request. Nil means
// "not sent" (the provider's default applies).
type Params struct {
	Temperature *float64 `yaml:"temperature,omitempty" json:"temperature,omitempty"`
	TopP        *float64 `yaml:"top_p,omitempty" json:"top_p,omitempty"`
	MaxTokens   *int     `yaml:"max_tokens,omitempty" json:"max_tokens,omitempty"`
	Seed        *int64   `yaml:"seed,omitempty" json:"seed,omitempty"`
	Stop        []string `yaml:"stop,omitempty" json:"stop,omitempty"`
}

// Price is USD per million tokens.
type Price struct {
	InputPerMTok  float64 `yaml:"input_per_mtok,omitempty" json:"input_per_mtok,omitempty"`
	OutputPerMTok float64 `yaml:"output_per_mtok,omitempty" json:"output_per_mtok,omitempty"`
	CachedPerMTok float64 `yaml:"cached_per_mtok,omitempty" json:"cached_per_mtok,omitempty"`
}

// Cost prices one call. Cached input tokens are priced at CachedPerMTok when
// set, else as ordinary input.
func (p Price) Cost(input, output, cached int) float64 {
	in := float64(input)
	c := 0.0
	if p.CachedPerMTok > 0 && cached > 0 {
		in -= float64(cached)
		c = float64(cached) * p.CachedPerMTok
	}
	return (in*p.InputPerMTok + float64(output)*p.OutputPerMTok + c) / 1e6
}

// Limits bound the load on one target.
type Limits struct {
	Concurrency int `yaml:"concurrency,omitempty" json:"concurrency,omitempty"` // in flight (default 8)
	RPM         int `yaml:"rpm,omitempty" json:"rpm,omitempty"`                 // requests per minute (0 = unlimited)
	TPM         int `yaml:"tpm,omitempty" json:"tpm,omitempty"`                 // tokens per minute (0 = unlimited)
}

// Replay joins recorded outputs to cases: the case's field Join equals the
// record's field Join (or RecordJoin when the names differ); Output is a dotted
// path into the record.
type Replay struct {
	Path       string `yaml:"path" json:"path"`
	Join       string `yaml:"join" json:"join"`
	RecordJoin string `yaml:"record_join,omitempty" json:"record_join,omitempty"`
	Output     string `yaml:"output" json:"output"`
}

// Output says how the raw model text becomes the parsed output.
type Output struct {
	Format  string `yaml:"format,omitempty" json:"format,omitempty"`   // text (default) | regex | json | last_number
	Extract string `yaml:"extract,omitempty" json:"extract,omitempty"` // regex; first group (implies format regex)
	// Strict (format json) requires the whole output to be one JSON value:
	// a ``` fence or prose around it fails the parse. Without it such
	// outputs parse, and each score records what was tolerated.
	Strict bool `yaml:"strict,omitempty" json:"strict,omitempty"`
}

// Scorer is one scorer's configuration; which fields apply depends on Type.
type Scorer struct {
	Name      string   `yaml:"name" json:"name"`
	Type      string   `yaml:"type" json:"type"`
	Primary   bool     `yaml:"primary,omitempty" json:"primary,omitempty"`
	Weight    float64  `yaml:"weight,omitempty" json:"weight,omitempty"`
	Normalize []string `yaml:"normalize,omitempty" json:"normalize,omitempty"`
	Value     string   `yaml:"value,omitempty" json:"value,omitempty"`
	Values    []string `yaml:"values,omitempty" json:"values,omitempty"`
	Pattern   string   `yaml:"pattern,omitempty" json:"pattern,omitempty"`
	Schema    any      `yaml:"schema,omitempty" json:"schema,omitempty"`
	Fields    []string `yaml:"fields,omitempty" json:"fields,omitempty"`
	Field     string   `yaml:"field,omitempty" json:"field,omitempty"`
	Tolerance float64  `yaml:"tolerance,omitempty" json:"tolerance,omitempty"`
	Relative  bool     `yaml:"relative,omitempty" json:"relative,omitempty"`
	Max       any      `yaml:"max,omitempty" json:"max,omitempty"` // characters, a duration or USD, by type
	Expr      string   `yaml:"expr,omitempty" json:"expr,omitempty"`
	Target    string   `yaml:"target,omitempty" json:"target,omitempty"`
	Rubric    string   `yaml:"rubric,omitempty" json:"rubric,omitempty"`
	// RubricFile is the file:// path of the rubric as written, or "" when
	// the rubric was written inline (Rubric then holds the file's text).
	RubricFile string `yaml:"-" json:"rubric_file,omitempty"`
	Mode       string `yaml:"mode,omitempty" json:"mode,omitempty"`
	// Baseline names the target a pairwise judge compares every other
	// target against (judge, mode pairwise).
	Baseline string `yaml:"baseline,omitempty" json:"baseline,omitempty"`
	// RevealTarget shows the judge which target (name and model) produced
	// the output; by default the candidate's identity is hidden (judge).
	RevealTarget bool `yaml:"reveal_target,omitempty" json:"reveal_target,omitempty"`
	// Threshold is the score at or above which a judge's numeric score
	// passes; nil means 0.5 (judge, mode single).
	Threshold *float64 `yaml:"threshold,omitempty" json:"threshold,omitempty"`
	// Method is how a similarity scorer measures: edit (normalised edit
	// distance, the default) or token_set (token-set ratio).
	Method string `yaml:"method,omitempty" json:"method,omitempty"`
	// Tool is the tool a tool_call scorer expects the model to call; when
	// set, the case's expected value holds only the call's arguments.
	Tool string `yaml:"tool,omitempty" json:"tool,omitempty"`
	// Match is how a tool_calls scorer compares the sequence of calls with
	// the expected one: exact, in_order, any_order or subset.
	Match      string         `yaml:"match,omitempty" json:"match,omitempty"`
	AllowEmpty bool           `yaml:"allow_empty,omitempty" json:"allow_empty,omitempty"`
	Extra      map[string]any `yaml:"-" json:"-"`
}

// RunConfig holds run-wide settings.
type RunConfig struct {
	Epochs  int      `yaml:"epochs,omitempty" json:"epochs,omitempty"`   // default 1
	Timeout Duration `yaml:"timeout,omitempty" json:"timeout,omitempty"` // per request, default 60s
	Retries int      `yaml:"retries,omitempty" json:"retries,omitempty"` // default 6
	// Schedule says how targets share the machine: parallel (default, ""
	// too) runs every target at once; sequential runs them one after
	// another, each with its own concurrency, so an exec target's latency
	// is not measured on a host the other targets saturate.
	Schedule string `yaml:"schedule,omitempty" json:"schedule,omitempty"`
	// MaxErrorRate is the share of a target's results that may fail for a
	// provider reason (auth, unavailable, rate limits after retries, …)
	// before `assay run` calls the run unhealthy (exit 5): a number in
	// [0, 1], default DefaultMaxErrorRate.
	MaxErrorRate float64 `yaml:"max_error_rate,omitempty" json:"max_error_rate"`
}

// Run schedules (run.schedule).
const (
	ScheduleParallel   = "parallel"
	ScheduleSequential = "sequential"
)

// Schedules are the accepted values of run.schedule.
var Schedules = []string{ScheduleParallel, ScheduleSequential}

// Volume prices the score at the team's volume.
type Volume struct {
	RequestsPerMonth float64 `yaml:"requests_per_month,omitempty" json:"requests_per_month,omitempty"`
}

// Refusal configures refusal detection (issue: scoring).
type Refusal struct {
	Phrases []string `yaml:"phrases,omitempty" json:"phrases,omitempty"`
	Pattern string   `yaml:"pattern,omitempty" json:"pattern,omitempty"`
}

// ErrorCost prices wrong answers (issue: scoring).
type ErrorCost struct {
	Silent float64            `yaml:"silent,omitempty" json:"silent,omitempty"`
	Loud   float64            `yaml:"loud,omitempty" json:"loud,omitempty"`
	ByKind map[string]float64 `yaml:"by_kind,omitempty" json:"by_kind,omitempty"`
}

// Duration is a time.Duration written as "60s", "1m30s" or "250ms".
type Duration time.Duration

// D returns the value as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("invalid duration %q (want e.g. 30s, 1m30s, 250ms)", b)
	}
	if v < 0 {
		return fmt.Errorf("duration %q must not be negative", b)
	}
	*d = Duration(v)
	return nil
}

// TargetTimeout is the per-request time-out for t.
func (s *Spec) TargetTimeout(t *Target) time.Duration {
	if t.Timeout > 0 {
		return t.Timeout.D()
	}
	return s.Run.Timeout.D()
}

// Gate is the gate: section: the rules `assay gate` checks a candidate run
// against a baseline with. Without rules the gate's default applies (the
// primary scorer's rate must not drop more than 5% relative).
type Gate struct {
	// Alpha is the significance level of the paired tests that confirm a
	// worsening (default 0.05).
	Alpha float64    `yaml:"alpha,omitempty" json:"alpha,omitempty"`
	Rules []GateRule `yaml:"rules,omitempty" json:"rules,omitempty"`
}

// GateRule is one rule as written: a metric, optionally a slice of the
// cases, and at least one limit. Limits are kept as written ("5%", "2pt",
// "1.5s", 0.002) and read by Parse.
type GateRule struct {
	// Metric is a scorer's name (its pass rate), primary (the primary
	// scorer's), or one of cost_per_case, latency_p95, ttft_p95 and
	// loud_rate.
	Metric string `yaml:"metric" json:"metric"`
	// Slice restricts the rule to the cases with one tag value: {tier: hard}.
	Slice map[string]string `yaml:"slice,omitempty" json:"slice,omitempty"`
	// MaxDrop is the largest drop of a rate allowed versus the baseline:
	// relative ("5%") or in percentage points ("2pt").
	MaxDrop string `yaml:"max_drop,omitempty" json:"max_drop,omitempty"`
	// MaxRise is the largest rise of a lower-is-better metric allowed
	// versus the baseline: relative ("10%") or absolute (USD for cost, a
	// duration or milliseconds for latency, "2pt" for the loud rate).
	MaxRise string `yaml:"max_rise,omitempty" json:"max_rise,omitempty"`
	// Min is a floor on a rate ("80%" or 0.8).
	Min string `yaml:"min,omitempty" json:"min,omitempty"`
	// Max is a ceiling on cost per case (USD), p95 latency (a duration or
	// milliseconds) or the loud rate ("5%" or 0.05).
	Max string `yaml:"max,omitempty" json:"max,omitempty"`
}

// Gate metrics other than a scorer's rate.
const (
	GateCostPerCase = "cost_per_case"
	GateLatencyP95  = "latency_p95"
	// GateTTFTP95 is the p95 of the time to first token, of the calls
	// that streamed.
	GateTTFTP95  = "ttft_p95"
	GateLoudRate = "loud_rate"
	// GatePrimary names the primary scorer's rate in a rule.
	GatePrimary = "primary"
)

// GateMetrics are the metric names a rule may use besides a scorer's name.
var GateMetrics = []string{GatePrimary, GateCostPerCase, GateLatencyP95, GateTTFTP95, GateLoudRate}

// GateCheck is a rule read into numbers: what to measure, and the limits.
type GateCheck struct {
	// Kind is "rate" (a scorer's pass rate), cost_per_case, latency_p95,
	// ttft_p95 or loud_rate.
	Kind string
	// Scorer is the rate's scorer, as written (primary names the primary
	// scorer).
	Scorer string
	// SliceKey and SliceValue restrict the cases ("" for all cases).
	SliceKey, SliceValue string
	// Worse is the largest worsening allowed versus the baseline (a drop of
	// a rate, a rise of the others); nil when the rule sets none.
	Worse *GateLimit
	// Bound is the floor (rates) or ceiling (the others) in the metric's
	// unit: a fraction for rates, USD for cost, milliseconds for latency;
	// nil when the rule sets none.
	Bound *float64
}

// GateLimit is an allowed worsening.
type GateLimit struct {
	// Amount is a fraction of the baseline's value when Relative (0.05 for
	// 5%), else in the metric's unit (a fraction for rates: 0.02 for 2pt).
	Amount   float64
	Relative bool
}

// HigherIsBetter reports whether the check's metric improves upwards
// (rates) rather than downwards (cost, latency, loud rate).
func (c GateCheck) HigherIsBetter() bool { return c.Kind == "rate" }

// GateRuleProblem is what is wrong with one field of a rule: Field is
// "metric", "slice", "slice.KEY", "max_drop", "max_rise", "min", "max", or
// "" for the rule as a whole (Msg then reads after the rule's name). Msg
// starts with the field's name.
type GateRuleProblem struct {
	Field, Msg, Hint string
}
