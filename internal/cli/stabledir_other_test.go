//go:build !unix

package cli

import (
	"path/filepath"
	"testing"
)

// stableDir returns a new empty directory named name (see the unix version:
// without a file lock it cannot be shared between runs).
func stableDir(t *testing.T, name string) string {
	t.Helper()
	return filepath.Join(t.TempDir(), name)
}
