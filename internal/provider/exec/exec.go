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
	"path/filepath"
	"slices"
	"time"

	"github.com/assay-eval/assay/internal/isolation"
	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/spec"
)

// DefaultMaxOutputBytes bounds a program's stdout when the target sets no max_output_bytes.
const DefaultMaxOutputBytes = 1 << 20

// The isolation's bounds on a call, as this package's tests name them.
const (
	// stderrTail is how much of the end of stderr is kept for error messages.
	stderrTail = isolation.StderrTail
	// waitDelay bounds how long to wait for stdout and stderr to close after
	// the program exited or was killed (a stray grandchild can hold them).
	waitDelay = isolation.WaitDelay
)

// Provider runs a target's command once per request. It is safe for
// concurrent use: each call starts its own process in its own directory.
type Provider struct {
	prog     isolation.Program // how each call runs (its MaxOutput is maxOut)
	withhold []string          // case fields left out of "vars"
	model    string
	maxOut   int64
	argvHint string // the command as written, for messages
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
const DefaultPath = isolation.DefaultPath

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
	path, args, err := isolation.Command(t.Command, absDir)
	if err != nil {
		return nil, fmt.Errorf("exec target %q: %w", t.Name, err)
	}
	env, err := isolation.Environment(t.Env, absDir, o.Getenv)
	var unset *isolation.UnsetEnvError
	if errors.As(err, &unset) {
		return nil, &UnsetEnvError{Target: t.Name, Name: unset.Name, Index: unset.Index}
	}
	if err != nil {
		return nil, fmt.Errorf("exec target %q: %w", t.Name, err)
	}
	maxOut := t.MaxOutputBytes
	if maxOut == 0 {
		maxOut = DefaultMaxOutputBytes
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	p := &Provider{
		prog: isolation.Program{
			Path:    path,
			Args:    args,
			Env:     env,
			Named:   append([]string(nil), t.Env...),
			TempDir: o.TempDir,
			Prefix:  "assay-exec-",
			Hint:    t.Command[0],
			Logger:  slog.Default().With("provider", "exec", "target", t.Name),
			Now:     now,
		},
		withhold: append([]string(nil), o.Withhold...),
		model:    t.Model,
		maxOut:   maxOut,
		argvHint: t.Command[0],
	}
	return p, nil
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

// Complete runs the program once for req.
func (p *Provider) Complete(ctx context.Context, req *provider.Request) (*provider.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, contextError(err, "")
	}
	payload, err := p.encodeRequest(req)
	if err != nil {
		return nil, &provider.Error{Kind: provider.KindBadRequest, Msg: "encoding the request for " + p.argvHint, Err: err}
	}
	prog := p.prog
	prog.MaxOutput = p.maxOut
	res, runErr := prog.Run(ctx, payload)
	var re *isolation.RunError
	if errors.As(runErr, &re) {
		switch re.Failure {
		case isolation.FailSetup:
			return nil, &provider.Error{Kind: provider.KindExec, Msg: "making the call's temporary directory for " + p.argvHint, Err: re.Err}
		case isolation.FailOutputLimit:
			return nil, &provider.Error{Kind: provider.KindOutputLimit,
				Msg: fmt.Sprintf("%s printed more than %d bytes on stdout and was killed (raise max_output_bytes if the output is legitimate); stdout began with %s",
					p.argvHint, p.maxOut, quoteHead(res.Stdout, invalidQuote))}
		case isolation.FailContext:
			return nil, contextError(ctx.Err(), fmt.Sprintf("%s killed (with its process group) after %v%s", p.argvHint, res.Latency.Round(time.Millisecond), res.StderrNote()))
		case isolation.FailExit:
			return nil, &provider.Error{Kind: provider.KindExec,
				Msg: fmt.Sprintf("%s failed (%s)%s", p.argvHint, re.ExitState(), res.StderrNote())}
		default:
			return nil, &provider.Error{Kind: provider.KindExec, Msg: "running " + p.argvHint, Err: re.Err}
		}
	} else if runErr != nil {
		return nil, &provider.Error{Kind: provider.KindExec, Msg: "running " + p.argvHint, Err: runErr}
	}
	latency := res.Latency

	r, perr := decodeReply(res.Stdout)
	if perr != nil {
		perr.Msg = p.argvHint + ": " + perr.Msg + res.StderrNote()
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
