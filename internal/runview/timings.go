package runview

import "github.com/assay-eval/assay/internal/record"

// Timings is the part of a run's view a reader that needs only latency
// and time-to-first-token percentiles keeps (the report): per target the
// columns Target.Latencies and Target.FirstTokens read, filled in the order
// results arrive, without a case index or the other columns. The values
// and the rule that picks them are the view's own (Latency, FirstToken,
// Behaved), so its percentiles are the gate's. About 17 bytes per result
// instead of the full view's few dozen plus a case index.
type Timings struct {
	targets map[string]*Target
}

// NewTimings returns empty timings.
func NewTimings() *Timings { return &Timings{targets: map[string]*Target{}} }

// Add records a result's latency, time to first token and whether its
// call failed. Not safe for concurrent use.
func (m *Timings) Add(r *record.Result) {
	t := m.targets[r.Target]
	if t == nil {
		t = &Target{Name: r.Target}
		m.targets[r.Target] = t
	}
	t.LatencyMS = append(t.LatencyMS, Latency(r))
	t.FirstTokenMS = append(t.FirstTokenMS, FirstToken(r))
	t.Errored = append(t.Errored, r.ErrorKind != "")
}

// Target returns the named target's timings (Latencies and FirstTokens
// are the ones to read), or nil when it has no result.
func (m *Timings) Target(name string) *Target { return m.targets[name] }
