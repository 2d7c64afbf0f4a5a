package serve

import (
	"os"
	"runtime/debug"
	"testing"
)

// TestMain runs the collector at a quarter of its default frequency: the
// tests' garbage is short-lived, and none of them bounds memory.
func TestMain(m *testing.M) {
	debug.SetGCPercent(400)
	os.Exit(m.Run())
}
