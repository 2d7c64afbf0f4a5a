package load

import (
	"fmt"
	"math"
	"time"
)

// Modes of a load test.
const (
	ModeRate        = "rate"        // open loop: requests started at a rate, replies not awaited
	ModeConcurrency = "concurrency" // closed loop: a fixed number of requests in flight
)

// Arrival processes of an open loop.
const (
	ArrivalsPoisson = "poisson" // exponential gaps (the default)
	ArrivalsUniform = "uniform" // evenly spaced
)

// SLO is a service-level objective a step must meet; a zero field is not set.
// In JSON it is {"p95_ms", "ttft95_ms", "errors", "text"} (MarshalJSON).
type SLO struct {
	P95    time.Duration
	TTFT95 time.Duration
	Errors float64 // a fraction: 0.01 is 1%
	// ErrorsSet says Errors was given (0% is a valid objective).
	ErrorsSet bool
}

// IsZero reports whether no objective is set.
func (s SLO) IsZero() bool { return s.P95 == 0 && s.TTFT95 == 0 && !s.ErrorsSet }

// Num is a number written as null in JSON when it is undefined (NaN).
type Num float64

func (n Num) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return []byte(fmt.Sprintf("%.6g", f)), nil
}

// Estimate is a measure with its interval (NaN bounds when not computed).
type Estimate struct {
	Value Num `json:"value"`
	Lo    Num `json:"lo"`
	Hi    Num `json:"hi"`
	// N is the observations it rests on.
	N int `json:"n"`
}

// ErrorRate is the share of a step's requests that failed (of one kind, or
// of any), with its Wilson interval.
type ErrorRate struct {
	Kind  string `json:"kind,omitempty"` // "" for every kind together
	Count int    `json:"count"`
	N     int    `json:"n"`
	Rate  Num    `json:"rate"`
	Lo    Num    `json:"lo"`
	Hi    Num    `json:"hi"`
}

// StepResult is one step's findings.
type StepResult struct {
	Step    int       `json:"step"`
	Mode    string    `json:"mode"`
	Level   float64   `json:"level"`
	Started time.Time `json:"started,omitzero"`
	// DurationMS is the measured window; Sent, Done and OK count the
	// requests started in it, ended, and answered.
	DurationMS Num `json:"duration_ms"`
	Sent       int `json:"sent"`
	Done       int `json:"done"`
	OK         int `json:"ok"`
	// Throughput is the answers completed within the window per second;
	// OutputTokensPerSec their output tokens per second.
	Throughput         Num `json:"throughput_rps"`
	OutputTokensPerSec Num `json:"output_tokens_per_s"`
	// Latencies (answered requests) and times to first token (streamed
	// answers) in ms, with percentile bootstrap intervals over requests.
	P50    Estimate `json:"p50_ms"`
	P95    Estimate `json:"p95_ms"`
	P99    Estimate `json:"p99_ms"`
	TTFT50 Estimate `json:"ttft50_ms"`
	TTFT95 Estimate `json:"ttft95_ms"`
	// InterTokenMS is the mean gap between streamed tokens (NaN when
	// nothing streamed).
	InterTokenMS Num `json:"inter_token_ms"`
	// Errors is every failure together, ByKind each kind's (most first).
	Errors ErrorRate   `json:"errors"`
	ByKind []ErrorRate `json:"errors_by_kind,omitempty"`
	// CostUSD is the step's cost, CostPer1000 per 1,000 requests.
	CostUSD     Num `json:"cost_usd"`
	CostPer1000 Num `json:"cost_per_1000"`
	// The harness's health: CPU in cores of Cores, the p95 of how late it
	// started requests, and whether it was the bottleneck (Saturated,
	// with why).
	ClientCPU     Num    `json:"client_cpu"`
	Cores         int    `json:"cores"`
	LatenessP95MS Num    `json:"lateness_p95_ms"`
	Saturated     bool   `json:"saturated"`
	SaturatedWhy  string `json:"saturated_why,omitempty"`
	// MeetsSLO is set when every objective holds on its measure's upper
	// bound; Why says which failed or why it could not be judged.
	MeetsSLO bool   `json:"meets_slo"`
	Why      string `json:"why,omitempty"`
	// Skipped says why the step was not run.
	Skipped string `json:"skipped,omitempty"`
}

// TargetResult is one target's steps, in the order run.
type TargetResult struct {
	Target string       `json:"target"`
	Steps  []StepResult `json:"steps"`
}

// Knee is a target's highest level that meets the SLO, with the evidence.
type Knee struct {
	Target string `json:"target"`
	Found  bool   `json:"found"`
	// Mode and Level are the knee step's; Step its index (-1 when none).
	Mode  string  `json:"mode"`
	Level float64 `json:"level"`
	Step  int     `json:"step"`
	// Why is the evidence: what the knee step measured against the SLO and
	// what the next step broke (or why no knee was found).
	Why string `json:"why"`
	// Throughput and the latencies' upper bounds at the knee.
	Throughput Num `json:"throughput_rps"`
	P95Hi      Num `json:"p95_hi_ms"`
	// CostPer1000 at the knee step; CostPerMonth at RequestsPerMonth.
	CostPer1000      Num     `json:"cost_per_1000"`
	RequestsPerMonth float64 `json:"requests_per_month,omitempty"`
	CostPerMonth     Num     `json:"cost_per_month"`
	// VolumeRPS is RequestsPerMonth as a mean rate (30-day month);
	// Covers whether the knee's throughput reaches it.
	VolumeRPS Num  `json:"volume_rps"`
	Covers    bool `json:"covers_volume"`
}

// Result is a load test's findings.
type Result struct {
	Mode    string         `json:"mode"`
	Targets []TargetResult `json:"targets"`
	Knees   []Knee         `json:"knees"`
	SLO     SLO            `json:"slo"`
	// Alpha and Resamples are the intervals' level and bootstrap draws.
	Alpha     float64  `json:"alpha"`
	Resamples int      `json:"resamples"`
	Warnings  []string `json:"warnings,omitempty"`
}

// AnalyseOptions tune Analyse.
type AnalyseOptions struct {
	SLO SLO
	// Alpha is 1 − the intervals' confidence (default 0.05); Resamples
	// the bootstrap draws (default 2000); Seed seeds them.
	Alpha     float64
	Resamples int
	Seed      uint64
	// RequestsPerMonth is the spec's volume (0: no monthly cost).
	RequestsPerMonth float64
}
