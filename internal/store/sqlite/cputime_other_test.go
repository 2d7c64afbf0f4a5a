//go:build !unix

package sqlite

import (
	"testing"
	"time"
)

// cpuTime is 0 where getrusage is missing: benchmarks report no
// per-CPU-second rate there.
func cpuTime(testing.TB) time.Duration { return 0 }
