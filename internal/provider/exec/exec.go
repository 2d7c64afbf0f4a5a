// Package exec owns the exec provider: it evaluates the user's own program —
// a RAG app, an agent, any pipeline — rather than a bare model, by running it
// once per request. It imports only the provider and spec packages and the
// standard library; it must not import the runner, scorer or store.
//
// # Protocol
//
// For every request assay starts the target's command (argv, never a shell)
// with the spec's directory as its working directory and the parent's
// environment (the pipeline needs its own keys). It writes one JSON object,
// followed by a newline, on the program's stdin and closes it:
//
//	{"case_id": "17", "epoch": 0, "model": "my-rag",
//	 "messages": [{"role": "system", "content": "..."}, {"role": "user", "content": "..."}],
//	 "params": {"temperature": 0, "max_tokens": 512},
//	 "vars": {"question": "..."}}
//
// "messages" is the rendered prompt and "vars" the case's own fields, so the
// program can use either. The program prints one JSON object on stdout and
// exits 0:
//
//	{"output": "the answer", "usage": {"input": 812, "output": 64, "cached": 0},
//	 "finish_reason": "stop", "model": "gpt-x-2025-01-01", "error": ""}
//
// Only "output" is required. A string is the reply as is; any other JSON
// value (an object, an array, a number) becomes its compact JSON text. Unknown
// fields are ignored. A non-empty "error" reports that the pipeline failed on
// this case; the call then fails with kind exec_error. Diagnostics belong on
// stderr, which is kept (its last 2 KiB) for error messages.
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
	"os"
	osexec "os/exec"
	"path/filepath"
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
// concurrent use: each call starts its own process.
type Provider struct {
	path     string // resolved executable
	args     []string
	dir      string
	model    string
	maxOut   int64
	logger   *slog.Logger
	argvHint string // the command as written, for messages
}

// New checks t's command and returns a provider that runs it with dir (the
// spec's directory) as working directory. A command path with a slash is
// resolved against dir; a bare name is looked up in PATH.
func New(t *spec.Target, dir string) (*Provider, error) {
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
	maxOut := t.MaxOutputBytes
	if maxOut == 0 {
		maxOut = DefaultMaxOutputBytes
	}
	return &Provider{
		path:     path,
		args:     append([]string(nil), t.Command[1:]...),
		dir:      absDir,
		model:    t.Model,
		maxOut:   maxOut,
		logger:   slog.Default().With("provider", "exec", "target", t.Name),
		argvHint: t.Command[0],
	}, nil
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

// wireRequest is what the program reads on stdin.
type wireRequest struct {
	CaseID   string             `json:"case_id"`
	Epoch    int                `json:"epoch"`
	Model    string             `json:"model"`
	Messages []provider.Message `json:"messages"`
	Params   spec.Params        `json:"params"`
	Vars     map[string]any     `json:"vars"`
}

func (p *Provider) encodeRequest(req *provider.Request) ([]byte, error) {
	w := wireRequest{
		CaseID:   req.CaseID,
		Epoch:    req.Epoch,
		Model:    req.Model,
		Messages: req.Messages,
		Params:   req.Params,
		Vars:     req.Vars,
	}
	if w.Model == "" {
		w.Model = p.model
	}
	if w.Messages == nil {
		w.Messages = []provider.Message{}
	}
	if w.Vars == nil {
		w.Vars = map[string]any{}
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

	stdout := &boundedBuffer{limit: p.maxOut, overflow: func() { stop(errOutputLimit) }}
	stderr := &tailBuffer{keep: stderrTail}
	cmd := osexec.CommandContext(runCtx, p.path, p.args...)
	cmd.Dir = p.dir
	cmd.Stdin = bytes.NewReader(payload)
	cmd.Stdout = stdout
	cmd.Stderr = stderr
	cmd.WaitDelay = waitDelay
	killGroupOnCancel(cmd)

	start := time.Now()
	runErr := cmd.Run()
	latency := max(time.Since(start), time.Nanosecond)

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
			// the stragglers (still in its process group) are killed.
			p.logger.Warn("program exited but a process it started kept its stdout or stderr open; killing its process group",
				"command", p.argvHint, "waited", waitDelay)
			killGroup(cmd)
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
