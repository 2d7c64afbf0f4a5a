package exec

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/spec"
)

// helperExe is the test binary, run as the user's program.
func helperExe(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// newHelper returns a provider running the helper in mode with args.
func newHelper(t *testing.T, mode string, args ...string) *Provider {
	t.Helper()
	return newHelperTarget(t, &spec.Target{Name: "helper-" + mode, Model: "target-model"}, mode, args...)
}

// newHelperTarget returns a provider running the helper in mode with args,
// its spec directory and the base of its calls' directories fresh temporary
// directories. GORACE (set by TestMain) is passed on so that helpers built
// with -race exit at once.
func newHelperTarget(t *testing.T, tg *spec.Target, mode string, args ...string) *Provider {
	t.Helper()
	tg.Command = append([]string{helperExe(t), helperFlag, mode}, args...)
	tg.Env = append(tg.Env, "GORACE")
	p, err := New(tg, t.TempDir(), Options{Getenv: os.Getenv, TempDir: t.TempDir()})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p
}

func simpleRequest() *provider.Request {
	return &provider.Request{
		Model:    "m",
		CaseID:   "c1",
		Messages: []provider.Message{{Role: "user", Content: "hello"}},
		Vars:     map[string]any{"question": "hello"},
	}
}

func call(t *testing.T, p *Provider, req *provider.Request) (*provider.Response, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return p.Complete(ctx, req)
}

// providerError asserts err is a *provider.Error of kind and returns it.
func providerError(t *testing.T, err error, kind provider.ErrorKind) *provider.Error {
	t.Helper()
	var pe *provider.Error
	if !errors.As(err, &pe) {
		t.Fatalf("error %v (%T) is not a *provider.Error", err, err)
	}
	if pe.Kind != kind {
		t.Fatalf("kind %q (%v); want %q", pe.Kind, err, kind)
	}
	return pe
}

// The program receives the documented request on stdin.
func TestRequestProtocol(t *testing.T) {
	p := newHelper(t, "request")
	temp, maxTok := 0.5, 10
	req := &provider.Request{
		Model:    "gpt-x",
		CaseID:   "case-7",
		Epoch:    2,
		Messages: []provider.Message{{Role: "system", Content: "sys"}, {Role: "user", Content: "Q: <b>{{.x}}</b>"}},
		Params:   provider.Params{Temperature: &temp, MaxTokens: &maxTok},
		Vars:     map[string]any{"question": "<b>{{.x}}</b>", "n": 3.0},
	}
	resp, err := call(t, p, req)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(resp.Text), &got); err != nil {
		t.Fatalf("request on stdin is not JSON: %v\n%s", err, resp.Text)
	}
	want := map[string]any{
		"case_id": "case-7",
		"epoch":   2.0,
		"model":   "gpt-x",
		"messages": []any{
			map[string]any{"role": "system", "content": "sys"},
			map[string]any{"role": "user", "content": "Q: <b>{{.x}}</b>"},
		},
		"params": map[string]any{"temperature": 0.5, "max_tokens": 10.0},
		"vars":   map[string]any{"question": "<b>{{.x}}</b>", "n": 3.0},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("request on stdin:\n got %v\nwant %v", got, want)
	}
	if !strings.HasSuffix(resp.Text, "}\n") {
		t.Errorf("request is not one newline-terminated line: %q", resp.Text)
	}
}

// With no model in the request the target's model is sent; vars and
// messages are never null.
func TestRequestDefaults(t *testing.T) {
	p := newHelper(t, "request")
	resp, err := call(t, p, &provider.Request{CaseID: "1"})
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]json.RawMessage
	if err := json.Unmarshal([]byte(resp.Text), &got); err != nil {
		t.Fatal(err)
	}
	for field, want := range map[string]string{"model": `"target-model"`, "vars": `{}`, "messages": `[]`, "params": `{}`} {
		if string(got[field]) != want {
			t.Errorf("%s = %s; want %s", field, got[field], want)
		}
	}
}

