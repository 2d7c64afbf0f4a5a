// Package isolation owns how assay runs a user's program apart from itself:
// the exec provider's targets and an agent loop's exec tool handlers run
// through it alike. It imports only the standard library; it must not
// import anything of assay.
//
// Each run of a Program:
//
//   - happens in a new directory made for that run (mode 0700, under the
//     system's temporary directory or Program.TempDir), which is also its
//     HOME and TMPDIR, and which is removed, with everything the program
//     wrote there, when the run ends; the working directory is root/work,
//     so that even "../x" lands inside the run's own root;
//   - sees only the environment Environment builds: PATH (assay's own, or
//     DefaultPath), LANG=C.UTF-8, ASSAY_SPEC_DIR, the platform's essentials
//     and the variables named in env:, plus HOME and TMPDIR (the run's
//     directory) unless named;
//   - is bounded in time (when the run's context ends, the program's whole
//     process group is killed) and in output (stdout past MaxOutput kills
//     it; only the last StderrTail bytes of stderr are kept), and when it
//     ends, anything it left running in its process group is killed.
//
// This is hygiene, not a sandbox: the program runs as the user, and can
// write by absolute path anywhere the user can.
package isolation

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// DefaultPath is the program's PATH when assay's own is empty.
const DefaultPath = "/usr/local/bin:/usr/bin:/bin"

// SpecDirVar is the variable that tells the program where the spec is.
const SpecDirVar = "ASSAY_SPEC_DIR"

const (
	// StderrTail is how much of the end of stderr is kept for error messages.
	StderrTail = 2 << 10
	// WaitDelay bounds how long to wait for stdout and stderr to close after
	// the program exited or was killed (a stray grandchild can hold them).
	WaitDelay = 2 * time.Second
)

// Program is a user's program resolved and ready to run isolated. It is
// safe for concurrent use: each run has its own process and directory.
type Program struct {
	Path      string       // the resolved executable
	Args      []string     // its arguments (Command resolves paths beside the spec)
	Env       []string     // what every run is given (Environment), but HOME and TMPDIR
	Named     []string     // the variables named in env: (they win over HOME and TMPDIR)
	TempDir   string       // where each run's directory is made ("" = os.TempDir())
	Prefix    string       // the name prefix of each run's directory ("assay-run-" when empty)
	MaxOutput int64        // the bound on stdout, in bytes (> 0)
	Hint      string       // the command as written, for messages
	Logger    *slog.Logger // where stray processes and leftover directories are reported (nil: slog.Default())
	Now       func() time.Time
}

// Result is what a run produced, also when it failed.
type Result struct {
	Stdout  []byte        // at most MaxOutput bytes
	Latency time.Duration // from the start to the end of the program (at least 1 ns)
	stderr  *tailBuffer
}

// StderrNote renders the tail of stderr for an error message: "" when
// stderr was empty, else "; stderr: ..." quoted so that escapes in it are
// shown rather than obeyed.
func (r *Result) StderrNote() string {
	if r == nil || r.stderr == nil {
		return ""
	}
	return r.stderr.describe()
}

// Failure says how a run failed.
type Failure int

const (
	// FailSetup: the run's directory could not be made; nothing ran.
	FailSetup Failure = iota + 1
	// FailOutputLimit: stdout passed MaxOutput; the program was killed.
	FailOutputLimit
	// FailContext: the run's context ended (its deadline or a cancel); the
	// program's process group was killed. The caller reads its context's
	// error to tell which.
	FailContext
	// FailExit: the program exited non-zero or was killed by a signal; Err
	// is the *exec.ExitError.
	FailExit
	// FailStart: the program could not be run (or waited for).
	FailStart
)

// RunError is a failed run.
type RunError struct {
	Failure Failure
	Err     error
}

func (e *RunError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("run failed (%d)", e.Failure)
	}
	return e.Err.Error()
}

func (e *RunError) Unwrap() error { return e.Err }

// ExitState describes how the program ended ("exit status 3", "signal:
// killed") when the run failed with FailExit, "" otherwise.
func (e *RunError) ExitState() string {
	var ee *osexec.ExitError
	if errors.As(e.Err, &ee) && ee.ProcessState != nil {
		return ee.ProcessState.String()
	}
	return ""
}

// errOutputLimit is the cause of a run stopped because stdout overflowed.
var errOutputLimit = errors.New("stdout over the limit")

