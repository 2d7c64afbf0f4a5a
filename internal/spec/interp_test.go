package spec

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// hosted is a spec with one openai target; tests append to its target.
const hosted = `dataset:
  path: data.jsonl
prompt:
  user: "Q: {{.question}}"
targets:
  - name: gpt
    provider: openai
    model: m
`

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// loadWith writes src (and overlays) to a temporary directory and loads it
// with env as the environment.
func loadWith(t *testing.T, src string, env map[string]string, overlays ...string) (*Spec, Problems, string, []string) {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	var ovs []string
	for i, o := range overlays {
		f := filepath.Join(dir, fmt.Sprintf("o%d.yaml", i+1))
		if err := os.WriteFile(f, []byte(o), 0o644); err != nil {
			t.Fatal(err)
		}
		ovs = append(ovs, f)
	}
	sp, err := LoadWith(file, Options{Getenv: envOf(env), Overlays: ovs})
	if err == nil {
		return sp, nil, file, ovs
	}
	var ps Problems
	if !errors.As(err, &ps) {
		t.Fatalf("error %v is not Problems", err)
	}
	return sp, ps, file, ovs
}

func TestInterpolationSetAndDefault(t *testing.T) {
	src := hosted + `    model: ${MODEL}
    base_url: "http://${HOST:-127.0.0.1}:${PORT:-8080}/v1"
    limits: {rpm: "${RPM:-60}", concurrency: "${CONC}"}
    timeout: ${T:-2s}
    stream: ${STREAM:-false}
run:
  epochs: ${EPOCHS:-3}
`
	sp, ps, _, _ := loadWith(t, strings.Replace(src, "    model: m\n", "", 1), map[string]string{"MODEL": "llama3", "PORT": "9000", "CONC": "4", "STREAM": "true"})
	if ps != nil {
		t.Fatal(ps)
	}
	tg := sp.Targets[0]
	if tg.Model != "llama3" || tg.BaseURL != "http://127.0.0.1:9000/v1" {
		t.Fatalf("model %q base_url %q", tg.Model, tg.BaseURL)
	}
	if tg.Limits.RPM != 60 || tg.Limits.Concurrency != 4 || time.Duration(tg.Timeout) != 2*time.Second || !tg.Stream || sp.Run.Epochs != 3 {
		t.Fatalf("typed values: %+v timeout %v stream %v epochs %d", tg.Limits, tg.Timeout, tg.Stream, sp.Run.Epochs)
	}
	want := []string{"CONC", "EPOCHS", "HOST", "MODEL", "PORT", "RPM", "STREAM", "T"}
	if strings.Join(sp.EnvVars, ",") != strings.Join(want, ",") {
		t.Fatalf("EnvVars %v, want %v", sp.EnvVars, want)
	}
}

func TestInterpolationEscapeAndScope(t *testing.T) {
	// $$ is one $, a lone $ stays; the prompt is not interpolated.
	src := `dataset:
  path: data.jsonl
prompt:
  user: "Costs $${X} and ${NOT_INTERPOLATED} {{.question}}"
targets:
  - name: e
    provider: exec
    command: ["./run", "$${HOME}", "a$b", "$$"]
`
	sp, ps, _, _ := loadWith(t, src, nil)
	if ps != nil {
		t.Fatal(ps)
	}
	if got := strings.Join(sp.Targets[0].Command, "|"); got != "./run|${HOME}|a$b|$" {
		t.Fatalf("command %q", got)
	}
	if sp.Prompt.User != "Costs $${X} and ${NOT_INTERPOLATED} {{.question}}" {
		t.Fatalf("prompt changed: %q", sp.Prompt.User)
	}
}

// problemAt finds the one problem containing msg.
func problemAt(t *testing.T, ps Problems, msg string) Problem {
	t.Helper()
	for _, p := range ps {
		if strings.Contains(p.Msg, msg) {
			return p
		}
	}
	t.Fatalf("no problem mentions %q in:\n%v", msg, ps)
	return Problem{}
}

