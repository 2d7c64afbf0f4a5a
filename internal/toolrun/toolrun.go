// Package toolrun owns the handlers that answer an agent loop's tool calls:
// the user's program (exec, isolated exactly like an exec target), a
// recorded JSONL file (replay) and a fixed result (mock). It turns a spec's
// agent section into one Handler per tool. It imports only spec, the shared
// sandbox and the standard library; it must not import the runner, the
// providers, the scorer or the store.
package toolrun

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/assay-eval/assay/internal/spec"
)

// The kinds of a handler failure. The agent loop ends the case loudly with
// the kind as the result's error kind.
const (
	// KindTimeout: the handler did not answer within its time-out (its
	// process group was killed).
	KindTimeout = "tool_timeout"
	// KindFailed: the handler failed (a non-zero exit, output that could
	// not be read, a replay file that could not be read).
	KindFailed = "tool_error"
	// KindOutputLimit: the handler printed more than its max_output_bytes.
	KindOutputLimit = "tool_output_limit"
	// KindNoRecord: a replay handler has no recorded result for the call.
	KindNoRecord = "tool_no_record"
)

// Kinds lists every kind an *Error can have, in a fixed order.
func Kinds() []string { return []string{KindTimeout, KindFailed, KindOutputLimit, KindNoRecord} }

// Handler answers the calls of one tool.
type Handler interface {
	// Call answers one call. c.Arguments is the call's arguments text as the
	// model wrote it (already checked to be a JSON object by the loop). It
	// returns the text sent back to the model; a failure is an *Error.
	Call(ctx context.Context, c Call) (string, error)
}

// Call is one tool call of an agent loop, with what a handler may need to
// know about where it was made.
type Call struct {
	CaseID    string
	Vars      map[string]any // the case's fields (the answer key withheld by the caller)
	Tool      string         // the tool's name
	CallID    string         // the call's id as the model gave it
	Arguments string         // the arguments' JSON text as the model wrote it
	Turn      int            // the model call (1-based) that made the call
}

// Error is a handler failure. Kind is one of the Kind constants.
type Error struct {
	Kind string // KindTimeout, KindFailed, KindOutputLimit or KindNoRecord
	Tool string // the tool whose handler failed
	Msg  string // what went wrong, for the user
}

func (e *Error) Error() string { return fmt.Sprintf("tool %s: %s (%s)", e.Tool, e.Msg, e.Kind) }

// Defaults of an exec handler.
const (
	DefaultTimeout        = 30 * time.Second
	DefaultMaxOutputBytes = 1 << 20
)

// Build makes the handler of every tool of a spec's agent section. Paths
// (an exec command with a slash, a replay file) are relative to specDir;
// the variables a handler names in env: are read through getenv. Every
// problem is reported at once, each naming its tool.
func Build(a *spec.Agent, specDir string, getenv func(string) string) (map[string]Handler, error) {
	if a == nil {
		return nil, nil
	}
	if specDir == "" {
		specDir = "."
	}
	absDir, err := filepath.Abs(specDir)
	if err != nil {
		return nil, fmt.Errorf("agent tools: resolving the spec's directory %s: %w", specDir, err)
	}
	out := make(map[string]Handler, len(a.Tools))
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(a.Tools)) {
		h, err := build(name, a.Tools[name], absDir, getenv)
		if err != nil {
			errs = append(errs, fmt.Errorf("agent.tools.%s: %w", name, err))
			continue
		}
		out[name] = h
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// build makes one tool's handler.
func build(tool string, h spec.ToolHandler, dir string, getenv func(string) string) (Handler, error) {
	var set []string
	if len(h.Exec) > 0 {
		set = append(set, "exec")
	}
	if h.Replay != "" {
		set = append(set, "replay")
	}
	if h.Mock != nil {
		set = append(set, "mock")
	}
	if len(set) != 1 {
		return nil, fmt.Errorf("the handler sets %s; want exactly one of exec (a program), replay (a JSONL file of recorded results) or mock (a fixed result)", describeSet(set))
	}
	if set[0] != "exec" && (h.Timeout != 0 || h.MaxOutputBytes != 0 || len(h.Env) > 0) {
		return nil, fmt.Errorf("timeout, max_output_bytes and env apply to an exec handler only; remove them from this %s handler", set[0])
	}
	switch set[0] {
	case "exec":
		return newExec(tool, h, dir, getenv)
	case "replay":
		return newReplay(tool, h.Replay, dir)
	default:
		return mockHandler(h.Mock.Result), nil
	}
}

func describeSet(set []string) string {
	if len(set) == 0 {
		return "none of them"
	}
	return strings.Join(set, " and ")
}

// mockHandler answers every call with the same text.
type mockHandler string

func (m mockHandler) Call(ctx context.Context, _ Call) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	return string(m), nil
}
