package cli

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/assay-eval/assay/internal/engine"
	"github.com/assay-eval/assay/internal/units"
)

// kindsText lists error kinds by count, most first: "auth 5, timeout 1".
func kindsText(kinds map[string]int) string {
	names := make([]string, 0, len(kinds))
	for k := range kinds {
		names = append(names, k)
	}
	sort.Slice(names, func(i, j int) bool {
		if kinds[names[i]] != kinds[names[j]] {
			return kinds[names[i]] > kinds[names[j]]
		}
		return names[i] < names[j]
	})
	parts := make([]string, len(names))
	for i, k := range names {
		parts[i] = fmt.Sprintf("%s %d", k, kinds[k])
	}
	return strings.Join(parts, ", ")
}

// printHealth writes one line per target: its results and provider error
// rate, flagged when above maxRate, and a loud target_unavailable line for
// a target the breaker gave up.
func printHealth(w io.Writer, hs []engine.TargetHealth, maxRate float64) {
	for _, h := range hs {
		line := fmt.Sprintf("  %s: %d of %d results, %d provider errors (%s)", h.Target, h.Results, h.Expected, h.Errors, units.Pct(h.ErrorRate))
		if len(h.Kinds) > 0 {
			line += ": " + kindsText(h.Kinds)
		}
		if h.ErrorRate > maxRate {
			line += fmt.Sprintf(" — above run.max_error_rate %s", units.Pct(maxRate))
		}
		fmt.Fprintln(w, line)
	}
	for _, h := range hs {
		if h.Unavailable != "" {
			fmt.Fprintf(w, "target_unavailable: %s: %s; its %d remaining calls were not made\n", h.Target, h.Unavailable, h.Expected-h.Results)
		}
	}
}

// ErrUnhealthy is returned when a run's provider errors exceed
// run.max_error_rate or a target was given up (exit 5); its results are
// kept and it can be resumed.
var ErrUnhealthy = errors.New("unhealthy run")

// unhealthyError says which targets made the run unhealthy and how to
// finish it once they are fixed.
func unhealthyError(hs []engine.TargetHealth, maxRate float64, specPath, runID string) error {
	var why []string
	retryKinds := map[string]bool{}
	for _, h := range hs {
		if !h.Unhealthy {
			continue
		}
		switch {
		case h.Unavailable != "":
			why = append(why, fmt.Sprintf("target_unavailable: %s: %s", h.Target, h.Unavailable))
		default:
			why = append(why, fmt.Sprintf("%s: %d of %d results failed (%s: %s), above run.max_error_rate %s",
				h.Target, h.Errors, h.Results, units.Pct(h.ErrorRate), kindsText(h.Kinds), units.Pct(maxRate)))
		}
		for k := range h.Kinds {
			retryKinds[k] = true
		}
	}
	kinds := make([]string, 0, len(retryKinds))
	for k := range retryKinds {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	hint := fmt.Sprintf("results are kept; fix the target, then finish the run with: assay run %s --resume %s", specPath, runID)
	if len(kinds) > 0 {
		hint += fmt.Sprintf(" (add --retry-errors --kinds %s to call the failed ones again)", strings.Join(kinds, ","))
	}
	return &ExitError{Code: ExitUnhealthy, Err: fmt.Errorf("%w: %s; %s", ErrUnhealthy, strings.Join(why, "; "), hint)}
}
