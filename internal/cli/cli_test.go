package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/shareddata"
)

// result of one in-process invocation of the command line.
type invocation struct {
	code           int
	stdout, stderr string
}

type cliEnv struct {
	env        map[string]string
	interrupts chan os.Signal
}

// runCLI runs assay in-process, as main would, with its own environment.
func runCLI(t *testing.T, e cliEnv, args ...string) invocation {
	t.Helper()
	var out, errb bytes.Buffer
	g := &Globals{
		Stdin:  strings.NewReader(""),
		Stdout: &out,
		Stderr: &errb,
		Getenv: func(k string) string { return e.env[k] },
		Now:    time.Now,
	}
	if e.interrupts != nil {
		g.Interrupts = e.interrupts
	}
	code := Execute(context.Background(), args, g)
	return invocation{code, out.String(), errb.String()}
}

// repoRoot is the module root, found from this file's location.
func repoRoot(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("no caller")
	}
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// sharedData returns ../shared/data (see package shareddata for the CI rule).
func sharedData(t *testing.T) string { return shareddata.Path(t, "") }

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFileT(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
