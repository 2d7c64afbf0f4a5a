package analysis

import (
	"fmt"

	"github.com/assay-eval/assay/internal/record"
)

// rateLimitedKind is the stored error kind of a call the provider refused
// for its rate (provider.KindRateLimited; analysis does not import
// provider).
const rateLimitedKind = "rate_limited"

// rateLimitWarnings says, per target, how many calls failed on rate limits
// after every retry was spent. Those are loud failures in the target's
// rates, but they measure the harness (its requests per minute and
// concurrency), not the model: the fix is a limit, and the results can be
// called again.
func rateLimitWarnings(run *record.Run, ts []Target) []string {
	var out []string
	for _, t := range ts {
		if t.RateLimited == 0 {
			continue
		}
		out = append(out, fmt.Sprintf("%d calls to %s failed after exhausting retries on rate limits: raise limits.rpm or lower concurrency "+
			"(%d attempts behind its %d results; a harness problem, not the model's failure: "+
			"assay run %s --resume %s --retry-errors calls them again)",
			t.RateLimited, t.Name, t.Attempts, t.N, run.SpecPath, run.ID))
	}
	return out
}