func TestInterpolationErrorsAreLocated(t *testing.T) {
	// Lines below: 9 is the model line; columns are counted from the text.
	cases := []struct {
		line, msg string
		col       int
	}{
		{`    base_url: http://x/${UNSET_VAR}/v1`, "environment variable UNSET_VAR is not set", strings.Index(`    base_url: http://x/${UNSET_VAR}/v1`, "${") + 1},
		{`    base_url: "http://x/${OK:-a}${UNSET_VAR}"`, "environment variable UNSET_VAR is not set", strings.Index(`    base_url: "http://x/${OK:-a}${UNSET_VAR}"`, "${UNSET") + 1},
		{`    base_url: http://x/${OPEN`, "${ is not closed", strings.Index(`    base_url: http://x/${OPEN`, "${") + 1},
		{`    base_url: http://x/${}`, "empty name", strings.Index(`    base_url: http://x/${}`, "${") + 1},
		{`    base_url: http://x/${1A}`, `the name "1A"`, strings.Index(`    base_url: http://x/${1A}`, "${") + 1},
		{`    base_url: http://x/${A:?err}`, "${...} holds", strings.Index(`    base_url: http://x/${A:?err}`, "${") + 1},
	}
	for _, c := range cases {
		_, ps, file, _ := loadWith(t, hosted+c.line+"\n", nil)
		p := problemAt(t, ps, c.msg)
		if p.File != file || p.Line != 9 || p.Col != c.col {
			t.Errorf("%s: at %s:%d:%d, want %s:9:%d", c.line, p.File, p.Line, p.Col, file, c.col)
		}
		if p.Hint == "" {
			t.Errorf("%s: no hint", c.line)
		}
	}
}

func TestInterpolatedKeysAreRefused(t *testing.T) {
	key := "sk-proj-" + strings.Repeat("a1B2", 10)
	for _, src := range []string{
		hosted + "    base_url: http://x/?k=${OPENAI_API_KEY}\n",
		hosted + "    base_url: http://x/?k=${MY_KEY}\n    api_key_env: MY_KEY\n",
		hosted + "    base_url: http://x/?k=${SOMETHING}\n",
	} {
		_, ps, _, _ := loadWith(t, src, map[string]string{"OPENAI_API_KEY": key, "MY_KEY": key, "SOMETHING": key})
		if len(ps) == 0 {
			t.Fatalf("accepted:\n%s", src)
		}
		if strings.Contains(ps.Error(), key) || strings.Contains(ps.Error(), key[8:20]) {
			t.Fatalf("problem shows the key: %v", ps)
		}
		p := problemAt(t, ps, "targets[0].base_url")
		if p.Line != 9 {
			t.Fatalf("at line %d: %v", p.Line, p)
		}
	}
}

func TestHeadersAndKeyFile(t *testing.T) {
	src := hosted + `    api_key_file: key.txt
    headers:
      X-Org: ${ORG}
      X-Team: literal
      OpenAI-Project: "proj ${PROJ:-none}"
`
	sp, ps, _, _ := loadWith(t, src, map[string]string{"ORG": "org-123456789"})
	if ps != nil {
		t.Fatal(ps)
	}
	tg := sp.Targets[0]
	if tg.Headers["X-Org"] != "org-123456789" || tg.Headers["X-Team"] != "literal" || tg.Headers["OpenAI-Project"] != "proj none" {
		t.Fatalf("headers %v", tg.Headers)
	}
	if strings.Join(tg.HeaderNames, ",") != "OpenAI-Project,X-Org,X-Team" || strings.Join(tg.HeaderVars, ",") != "ORG,PROJ" {
		t.Fatalf("names %v vars %v", tg.HeaderNames, tg.HeaderVars)
	}
	if tg.APIKeyFile != "key.txt" {
		t.Fatalf("api_key_file %q", tg.APIKeyFile)
	}
	// Header variables are names only: not in the hash, not a refused key.
	if strings.Join(sp.EnvVars, ",") != "ORG,PROJ" {
		t.Fatalf("EnvVars %v", sp.EnvVars)
	}
	sp2, _, _, _ := loadWith(t, src, map[string]string{"ORG": "org-rotated-000"})
	if sp2.Hash != sp.Hash {
		t.Fatal("a header value changed the spec hash")
	}
}

