// Package exec owns the exec provider: it evaluates the user's own program —
// a RAG app, an agent, any pipeline — rather than a bare model, by running it
// once per request. It imports only the provider and spec packages and the
// standard library; it must not import the runner, scorer or store.
//
// # Protocol
//
// For every request assay starts the target's command (argv, never a shell)
// in a fresh, empty temporary directory of its own, with a clean
// environment, and removes that directory when the call ends (see
// Isolation below). It writes one JSON object, followed by a newline, on the
// program's stdin and closes it:
//
//	{"case_id": "17", "epoch": 1, "model": "my-rag",
//	 "messages": [{"role": "system", "content": "..."}, {"role": "user", "content": "..."}],
//	 "params": {"temperature": 0, "max_tokens": 512},
//	 "vars": {"question": "..."}}
//
// "epoch" numbers the repetitions of a case from 1 (the first, and the only
// one with one epoch) to run.epochs: the runner's numbering, passed as is.
// "messages" is the rendered prompt and "vars" the case's own fields, so the
// program can use either; fields withheld by the caller (assay withholds the
// dataset's expected field: the answer key) are left out of "vars". The program prints one JSON object on stdout and
// exits 0:
//
//	{"output": "the answer", "usage": {"input": 812, "output": 64, "cached": 0},
//	 "finish_reason": "stop", "model": "gpt-x-2025-01-01", "error": ""}
//
// A request with tools also carries "tools" (each {"name", "description",
// "parameters"}), "tool_choice" (auto, none, required or a tool's name) and
// "response_format" ({"name", "schema", "strict"}) when set, and its
// messages may hold an assistant's "tool_calls" and tool results (role
// "tool" with "tool_call_id"). The program may answer the calls its model
// made beside the output:
//
//	{"output": "", "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}, "id": "c1"}]}
//
// Each call needs a name; its arguments are a string (the text as the model
// wrote it, valid JSON or not) or any JSON value (kept as its compact text).
//
// Only "output" is required, and not even it when "tool_calls" holds a
// call. A string is the reply as is; any other JSON
// value (an object, an array, a number) becomes its compact JSON text. Unknown
// fields are ignored. A non-empty "error" reports that the pipeline failed on
// this case; the call then fails with kind exec_error. Diagnostics belong on
// stderr, which is kept (its last 2 KiB) for error messages. docs/spec.md
// documents the protocol for users, with an example program its test runs.
//
// Failures are classified:
//   - the program exits non-zero (or is killed by a signal): exec_error, with
//     the exit status and the tail of its stderr;
//   - stdout is empty, not one JSON object, or lacks "output": invalid_reply,
//     quoting the first 200 bytes printed;
//   - stdout exceeds max_output_bytes (default 1 MiB): output_limit, and the
//     program is killed;
//   - the request's context ends (its deadline is the per-request time-out,
//     which the provider wrappers set): timeout on a deadline, canceled when
//     the run was interrupted; either way the program's whole process group
//     is killed, so helpers it started die with it.
//
// # Isolation
//
// A program under test must not be able to change what it is graded
// against, nor see more than it needs. Each call therefore:
//
//   - runs in a new directory made for that call (mode 0700, under the
//     system's temporary directory), which is also its HOME and TMPDIR, and
//     which is removed, with everything the program wrote there, when the
//     call ends; a file the program writes by a relative path ("answers.txt",
//     "../expected.json") never lands beside the spec;
//   - sees only PATH (assay's own), HOME and TMPDIR (that directory),
//     LANG=C.UTF-8, ASSAY_SPEC_DIR (the spec's directory, absolute) and the
//     variables the target names in env:, copied from assay's environment
//     (a named variable wins over the defaults: name HOME to give the
//     program your own); a named variable that is unset is an error before
//     any call;
//   - is bounded in time (the per-request time-out kills its whole process
//     group) and in output (max_output_bytes), and when it ends, anything
//     it left running in its process group is killed.
//
// This is hygiene, not a sandbox: the program runs as the user, and can
// write by absolute path anywhere the user can. Scorers are what make
// grading safe: they read only the recorded output, never a file.
//
// Paths: a command path with a slash is relative to the spec's directory; a
// bare name is looked up in PATH. Because the program does not start in the
// spec's directory, an argument that names an existing path beside the spec
// is passed as an absolute path: a relative argument (not starting with "-")
// that names a regular file there ("app.py"), or that contains a slash and
// names a file or directory there ("data/", "./config.yaml"). Other files a
// program opens by relative path must be found through ASSAY_SPEC_DIR or
// relative to the program's own location.
//
// The program's stdout must carry nothing but the reply. A program that
// exits leaving a background process holding its stdout open delays its call
// by two seconds, after which assay takes what it printed and kills the
// process group.
package exec

