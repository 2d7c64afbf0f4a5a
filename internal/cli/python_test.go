package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// python3WithoutShim makes `python3` on this process's PATH the
// interpreter it already runs, minus any shim in front of it, and returns a
// function that undoes it. A version manager's shim (pyenv's is a shell
// script that runs pyenv on every call) costs ~0.2 s of CPU and up to a
// second of wall time per call on a loaded machine, three to six times the
// interpreter's own start, and the exec targets and tools of this
// package's tests (the templates, the example pipeline) start python3 about
// ninety times. The interpreter is the one the shim picks, as Python itself
// reports it (sys.executable), put first on PATH through a symbolic link in
// a temporary directory; without python3, or without a shim, nothing
// changes. Only TestMain calls it, before any test runs.
func python3WithoutShim() (undo func()) {
	undo = func() {}
	onPath, err := exec.LookPath("python3")
	if err != nil {
		return undo
	}
	out, err := exec.Command(onPath, "-c", "import sys; print(sys.executable)").Output()
	exe := strings.TrimSpace(string(out))
	if err != nil || !filepath.IsAbs(exe) || exe == onPath {
		return undo
	}
	dir, err := os.MkdirTemp("", "assay-test-python3-")
	if err != nil {
		return undo
	}
	path := os.Getenv("PATH")
	if os.Symlink(exe, filepath.Join(dir, "python3")) != nil || os.Setenv("PATH", dir+string(os.PathListSeparator)+path) != nil {
		os.RemoveAll(dir)
		return undo
	}
	return func() {
		os.Setenv("PATH", path)
		os.RemoveAll(dir)
	}
}