// Run runs the program once in a directory of its own, with stdin as its
// standard input, and returns what it printed. A failure is a *RunError;
// the Result is returned with it whenever the program was started.
func (p *Program) Run(ctx context.Context, stdin []byte) (*Result, error) {
	runCtx, stop := context.WithCancelCause(ctx)
	defer stop(nil)

	work, removeWork, err := p.workDir()
	if err != nil {
		return nil, &RunError{Failure: FailSetup, Err: err}
	}
	defer removeWork()

	maxOut := p.MaxOutput
	if maxOut <= 0 {
		maxOut = 1 << 20
	}
	stdout := &boundedBuffer{limit: maxOut, overflow: func() { stop(errOutputLimit) }}
	stderr := &tailBuffer{keep: StderrTail}
	cmd := osexec.CommandContext(runCtx, p.Path, p.Args...)
	cmd.Dir = work
	cmd.Env = p.callEnv(work)
	cmd.Stdin = bytes.NewReader(stdin)
	cmd.Stdout = stdout
	cmd.Stderr = stderr
	cmd.WaitDelay = WaitDelay
	killGroupOnCancel(cmd)

	now := p.Now
	if now == nil {
		now = time.Now
	}
	start := now()
	runErr := cmd.Run()
	res := &Result{Latency: max(now().Sub(start), time.Nanosecond), stderr: stderr}
	if cmd.Process != nil {
		// Whatever the program left running in its group dies with the
		// run, before its directory is removed.
		killGroup(cmd)
	}
	res.Stdout = stdout.Bytes()

	if errors.Is(context.Cause(runCtx), errOutputLimit) {
		return res, &RunError{Failure: FailOutputLimit, Err: errOutputLimit}
	}
	if runErr != nil && ctx.Err() != nil {
		return res, &RunError{Failure: FailContext, Err: ctx.Err()}
	}
	if runErr != nil {
		var ee *osexec.ExitError
		switch {
		case errors.As(runErr, &ee):
			return res, &RunError{Failure: FailExit, Err: runErr}
		case errors.Is(runErr, osexec.ErrWaitDelay):
			// The program exited 0 but something it started kept stdout or
			// stderr open; what it printed before exiting is the reply, and
			// the stragglers (in its process group) were killed above.
			p.logger().Warn("program exited but a process it started kept its stdout or stderr open; killed its process group",
				"command", p.Hint, "waited", WaitDelay)
		default:
			return res, &RunError{Failure: FailStart, Err: runErr}
		}
	}
	return res, nil
}

func (p *Program) logger() *slog.Logger {
	if p.Logger != nil {
		return p.Logger
	}
	return slog.Default()
}

// UnsetEnvError says that a variable named in env: is not set in assay's
// environment. It names the variable, never a value.
type UnsetEnvError struct {
	Name  string
	Index int // position in the env: list
}

func (e *UnsetEnvError) Error() string {
	return fmt.Sprintf("environment variable %s (env[%d]) is not set; export it before running assay, or remove it from env", e.Name, e.Index)
}

// BadEnvNameError says that an entry of env: is not a variable name. It
// never echoes the entry: a mistaken entry may hold the value itself.
type BadEnvNameError struct {
	Index int
}

func (e *BadEnvNameError) Error() string {
	return fmt.Sprintf("env[%d] is not a variable name; write names such as MY_API_KEY, never values", e.Index)
}

// Environment is what every run of a program is given, but for HOME and
// TMPDIR, which name each run's own directory: PATH, LANG, ASSAY_SPEC_DIR
// (specDir), the platform's essentials, and the variables names lists, read
// through getenv (nil reads an empty environment), which win. A name that
// is not a variable name is a *BadEnvNameError; one getenv reports empty is
// an *UnsetEnvError.
func Environment(names []string, specDir string, getenv func(string) string) ([]string, error) {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	vars := map[string]string{
		"PATH":     getenv("PATH"),
		"LANG":     "C.UTF-8",
		SpecDirVar: specDir,
	}
	if vars["PATH"] == "" {
		vars["PATH"] = DefaultPath
	}
	for _, name := range platformVars() {
		if v := getenv(name); v != "" {
			vars[name] = v
		}
	}
	for i, name := range names {
		if !validEnvName(name) {
			return nil, &BadEnvNameError{Index: i}
		}
		v := getenv(name)
		if v == "" {
			return nil, &UnsetEnvError{Name: name, Index: i}
		}
		vars[name] = v
	}
	env := make([]string, 0, len(vars))
	for _, k := range slices.Sorted(maps.Keys(vars)) {
		env = append(env, k+"="+vars[k])
	}
	return env, nil
}