import (
	"bytes"
	"context"
	"encoding/json"
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

	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/spec"
)

// DefaultMaxOutputBytes bounds a program's stdout when the target sets no max_output_bytes.
const DefaultMaxOutputBytes = 1 << 20

const (
	// stderrTail is how much of the end of stderr is kept for error messages.
	stderrTail = 2 << 10
	// waitDelay bounds how long to wait for stdout and stderr to close after
	// the program exited or was killed (a stray grandchild can hold them).
	waitDelay = 2 * time.Second
)

// Provider runs a target's command once per request. It is safe for
// concurrent use: each call starts its own process in its own directory.
type Provider struct {
	path     string // resolved executable
	args     []string
	env      []string // the environment every call shares
	named    []string // the variables the target named in env:
	tempBase string   // where each call's directory is made ("" = os.TempDir())
	withhold []string // case fields left out of "vars"
	model    string
	maxOut   int64
	logger   *slog.Logger
	argvHint string // the command as written, for messages
	now      func() time.Time
}

// Options configure how a Provider runs its program beyond what the target
// says.
type Options struct {
	// Getenv reads assay's own environment. PATH and the variables the
	// target names in env: are copied from it when the provider is made;
	// nil reads an empty environment.
	Getenv func(string) string
	// TempDir is the directory each call's own directory is made in
	// (default: the system's temporary directory).
	TempDir string
	// Withhold names case fields never sent to the program in "vars" (the
	// expected answer: a program must not see the answer key).
	Withhold []string
	// Now is the clock a call's latency is read from (the process's one
	// clock, registry.Env.Now); nil means time.Now.
	Now func() time.Time
}

// DefaultPath is the program's PATH when assay's own is empty.
const DefaultPath = "/usr/local/bin:/usr/bin:/bin"

// SpecDirVar is the variable that tells the program where the spec is.
const SpecDirVar = spec.SpecDirVar

// UnsetEnvError says that a variable a target names in env: is not set in
// assay's environment. It names the variable, never a value.
type UnsetEnvError struct {
	Target string
	Name   string
	Index  int // position in the target's env: list
}

func (e *UnsetEnvError) Error() string {
	return fmt.Sprintf("exec target %q: environment variable %s (env[%d]) is not set; export it before running assay, or remove it from env", e.Target, e.Name, e.Index)
}

// New checks t's command and environment and returns a provider that runs
// it. dir is the spec's directory: a command path with a slash, and
// arguments naming existing paths there, are resolved against it (see the
// package documentation); a bare command name is looked up in PATH. A
// variable named in t.Env that o.Getenv reports empty is an
// *UnsetEnvError.
func New(t *spec.Target, dir string, o Options) (*Provider, error) {
	if t == nil {
		return nil, errors.New("exec provider: nil target")
	}
	if len(t.Command) == 0 || t.Command[0] == "" {
		return nil, fmt.Errorf("exec target %q: command is empty; want the program and its arguments, e.g. command: [\"./bin/app\", \"--eval\"]", t.Name)
	}
	if t.MaxOutputBytes < 0 {
		return nil, fmt.Errorf("exec target %q: max_output_bytes is %d; want a positive number of bytes (default %d)", t.Name, t.MaxOutputBytes, DefaultMaxOutputBytes)
	}
	if dir == "" {
		dir = "."
	}
	absDir, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("exec target %q: resolving directory %s: %w", t.Name, dir, err)
	}
	path, err := resolveCommand(t.Command[0], absDir)
	if err != nil {
		return nil, fmt.Errorf("exec target %q: %w", t.Name, err)
	}
	env, err := environment(t, absDir, o.Getenv)
	if err != nil {
		return nil, err
	}
	maxOut := t.MaxOutputBytes
	if maxOut == 0 {
		maxOut = DefaultMaxOutputBytes
	}
	p := &Provider{
		path:     path,
		args:     resolveArgs(t.Command[1:], absDir),
		env:      env,
		named:    append([]string(nil), t.Env...),
		tempBase: o.TempDir,
		withhold: append([]string(nil), o.Withhold...),
		model:    t.Model,
		maxOut:   maxOut,
		logger:   slog.Default().With("provider", "exec", "target", t.Name),
		argvHint: t.Command[0],
		now:      o.Now,
	}
	if p.now == nil {
		p.now = time.Now
	}
	return p, nil
}

