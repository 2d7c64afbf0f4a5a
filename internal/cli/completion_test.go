package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// completions runs `assay __complete ARGS…` (what a shell's completion
// script calls) and returns the candidates (without descriptions) and the
// directive line.
func completions(t *testing.T, e cliEnv, args ...string) ([]string, string) {
	t.Helper()
	inv := runCLI(t, e, append([]string{"__complete"}, args...)...)
	if inv.code != 0 {
		t.Fatalf("__complete %v: exit %d\n%s", args, inv.code, inv.stderr)
	}
	lines := strings.Split(strings.TrimRight(inv.stdout, "\n"), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, ":") {
		t.Fatalf("__complete %v: no directive line:\n%s", args, inv.stdout)
	}
	var out []string
	for _, l := range lines[:len(lines)-1] {
		v, _, _ := strings.Cut(l, "\t")
		out = append(out, v)
	}
	return out, last
}

// isCommand reports whether assay has a command of this name.
func isCommand(name string) bool {
	root := newRootCommand(&Globals{})
	c, _, err := root.Find([]string{name})
	return err == nil && c != root
}

// withDB puts --db PATH first: a completion request ends with the word
// being completed.
func withDB(args []string, db string) []string {
	return append([]string{"--db", db}, args...)
}

// `assay completion SHELL` prints a script for each shell cobra supports.
func TestCompletionScripts(t *testing.T) {
	t.Parallel()
	for shell, marker := range map[string]string{"bash": "__start_assay", "zsh": "#compdef assay", "fish": "complete -c assay", "powershell": "Register-ArgumentCompleter"} {
		inv := runCLI(t, cliEnv{}, "completion", shell)
		if inv.code != 0 || !strings.Contains(inv.stdout, marker) {
			t.Errorf("completion %s: exit %d, script without %q (%d bytes)\n%s", shell, inv.code, marker, len(inv.stdout), inv.stderr)
		}
	}
}

// RUN arguments complete to latest and the stored run IDs (newest first),
// for every command that takes runs, as many as it takes; a prefix narrows
// them; target flags offer the run's targets or the spec's.
func TestCompletionRunsAndTargets(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "assay.db")
	specPath := filepath.Join(repoRoot(t), "examples", "quickstart", "assay.yaml")
	var ids []string
	for range 2 {
		ids = append([]string{runJSON(t, cliEnv{}, "run", specPath, "--db", db).RunID}, ids...) // newest first
	}
	want := append([]string{"latest"}, ids...)
	for _, args := range [][]string{
		{"report", ""}, {"rescore", ""}, {"plan", ""}, {"gate", ""}, {"baseline", "export", ""}, {"export", ""},
		{"compare", ""}, {"compare", ids[0], ""}, {"diff", ids[1], ""}, {"drift", ""}, {"runs", "rm", ids[0], ""},
		{"gate", "latest", "--baseline", ""},
	} {
		if !isCommand(args[0]) {
			continue // added by another part; covered once registered
		}
		got, _ := completions(t, cliEnv{}, withDB(args, db)...)
		if !slices.Equal(got, want) {
			t.Errorf("%v: candidates %v, want %v", args, got, want)
		}
	}
	// Files are offered beside the runs only where a file may stand:
	// drift's first argument and --baseline (directive 0, not 4).
	for args, dir := range map[string]string{"report|": ":4", "drift|": ":0", "drift|latest|": ":4", "gate|latest|--baseline|": ":0"} {
		a := strings.Split(args, "|")
		if _, d := completions(t, cliEnv{}, withDB(a, db)...); d != dir {
			t.Errorf("%v: directive %s, want %s", a, d, dir)
		}
	}
	// No more runs than the command takes.
	for _, args := range [][]string{{"report", ids[0], ""}, {"compare", ids[0], ids[1], ""}} {
		if got, _ := completions(t, cliEnv{}, withDB(args, db)...); len(got) != 0 {
			t.Errorf("%v: candidates %v, want none", args, got)
		}
	}
	// A prefix of one ID.
	prefix := ids[1][:len(ids[1])-1]
	if got, _ := completions(t, cliEnv{}, "--db", db, "report", prefix); !slices.Equal(got, []string{ids[1]}) {
		t.Errorf("report %s: candidates %v, want [%s]", prefix, got, ids[1])
	}
	// The store from ASSAY_DB.
	if got, _ := completions(t, cliEnv{env: map[string]string{"ASSAY_DB": db}}, "report", ""); !slices.Equal(got, want) {
		t.Errorf("report with ASSAY_DB: candidates %v", got)
	}

	// Targets: from the spec for run, from the run for gate and diff; a
	// comma-separated list goes on after its last comma, without repeats.
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"run", specPath, "--targets", ""}, []string{"model-a", "model-b"}},
		{[]string{"run", specPath, "--targets", "model-a,"}, []string{"model-a,model-b"}},
		{[]string{"run", specPath, "--targets", "model-b"}, []string{"model-b"}},
		{[]string{"gate", ids[1], "--targets", ""}, []string{"model-a", "model-b"}},
		{[]string{"gate", "--targets", "m"}, []string{"model-a", "model-b"}},
		{[]string{"diff", ids[1], ids[0], "--target", ""}, []string{"model-a", "model-b"}},
		{[]string{"run", filepath.Join(dir, "missing.yaml"), "--targets", ""}, nil},
	} {
		if got, _ := completions(t, cliEnv{}, withDB(c.args, db)...); !slices.Equal(got, c.want) {
			t.Errorf("%v: candidates %v, want %v", c.args, got, c.want)
		}
	}
}

