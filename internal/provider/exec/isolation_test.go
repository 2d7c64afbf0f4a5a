package exec

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

	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/spec"
)

// isolated returns a provider for the helper in mode whose spec directory
// and call-directory base are returned too, reading assay's environment
// from env.
func isolated(t *testing.T, env map[string]string, names []string, mode string, args ...string) (p *Provider, specDir, base string) {
	t.Helper()
	specDir, base = t.TempDir(), t.TempDir()
	tg := &spec.Target{Name: "iso", Command: append([]string{helperExe(t), helperFlag, mode}, args...), Env: names}
	p, err := New(tg, specDir, Options{Getenv: func(k string) string { return env[k] }, TempDir: base})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p, specDir, base
}

// entries lists a directory's names, failing the test when it cannot.
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

func gone(path string) bool {
	_, err := os.Lstat(path)
	return errors.Is(err, os.ErrNotExist)
}

// Each call runs in a directory of its own (also its HOME and TMPDIR),
// never the spec's, and the directory is gone when the call returns.
func TestEachCallHasItsOwnDirectory(t *testing.T) {
	p, specDir, base := isolated(t, map[string]string{"GORACE": os.Getenv("GORACE")}, []string{"GORACE"}, "environ")
	var dirs []string
	for range 2 {
		resp, err := call(t, p, simpleRequest())
		if err != nil {
			t.Fatal(err)
		}
		var env map[string]string
		if err := json.Unmarshal([]byte(resp.Text), &env); err != nil {
			t.Fatal(err)
		}
		home := env["HOME"]
		if home == "" || env["TMPDIR"] != home {
			t.Fatalf("HOME %q, TMPDIR %q; want both the call's directory", home, env["TMPDIR"])
		}
		if !strings.HasPrefix(home, base+string(filepath.Separator)) {
			t.Errorf("the call's directory %s is not under the temporary base %s", home, base)
		}
		if home == specDir || strings.HasPrefix(home, specDir) {
			t.Errorf("the call ran in the spec's directory %s", specDir)
		}
		if !gone(home) {
			t.Errorf("the call's directory %s still exists after the call", home)
		}
		dirs = append(dirs, home)
	}
	if dirs[0] == dirs[1] {
		t.Errorf("two calls shared the directory %s", dirs[0])
	}
	if left := entries(t, base); len(left) != 0 {
		t.Errorf("left in the temporary base after the calls: %v", left)
	}
	// The working directory is that directory too.
	p, _, _ = isolated(t, nil, nil, "pwd")
	resp, err := call(t, p, simpleRequest())
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(resp.Text) != "work" || !gone(resp.Text) {
		t.Errorf("working directory %q: want the call's own work directory, removed after the call", resp.Text)
	}
}

