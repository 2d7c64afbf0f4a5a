package dataset

import (
	"os"
	"runtime/debug"
	"testing"
)

// TestMain runs the collector at a quarter of its default frequency: the
// tests' garbage is short-lived, and the tests that bound memory read
// TotalAlloc or the heap in use after a forced collection, which it does
// not change.
func TestMain(m *testing.M) {
	debug.SetGCPercent(400)
	os.Exit(m.Run())
}
