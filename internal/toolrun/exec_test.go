package toolrun

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/spec"
)

// execTool builds the handler of one exec tool running the helper in mode;
// each call's directory is made under base (its TMPDIR), which is returned
// with the spec's directory.
func execTool(t *testing.T, h spec.ToolHandler, env map[string]string, mode string, args ...string) (hd Handler, specDir, base string) {
	t.Helper()
	specDir, base = t.TempDir(), t.TempDir()
	t.Setenv("TMPDIR", base)
	h.Exec = append([]string{helperExe(t), helperFlag, mode}, args...)
	hs, err := Build(&spec.Agent{MaxTurns: 3, Tools: map[string]spec.ToolHandler{"lookup": h}}, specDir, func(k string) string { return env[k] })
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	return hs["lookup"], specDir, base
}

func simpleCall() Call {
	return Call{CaseID: "17", Vars: map[string]any{"question": "where is my order?"}, Tool: "lookup", CallID: "c1", Arguments: `{"id": 42, "q": "<a&b>"}`, Turn: 2}
}

// toolError returns err as an *Error of kind, failing the test otherwise.
func toolError(t *testing.T, err error, kind string) *Error {
	t.Helper()
	var te *Error
	if !errors.As(err, &te) {
		t.Fatalf("error %v (%T); want a *toolrun.Error of kind %s", err, err, kind)
	}
	if te.Kind != kind {
		t.Fatalf("kind %s (%s); want %s", te.Kind, te.Msg, kind)
	}
	if te.Tool != "lookup" {
		t.Errorf("Tool %q; want lookup", te.Tool)
	}
	return te
}

// entries lists a directory's names.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// The program reads the call as one JSON object on stdin — the tool, the
// arguments as JSON (not a string), the call's and case's IDs, the case's
// fields and the turn — and its stdout, less one trailing newline, is the
// result.
func TestExecReadsTheCall(t *testing.T) {
	h, _, _ := execTool(t, spec.ToolHandler{}, nil, "stdin")
	out, err := h.Call(context.Background(), simpleCall())
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasSuffix(out, "\n") {
		t.Errorf("result %q keeps the trailing newline", out)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("stdin was not one JSON object: %v\n%s", err, out)
	}
	want := map[string]any{
		"tool": "lookup", "arguments": map[string]any{"id": 42.0, "q": "<a&b>"},
		"call_id": "c1", "case_id": "17", "vars": map[string]any{"question": "where is my order?"}, "turn": 2.0,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the program read %v; want %v", got, want)
	}
	if !strings.Contains(out, "<a&b>") {
		t.Errorf("stdin %s escapes HTML; want the arguments' text as is", out)
	}

	for _, c := range []struct{ printed, want string }{
		{"plain", "plain"},
		{"two lines\n\n", "two lines\n"},
		{"crlf\r\n", "crlf"},
		{"", ""},
		{"  spaced  ", "  spaced  "},
	} {
		h, _, _ := execTool(t, spec.ToolHandler{}, nil, "print", c.printed)
		out, err := h.Call(context.Background(), simpleCall())
		if err != nil {
			t.Fatal(err)
		}
		if out != c.want {
			t.Errorf("printed %q: result %q; want %q", c.printed, out, c.want)
		}
	}
}