func TestHeaderProblems(t *testing.T) {
	cases := map[string]string{
		"      Authorization: x\n":              "cannot be replaced",
		"      \"Bad Name\": x\n":               "not a valid HTTP header name",
		"      X-A: ${NL}\n":                    "line break",
		"      X-A: sk-proj-abcdefgh12345678\n": "looks like a secret",
	}
	for line, msg := range cases {
		_, ps, _, _ := loadWith(t, hosted+"    headers:\n"+line, map[string]string{"NL": "v\r\nX-Evil: 1"})
		p := problemAt(t, ps, msg)
		if p.Line != 10 {
			t.Errorf("%q: line %d, want 10", line, p.Line)
		}
		if strings.Contains(p.String(), "abcdefgh12345678") {
			t.Errorf("problem shows the secret: %v", p)
		}
	}
	_, ps, _, _ := loadWith(t, hosted+"    api_key_env: K\n    api_key_file: k.txt\n", nil)
	problemAt(t, ps, "both api_key_env and api_key_file")
	_, ps, _, _ = loadWith(t, strings.Replace(base, "command: [./run]", "command: [./run]\n    headers: {X-A: b}", 1), nil)
	problemAt(t, ps, "headers is set but the provider is exec")
}

func TestBaseURLFromEnvironment(t *testing.T) {
	src := hosted + `  - name: claude
    provider: anthropic
    model: c
  - name: pinned
    provider: openai
    model: m
    base_url: http://pinned/v1
`
	env := map[string]string{"OPENAI_BASE_URL": "http://gw.local/v1", "ANTHROPIC_BASE_URL": "http://anth.local"}
	sp, ps, _, _ := loadWith(t, src, env)
	if ps != nil {
		t.Fatal(ps)
	}
	got := fmt.Sprintf("%s %s|%s %s|%s %s", sp.Targets[0].BaseURL, sp.Targets[0].BaseURLEnv, sp.Targets[1].BaseURL, sp.Targets[1].BaseURLEnv, sp.Targets[2].BaseURL, sp.Targets[2].BaseURLEnv)
	if got != "http://gw.local/v1 OPENAI_BASE_URL|http://anth.local ANTHROPIC_BASE_URL|http://pinned/v1 " {
		t.Fatalf("base URLs: %s", got)
	}
	plain, _, _, _ := loadWith(t, src, nil)
	if plain.Targets[0].BaseURL != "" || plain.Hash == sp.Hash {
		t.Fatalf("without the variable: base_url %q, same hash %v", plain.Targets[0].BaseURL, plain.Hash == sp.Hash)
	}
	_, ps, _, _ = loadWith(t, src, map[string]string{"OPENAI_BASE_URL": "not a url"})
	p := problemAt(t, ps, "OPENAI_BASE_URL")
	if p.Line != 6 {
		t.Fatalf("at line %d, want the target at 6: %v", p.Line, p)
	}
}

// A base URL carrying a user or password (from the spec or from
// OPENAI_BASE_URL) is refused: the resolved spec is stored with the run
// and shown in its reports. The problem never quotes the URL.
func TestBaseURLWithCredentialsRefused(t *testing.T) {
	src := hosted + `  - name: proxied
    provider: openai
    model: m
    base_url: http://bob:hunter2pw@gw.local/v1
`
	_, ps, _, _ := loadWith(t, src, nil)
	p := problemAt(t, ps, "base_url must not carry a user or password")
	if strings.Contains(p.Msg+p.Hint, "hunter2pw") {
		t.Errorf("the problem shows the password: %v", p)
	}
	_, ps, _, _ = loadWith(t, hosted, map[string]string{"OPENAI_BASE_URL": "http://bob:hunter2pw@gw.local/v1"})
	p = problemAt(t, ps, "OPENAI_BASE_URL from the environment must not carry a user or password")
	if strings.Contains(p.Msg+p.Hint, "hunter2pw") {
		t.Errorf("the problem shows the password: %v", p)
	}
}