// callEnv is the environment of one run whose directory is work: the
// shared variables, and HOME and TMPDIR set to work unless named.
func (p *Program) callEnv(work string) []string {
	env := make([]string, 0, len(p.Env)+2)
	env = append(env, p.Env...)
	for _, k := range []string{"HOME", "TMPDIR"} {
		if !slices.Contains(p.Named, k) {
			env = append(env, k+"="+work)
		}
	}
	return env
}

// validEnvName reports whether s is a portable environment variable name.
func validEnvName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_', r >= 'A' && r <= 'Z', r >= 'a' && r <= 'z':
		case r >= '0' && r <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// Command resolves a command's program and arguments against dir, the
// spec's directory (absolute): a program path with a slash is relative to
// dir and must be an executable file; a bare name is looked up in PATH.
// Arguments that name existing paths beside the spec become absolute (see
// ResolveArgs).
func Command(argv []string, dir string) (path string, args []string, err error) {
	if len(argv) == 0 || argv[0] == "" {
		return "", nil, errors.New("command is empty")
	}
	path, err = resolveCommand(argv[0], dir)
	if err != nil {
		return "", nil, err
	}
	return path, ResolveArgs(argv[1:], dir), nil
}

// resolveCommand finds the executable a command names.
func resolveCommand(name, dir string) (string, error) {
	if !strings.ContainsRune(name, '/') && !strings.ContainsRune(name, filepath.Separator) {
		p, err := osexec.LookPath(name)
		if err != nil {
			return "", fmt.Errorf("command %q not found in PATH; give a path (e.g. ./bin/%s, relative to the spec) or install it: %w", name, name, err)
		}
		return p, nil
	}
	p := name
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	fi, err := os.Stat(p)
	if err != nil {
		return "", fmt.Errorf("command %q: %w (paths are relative to the spec's directory %s)", name, err, dir)
	}
	if fi.IsDir() {
		return "", fmt.Errorf("command %q is a directory; want an executable program", name)
	}
	if !isExecutable(fi) {
		return "", fmt.Errorf("command %q is not executable (mode %v); chmod +x it", name, fi.Mode().Perm())
	}
	return p, nil
}

// ResolveArgs makes arguments that name existing paths beside the spec
// absolute, so they mean what they meant when programs ran in the spec's
// directory: a relative argument not starting with "-" that names a
// regular file in dir, or that contains a slash and names a file or a
// directory there. Anything else (flags, words, a bare name that is only a
// directory, which is more likely a subcommand) is passed as written.
func ResolveArgs(args []string, dir string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = a
		if a == "" || strings.HasPrefix(a, "-") || filepath.IsAbs(a) {
			continue
		}
		p := filepath.Join(dir, a)
		fi, err := os.Stat(p)
		if err != nil {
			continue
		}
		if fi.Mode().IsRegular() || strings.ContainsRune(a, '/') || strings.ContainsRune(a, filepath.Separator) {
			out[i] = p
		}
	}
	return out
}

// workDir makes the directory one run happens in and returns it with the
// function that removes it. The run's working directory, HOME and TMPDIR
// are root/work, so that even "../x" lands inside root.
func (p *Program) workDir() (work string, remove func(), err error) {
	prefix := p.Prefix
	if prefix == "" {
		prefix = "assay-run-"
	}
	root, err := os.MkdirTemp(p.TempDir, prefix)
	if err != nil {
		return "", nil, err
	}
	if abs, err := filepath.Abs(root); err == nil {
		root = abs // a relative TMPDIR must not make HOME relative
	}
	work = filepath.Join(root, "work")
	if err := os.Mkdir(work, 0o700); err != nil {
		os.RemoveAll(root)
		return "", nil, err
	}
	return work, func() {
		if err := removeTree(root); err != nil {
			p.logger().Warn("could not remove a run's temporary directory", "dir", root, "err", err)
		}
	}, nil
}

// removeTree removes dir and everything in it, also what its program made
// read-only.
func removeTree(dir string) error {
	if err := os.RemoveAll(dir); err == nil {
		return nil
	}
	// A directory without write permission keeps its entries: make every
	// directory writable and try again.
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(path, 0o700)
		}
		return nil
	})
	return os.RemoveAll(dir)
}
