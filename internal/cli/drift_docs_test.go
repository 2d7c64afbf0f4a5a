package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docsCommands returns the assay command lines of docs/versioning.md's sh
// blocks, per block, comments cut off.
func docsCommands(t *testing.T) [][][]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "versioning.md"))
	if err != nil {
		t.Fatal(err)
	}
	var blocks [][][]string
	for _, m := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(string(b), -1) {
		var cmds [][]string
		for _, line := range strings.Split(m[1], "\n") {
			if i := strings.Index(line, " #"); i >= 0 {
				line = line[:i]
			}
			f := strings.Fields(line)
			if len(f) == 0 {
				continue
			}
			if f[0] != "assay" {
				t.Fatalf("docs/versioning.md: a command that is not assay's: %q", line)
			}
			cmds = append(cmds, f[1:])
		}
		blocks = append(blocks, cmds)
	}
	if len(blocks) < 4 {
		t.Fatalf("docs/versioning.md has %d sh blocks", len(blocks))
	}
	return blocks
}

// Every command in docs/versioning.md names a real command with real flags
// and the right number of arguments.
func TestVersioningDocsCommandsParse(t *testing.T) {
	t.Parallel()
	for _, block := range docsCommands(t) {
		for _, args := range block {
			root := newRootCommand(&Globals{})
			cmd, rest, err := root.Find(args)
			if err != nil || cmd == root {
				t.Errorf("assay %s: no such command (%v)", strings.Join(args, " "), err)
				continue
			}
			if err := cmd.ParseFlags(rest); err != nil {
				t.Errorf("assay %s: %v", strings.Join(args, " "), err)
				continue
			}
			if err := cmd.ValidateArgs(cmd.Flags().Args()); err != nil {
				t.Errorf("assay %s: %v", strings.Join(args, " "), err)
			}
			if cmd.PreRunE != nil {
				if err := cmd.PreRunE(cmd, cmd.Flags().Args()); err != nil {
					t.Errorf("assay %s: %v", strings.Join(args, " "), err)
				}
			}
		}
	}
}

// The "Try it" block runs as written on the bundled example, RUN_A and
// RUN_B being the IDs its two runs print, and a file it names (the
// baseline file) in a directory of its own; every command exits 0.
func TestVersioningDocsTryIt(t *testing.T) {
	t.Parallel()
	blocks := docsCommands(t)
	try := blocks[len(blocks)-1]
	root := repoRoot(t)
	work := t.TempDir()
	db := filepath.Join(work, "assay.db")
	files := 0
	var ids []string
	for _, args := range try {
		args = append([]string(nil), args...)
		for i, a := range args {
			switch {
			case strings.HasPrefix(a, "examples/"):
				args[i] = filepath.Join(root, a)
			case strings.HasSuffix(a, ".json"):
				args[i] = filepath.Join(work, a)
				files++
			case a == "RUN_A" || a == "RUN_B":
				k := int(a[4] - 'A')
				if k >= len(ids) {
					t.Fatalf("%s used before the runs that print it", a)
				}
				args[i] = ids[k]
			}
		}
		inv := runCLI(t, cliEnv{}, append(args, "--db", db)...)
		if inv.code != ExitOK {
			t.Fatalf("assay %s: exit %d\n%s%s", strings.Join(args, " "), inv.code, inv.stdout, inv.stderr)
		}
		if args[0] == "run" {
			ids = append(ids, strings.TrimSpace(strings.SplitN(inv.stdout, "\n", 2)[0]))
		}
		if args[0] == "drift" && !strings.Contains(inv.stdout, "no drift: 2 targets checked") {
			t.Errorf("drift on the recorded example:\n%s", inv.stdout)
		}
	}
	if len(ids) != 2 {
		t.Fatalf("the Try it block made %d runs, want 2", len(ids))
	}
	if files != 2 {
		t.Errorf("the Try it block names a baseline file %d times, want 2 (exported, then drift from it)", files)
	}
}
