package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/assay-eval/assay/internal/export"
	"github.com/assay-eval/assay/internal/report"
	"github.com/assay-eval/assay/internal/spec"
	"github.com/assay-eval/assay/internal/store"
)

// Shell completion. `assay completion bash|zsh|fish|powershell` is cobra's
// (it prints the script); the shell then asks `assay __complete ARGS…`
// for candidates, which the functions here give:
//
//   - RUN arguments: "latest" and the stored runs' IDs, newest first, each
//     described by its spec, status and start — read from an existing store
//     only (a directory without one offers nothing and gets none);
//   - --targets, --target and --rewriter: the target names of the SPEC
//     argument (run, probe contamination), or of the runs the command names
//     (gate, baseline export, diff, drift: "latest" when none is given yet);
//   - --format: the formats the command accepts.
//
// A completion never fails loudly: a spec or store it cannot read means no
// candidates.

// formatValues are the --format values of each command that has one, by
// command path. TestCompletionFormats fails for a command with --format
// that is missing here.
var formatValues = map[string][]string{
	"assay report":              report.NewRegistry().Report.Names(),
	"assay gate":                report.NewRegistry().Gate.Names(),
	"assay diff":                report.NewRegistry().Diff.Names(),
	"assay drift":               report.NewRegistry().Drift.Names(),
	"assay compare":             report.NewRegistry().Compare.Names(),
	"assay validate":            report.NewRegistry().Validate.Names(),
	"assay calibrate":           report.NewRegistry().Calibrate.Names(),
	"assay trend":               report.NewRegistry().Trend.Names(),
	"assay sample":              report.NewRegistry().Sample.Names(),
	"assay score-traces":        report.NewRegistry().TraceScores.Names(),
	"assay ingest":              report.NewRegistry().Ingest.Names(),
	"assay selftest":            report.NewRegistry().Selftest.Names(),
	"assay probe contamination": report.NewRegistry().Probe.Names(),
	"assay promote":             report.NewRegistry().Promote.Names(),
	"assay import":              report.NewRegistry().BlindImport.Names(),
	"assay difficulty":          report.NewRegistry().Difficulty.Names(),
	"assay mismatch":            report.NewRegistry().Mismatch.Names(),
	"assay load":                report.NewRegistry().Load.Names(),
	"assay export":              export.Formats,
	"assay run":                 jsonFormats,
	"assay rescore":             jsonFormats,
	"assay runs":                jsonFormats,
	"assay cache stats":         jsonFormats,
	"assay plan":                jsonFormats,
	"assay cache clear":         jsonFormats,
	"assay runs rm":             jsonFormats,
	"assay init":                jsonFormats,
	"assay labels queues":       jsonFormats,
	"assay labels queue":        jsonFormats,
	"assay labels import":       jsonFormats,
	"assay store copy":          jsonFormats,
}

// runArgCommands take stored runs as positional arguments: how many (-1:
// any number). drift's first argument may be a baseline file too, so files
// are offered beside the runs there.
var runArgCommands = map[string]int{
	"assay report":          1,
	"assay rescore":         1,
	"assay plan":            1,
	"assay gate":            1,
	"assay calibrate":       1,
	"assay baseline export": 1,
	"assay export":          1,
	"assay compare":         2,
	"assay diff":            2,
	"assay drift":           2,
	"assay runs rm":         -1,
	"assay difficulty":      -1,
	"assay labels export":   1,
	"assay labels queue":    1,
	"assay labels queues":   1,
}

// specArgCommands take the spec as their first argument; their target
// flags complete from it.
var specArgCommands = map[string]bool{"assay run": true, "assay probe contamination": true, "assay selftest": true}

// maxRunsOffered bounds the run IDs a completion lists.
const maxRunsOffered = 200

