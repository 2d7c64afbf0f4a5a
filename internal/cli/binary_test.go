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
	// Run as assay (assayBinary's link to this executable): the command,
	// not the tests.
	if filepath.Base(os.Args[0]) == asAssay {
		os.Exit(Main())
	}
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
	if selfDir != "" {
		os.RemoveAll(selfDir)
	}
	os.Exit(code)
}

// asAssay is the name under which this package's test binary runs as the
// assay command (TestMain).
const asAssay = "assay"

var (
	selfOnce sync.Once
	selfDir  string
	selfErr  error
)

// assayBinary is the assay command for tests that must kill it, signal it
// or run it from a script as a user would: this test binary itself, under
// a link named assay, which TestMain runs as cli.Main — the code
// cmd/assay's main is — so no test links a second 100 MB binary.
func assayBinary(t *testing.T) string {
	t.Helper()
	selfOnce.Do(func() {
		var exe string
		exe, selfErr = os.Executable()
		if selfErr != nil {
			return
		}
		selfDir, selfErr = os.MkdirTemp("", "assay-self-")
		if selfErr != nil {
			return
		}
		selfErr = os.Symlink(exe, filepath.Join(selfDir, asAssay))
	})
	if selfErr != nil {
		t.Fatal(selfErr)
	}
	return filepath.Join(selfDir, asAssay)
}

// testBuildVersion is the version stamped into the release build
// releaseBinary makes, as scripts/release.sh stamps its own.
const testBuildVersion = "v9.8.7-test"

// releaseBinary builds assay once per test process as a release is built
// (cgo off, the version stamped, the symbol table and DWARF left out:
// scripts/release.sh) for the test of what a stamped version does. Linking
// it costs seconds of CPU: only that long test uses it (assayBinary is the
// command everywhere else). It is built without -trimpath so that its
// packages are the ones the test build already compiled.
func releaseBinary(t *testing.T) string {
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
