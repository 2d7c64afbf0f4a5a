// Package mock owns `assay mock`: a local HTTP server that speaks the OpenAI
// chat-completions and Anthropic messages wire formats (plain and streamed)
// with deterministic replies — text, tool calls (by rule, or derived from
// the offered tool's schema) and structured outputs — and injectable
// faults, malformed tool-call arguments among them. Tests and benchmarks use
// it in-process; users point a pipeline at it. It binds to 127.0.0.1 unless
// told otherwise and imports nothing of assay but what it needs to speak.
package mock

import (
	"log/slog"
	"time"
)

// Options configure the server. Fault fractions are in [0,1] and are drawn
// per request from a generator seeded with Seed, so a run is repeatable.
type Options struct {
	Addr string // default 127.0.0.1:0

	Latency time.Duration // added before every reply
	Jitter  time.Duration // uniform extra latency in [0, Jitter)
	// TokenDelay is the delay between streamed chunks.
	TokenDelay time.Duration

	// Rate, when > 0, is the requests per second the server accepts; above
	// it, it answers 429 with a Retry-After header of RetryAfter (default 1s).
	Rate       float64
	Burst      int
	RetryAfter time.Duration

	// Capacity, when > 0, is how many requests the server works on at
	// once (its slots); a request past the rate limit and the checks of
	// its body waits for a free slot in arrival order (FIFO), then takes
	// its latency, jitter and streaming while holding it, so past
	// Capacity/Latency requests per second queues grow and latency rises.
	// A hung request holds its slot until its client gives up; a client
	// that goes away frees its slot, or leaves the queue.
	Capacity int
	// QueueLimit is how many requests may wait for a slot; one arriving
	// beyond it is answered 503. 0 is no limit; -1 is no queue (503 as
	// soon as every slot is busy). It needs Capacity.
	QueueLimit int
	// Slowdown, when > 0, makes service time grow with the load the way a
	// batching server's does: a request that takes a slot when busy slots
	// (itself included) of Capacity are taken has its latency, jitter and
	// token delay multiplied by 1 + Slowdown × busy/Capacity. It needs
	// Capacity.
	Slowdown float64

	Fail      float64 // fraction answered 500
	Overload  float64 // fraction answered 529 (overloaded)
	Hang      float64 // fraction that never answer (the client's time-out fires)
	Truncate  float64 // fraction of streams cut before the final chunk / of bodies cut mid-JSON
	Malformed float64 // fraction answered 200 with a body that is not valid JSON
	Seed      int64

	// Rules map a substring of the last user message to a fixed reply;
	// the first match (in Rules order) wins. A rule with a Model applies
	// only to requests for that model, so one server can play several
	// targets (a planted contaminated one beside a clean one). With no match
	// the reply is Default, or, when Default is empty, the last user
	// message echoed.
	Rules   []Rule
	Default string

	// Tool calls. A request that offers tools (and does not choose none)
	// is answered with calls: a matching rule's ToolCalls, or else the tool
	// it forces by name, or the first tool offered, called with arguments
	// derived from the tool's JSON Schema, the same every time. ToolTurns
	// is how many model turns of one conversation call tools (default 1):
	// once the conversation holds that many assistant turns with calls,
	// the mock answers in text — a text rule, Default, or the last tool
	// result echoed. MalformedArgs is the fraction of calls whose
	// arguments are sent as invalid JSON (cut short), drawn per call from
	// the generator seeded with Seed. See respond for the whole order.
	ToolTurns     int
	MalformedArgs float64

	// APIKey, when set, must be presented (Authorization: Bearer or x-api-key);
	// otherwise 401.
	APIKey string

	// CacheSystem reports the system prompt's tokens as cached input
	// (prompt_tokens_details.cached_tokens / cache_read_input_tokens), the
	// way a provider with prompt caching would on a repeated prefix.
	CacheSystem bool

	// Logger receives diagnostics (never request bodies); nil means
	// slog.Default().
	Logger *slog.Logger

	// Now is the clock a reply's creation time (OpenAI's `created`) reads;
	// nil means time.Now. `assay mock` passes the process's one clock.
	Now func() time.Time
}

// Rule is one scripted reply. An empty Match matches every message, so a
// rule with a Model and no Match is that model's default.
type Rule struct {
	Match string `json:"match"`
	Reply string `json:"reply"`
	// Model, when set, limits the rule to requests naming this model.
	Model string `json:"model,omitempty"`
	// ToolCalls, when set, are the calls the reply makes (beside Reply's
	// text, if any), in order. Such a rule applies only to a request that
	// may call tools (it offers some, does not choose none, and has not
	// used up ToolTurns) and offers every tool the rule calls (and, when
	// it forces one tool, calls only that one); others skip it.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// Turn, when > 0, limits the rule to the model's Turn-th turn of a
	// conversation: the first turn has no calls answered yet, the second
	// one round of calls, and so on. Rules for turns 1, 2 and 3 script an
	// agent loop's trajectory (with ToolTurns at least the last turn
	// that calls).
	Turn int `json:"turn,omitempty"`
}

// Stats counts what the server did; safe to read while it runs.
type Stats struct {
	Requests  int64 // every request received
	OK        int64 // answered 200 with a whole reply
	RateLimit int64 // 429s
	Fail      int64 // 500s
	Overload  int64 // 529s
	Hang      int64
	Truncate  int64
	Malformed int64
	// MalformedArgs counts tool calls sent with arguments made invalid.
	MalformedArgs int64
	// Rejected counts 4xx answers other than 429: a bad body, a wrong key,
	// an unknown path or method.
	Rejected int64
	// InFlight is the number of requests being handled right now.
	InFlight int64

	// The capacity model (all 0 without Capacity). Busy is the slots taken
	// now and Waiting the requests queued for one; MaxWaiting is the
	// longest the queue has been. Queued counts the requests that had to
	// wait, QueueWait the time they waited in total, QueueFull the 503s
	// answered because the queue was full.
	Busy, Waiting, MaxWaiting int64
	Queued, QueueFull         int64
	QueueWait                 time.Duration
}
