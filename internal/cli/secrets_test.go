package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/mock"
	"github.com/assay-eval/assay/internal/store"
)

// An API key planted in the environment reaches the provider and nothing
// else: not the store (database and its WAL), not stdout or stderr, not a
// report, not an error message — even when calls fail with auth errors.
func TestSecretsNeverWritten(t *testing.T) {
	const key = "sk-assay-PLANTED-7f3a9c1e5b2d4086"
	const wrong = "sk-assay-WRONG-KEY-0a1b2c3d4e5f6071"
	_, good := startMock(t, mock.Options{APIKey: key, Fail: 0.2, Seed: 3})
	_, strict := startMock(t, mock.Options{APIKey: key})
	dir := t.TempDir()
	db := filepath.Join(dir, "assay.db")
	path := echoTask(t, dir, 40, fmt.Sprintf(`  - {name: oa, provider: openai, model: m, base_url: %s/v1, api_key_env: MY_OPENAI_KEY}
  - {name: an, provider: anthropic, model: m, base_url: %s, api_key_env: MY_ANTHROPIC_KEY}
  - {name: denied, provider: openai, model: m, base_url: %s/v1, api_key_env: WRONG_KEY}`, good, good, strict))
	e := cliEnv{env: map[string]string{"MY_OPENAI_KEY": key, "MY_ANTHROPIC_KEY": key, "WRONG_KEY": wrong}}

	var artifacts []string
	inv := runCLI(t, e, "run", path, "--db", db)
	if inv.code != 0 {
		t.Fatalf("run exit %d: %s", inv.code, inv.stderr)
	}
	artifacts = append(artifacts, inv.stdout, inv.stderr)
	for _, f := range []string{"text", "json"} {
		inv := runCLI(t, e, "report", "latest", "--db", db, "--format", f)
		if inv.code != 0 {
			t.Fatalf("report %s: %s", f, inv.stderr)
		}
		artifacts = append(artifacts, inv.stdout, inv.stderr)
	}
	// The denied target's 40 results are stored as auth failures.
	if got := readRun(t, db, strings.TrimSpace(inv.stdout)); countKind(got, "auth") != 40 {
		t.Errorf("%d auth failures stored for the denied target, want 40", countKind(got, "auth"))
	}
	inv = runCLI(t, e, "validate", path)
	artifacts = append(artifacts, inv.stdout, inv.stderr)

	for i, a := range artifacts {
		for _, k := range []string{key, wrong} {
			if strings.Contains(a, k) {
				t.Errorf("artifact %d contains a key:\n%s", i, a)
			}
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(files) < 2 {
		t.Fatalf("expected the database beside the spec, found %v", files)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, k := range []string{key, wrong} {
			if bytes.Contains(b, []byte(k)) {
				t.Errorf("%s contains a key", f)
			}
		}
	}
}

func countKind(rs map[store.Key]scored, kind string) int {
	n := 0
	for _, r := range rs {
		if r.kind == kind {
			n++
		}
	}
	return n
}