// environment is what every call of t's program is given, but for HOME and
// TMPDIR, which name each call's own directory: PATH, LANG, ASSAY_SPEC_DIR,
// the platform's essentials, and the variables t names, which win.
func environment(t *spec.Target, specDir string, getenv func(string) string) ([]string, error) {
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
	for i, name := range t.Env {
		if !validEnvName(name) {
			// Never echo it: a mistaken entry may hold the value itself.
			return nil, fmt.Errorf("exec target %q: env[%d] is not a variable name; write names such as MY_API_KEY, never values", t.Name, i)
		}
		v := getenv(name)
		if v == "" {
			return nil, &UnsetEnvError{Target: t.Name, Name: name, Index: i}
		}
		vars[name] = v
	}
	env := make([]string, 0, len(vars))
	for _, k := range slices.Sorted(maps.Keys(vars)) {
		env = append(env, k+"="+vars[k])
	}
	return env, nil
}

// callEnv is the environment of one call whose directory is work: the
// shared variables, and HOME and TMPDIR set to work unless the target named
// them.
func (p *Provider) callEnv(work string) []string {
	env := make([]string, 0, len(p.env)+2)
	env = append(env, p.env...)
	for _, k := range []string{"HOME", "TMPDIR"} {
		if !slices.Contains(p.named, k) {
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

// resolveArgs makes arguments that name existing paths beside the spec
// absolute, so they mean what they meant when programs ran in the spec's
// directory: a relative argument not starting with "-" that names a
// regular file in dir, or that contains a slash and names a file or a
// directory there. Anything else (flags, words, a bare name that is only a
// directory, which is more likely a subcommand) is passed as written.
func resolveArgs(args []string, dir string) []string {
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

// workDir makes the directory one call runs in and returns it with the
// function that removes it. The call's working directory, HOME and TMPDIR
// are root/work, so that even "../x" lands inside root.
func (p *Provider) workDir() (work string, remove func(), err error) {
	root, err := os.MkdirTemp(p.tempBase, "assay-exec-")
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
			p.logger.Warn("could not remove a call's temporary directory", "dir", root, "err", err)
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

// wireRequest is what the program reads on stdin.
type wireRequest struct {
	CaseID   string             `json:"case_id"`
	Epoch    int                `json:"epoch"`
	Model    string             `json:"model"`
	Messages []provider.Message `json:"messages"`
	Params   provider.Params    `json:"params"`
	Vars     map[string]any     `json:"vars"`
	// The request's tools, tool choice and response format, when set.
	Tools          []provider.Tool          `json:"tools,omitempty"`
	ToolChoice     string                   `json:"tool_choice,omitempty"`
	ResponseFormat *provider.ResponseFormat `json:"response_format,omitempty"`
}

func (p *Provider) encodeRequest(req *provider.Request) ([]byte, error) {
	w := wireRequest{
		CaseID:   req.CaseID,
		Epoch:    req.Epoch,
		Model:    req.Model,
		Messages: req.Messages,
		Params:   req.Params,
		Vars:     req.Vars,

		Tools:          req.Tools,
		ToolChoice:     req.ToolChoice,
		ResponseFormat: req.ResponseFormat,
	}
	if w.Model == "" {
		w.Model = p.model
	}
	if w.Messages == nil {
		w.Messages = []provider.Message{}
	}
	if w.Vars == nil || len(p.withhold) > 0 {
		w.Vars = make(map[string]any, len(req.Vars))
		for k, v := range req.Vars {
			if !slices.Contains(p.withhold, k) {
				w.Vars[k] = v
			}
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(w); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// errOutputLimit is the cause of a run stopped because stdout overflowed.
var errOutputLimit = errors.New("stdout over the limit")

// Complete runs the program once for req.
func (p *Provider) Complete(ctx context.Context, req *provider.Request) (*provider.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, contextError(err, "")
	}
	payload, err := p.encodeRequest(req)
	if err != nil {
		return nil, &provider.Error{Kind: provider.KindBadRequest, Msg: "encoding the request for " + p.argvHint, Err: err}
	}
	runCtx, stop := context.WithCancelCause(ctx)
	defer stop(nil)

	work, removeWork, err := p.workDir()
	if err != nil {
		return nil, &provider.Error{Kind: provider.KindExec, Msg: "making the call's temporary directory for " + p.argvHint, Err: err}
	}
	defer removeWork()

	stdout := &boundedBuffer{limit: p.maxOut, overflow: func() { stop(errOutputLimit) }}
	stderr := &tailBuffer{keep: stderrTail}
	cmd := osexec.CommandContext(runCtx, p.path, p.args...)
	cmd.Dir = work
	cmd.Env = p.callEnv(work)
	cmd.Stdin = bytes.NewReader(payload)
	cmd.Stdout = stdout
	cmd.Stderr = stderr
	cmd.WaitDelay = waitDelay
	killGroupOnCancel(cmd)

	start := p.now()
	runErr := cmd.Run()
	latency := max(p.now().Sub(start), time.Nanosecond)
	if cmd.Process != nil {
		// Whatever the program left running in its group dies with the
		// call, before its directory is removed.
		killGroup(cmd)
	}

	if errors.Is(context.Cause(runCtx), errOutputLimit) {
		return nil, &provider.Error{Kind: provider.KindOutputLimit,
			Msg: fmt.Sprintf("%s printed more than %d bytes on stdout and was killed (raise max_output_bytes if the output is legitimate); stdout began with %s",
				p.argvHint, p.maxOut, quoteHead(stdout.Bytes(), invalidQuote))}
	}
	if runErr != nil && ctx.Err() != nil {
		return nil, contextError(ctx.Err(), fmt.Sprintf("%s killed (with its process group) after %v%s", p.argvHint, latency.Round(time.Millisecond), stderr.describe()))
	}
	if runErr != nil {
		var ee *osexec.ExitError
		switch {
		case errors.As(runErr, &ee):
			return nil, &provider.Error{Kind: provider.KindExec,
				Msg: fmt.Sprintf("%s failed (%s)%s", p.argvHint, ee.ProcessState.String(), stderr.describe())}
		case errors.Is(runErr, osexec.ErrWaitDelay):
			// The program exited 0 but something it started kept stdout or
			// stderr open; what it printed before exiting is the reply, and
			// the stragglers (in its process group) were killed above.
			p.logger.Warn("program exited but a process it started kept its stdout or stderr open; killed its process group",
				"command", p.argvHint, "waited", waitDelay)
		default:
			return nil, &provider.Error{Kind: provider.KindExec, Msg: "running " + p.argvHint, Err: runErr}
		}
	}

	r, perr := decodeReply(stdout.Bytes())
	if perr != nil {
		perr.Msg = p.argvHint + ": " + perr.Msg + stderr.describe()
		return nil, perr
	}
	resp := &provider.Response{
		Text:              r.output,
		ToolCalls:         r.toolCalls,
		FinishReason:      r.finishReason,
		Usage:             r.usage,
		Model:             r.model,
		SystemFingerprint: r.systemFingerprint,
		Latency:           latency,
		Attempts:          1,
	}
	if resp.Model == "" {
		resp.Model = req.Model
	}
	if resp.Model == "" {
		resp.Model = p.model
	}
	return resp, nil
}

// contextError classifies a call ended by its context.
func contextError(err error, msg string) *provider.Error {
	kind := provider.KindCanceled
	if errors.Is(err, context.DeadlineExceeded) {
		kind = provider.KindTimeout
	}
	return &provider.Error{Kind: kind, Msg: msg, Err: err}
}
