package record

import "time"

// Run kinds: what a stored run measured. An evaluation run (every run stored
// before load tests existed) has kind "".
const (
	KindEval = ""
	KindLoad = "load"
)

// LoadStep is one step of a load test for one target: the level offered
// (requests per second in an open loop, concurrent requests in a closed
// one), what was sent and answered in the measured window, and the harness's
// own health over it. A step not run (a target stopped early past its knee,
// a cap reached, an interrupt) is recorded with Skipped saying why.
type LoadStep struct {
	RunID  string `json:"-"`
	Target string `json:"target"`
	// Step is 0-based, in the order the steps were run.
	Step int `json:"step"`
	// Mode is "rate" (open loop) or "concurrency" (closed loop).
	Mode  string  `json:"mode"`
	Level float64 `json:"level"`
	// Started is when the measured window began; DurationMS its length.
	Started    time.Time `json:"started,omitzero"`
	DurationMS float64   `json:"duration_ms"`
	// Sent counts requests started in the window, Done those that ended
	// (answered or failed) before the step finished.
	Sent int `json:"sent"`
	Done int `json:"done"`
	// ClientCPU is the harness's CPU use over the step, in cores (user +
	// system time over wall time); Cores the cores it may use.
	ClientCPU float64 `json:"client_cpu"`
	Cores     int     `json:"cores"`
	// LatenessP95MS is how late requests started against the schedule,
	// 95th percentile (open loop; 0 in a closed loop).
	LatenessP95MS float64 `json:"lateness_p95_ms"`
	// Saturated is set when the harness was the bottleneck: the step is
	// never a knee's evidence.
	Saturated bool `json:"saturated"`
	// Skipped says why the step was not run ("" when it ran).
	Skipped string `json:"skipped,omitempty"`
}

// LoadRequest is one request a load test made.
type LoadRequest struct {
	RunID  string `json:"-"`
	Target string `json:"target"`
	Step   int    `json:"step"`
	// Seq numbers the step's requests from 0 in the order they started.
	Seq    int    `json:"seq"`
	CaseID string `json:"case_id"`
	// StartMS is when the request started, since the step's start;
	// LatencyMS how long until it ended.
	StartMS   float64 `json:"start_ms"`
	LatencyMS float64 `json:"latency_ms"`
	// FirstTokenMS is the time to the first streamed token, NaN when the
	// target does not stream or the request failed; InterTokenMS the mean
	// gap between streamed chunks, NaN otherwise.
	FirstTokenMS float64 `json:"first_token_ms"`
	InterTokenMS float64 `json:"inter_token_ms"`
	InputTokens  int     `json:"input_tokens"`
	OutputTokens int     `json:"output_tokens"`
	CostUSD      float64 `json:"cost_usd"`
	// ErrorKind is "" for an answer, else the provider error's kind
	// (rate_limited, server_error, timeout, …); Status the HTTP status when
	// known (0 otherwise).
	ErrorKind string `json:"error_kind,omitempty"`
	Status    int    `json:"status,omitempty"`
}
