// Package shareddata locates the public data sets in ../shared/data (GSM8K
// with recorded model outputs, GSM1K, LSAT) for tests that check assay
// against the world. It holds the one rule such tests follow: when the data
// is missing, a test fails under CI (CI=true) and is skipped elsewhere. Only
// tests import it.
package shareddata

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Root is ../shared/data beside the module root.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "shared", "data")
}

// Path returns the path of name inside the shared data (name may be ""),
// failing t under CI and skipping it elsewhere when it does not exist.
func Path(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join(Root(), name)
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI needs the shared data %s: %v", p, err)
		}
		t.Skipf("shared data %s not present: %v", p, err)
	}
	return p
}
