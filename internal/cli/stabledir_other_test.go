//go:build !unix

package cli

import (
	"os"
	"path/filepath"
	"testing"
)

// stableDir returns a new empty directory named name (see the unix version:
// without a file lock it cannot be shared between runs).
func stableDir(t *testing.T, name string) string {
	t.Helper()
	return filepath.Join(t.TempDir(), name)
}

// keptDir returns a new directory (see the unix version: without a file lock
// it cannot be shared between runs); unlock removes it.
func keptDir(root, name string) (dir string, unlock func(), err error) {
	dir, err = os.MkdirTemp("", "assay-test-"+name+"-")
	if err != nil {
		return "", nil, err
	}
	return dir, func() { os.RemoveAll(dir) }, nil
}
