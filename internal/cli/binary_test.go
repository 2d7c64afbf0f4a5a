package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"sync"
	"testing"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

func TestMain(m *testing.M) {
	// The package's tests allocate little that lives long, so the
	// collector runs at a quarter of the default frequency: a fifth less
	// CPU for the package (45 → 34 s of user time measured), memory no
	// object. Tests that bound allocation read TotalAlloc, which the
	// collector does not change.
	debug.SetGCPercent(400)
	undoPython := python3Bare()
	code := m.Run()
	undoPython()
	for _, dir := range []string{gsm8kShared.dir, gsm8kCanaryShared.dir} {
		if dir != "" {
			os.RemoveAll(dir)
		}
	}
	os.Exit(code)
}

// testBuildVersion is the version stamped into the test binary, as a
// release build stamps its own (see buildVersion).
const testBuildVersion = "v9.8.7-test"

// assayBinary builds the real binary once per test process (cgo off, the
// version stamped and the symbol table and DWARF left out, as a release is
// built: scripts/release.sh) for tests that must kill it or run it as a user
// would. Linking it costs seconds of CPU, so every such test shares this
// one; none may build its own. It is built without -trimpath so that its
// packages are the ones the test build already compiled.
func assayBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		root := repoRoot(t)
		dir, unlock, err := keptDir(root, "bin")
		if err != nil {
			binErr = err
			return
		}
		defer unlock() // held while building: another test process waits
		binPath = filepath.Join(dir, "assay")
		cmd := exec.Command("go", "build", "-ldflags", "-s -w -X github.com/assay-eval/assay/internal/cli.buildVersion="+testBuildVersion, "-o", binPath, "./cmd/assay")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		out, err := cmd.CombinedOutput()
		if err != nil {
			binErr = &buildError{err, string(out)}
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return "go build ./cmd/assay: " + e.err.Error() + "\n" + e.out }