// Where there is no store, completing a run offers nothing and creates
// nothing.
func TestCompletionCreatesNoStore(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, ".assay", "assay.db")
	for _, args := range [][]string{{"report", ""}, {"gate", "--targets", ""}, {"compare", ""}} {
		if got, _ := completions(t, cliEnv{}, withDB(args, db)...); len(got) != 0 {
			t.Errorf("%v without a store: candidates %v", args, got)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, ".assay")); !os.IsNotExist(err) {
		t.Errorf("completion created %s", filepath.Join(dir, ".assay"))
	}
}

// Every command with --format completes it, to exactly the values the
// command accepts: each offered value passes the command's format check,
// and a value not offered fails it.
func TestCompletionFormats(t *testing.T) {
	t.Parallel()
	root := newRootCommand(&Globals{})
	var cmds []*cobra.Command
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Flags().Lookup("format") != nil {
			cmds = append(cmds, c)
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
	if len(cmds) < 8 {
		t.Fatalf("only %d commands with --format", len(cmds))
	}
	db := filepath.Join(t.TempDir(), "none", "assay.db")
	for _, c := range cmds {
		path := strings.Fields(c.CommandPath())[1:]
		got, dir := completions(t, cliEnv{}, append(path, "--format", "")...)
		if len(got) == 0 || dir != ":4" {
			t.Errorf("%s --format: candidates %v, directive %s; add the command to formatValues", c.CommandPath(), got, dir)
			continue
		}
		// The command's own check: a format it rejects is a usage error
		// naming --format, before anything is read.
		args := append(append([]string{}, path...), "--db", db)
		if c.CommandPath() == "assay probe contamination" {
			args = append(args, "--rewriter", "r") // checked before --format
		}
		if c.Flags().ShorthandLookup("o") != nil {
			args = append(args, "-o", filepath.Join(t.TempDir(), "out"))
		}
		if c.CommandPath() == "assay init" {
			// init writes where it is pointed: never into the package.
			args = append(args, t.TempDir())
		}
		for n := range 4 { // as many arguments as the command takes
			if c.CommandPath() == "assay init" {
				break
			}
			if c.ValidateArgs(slices.Repeat([]string{"x"}, n)) == nil {
				args = append(args, slices.Repeat([]string{"x"}, n)...)
				break
			}
		}
		rejects := func(f string) bool {
			inv := runCLI(t, cliEnv{}, append(slices.Clone(args), "--format", f)...)
			return inv.code == ExitUsage && strings.Contains(inv.stderr, "--format")
		}
		for _, f := range got {
			if rejects(f) {
				t.Errorf("%s offers --format %s, which it rejects", c.CommandPath(), f)
			}
		}
		if !rejects("no-such-format") {
			t.Errorf("%s: the format check did not reject no-such-format; the test cannot tell what it accepts", c.CommandPath())
		}
	}
}