// registerCompletions adds the dynamic completions to every command of
// root's tree.
func registerCompletions(root *cobra.Command, g *Globals) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		path := c.CommandPath()
		if n, ok := runArgCommands[path]; ok && c.ValidArgsFunction == nil {
			files := path == "assay drift"
			c.ValidArgsFunction = func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
				if n >= 0 && len(args) >= n {
					return nil, cobra.ShellCompDirectiveNoFileComp
				}
				dir := cobra.ShellCompDirectiveNoFileComp
				if files && len(args) == 0 {
					dir = cobra.ShellCompDirectiveDefault
				}
				return completeRuns(cmd.Context(), g, toComplete), dir
			}
		}
		if fs, ok := formatValues[path]; ok && c.Flags().Lookup("format") != nil {
			fs := fs
			_ = c.RegisterFlagCompletionFunc("format", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
				return fs, cobra.ShellCompDirectiveNoFileComp
			})
		}
		if c.Flags().Lookup("baseline") != nil && (path == "assay gate" || path == "assay report") {
			_ = c.RegisterFlagCompletionFunc("baseline", func(cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
				// A baseline file or a run: files stay on offer.
				return completeRuns(cmd.Context(), g, toComplete), cobra.ShellCompDirectiveDefault
			})
		}
		if path == "assay mismatch" {
			for _, name := range []string{"benchmark", "workload"} {
				_ = c.RegisterFlagCompletionFunc(name, func(cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
					// A run, or a baseline or dataset file: files stay on offer.
					return completeRuns(cmd.Context(), g, toComplete), cobra.ShellCompDirectiveDefault
				})
			}
		}
		for _, name := range []string{"targets", "target", "rewriter"} {
			if c.Flags().Lookup(name) == nil {
				continue
			}
			list := name == "targets"
			_ = c.RegisterFlagCompletionFunc(name, func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
				var names []string
				if specArgCommands[path] {
					names = specTargets(args)
				} else {
					names = runTargets(cmd.Context(), g, args)
				}
				dir := cobra.ShellCompDirectiveNoFileComp
				if list {
					// A comma-separated list is completed one name at a
					// time, with no space after it, so the next can follow.
					dir |= cobra.ShellCompDirectiveNoSpace
				}
				return completeNames(names, toComplete, list), dir
			})
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// completionStore opens the store a completion reads: an existing one
// only, never creating it. The root's pre-run (which sets the default
// path) may not have run for __complete.
func completionStore(ctx context.Context, g *Globals) (store.Store, bool) {
	if g.DB == "" {
		g.DB = g.Getenv("ASSAY_DB")
	}
	if g.DB == "" {
		g.DB = filepath.Join(".assay", "assay.db")
	}
	if ctx == nil {
		ctx = context.Background()
	}
	st, err := openExistingStore(ctx, g)
	if err != nil {
		return nil, false
	}
	return st, true
}

// completeRuns offers "latest" and the stored runs whose IDs start with
// prefix, newest first, each with a description.
func completeRuns(ctx context.Context, g *Globals, prefix string) []string {
	st, ok := completionStore(ctx, g)
	if !ok {
		return nil
	}
	defer st.Close()
	if ctx == nil {
		ctx = context.Background()
	}
	runs, err := st.ListRuns(ctx, maxRunsOffered)
	if err != nil {
		return nil
	}
	var out []string
	if strings.HasPrefix("latest", prefix) && len(runs) > 0 {
		out = append(out, "latest\tthe newest run ("+runs[0].ID+")")
	}
	for _, r := range runs {
		if strings.HasPrefix(r.ID, prefix) {
			out = append(out, r.ID+"\t"+completionText(fmt.Sprintf("%s, %s, %s", r.Spec, r.Status, r.Started.Local().Format(time.DateTime))))
		}
	}
	return out
}

// runTargets are the targets of the runs a command names (its positional
// arguments so far; the newest run when none), in order, each once.
func runTargets(ctx context.Context, g *Globals, args []string) []string {
	st, ok := completionStore(ctx, g)
	if !ok {
		return nil
	}
	defer st.Close()
	if ctx == nil {
		ctx = context.Background()
	}
	if len(args) == 0 {
		args = []string{"latest"}
	}
	var names []string
	for _, ref := range args {
		r, err := st.GetRun(ctx, ref)
		if err != nil {
			continue // a baseline file, or not a run
		}
		for _, t := range r.Targets {
			if !slices.Contains(names, t) {
				names = append(names, t)
			}
		}
	}
	return names
}

// specTargets are the target names of the spec given as the first
// argument, or none when it is absent or does not load.
func specTargets(args []string) []string {
	if len(args) == 0 {
		return nil
	}
	sp, err := spec.Load(args[0])
	if sp == nil || err != nil && len(sp.Targets) == 0 {
		return nil
	}
	var names []string
	for _, t := range sp.Targets {
		if t.Name != "" {
			names = append(names, t.Name)
		}
	}
	return names
}

// completeNames offers the names that start with what is being typed. In a
// comma-separated list only the part after the last comma is completed,
// and names already in the list are not offered again.
func completeNames(names []string, toComplete string, list bool) []string {
	head, word := "", toComplete
	var have []string
	if list {
		if i := strings.LastIndex(toComplete, ","); i >= 0 {
			head, word = toComplete[:i+1], toComplete[i+1:]
			have = strings.Split(toComplete[:i], ",")
		}
	}
	var out []string
	for _, n := range names {
		if strings.HasPrefix(n, word) && !slices.Contains(have, n) {
			out = append(out, head+n)
		}
	}
	return out
}

// completionText makes a description safe for a shell's completion menu:
// one line, no control characters (a spec name is the user's text).
func completionText(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || isBidi(r) {
			return ' '
		}
		return r
	}, s)
}

func isBidi(r rune) bool {
	return r == 0x200E || r == 0x200F || (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069) || r == 0x2028 || r == 0x2029
}
