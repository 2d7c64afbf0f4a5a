package selftest

import (
	"os"
	"runtime/debug"
	"testing"
)

// TestMain runs the collector at a quarter of its default frequency: the
// null models' outputs are short-lived garbage, and the tests assert no
// memory figure.
func TestMain(m *testing.M) {
	debug.SetGCPercent(400)
	os.Exit(m.Run())
}
