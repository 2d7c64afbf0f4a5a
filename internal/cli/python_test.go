package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// python3Bare makes `python3` on this process's PATH the interpreter that
// PATH's python3 runs, started as a fresh virtual environment: no shim in
// front of it and no site-packages behind it. It returns a function that
// undoes it.
//
// The exec targets and tools of this package's tests (the templates, the
// example pipeline) start python3 about ninety times, and need only its
// standard library, as a user's fresh environment has. A version manager's
// shim (pyenv's is a shell script that runs pyenv on every call) costs
// ~0.2 s of CPU per call, and an installation's site-packages may run code
// at every start (a .pth file importing certifi took 0.07 s of CPU per
// start here, against 0.017 s without it). The interpreter is the one PATH's
// python3 picks, as Python itself reports it (sys._base_executable, or
// sys.executable: outside a venv they are the same), linked as
// bin/python3 of a temporary directory that holds a pyvenv.cfg naming its
// home: Python then starts as in a venv made by `python3 -m venv`, its
// standard library from the interpreter's installation, its site-packages
// the (empty) environment's. Without python3, or when the environment
// cannot start, nothing changes. Only TestMain calls it, before any test
// runs.
func python3Bare() (undo func()) {
	undo = func() {}
	onPath, err := exec.LookPath("python3")
	if err != nil {
		return undo
	}
	out, err := exec.Command(onPath, "-c", "import sys; print(getattr(sys, '_base_executable', '') or sys.executable)").Output()
	exe := strings.TrimSpace(string(out))
	if err != nil || !filepath.IsAbs(exe) {
		return undo
	}
	dir, err := os.MkdirTemp("", "assay-test-python3-")
	if err != nil {
		return undo
	}
	bin := filepath.Join(dir, "bin")
	cfg := "home = " + filepath.Dir(exe) + "\ninclude-system-site-packages = false\n"
	path := os.Getenv("PATH")
	if os.Mkdir(bin, 0o755) != nil ||
		os.WriteFile(filepath.Join(dir, "pyvenv.cfg"), []byte(cfg), 0o644) != nil ||
		os.Symlink(exe, filepath.Join(bin, "python3")) != nil ||
		exec.Command(filepath.Join(bin, "python3"), "-c", "import json").Run() != nil ||
		os.Setenv("PATH", bin+string(os.PathListSeparator)+path) != nil {
		os.RemoveAll(dir)
		return undo
	}
	return func() {
		os.Setenv("PATH", path)
		os.RemoveAll(dir)
	}
}
