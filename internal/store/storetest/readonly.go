package storetest

import (
	"os"
	"path/filepath"
	"testing"
)

// ReadOnly makes the directory dir (holding a store) unwritable for this
// process and returns the path to read it at: for root, whom permissions do
// not stop, a read-only bind mount of dir (the test is skipped where mounts
// are not allowed); for anyone else, dir itself with its files and itself
// made read-only. Both are undone when the test ends.
func ReadOnly(t testing.TB, dir string) string {
	t.Helper()
	if os.Geteuid() == 0 {
		mnt := t.TempDir()
		if err := bindReadOnly(dir, mnt); err != nil {
			t.Skipf("cannot make a read-only bind mount here: %v", err)
		}
		t.Cleanup(func() { _ = unmount(mnt) })
		return mnt
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := os.Chmod(filepath.Join(dir, e.Name()), 0o444); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(dir, 0o755) })
	return dir
}
