// Package sample owns samples of stored traces: simple (reservoir) and
// stratified draws by time window, model or any attribute, seeded and
// recorded with each item's selection probability; and the rates estimated
// from a scored sample, weighted by those probabilities, with intervals.
package sample

import "time"

// Estimate is one model × scorer pass rate estimated over a sample's
// population.
type Estimate struct {
	Model  string `json:"model"`
	Scorer string `json:"scorer"`
	// N is how many sampled traces were scored; Population the traces
	// they stand for (the sum of their weights).
	N          int     `json:"n"`
	Population float64 `json:"population"`
	// Rate is the weighted pass rate with its standard error and interval
	// at Level; Unweighted the plain share of sampled traces that passed.
	Rate       float64 `json:"rate"`
	SE         float64 `json:"se"`
	Lo         float64 `json:"lo"`
	Hi         float64 `json:"hi"`
	Unweighted float64 `json:"unweighted"`
}

// ScoreReport is what `assay score-traces` prints: the run it stored and
// the weighted rates.
type ScoreReport struct {
	RunID string `json:"run_id"`
	// Status is the run's: complete, or interrupted when stopped before
	// every trace was scored (the rates are then of those scored).
	Status   string    `json:"status"`
	SampleID string    `json:"sample_id"`
	Since    time.Time `json:"since"`
	Until    time.Time `json:"until"`
	Level    float64   `json:"level"`
	Traces   int       `json:"traces"`
	// Scorers are the scorers applied, Primary the headline score.
	Scorers []string   `json:"scorers"`
	Primary string     `json:"primary"`
	Rates   []Estimate `json:"rates"`
	// Redacted counts the scored traces in which the privacy redaction
	// (traces.redact) replaced anything before they were stored;
	// Redactions the values it replaced in them.
	Redacted   int `json:"redacted_traces"`
	Redactions int `json:"redactions"`
	// Skipped names the spec's scorers that cannot score production
	// traffic (they need an expected value, or two answers to one case),
	// each with why.
	Skipped []string `json:"skipped,omitempty"`
}