func TestOverlaysMerge(t *testing.T) {
	src := hosted + `  - name: claude
    provider: anthropic
    model: c
    limits: {rpm: 50, concurrency: 2}
run:
  epochs: 2
  retries: 3
`
	overlay := `targets:
  - name: claude
    base_url: http://staging/anthropic
    limits: {rpm: 10}
  - name: extra
    provider: openai
    model: e
run:
  epochs: 5
`
	sp, ps, _, ovs := loadWith(t, src, nil, overlay, "run: {retries: 1}\n")
	if ps != nil {
		t.Fatal(ps)
	}
	if len(sp.Targets) != 3 || sp.Targets[2].Name != "extra" {
		t.Fatalf("targets %+v", sp.Targets)
	}
	c := sp.Targets[1]
	if c.BaseURL != "http://staging/anthropic" || c.Limits.RPM != 10 || c.Limits.Concurrency != 2 || c.Model != "c" {
		t.Fatalf("merged claude %+v", c)
	}
	if sp.Run.Epochs != 5 || sp.Run.Retries != 1 {
		t.Fatalf("run %+v", sp.Run)
	}
	if strings.Join(sp.Overlays, ",") != strings.Join(ovs, ",") {
		t.Fatalf("overlays %v", sp.Overlays)
	}
	plain, _, _, _ := loadWith(t, src, nil)
	if plain.Hash == sp.Hash {
		t.Fatal("the overlay did not change the spec hash")
	}
	again, _, _, _ := loadWith(t, src, nil, overlay, "run: {retries: 1}\n")
	if again.Hash != sp.Hash {
		t.Fatal("the same spec and overlays gave another hash")
	}
}

func TestOverlayProblemsNameTheOverlay(t *testing.T) {
	overlay := "run:\n  epochs: 0\ntargets:\n  - name: gpt\n    limits: {rpm: -1, bogus: 2}\n  - provider: openai\n"
	_, ps, _, ovs := loadWith(t, hosted, nil, "run: {retries: 1}\n", overlay)
	for _, c := range []struct {
		msg       string
		line, col int
	}{
		{"run.epochs must be at least 1", 2, 11},
		{`unknown key "bogus"`, 5, 23},
		{"needs a name", 6, 5},
	} {
		p := problemAt(t, ps, c.msg)
		if p.File != ovs[1] || p.Line != c.line || p.Col != c.col {
			t.Errorf("%s: at %s:%d:%d, want %s:%d:%d", c.msg, p.File, p.Line, p.Col, ovs[1], c.line, c.col)
		}
	}
	// A key written twice in an overlay is reported there, at its own line.
	_, ps, _, ovs = loadWith(t, hosted+"run: {epochs: 2}\n", nil, "run:\n  epochs: 3\n  epochs: 4\n")
	if p := problemAt(t, ps, `duplicate key "epochs" in run (first at line 2)`); p.File != ovs[0] || p.Line != 3 {
		t.Errorf("duplicate in overlay at %s:%d", p.File, p.Line)
	}
	_, ps, _, ovs = loadWith(t, hosted, nil, "volume:\n  requests_per_month: 3\n  requests_per_month: 4\n")
	if p := problemAt(t, ps, `duplicate key "requests_per_month" in volume (first at line 2)`); p.File != ovs[0] || p.Line != 3 {
		t.Errorf("duplicate in a new section of an overlay at %s:%d", p.File, p.Line)
	}
	// A problem in the spec itself still names the spec.
	_, ps, file, _ := loadWith(t, hosted+"run: {epochs: 0}\n", nil, "run: {retries: 1}\n")
	if p := problemAt(t, ps, "run.epochs"); p.File != file || p.Line != 9 {
		t.Errorf("spec problem at %s:%d", p.File, p.Line)
	}
	// Bad YAML in an overlay is located in it.
	_, ps, _, ovs = loadWith(t, hosted, nil, "run: [\n")
	if len(ps) != 1 || ps[0].File != ovs[0] {
		t.Fatalf("bad overlay YAML: %v", ps)
	}
	_, ps, _, ovs = loadWith(t, hosted, nil, "- a\n")
	if p := problemAt(t, ps, "an overlay must be a mapping"); p.File != ovs[0] || p.Line != 1 {
		t.Fatalf("list overlay: %v", p)
	}
}

