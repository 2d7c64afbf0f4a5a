//go:build unix

package sqlite

import "golang.org/x/sys/unix"

// accessW asks the kernel whether this process may write path: the
// permission bits, and EROFS on a read-only mount (which binds root too).
func accessW(path string) error { return unix.Access(path, unix.W_OK) }
