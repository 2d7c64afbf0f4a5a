package cli

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/runner"
)

// retryKinds checks the --kinds of `run --retry-errors`: each must be a
// kind of provider failure a result can store. None given means the
// retryable ones (the kinds the retry wrapper tries again: rate limits,
// overload, server errors, time-outs, conflicts, network failures,
// malformed replies, truncated streams).
func retryKinds(values []string) ([]string, error) {
	valid := runner.Kinds() // a provider's failures and an agent's tool handlers'
	if len(values) == 0 {
		var out []string
		for _, k := range provider.Kinds() {
			if (&provider.Error{Kind: k}).Retryable() {
				out = append(out, string(k))
			}
		}
		return out, nil
	}
	var out, bad []string
	for _, v := range values {
		v = strings.TrimSpace(v)
		switch {
		case slices.Contains(valid, v):
			if !slices.Contains(out, v) {
				out = append(out, v)
			}
		default:
			bad = append(bad, fmt.Sprintf("%q", v))
		}
	}
	if len(bad) > 0 {
		return nil, usageError{fmt.Errorf("--kinds: %s: not a provider failure kind; kinds are: %s",
			strings.Join(bad, ", "), strings.Join(valid, ", "))}
	}
	return out, nil
}

// retryReport is the part of `run --json` about --retry-errors.
type retryReport struct {
	Kinds []string `json:"kinds"`
	// Selected is how many stored results had failed with those kinds;
	// Retried how many were called again and stored, FailedAgain how many
	// of those failed again.
	Selected    int `json:"selected"`
	Retried     int `json:"retried"`
	FailedAgain int `json:"failed_again"`
	// LaterScorings are the run's scorings after the first (rescores):
	// their verdicts on the retried results went with the old outputs.
	LaterScorings int `json:"later_scorings,omitempty"`
}

// printRetry says what --retry-errors did, and what the user must do when
// the run has rescores.
func printRetry(w io.Writer, runID string, rr *retryReport) {
	if rr.Selected == 0 {
		fmt.Fprintf(w, "retry-errors: no results of run %s failed with %s: nothing to call again\n", runID, strings.Join(rr.Kinds, ", "))
		return
	}
	fmt.Fprintf(w, "retry-errors: %d of %d failed results (%s) called again: %d succeed now, %d failed again\n",
		rr.Retried, rr.Selected, strings.Join(rr.Kinds, ", "), rr.Retried-rr.FailedAgain, rr.FailedAgain)
	if rr.LaterScorings > 0 && rr.Retried > 0 {
		fmt.Fprintf(w, "retry-errors: run %s has %d later scoring(s) (rescores); their verdicts on the retried results went with the old outputs, so those scorings now lack them: assay rescore %s scores the new outputs\n",
			runID, rr.LaterScorings, runID)
	}
}
