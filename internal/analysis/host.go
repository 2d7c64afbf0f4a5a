package analysis

import (
	"encoding/json"
	"fmt"

	"github.com/assay-eval/assay/internal/host"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/spec"
)

// hostWarnings warns when the host was saturated while the run's calls
// were made (its 1-minute load above its cores at some sample): latency
// figures, a latency scorer's verdicts and p95 above all, then measure the
// machine as much as the model, most of all for local targets (exec, a
// local server) that share its CPUs with the other targets' workers.
func hostWarnings(run *record.Run) []string {
	l, err := host.Decode(run.Host)
	if err != nil {
		return []string{fmt.Sprintf("the run's host record cannot be read (%v): whether the host was saturated is unknown", err)}
	}
	if !l.Saturated() {
		return nil
	}
	w := fmt.Sprintf("the host was saturated during this run: 1-minute load up to %.1f on %d cores (above the cores in %d of %d samples); latency figures measure the machine as much as the model",
		l.Max, l.Cores, l.Over, l.Samples)
	var sp spec.Spec
	if len(run.Config) > 0 && json.Unmarshal(run.Config, &sp) == nil && sp.Run.Schedule == spec.ScheduleSequential {
		return []string{w + ", though its targets already ran one after another: lower limits.concurrency or free the machine for latency-sensitive comparisons"}
	}
	return []string{w + "; for latency-sensitive comparisons run the targets one after another with run: {schedule: sequential}"}
}
