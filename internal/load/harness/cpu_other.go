//go:build !unix

package harness

import "time"

// processCPU is not measured on this system: saturation is then judged
// by the scheduler's lateness alone.
func processCPU() (time.Duration, bool) { return 0, false }
