package analysis

import "fmt"

// UnhealthySides says, per side and target (only target when it is not
// ""), why a side cannot be judged because more of its calls failed than
// maxErrorRate allows — the check DriftSides makes per target, on its own,
// so a command that refuses a partial side first (a run its provider
// stopped early: a bad key trips the circuit breaker after a few calls)
// can name the cause rather than only the missing cases. Results a side
// never made are counted when its snapshot knows the cases.
func UnhealthySides(maxErrorRate float64, target string, sides ...*DriftSide) []string {
	if maxErrorRate == 0 {
		maxErrorRate = DefaultDriftMaxErrorRate
	}
	var why []string
	for _, s := range sides {
		for _, t := range s.Snap.Targets {
			if target != "" && t.Name != target {
				continue
			}
			h := sideHealth(t)
			if h.Calls == 0 || float64(h.Failed) <= maxErrorRate*float64(h.Calls) {
				continue
			}
			msg := fmt.Sprintf("cannot judge: %d of %d calls of %s in %s failed: %s", h.Failed, h.Calls, t.Name, sideName(s), kindList(h.Kinds))
			if n := len(t.LatencyMS); n > h.Calls {
				msg += fmt.Sprintf(" (%d of its %d results were never made)", n-h.Calls, n)
			}
			why = append(why, msg)
		}
	}
	return why
}
