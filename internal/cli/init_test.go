package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// assay init scaffolds an eval that validates and runs at once, and never
// overwrites a user's files unless told to.
func TestInitScaffoldsAWorkingEval(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "evals", "mine")
	e := cliEnv{env: map[string]string{"ASSAY_DB": filepath.Join(t.TempDir(), "a.db")}}
	inv := runCLI(t, e, "init", dir)
	if inv.code != 0 {
		t.Fatalf("init: exit %d: %s", inv.code, inv.stderr)
	}
	spec := filepath.Join(dir, "assay.yaml")
	for _, f := range []string{"assay.yaml", "cases.jsonl", "recorded.jsonl", filepath.Join("prompts", "system.txt")} {
		want, err := os.ReadFile(filepath.Join(repoRoot(t), "examples", "quickstart", f))
		if err != nil {
			t.Fatal(err)
		}
		if got := readFileT(t, filepath.Join(dir, f)); got != string(want) {
			t.Errorf("%s differs from the bundled example", f)
		}
	}
	if v := runCLI(t, e, "validate", spec); v.code != 0 {
		t.Fatalf("validate of the scaffold: exit %d: %s", v.code, v.stderr)
	}
	s := runJSON(t, e, "run", spec)
	if s.RunID == "" {
		t.Fatalf("run of the scaffold gave no run ID")
	}

	// A second init refuses and writes nothing.
	writeFile(t, spec, "name: mine\n")
	inv = runCLI(t, e, "init", dir)
	if inv.code != ExitErr || !strings.Contains(inv.stderr, "already exist") || !strings.Contains(inv.stderr, "--force") {
		t.Errorf("init over existing files: exit %d, stderr %q; want exit 1 naming them and --force", inv.code, inv.stderr)
	}
	if got := readFileT(t, spec); got != "name: mine\n" {
		t.Errorf("init overwrote the user's spec without --force")
	}
	if inv := runCLI(t, e, "init", dir, "--force"); inv.code != 0 || readFileT(t, spec) == "name: mine\n" {
		t.Errorf("init --force: exit %d, spec not rewritten: %s", inv.code, inv.stderr)
	}
}
