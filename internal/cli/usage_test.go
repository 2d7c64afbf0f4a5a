package cli

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/mock"
)

// Mistakes on the command line are usage errors (exit 2) or plain errors
// (exit 1) with a message that says what would be valid; none calls a model.
func TestCommandLineMistakes(t *testing.T) {
	t.Parallel()
	srv, url := startMock(t, mock.Options{})
	dir := t.TempDir()
	db := filepath.Join(dir, "assay.db")
	path := echoTask(t, dir, 5, fmt.Sprintf(`  - {name: oa, provider: openai, model: m, base_url: %s/v1}`, url))
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"run", path, "--db", db, "--targets", "ob"}, ExitUsage, `no target named "ob" (targets are: oa)`},
		{[]string{"run", path, "--db", db, "--limit", "-1"}, ExitUsage, "--limit must not be negative"},
		{[]string{"run", path, "--db", db, "--resume", "latest", "--limit", "3"}, ExitUsage, "--resume takes the run's own"},
		{[]string{"run", path, "--db", db, "--resume", "nosuchrun"}, ExitErr, "nosuchrun"},
		{[]string{"run", "--db", db}, ExitUsage, "accepts 1 arg"},
		{[]string{"run", "--db", db}, ExitUsage, "(usage: assay run SPEC [flags])"},
		{[]string{"rescore", "latest", path, "--db", db}, ExitUsage, "give a spec with --spec " + path},
		{[]string{"run", path, "--db", db, "--bogus"}, ExitUsage, "unknown flag: --bogus"},
		{[]string{"report", "latest", "--db", db}, ExitErr, "not found"},
		{[]string{"report", "latest", "--db", db, "--format", "pdf"}, ExitUsage, "formats are"},
		{[]string{"validate", filepath.Join(dir, "missing.yaml")}, ExitErr, "missing.yaml: no such file"},
	}
	for _, c := range cases {
		inv := runCLI(t, cliEnv{}, c.args...)
		if inv.code != c.code || !strings.Contains(inv.stderr, c.want) {
			t.Errorf("assay %s: exit %d, stderr %q; want exit %d and %q", strings.Join(c.args, " "), inv.code, inv.stderr, c.code, c.want)
		}
	}
	if n := srv.Stats().Requests; n != 0 {
		t.Errorf("%d model calls from mistaken command lines", n)
	}
}

// A run resumes only on the spec and dataset it started with.
func TestResumeRefusesChangedDataset(t *testing.T) {
	t.Parallel()
	srv, url := startMock(t, mock.Options{})
	dir := t.TempDir()
	db := filepath.Join(dir, "assay.db")
	path := echoTask(t, dir, 5, fmt.Sprintf(`  - {name: oa, provider: openai, model: m, base_url: %s/v1}`, url))
	runJSON(t, cliEnv{}, "run", path, "--db", db, "--limit", "2")
	echoTask(t, dir, 6, fmt.Sprintf(`  - {name: oa, provider: openai, model: m, base_url: %s/v1}`, url))
	before := srv.Stats().Requests
	inv := runCLI(t, cliEnv{}, "run", path, "--db", db, "--resume", "latest")
	if inv.code != ExitErr || !strings.Contains(inv.stderr, "changed since the run started") {
		t.Errorf("exit %d: %s", inv.code, inv.stderr)
	}
	if srv.Stats().Requests != before {
		t.Error("a refused resume called the model")
	}
}
