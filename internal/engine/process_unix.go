//go:build unix

package engine

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"syscall"
)

// processAlive reports whether a process with this ID is running on this
// host (signal 0 checks without signalling; EPERM means it exists as
// another user). A zombie — a process killed (say by kill -9 or the OOM
// killer) that its parent has not yet reaped, which in a container without
// an init can last until the container ends — has exited and holds no
// lease: on Linux its state in /proc says so.
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	if err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	return !zombie(pid)
}

// zombie reports whether /proc says the process has exited but is not yet
// reaped (state Z, or X while it is being removed); false where /proc is
// not readable.
func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// pid (comm) state ...: comm may hold spaces and parentheses, so the
	// state follows the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return false
	}
	return b[i+2] == 'Z' || b[i+2] == 'X'
}
