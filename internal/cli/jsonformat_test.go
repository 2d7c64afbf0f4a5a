package cli

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// formatExempt are the commands that print no result of their own to
// format, and why.
var formatExempt = map[string]string{
	"assay mock":            "a server: it serves until stopped",
	"assay serve":           "a server: it serves until stopped",
	"assay collect":         "a server: it receives traces until stopped",
	"assay worker":          "a server: it works jobs until stopped",
	"assay baseline export": "writes a baseline file, which is JSON",
	"assay help":            "cobra's help",
	"assay baseline":        "a group: it lists its subcommands",
	"assay cache":           "a group: it lists its subcommands",
	"assay probe":           "a group: it lists its subcommands",
	"assay labels":          "a group: it lists its subcommands",
	"assay store":           "a group: it lists its subcommands",
	"assay labels export":   "writes labels as JSONL",
}

// Every command that prints a result takes --format json, whatever else it
// takes: the command tree is walked so a new command cannot skip it. The
// old --json switches stay and mean the same; giving both with different
// values is a usage error. Then, end to end, --format json prints JSON.
func TestEveryCommandTakesFormatJSON(t *testing.T) {
	t.Parallel()
	root := newRootCommand(&Globals{})
	var leaves []*cobra.Command
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Runnable() && c != root {
			leaves = append(leaves, c)
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
	checked := 0
	for _, c := range leaves {
		path := c.CommandPath()
		if _, ok := formatExempt[path]; ok || strings.HasPrefix(path, "assay completion") {
			continue
		}
		checked++
		f := c.Flags().Lookup("format")
		if f == nil {
			t.Errorf("%s has no --format", path)
			continue
		}
		vals := formatValues[path]
		if path == "assay export" {
			// The file's format: jsonl is its JSON.
			if !slices.Contains(vals, "jsonl") {
				t.Errorf("assay export --format offers %v, want jsonl", vals)
			}
			continue
		}
		if !slices.Contains(vals, "json") {
			t.Errorf("%s --format offers %v, want json among them", path, vals)
		}
		if c.Flags().Lookup("json") != nil && !strings.Contains(f.Usage, "--json") {
			t.Errorf("%s has --json and --format, but --format's help does not say they are the same: %q", path, f.Usage)
		}
	}
	if checked < 14 {
		t.Fatalf("only %d commands checked", checked)
	}

	// End to end: --format json and --json print the same JSON; a
	// disagreeing pair is a usage error.
	dir := t.TempDir()
	db := filepath.Join(dir, "assay.db")
	spec := writeNamedReplaySpec(t, dir, "a", "alpha")
	e := cliEnv{}
	inv := runCLI(t, e, "run", spec, "--db", db, "--format", "json")
	var sum runSummary
	if inv.code != 0 || json.Unmarshal([]byte(inv.stdout), &sum) != nil || sum.RunID == "" {
		t.Fatalf("run --format json: exit %d, stdout %q, %s", inv.code, inv.stdout, inv.stderr)
	}
	for _, args := range [][]string{
		{"runs"},
		{"rescore", sum.RunID},
		{"plan", sum.RunID},
		{"cache", "stats"},
		{"validate", spec},
		{"report", sum.RunID},
	} {
		asFormat := runCLI(t, e, append(slices.Clone(args), "--db", db, "--format", "json")...)
		var v any
		if asFormat.code != 0 || json.Unmarshal([]byte(asFormat.stdout), &v) != nil {
			t.Errorf("%v --format json: exit %d, not JSON: %q %s", args, asFormat.code, asFormat.stdout, asFormat.stderr)
		}
	}
	for _, args := range [][]string{{"cache", "clear"}, {"runs", "rm", sum.RunID}, {"init", filepath.Join(dir, "scaffold")}} {
		inv := runCLI(t, e, append(slices.Clone(args), "--db", db, "--format", "json")...)
		var v any
		if inv.code != 0 || json.Unmarshal([]byte(inv.stdout), &v) != nil {
			t.Errorf("%v --format json: exit %d, not JSON: %q %s", args, inv.code, inv.stdout, inv.stderr)
		}
	}
	for _, args := range [][]string{{"runs"}, {"cache", "stats"}} {
		a := runCLI(t, e, append(slices.Clone(args), "--db", db, "--format", "json")...)
		b := runCLI(t, e, append(slices.Clone(args), "--db", db, "--json")...)
		if a.stdout != b.stdout || a.code != 0 {
			t.Errorf("%v: --format json and --json differ:\n%s\n%s", args, a.stdout, b.stdout)
		}
	}
	if inv := runCLI(t, e, "runs", "--db", db, "--json", "--format", "text"); inv.code != ExitUsage || !strings.Contains(inv.stderr, "--json and --format text disagree") {
		t.Errorf("runs --json --format text: exit %d, %s; want a usage error", inv.code, inv.stderr)
	}
	if inv := runCLI(t, e, "runs", "--db", db, "--format", "yaml"); inv.code != ExitUsage || !strings.Contains(inv.stderr, "--format") {
		t.Errorf("runs --format yaml: exit %d, %s; want a usage error naming --format", inv.code, inv.stderr)
	}
}
