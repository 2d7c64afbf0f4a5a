package engine

import (
	"context"
	"fmt"
	"slices"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/runner"
)

// TargetHealth is one target's run health (`run --json` health[]): over
// every result the run holds for the target (a resume counts what earlier
// invocations stored too).
type TargetHealth struct {
	Target string `json:"target"`
	// Expected is cases × epochs; Results those stored.
	Expected int `json:"expected"`
	Results  int `json:"results"`
	// Errors counts the results that failed for a provider reason (any
	// provider error kind, or an agent's tool handler failing), ErrorRate is Errors / Results (0 without
	// results), and Kinds breaks Errors down by kind.
	Errors    int            `json:"errors"`
	ErrorRate float64        `json:"error_rate"`
	Kinds     map[string]int `json:"error_kinds,omitempty"`
	// Unavailable is why the circuit breaker gave the target up during
	// this invocation ("5 consecutive auth failures (HTTP 401)"); its
	// calls not made are not stored.
	Unavailable string `json:"target_unavailable,omitempty"`
	// Unhealthy: ErrorRate above run.max_error_rate, or Unavailable.
	Unhealthy bool `json:"unhealthy"`
}

// Health tallies each of a run's targets' stored results: its provider
// error rate against maxRate, and whether it was given up (gaveUp).
func Health(ctx context.Context, rd record.Reader, run *record.Run, maxRate float64, gaveUp []runner.Unavailable) ([]TargetHealth, error) {
	provKinds := map[string]bool{}
	for _, k := range runner.Kinds() { // a tool handler's failures too
		provKinds[k] = true
	}
	by := map[string]*TargetHealth{}
	out := make([]TargetHealth, len(run.Targets))
	for i, name := range run.Targets {
		out[i] = TargetHealth{Target: name, Expected: run.Cases * run.Epochs}
		by[name] = &out[i]
	}
	err := rd.Results(ctx, run.ID, func(r record.Result) error {
		h := by[r.Target]
		if h == nil {
			return nil
		}
		h.Results++
		if provKinds[r.ErrorKind] {
			h.Errors++
			if h.Kinds == nil {
				h.Kinds = map[string]int{}
			}
			h.Kinds[r.ErrorKind]++
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the run's results for its health: %w", err)
	}
	for i := range out {
		h := &out[i]
		if h.Results > 0 {
			h.ErrorRate = float64(h.Errors) / float64(h.Results)
		}
		if j := slices.IndexFunc(gaveUp, func(u runner.Unavailable) bool { return u.Target == h.Target }); j >= 0 {
			h.Unavailable = gaveUp[j].Reason
		}
		h.Unhealthy = h.ErrorRate > maxRate || h.Unavailable != ""
	}
	return out, nil
}

// Unhealthy reports whether any target is unhealthy.
func Unhealthy(hs []TargetHealth) bool {
	return slices.ContainsFunc(hs, func(h TargetHealth) bool { return h.Unhealthy })
}