// The handler's environment is PATH, HOME, TMPDIR, LANG, ASSAY_SPEC_DIR and
// the variables it names, nothing else: neither a secret in assay's
// environment it does not name nor one of the test process's own reaches it.
func TestExecEnvironmentIsClean(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the environment has platform variables on Windows")
	}
	t.Setenv("ASSAY_TOOL_PROCESS_SECRET", "process-secret-value")
	assayEnv := map[string]string{
		"PATH":           "/opt/tools/bin:/usr/bin:/bin",
		"HOME":           "/home/someone",
		"OPENAI_API_KEY": "sk-unnamed-secret",
		"ORDERS_TOKEN":   "named-orders-token",
		"GORACE":         os.Getenv("GORACE"),
	}
	h, specDir, base := execTool(t, spec.ToolHandler{Env: []string{"ORDERS_TOKEN", "GORACE"}}, assayEnv, "environ")
	out, err := h.Call(context.Background(), simpleCall())
	if err != nil {
		t.Fatal(err)
	}
	var env map[string]string
	if err := json.Unmarshal([]byte(out), &env); err != nil {
		t.Fatal(err)
	}
	var names []string
	for k := range env {
		names = append(names, k)
	}
	slices.Sort(names)
	want := []string{"ASSAY_SPEC_DIR", "GORACE", "HOME", "LANG", "PATH", "ORDERS_TOKEN", "TMPDIR"}
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Errorf("the handler's environment has %v; want exactly %v", names, want)
	}
	absSpec, _ := filepath.Abs(specDir)
	for k, v := range map[string]string{"ORDERS_TOKEN": "named-orders-token", "PATH": "/opt/tools/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "ASSAY_SPEC_DIR": absSpec} {
		if env[k] != v {
			t.Errorf("%s=%q; want %q", k, env[k], v)
		}
	}
	if !strings.HasPrefix(env["HOME"], base) || env["TMPDIR"] != env["HOME"] {
		t.Errorf("HOME=%q TMPDIR=%q; want the call's own directory under %s", env["HOME"], env["TMPDIR"], base)
	}
	for _, secret := range []string{"sk-unnamed-secret", "process-secret-value", "/home/someone"} {
		if strings.Contains(out, secret) {
			t.Errorf("the handler saw %q, which its env: does not name", secret)
		}
	}
}

// A handler writes by relative path only into a directory of its own,
// which is removed when the call ends: nothing lands beside the spec, and
// nothing is left behind ("../../planted.txt" climbs only to the base the
// call's directory was made in: this is hygiene, not a sandbox).
func TestExecWritesStayInItsDirectory(t *testing.T) {
	h, specDir, base := execTool(t, spec.ToolHandler{}, nil, "write")
	before := entries(t, specDir)
	wd, err := h.Call(context.Background(), simpleCall())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(wd, base+string(filepath.Separator)) {
		t.Errorf("the handler ran in %s; want a directory of its own under %s", wd, base)
	}
	if _, err := os.Stat(wd); !os.IsNotExist(err) {
		t.Errorf("the call's directory %s is still there (%v)", wd, err)
	}
	if after := entries(t, specDir); !slices.Equal(before, after) {
		t.Errorf("the spec's directory changed from %v to %v", before, after)
	}
	if left := entries(t, base); !slices.Equal(left, []string{"planted.txt"}) {
		t.Errorf("the base holds %v; want only the file written two levels up", left)
	}
}

// Without a timeout the default is 30 s, and max output 1 MiB.
func TestExecDefaults(t *testing.T) {
	h, _, _ := execTool(t, spec.ToolHandler{}, nil, "print", "x")
	e := h.(*execHandler)
	if e.timeout != DefaultTimeout || DefaultTimeout != 30*time.Second {
		t.Errorf("timeout %v; want 30s", e.timeout)
	}
	if e.prog.MaxOutput != DefaultMaxOutputBytes || DefaultMaxOutputBytes != 1<<20 {
		t.Errorf("max output %d; want 1 MiB", e.prog.MaxOutput)
	}
}

// An interrupted run (the caller's context canceled) kills the handler too
// but is not the handler's failure: the error is the context's, not an
// *Error.
func TestExecCanceledByTheCaller(t *testing.T) {
	h, _, _ := execTool(t, spec.ToolHandler{}, nil, "sleep", "30s")
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	_, err := h.Call(ctx, simpleCall())
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v; want context.Canceled", err)
	}
	var te *Error
	if errors.As(err, &te) {
		t.Errorf("an interrupted call is a handler failure (%s)", te.Kind)
	}
	if elapsed := time.Since(start); elapsed > 3*time.Second {
		t.Errorf("returned after %v", elapsed)
	}
}

// A handler printing without end is killed at max_output_bytes: tool_output_limit.
func TestExecOutputLimit(t *testing.T) {
	h, _, base := execTool(t, spec.ToolHandler{MaxOutputBytes: 64 << 10}, nil, "flood")
	_, err := h.Call(context.Background(), simpleCall())
	te := toolError(t, err, KindOutputLimit)
	if !strings.Contains(te.Msg, "65536 bytes") || !strings.Contains(te.Msg, "max_output_bytes") {
		t.Errorf("message %q does not name the limit and the setting", te.Msg)
	}
	if left := entries(t, base); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}

