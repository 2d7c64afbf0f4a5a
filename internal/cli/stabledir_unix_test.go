//go:build unix

package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// stableDir returns an empty directory named name whose path is the same in
// every run of the tests from this checkout, for a test that builds assay
// from a copy of the repository: the Go build cache keys each compiled
// package by its directory, so a copy at a new path each time recompiles
// every package of the module (some 15 s of CPU), where a copy at the same
// path reuses them and only links. Its parent holds nothing else (no
// ../shared beside the copy). The directory is locked against other test
// processes using it at once and removed when the test ends.
func stableDir(t *testing.T, name string) string {
	t.Helper()
	parent, unlock, err := keptDir(repoRoot(t), name)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(parent, name)
	clean := func() error { return os.RemoveAll(dir) }
	t.Cleanup(func() {
		if err := clean(); err != nil {
			t.Error(err)
		}
		unlock()
	})
	if err := clean(); err != nil { // left by a run that was killed
		t.Fatal(err)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// keptDir returns a directory whose path is the same in every run of the
// tests from the checkout at root (under the temporary directory, named for
// name and a hash of root), created when missing and kept after the tests,
// locked against other test processes until unlock is called.
func keptDir(root, name string) (dir string, unlock func(), err error) {
	sum := sha256.Sum256([]byte(root))
	dir = filepath.Join(os.TempDir(), "assay-test-"+name+"-"+hex.EncodeToString(sum[:6]))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", nil, err
	}
	lock, err := os.OpenFile(dir+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", nil, err
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		lock.Close()
		return "", nil, err
	}
	return dir, func() { lock.Close() }, nil // closing releases the lock
}