func TestInterpolate(t *testing.T) {
	env := envOf(map[string]string{"A": "x", "E": ""})
	for in, want := range map[string]string{
		"":                 "",
		"plain":            "plain",
		"${A}":             "x",
		"${A:-d}":          "x",
		"${E:-d}":          "d",
		"${B:-}":           "",
		"${B:-a b:c}":      "a b:c",
		"$$":               "$",
		"$$${A}":           "$x",
		"$":                "$",
		"a$":               "a$",
		"$A":               "$A",
		"${A}${A}-${B:-y}": "xx-y",
	} {
		got, _, err := interpolate(in, env)
		if err != nil || got != want {
			t.Errorf("interpolate(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"${", "${A", "${}", "${E}", "${B}", "${A-b}", "${ A}", "${A:=b}"} {
		if _, _, err := interpolate(in, env); err == nil {
			t.Errorf("interpolate(%q) accepted", in)
		}
	}
}

// FuzzInterpolate: never panics; an error's offset is inside the input;
// without a $ the input comes back unchanged.
func FuzzInterpolate(f *testing.F) {
	for _, s := range []string{"${A}", "${A:-b}", "$$", "${", "a${}b", "${A:-${B}}", "$${A}"} {
		f.Add(s)
	}
	env := envOf(map[string]string{"A": "1", "B": "two"})
	f.Fuzz(func(t *testing.T, s string) {
		out, refs, err := interpolate(s, env)
		if err != nil {
			if err.Offset < 0 || err.Offset >= len(s) || err.Msg == "" {
				t.Fatalf("bad error %+v for %q", err, s)
			}
			return
		}
		if !strings.Contains(s, "$") && (out != s || refs != nil) {
			t.Fatalf("%q changed to %q", s, out)
		}
		if utf8.ValidString(s) && !utf8.ValidString(out) {
			t.Fatalf("%q gave invalid UTF-8 %q", s, out)
		}
	})
}

// FuzzOverlay: any overlay bytes over a valid spec load without a panic,
// and every problem is positioned in the spec or the overlay.
func FuzzOverlay(f *testing.F) {
	f.Add([]byte("targets:\n  - name: gpt\n    model: x\n"))
	f.Add([]byte("run: {epochs: ${E:-2}}\n"))
	f.Add([]byte("- a\n"))
	f.Add([]byte("targets: {a: 1}\n"))
	f.Add([]byte("targets:\n  - model: q\n  - &x {name: gpt}\n  - *x\n"))
	dir := f.TempDir()
	file := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(file, []byte(hosted), 0o644); err != nil {
		f.Fatal(err)
	}
	ov := filepath.Join(dir, "o.yaml")
	f.Fuzz(func(t *testing.T, src []byte) {
		if len(src) > 4<<10 {
			return
		}
		if err := os.WriteFile(ov, src, 0o644); err != nil {
			t.Fatal(err)
		}
		sp, err := LoadWith(file, Options{Getenv: envOf(nil), Overlays: []string{ov}})
		if err == nil {
			if sp == nil {
				t.Fatal("nil spec without problems")
			}
			return
		}
		var ps Problems
		if !errors.As(err, &ps) || len(ps) == 0 {
			t.Fatalf("error %v is not a non-empty Problems", err)
		}
		for _, p := range ps {
			if (p.File != file && p.File != ov) || p.Line < 1 || p.Line >= lineBase || p.Col < 1 || p.Msg == "" {
				t.Fatalf("bad problem %#v", p)
			}
		}
	})
}