// A non-zero exit is tool_error with the exit status and the tail of
// stderr, quoted (escapes shown, not obeyed) and bounded; so is output
// that is not UTF-8 text.
func TestExecFailures(t *testing.T) {
	h, _, _ := execTool(t, spec.ToolHandler{}, nil, "fail")
	_, err := h.Call(context.Background(), simpleCall())
	te := toolError(t, err, KindFailed)
	for _, w := range []string{"exit status 3", "LAST-LINE-MARKER", `\x1b[31m`} {
		if !strings.Contains(te.Msg, w) {
			t.Errorf("message does not contain %q: %s", w, te.Msg)
		}
	}
	if strings.Contains(te.Msg, "\x1b") || len(te.Msg) > 3<<10 {
		t.Errorf("message (%d bytes) carries a raw escape or all of stderr", len(te.Msg))
	}

	h, _, _ = execTool(t, spec.ToolHandler{}, nil, "binary")
	_, err = h.Call(context.Background(), simpleCall())
	if te := toolError(t, err, KindFailed); !strings.Contains(te.Msg, "UTF-8") {
		t.Errorf("message %q does not say the output is not text", te.Msg)
	}
}

// Build checks every handler and reports every problem at once, each under
// its tool's name; a variable a handler names that is unset is named, its
// value never shown.
func TestBuildProblems(t *testing.T) {
	dir := t.TempDir()
	replayFile := filepath.Join(dir, "calls.jsonl")
	if err := os.WriteFile(replayFile, []byte(`{"tool": "other", "arguments": {}, "result": "x"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	a := &spec.Agent{Tools: map[string]spec.ToolHandler{
		"none":      {},
		"two":       {Exec: []string{helperExe(t)}, Mock: &spec.ToolMock{Result: "x"}},
		"unset":     {Exec: []string{helperExe(t)}, Env: []string{"SET_ONE", "MISSING_KEY"}},
		"pasted":    {Exec: []string{helperExe(t)}, Env: []string{"KEY=sk-pasted-secret"}},
		"noprog":    {Exec: []string{"./missing-tool.py"}},
		"norecords": {Replay: "calls.jsonl"},
		"nofile":    {Replay: "absent.jsonl"},
		"mocklimit": {Mock: &spec.ToolMock{Result: "x"}, Timeout: spec.Duration(time.Second)},
		"fine":      {Mock: &spec.ToolMock{Result: "ok"}},
	}}
	_, err := Build(a, dir, func(k string) string {
		if k == "SET_ONE" {
			return "value-of-set-one"
		}
		return ""
	})
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	for _, w := range []string{
		"agent.tools.none: the handler sets none of them; want exactly one of exec",
		"agent.tools.two: the handler sets exec and mock",
		"agent.tools.unset: environment variable MISSING_KEY (env[1]) is not set",
		"agent.tools.pasted: env[0] is not a variable name",
		`agent.tools.noprog: command "./missing-tool.py"`,
		`agent.tools.norecords: calls.jsonl has no line for tool "norecords" (it has lines for "other")`,
		"agent.tools.nofile: opening recorded tool results",
		"agent.tools.mocklimit: timeout, max_output_bytes and env apply to an exec handler only",
	} {
		if !strings.Contains(msg, w) {
			t.Errorf("error does not contain %q:\n%s", w, msg)
		}
	}
	for _, never := range []string{"value-of-set-one", "sk-pasted-secret", "agent.tools.fine"} {
		if strings.Contains(msg, never) {
			t.Errorf("error contains %q:\n%s", never, msg)
		}
	}

	if hs, err := Build(nil, dir, nil); hs != nil || err != nil {
		t.Errorf("Build(nil) = %v, %v; want nothing", hs, err)
	}
}

// A mock handler answers every call with its result.
func TestMock(t *testing.T) {
	hs, err := Build(&spec.Agent{Tools: map[string]spec.ToolHandler{"m": {Mock: &spec.ToolMock{Result: `{"status": "shipped"}`}}}}, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range []string{`{}`, `{"id": 1}`} {
		out, err := hs["m"].Call(context.Background(), Call{Tool: "m", Arguments: args})
		if err != nil || out != `{"status": "shipped"}` {
			t.Errorf("mock answered %q, %v", out, err)
		}
	}
}
