// Package longtest decides whether the suite's long tests run: the seeded
// Monte Carlo simulations that measure a decision's size, power or coverage
// over thousands of synthetic runs, and the soaks (memory held flat over a
// large input, seconds of injected faults). They run under CI (CI=true) and
// whenever ASSAY_LONG_TESTS=1, unless -short; a plain `go test ./...` skips
// them so that the loop a developer runs stays short (about a minute and a
// half on two cores). Nothing else may use it: a test that checks behaviour
// against a reference is never long.
package longtest

import (
	"os"
	"testing"
)

// Env is the variable that runs the long tests outside CI.
const Env = "ASSAY_LONG_TESTS"

// Enabled reports whether the long tests run in this process.
func Enabled() bool {
	return os.Getenv(Env) == "1" || os.Getenv("CI") == "true"
}

// Skip skips t unless the long tests run, saying how to run it.
func Skip(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("a long test: -short skips it")
	}
	if !Enabled() {
		t.Skipf("a long test: runs under CI=true or %s=1", Env)
	}
}