// What a program writes by relative path — an expected.json beside it, an
// answers file one level up, a read-only tree, state in HOME — lands in
// its own directory and goes with it; the spec's directory is untouched.
func TestWritesLandInTheThrowawayDirectory(t *testing.T) {
	p, specDir, base := isolated(t, nil, nil, "litter")
	if err := os.WriteFile(filepath.Join(specDir, "cases.jsonl"), []byte(`{"q":"1+1","expected":"2"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	resp, err := call(t, p, simpleRequest())
	if err != nil {
		t.Fatal(err)
	}
	work := resp.Text
	if !strings.HasPrefix(work, base) {
		t.Fatalf("the program ran in %s, not under %s", work, base)
	}
	if got := entries(t, specDir); !slices.Equal(got, []string{"cases.jsonl"}) {
		t.Errorf("the spec's directory holds %v after the call; want only cases.jsonl", got)
	}
	if !gone(filepath.Dir(work)) {
		t.Errorf("the call's directory %s (with ../answers.txt and a read-only tree) was not removed", filepath.Dir(work))
	}
	// "../../assay-planted.txt" climbs out of the call's directory into the
	// base: isolation is a working directory, not a sandbox (documented).
	if left := entries(t, base); !slices.Equal(left, []string{"assay-planted.txt"}) {
		t.Errorf("the base holds %v; want only the file written two levels up", left)
	}
}

// The environment is empty but for PATH, HOME, TMPDIR, LANG,
// ASSAY_SPEC_DIR and the named variables: a secret in assay's environment
// that the spec does not name is not visible, one it names is.
func TestEnvironmentIsClean(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the environment has platform variables on Windows")
	}
	// A variable in the test process's own environment must not leak either.
	t.Setenv("ASSAY_EXEC_PROCESS_SECRET", "process-secret-value")
	assayEnv := map[string]string{
		"PATH":              "/opt/tools/bin:/usr/bin:/bin",
		"HOME":              "/home/someone",
		"OPENAI_API_KEY":    "sk-unnamed-secret",
		"PIPELINE_KEY":      "named-pipeline-key",
		"GORACE":            os.Getenv("GORACE"),
		"ASSAY_EXEC_UNUSED": "x",
	}
	p, specDir, _ := isolated(t, assayEnv, []string{"PIPELINE_KEY", "GORACE"}, "environ")
	resp, err := call(t, p, simpleRequest())
	if err != nil {
		t.Fatal(err)
	}
	var env map[string]string
	if err := json.Unmarshal([]byte(resp.Text), &env); err != nil {
		t.Fatal(err)
	}
	var names []string
	for k := range env {
		names = append(names, k)
	}
	slices.Sort(names)
	want := []string{"ASSAY_SPEC_DIR", "GORACE", "HOME", "LANG", "PATH", "PIPELINE_KEY", "TMPDIR"}
	if !slices.Equal(names, want) {
		t.Errorf("the program's environment has %v; want exactly %v", names, want)
	}
	for k, v := range map[string]string{"PIPELINE_KEY": "named-pipeline-key", "PATH": "/opt/tools/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "ASSAY_SPEC_DIR": specDir} {
		if env[k] != v {
			t.Errorf("%s=%q; want %q", k, env[k], v)
		}
	}
	if env["HOME"] == "/home/someone" {
		t.Error("the program got assay's HOME; want its own directory unless HOME is named")
	}
	for _, secret := range []string{"sk-unnamed-secret", "process-secret-value"} {
		if strings.Contains(resp.Text, secret) {
			t.Errorf("the program saw %q, which the spec does not name", secret)
		}
	}
}

// A named variable wins over the defaults: naming HOME gives the program
// assay's HOME. Without a PATH in assay's environment the program gets a
// usable default.
func TestNamedVariablesWin(t *testing.T) {
	p, _, _ := isolated(t, map[string]string{"HOME": "/home/someone"}, []string{"HOME"}, "environ")
	resp, err := call(t, p, simpleRequest())
	if err != nil {
		t.Fatal(err)
	}
	var env map[string]string
	if err := json.Unmarshal([]byte(resp.Text), &env); err != nil {
		t.Fatal(err)
	}
	if env["HOME"] != "/home/someone" {
		t.Errorf("HOME=%q; want the named value", env["HOME"])
	}
	if env["TMPDIR"] == "" || env["TMPDIR"] == "/home/someone" {
		t.Errorf("TMPDIR=%q; want the call's own directory", env["TMPDIR"])
	}
	if env["PATH"] != DefaultPath {
		t.Errorf("PATH=%q with no PATH in assay's environment; want %q", env["PATH"], DefaultPath)
	}
}

// A named variable that is unset is an error when the provider is made,
// before any call, naming the variable; an entry that is not a name (it
// may be a pasted value) is never echoed.
func TestEnvProblemsBeforeAnyCall(t *testing.T) {
	dir := t.TempDir()
	tg := &spec.Target{Name: "app", Command: []string{helperExe(t)}, Env: []string{"SET_ONE", "MISSING_KEY"}}
	_, err := New(tg, dir, Options{Getenv: func(k string) string {
		if k == "SET_ONE" {
			return "value-of-set-one"
		}
		return ""
	}})
	var ue *UnsetEnvError
	if !errors.As(err, &ue) {
		t.Fatalf("error %v (%T); want *UnsetEnvError", err, err)
	}
	if ue.Name != "MISSING_KEY" || ue.Index != 1 || ue.Target != "app" {
		t.Errorf("UnsetEnvError %+v; want MISSING_KEY at env[1] of app", ue)
	}
	if msg := err.Error(); !strings.Contains(msg, "MISSING_KEY") || !strings.Contains(msg, "not set") || strings.Contains(msg, "value-of-set-one") {
		t.Errorf("message %q: want the variable's name, that it is not set, and no value", msg)
	}

	tg.Env = []string{"OPENAI_API_KEY=sk-pasted-secret"}
	_, err = New(tg, dir, Options{Getenv: func(string) string { return "x" }})
	if err == nil || strings.Contains(err.Error(), "sk-pasted-secret") || !strings.Contains(err.Error(), "env[0]") {
		t.Errorf("error %v: want env[0] rejected without echoing the entry", err)
	}
}

// Arguments naming paths beside the spec become absolute (the program no
// longer starts there); flags, words and missing files pass as written.
func TestArgumentsResolvedAgainstSpecDir(t *testing.T) {
	specDir, base := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(specDir, "app.py"), []byte("print()"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(specDir, "data", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(specDir, "eval"), 0o755); err != nil {
		t.Fatal(err)
	}
	args := []string{"app.py", "./app.py", "data/sub", "eval", "--config=app.py", "-v", "missing.txt", "hello world", "/etc/hostname", ""}
	tg := &spec.Target{Name: "args", Command: append([]string{helperExe(t), helperFlag, "args"}, args...)}
	p, err := New(tg, specDir, Options{TempDir: base})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := call(t, p, simpleRequest())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	if err := json.Unmarshal([]byte(resp.Text), &got); err != nil {
		t.Fatal(err)
	}
	want := []string{
		filepath.Join(specDir, "app.py"), filepath.Join(specDir, "app.py"), filepath.Join(specDir, "data", "sub"),
		"eval", // a bare name that is only a directory may be a subcommand
		"--config=app.py", "-v", "missing.txt", "hello world", "/etc/hostname", "",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("arguments\n got %q\nwant %q", got, want)
	}
}

// The expected answer is withheld from the program's vars; the caller's
// map is not changed.
func TestExpectedFieldWithheld(t *testing.T) {
	tg := &spec.Target{Name: "req", Command: []string{helperExe(t), helperFlag, "request"}}
	p, err := New(tg, t.TempDir(), Options{TempDir: t.TempDir(), Withhold: []string{"answer"}})
	if err != nil {
		t.Fatal(err)
	}
	req := simpleRequest()
	req.Vars = map[string]any{"question": "2+2?", "answer": "#### 4"}
	resp, err := call(t, p, req)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Vars map[string]any `json:"vars"`
	}
	if err := json.Unmarshal([]byte(resp.Text), &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Vars, map[string]any{"question": "2+2?"}) {
		t.Errorf("vars sent %v; want the question only", got.Vars)
	}
	if len(req.Vars) != 2 {
		t.Errorf("the request's own vars were changed: %v", req.Vars)
	}
}

// A call ended by its time-out or by its output limit still removes its
// directory.
func TestDirectoryRemovedOnFailure(t *testing.T) {
	for _, c := range []struct {
		mode string
		max  int64
		kind provider.ErrorKind
	}{{"slow", 0, provider.KindTimeout}, {"flood", 64 << 10, provider.KindOutputLimit}} {
		t.Run(c.mode, func(t *testing.T) {
			base := t.TempDir()
			tg := &spec.Target{Name: c.mode, MaxOutputBytes: c.max, Command: []string{helperExe(t), helperFlag, c.mode, "30s"}}
			p, err := New(tg, t.TempDir(), Options{TempDir: base})
			if err != nil {
				t.Fatal(err)
			}
			timeout := 20 * time.Second
			if c.kind == provider.KindTimeout {
				timeout = 300 * time.Millisecond
			}
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			_, err = p.Complete(ctx, simpleRequest())
			providerError(t, err, c.kind)
			if left := entries(t, base); len(left) != 0 {
				t.Errorf("left behind after a %s: %v", c.kind, left)
			}
		})
	}
}

// A program that would print without end is cut at max_output_bytes: the
// call fails loudly as output_limit and assay's memory stays near the limit
// (a reader without the bound would take in gigabytes before the 20 s
// deadline).
func TestEndlessOutputBoundsMemory(t *testing.T) {
	const limit = 1 << 20
	p, _, _ := isolated(t, nil, nil, "flood")
	p.maxOut = limit
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := call(t, p, simpleRequest())
	runtime.ReadMemStats(&after)
	pe := providerError(t, err, provider.KindOutputLimit)
	if !strings.Contains(pe.Msg, "1048576 bytes") || !strings.Contains(pe.Msg, "max_output_bytes") {
		t.Errorf("message %q does not name the limit and the setting", pe.Msg)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
		t.Errorf("the call allocated %d MiB for a %d MiB output limit", alloc>>20, limit>>20)
	}
}