// The reply's optional fields reach the response.
func TestReplyFields(t *testing.T) {
	p := newHelper(t, "print", `{"output":"hi","usage":{"input":5,"output":2,"cached":1},"finish_reason":"length","model":"m-2025","system_fingerprint":"fp1","extra":true}`)
	resp, err := call(t, p, simpleRequest())
	if err != nil {
		t.Fatal(err)
	}
	want := provider.Usage{Input: 5, Output: 2, Cached: 1}
	if resp.Text != "hi" || resp.Usage != want || resp.FinishReason != "length" || resp.Model != "m-2025" || resp.SystemFingerprint != "fp1" || resp.Attempts != 1 {
		t.Errorf("response %+v; want text hi, usage %+v, finish length, model m-2025, fingerprint fp1, 1 attempt", resp, want)
	}
	if resp.Latency <= 0 {
		t.Errorf("Latency = %v; want the measured run time", resp.Latency)
	}

	// Without a model in the reply, the request's model is reported.
	p = newHelper(t, "print", `{"output":"hi"}`)
	resp, err = call(t, p, simpleRequest())
	if err != nil {
		t.Fatal(err)
	}
	if resp.Model != "m" {
		t.Errorf("Model = %q; want the request's model %q", resp.Model, "m")
	}
}

// A command path with a slash is relative to the spec's directory, not to
// the current directory.
func TestCommandRelativeToSpecDir(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(helperExe(t), filepath.Join(dir, "bin", "app")); err != nil {
		t.Skipf("cannot symlink: %v", err)
	}
	p, err := New(&spec.Target{Name: "rel", Command: []string{"./bin/app", helperFlag, "print", `{"output":"from bin/app"}`}}, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := call(t, p, simpleRequest())
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "from bin/app" {
		t.Errorf("reply %q", resp.Text)
	}
}

func TestNewRejectsBadTargets(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "data.txt"), []byte("not a program"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		target spec.Target
		want   []string
	}{
		{"no command", spec.Target{Name: "a"}, []string{`exec target "a"`, "command is empty", "command: ["}},
		{"empty program", spec.Target{Name: "a", Command: []string{""}}, []string{"command is empty"}},
		{"missing file", spec.Target{Name: "a", Command: []string{"./bin/nope"}}, []string{`"./bin/nope"`, "relative to the spec's directory"}},
		{"directory", spec.Target{Name: "a", Command: []string{"./sub"}}, []string{"is a directory"}},
		{"not executable", spec.Target{Name: "a", Command: []string{"./data.txt"}}, []string{"not executable", "chmod +x"}},
		{"not in PATH", spec.Target{Name: "a", Command: []string{"assay-no-such-program-xyz"}}, []string{"not found in PATH"}},
		{"negative limit", spec.Target{Name: "a", Command: []string{helperExe(t)}, MaxOutputBytes: -1}, []string{"max_output_bytes is -1", "positive"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := New(&c.target, dir, Options{})
			if err == nil {
				t.Fatal("New succeeded; want an error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
	if _, err := New(nil, dir, Options{}); err == nil {
		t.Error("New(nil) succeeded")
	}
}

func TestDeadlineKillsProgram(t *testing.T) {
	p := newHelper(t, "slow", "30s")
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := p.Complete(ctx, simpleRequest())
	if elapsed := time.Since(start); elapsed > 2*time.Second {
		t.Errorf("returned after %v; want soon after the 200ms deadline", elapsed)
	}
	pe := providerError(t, err, provider.KindTimeout)
	if !pe.Retryable() || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("timeout error %v: retryable %v, wraps DeadlineExceeded %v; want both", err, pe.Retryable(), errors.Is(err, context.DeadlineExceeded))
	}
}

func TestCancelKillsProgram(t *testing.T) {
	p := newHelper(t, "slow", "30s")
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	_, err := p.Complete(ctx, simpleRequest())
	if elapsed := time.Since(start); elapsed > 2*time.Second {
		t.Errorf("returned after %v; want soon after the cancel", elapsed)
	}
	pe := providerError(t, err, provider.KindCanceled)
	if pe.Retryable() {
		t.Error("a canceled call is retryable; the run was interrupted, it must not be retried")
	}
}

func TestOutputLimit(t *testing.T) {
	t.Run("endless output is cut and the program killed", func(t *testing.T) {
		p := newHelperTarget(t, &spec.Target{Name: "flood", MaxOutputBytes: 100 << 10}, "flood")
		start := time.Now()
		_, err := call(t, p, simpleRequest())
		if elapsed := time.Since(start); elapsed > 5*time.Second {
			t.Errorf("returned after %v; a program over its output limit must be killed at once", elapsed)
		}
		pe := providerError(t, err, provider.KindOutputLimit)
		if !strings.Contains(pe.Msg, "102400 bytes") || !strings.Contains(pe.Msg, "max_output_bytes") {
			t.Errorf("message %q does not name the limit and the setting", pe.Msg)
		}
		if len(pe.Error()) > 1000 {
			t.Errorf("error message is %d bytes; it must quote only the start of the output", len(pe.Error()))
		}
	})
	t.Run("a reply of exactly the limit passes", func(t *testing.T) {
		p := newHelperTarget(t, &spec.Target{Name: "sized", MaxOutputBytes: 4096}, "sized", "4096")
		if resp, err := call(t, p, simpleRequest()); err != nil || resp.Text != "x" {
			t.Fatalf("reply of 4096 bytes with a 4096-byte limit: %v, %+v", err, resp)
		}
	})
	t.Run("one byte over fails", func(t *testing.T) {
		p := newHelperTarget(t, &spec.Target{Name: "sized", MaxOutputBytes: 4095}, "sized", "4096")
		_, err := call(t, p, simpleRequest())
		providerError(t, err, provider.KindOutputLimit)
	})
	t.Run("default is 1 MiB", func(t *testing.T) {
		p := newHelper(t, "sized", "1048577")
		_, err := call(t, p, simpleRequest())
		providerError(t, err, provider.KindOutputLimit)
		p = newHelper(t, "sized", "1048576")
		if _, err := call(t, p, simpleRequest()); err != nil {
			t.Fatalf("reply of 1 MiB under the default limit: %v", err)
		}
	})
}

func TestNonZeroExit(t *testing.T) {
	p := newHelper(t, "exit", "3")
	_, err := call(t, p, simpleRequest())
	pe := providerError(t, err, provider.KindExec)
	msg := pe.Error()
	for _, w := range []string{"exit status 3", "LAST-LINE-MARKER", `\x1b[31m`} {
		if !strings.Contains(msg, w) {
			t.Errorf("message does not contain %q: %s", w, msg)
		}
	}
	if strings.Contains(msg, "\x1b") {
		t.Error("message carries a raw terminal escape from stderr; it must be quoted")
	}
	if len(msg) > stderrTail+512 {
		t.Errorf("message is %d bytes; the stderr tail must be bounded to %d", len(msg), stderrTail)
	}
	if pe.Retryable() {
		t.Error("a failed program is retryable; want a permanent failure")
	}
}

func TestErrorField(t *testing.T) {
	p := newHelper(t, "error", "vector store unavailable")
	_, err := call(t, p, simpleRequest())
	pe := providerError(t, err, provider.KindExec)
	if !strings.Contains(pe.Msg, "vector store unavailable") {
		t.Errorf("message %q does not carry the program's error", pe.Msg)
	}
}

// Replies that break the protocol, run through a real program.
func TestInvalidReplies(t *testing.T) {
	for _, c := range []struct{ name, stdout, want string }{
		{"empty", "", "printed nothing"},
		{"prose", "Sure! The answer is 4.", `"Sure! The answer is 4."`},
		{"no output", `{"answer": "4"}`, `no "output" field`},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := newHelper(t, "print", c.stdout)
			_, err := call(t, p, simpleRequest())
			pe := providerError(t, err, provider.KindInvalid)
			if !strings.Contains(pe.Msg, c.want) {
				t.Errorf("message %q does not contain %q", pe.Msg, c.want)
			}
		})
	}
}

// Megabytes on stderr neither fail the call nor grow memory without bound.
func TestStderrIsBounded(t *testing.T) {
	p := newHelper(t, "stderrflood", "8388608")
	resp, err := call(t, p, simpleRequest())
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "ok" {
		t.Errorf("reply %q", resp.Text)
	}
}

// A program that never reads its stdin still works, even with a request
// larger than a pipe's buffer.
func TestProgramIgnoringStdin(t *testing.T) {
	p := newHelper(t, "nostdin")
	req := simpleRequest()
	req.Messages = []provider.Message{{Role: "user", Content: strings.Repeat("big ", 256<<10)}}
	resp, err := call(t, p, req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "did not read" {
		t.Errorf("reply %q", resp.Text)
	}
}
