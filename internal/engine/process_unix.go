//go:build unix

package engine

import (
	"errors"
	"syscall"
)

// processAlive reports whether a process with this ID exists on this host
// (signal 0 checks without signalling; EPERM means it exists as another user).
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
