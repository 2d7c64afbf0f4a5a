package toolrun

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/assay-eval/assay/internal/isolation"
	"github.com/assay-eval/assay/internal/spec"
)

// execHandler runs the user's program once per call, isolated exactly like
// an exec target (package isolation): a fresh temporary directory removed
// afterwards, only PATH, LANG, HOME/TMPDIR (that directory),
// ASSAY_SPEC_DIR and the variables env: names, the process group killed
// at the time-out, stdout bounded.
//
// The program reads one JSON object and a newline on stdin:
//
//	{"tool": "lookup_order", "arguments": {"id": 42}, "call_id": "c1",
//	 "case_id": "17", "vars": {...}, "turn": 1}
//
// and prints the result text on stdout (one trailing newline is dropped),
// exiting 0. A non-zero exit, or output that is not UTF-8 text, is a
// KindFailed; more than max_output_bytes on stdout a KindOutputLimit; no
// answer within the time-out a KindTimeout.
type execHandler struct {
	tool    string
	prog    isolation.Program
	timeout time.Duration
}

// errTimedOut is the cause of a run ended by the handler's own time-out.
var errTimedOut = errors.New("tool handler time-out")

func newExec(tool string, h spec.ToolHandler, dir string, getenv func(string) string) (*execHandler, error) {
	if h.Exec[0] == "" {
		return nil, errors.New(`exec names no program; want the program and its arguments, e.g. exec: ["./tools/lookup.py"]`)
	}
	if h.Timeout < 0 {
		return nil, fmt.Errorf("timeout is %v; want a positive duration (default %v)", h.Timeout.D(), DefaultTimeout)
	}
	if h.MaxOutputBytes < 0 {
		return nil, fmt.Errorf("max_output_bytes is %d; want a positive number of bytes (default %d)", h.MaxOutputBytes, DefaultMaxOutputBytes)
	}
	path, args, err := isolation.Command(h.Exec, dir)
	if err != nil {
		return nil, err
	}
	env, err := isolation.Environment(h.Env, dir, getenv)
	if err != nil {
		return nil, err
	}
	e := &execHandler{
		tool:    tool,
		timeout: h.Timeout.D(),
		prog: isolation.Program{
			Path:      path,
			Args:      args,
			Env:       env,
			Named:     append([]string(nil), h.Env...),
			Prefix:    "assay-tool-",
			MaxOutput: h.MaxOutputBytes,
			Hint:      h.Exec[0],
			Logger:    slog.Default().With("tool", tool),
		},
	}
	if e.timeout == 0 {
		e.timeout = DefaultTimeout
	}
	if e.prog.MaxOutput == 0 {
		e.prog.MaxOutput = DefaultMaxOutputBytes
	}
	return e, nil
}

// wireCall is what the program reads on stdin.
type wireCall struct {
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	CallID    string          `json:"call_id"`
	CaseID    string          `json:"case_id"`
	Vars      map[string]any  `json:"vars"`
	Turn      int             `json:"turn"`
}

func (e *execHandler) fail(kind, format string, args ...any) *Error {
	return &Error{Kind: kind, Tool: e.tool, Msg: fmt.Sprintf(format, args...)}
}

// Call runs the program once for c.
func (e *execHandler) Call(ctx context.Context, c Call) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	args := bytes.TrimSpace([]byte(c.Arguments))
	if len(args) == 0 {
		args = []byte("{}")
	}
	if !json.Valid(args) {
		return "", e.fail(KindFailed, "the call's arguments are not JSON, so %s was not run: %s", e.prog.Hint, quoteHead(args, 200))
	}
	w := wireCall{Tool: c.Tool, Arguments: args, CallID: c.CallID, CaseID: c.CaseID, Vars: c.Vars, Turn: c.Turn}
	if w.Tool == "" {
		w.Tool = e.tool
	}
	if w.Vars == nil {
		w.Vars = map[string]any{}
	}
	var payload bytes.Buffer
	enc := json.NewEncoder(&payload)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(w); err != nil {
		return "", e.fail(KindFailed, "encoding the call for %s: %v", e.prog.Hint, err)
	}

	runCtx, cancel := context.WithTimeoutCause(ctx, e.timeout, errTimedOut)
	defer cancel()
	res, err := e.prog.Run(runCtx, payload.Bytes())
	var re *isolation.RunError
	if errors.As(err, &re) {
		switch re.Failure {
		case isolation.FailSetup:
			return "", e.fail(KindFailed, "making the call's temporary directory for %s: %v", e.prog.Hint, re.Err)
		case isolation.FailOutputLimit:
			return "", e.fail(KindOutputLimit, "%s printed more than %d bytes on stdout and was killed (raise max_output_bytes if the output is legitimate); stdout began with %s",
				e.prog.Hint, e.prog.MaxOutput, quoteHead(res.Stdout, 200))
		case isolation.FailContext:
			if errors.Is(context.Cause(runCtx), errTimedOut) {
				return "", e.fail(KindTimeout, "%s did not answer within its time-out of %v and was killed with its process group (raise timeout if it needs longer)%s",
					e.prog.Hint, e.timeout, res.StderrNote())
			}
			// The run was interrupted (or its case's own deadline came):
			// not the handler's failure.
			return "", fmt.Errorf("tool %s: %s stopped after %v: %w", e.tool, e.prog.Hint, res.Latency.Round(time.Millisecond), ctx.Err())
		case isolation.FailExit:
			return "", e.fail(KindFailed, "%s failed (%s)%s", e.prog.Hint, re.ExitState(), res.StderrNote())
		default:
			return "", e.fail(KindFailed, "running %s: %v", e.prog.Hint, re.Err)
		}
	} else if err != nil {
		return "", e.fail(KindFailed, "running %s: %v", e.prog.Hint, err)
	}
	out := res.Stdout
	if !utf8.Valid(out) {
		return "", e.fail(KindFailed, "%s printed bytes that are not UTF-8 text; want the result as text: %s", e.prog.Hint, quoteHead(out, 200))
	}
	if n, ok := bytes.CutSuffix(out, []byte("\n")); ok {
		out = bytes.TrimSuffix(n, []byte("\r")) // one line end, \n or \r\n
	}
	return string(out), nil
}

// quoteHead quotes at most n bytes of b as a Go string literal (so control
// characters and escapes are shown, never obeyed), marking a cut.
func quoteHead(b []byte, n int) string {
	if len(b) <= n {
		return strconv.Quote(string(b))
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(b[cut]) {
		cut--
	}
	return strconv.Quote(string(b[:cut])) + fmt.Sprintf(" … (%d bytes)", len(b))
}
