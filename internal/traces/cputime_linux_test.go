package traces

import (
	"syscall"
	"time"
)

// threadCPU is the CPU time the calling OS thread has used (benchmarks
// report it beside wall time: this machine is shared).
func threadCPU() time.Duration {
	var ru syscall.Rusage
	const rusageThread = 1
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
