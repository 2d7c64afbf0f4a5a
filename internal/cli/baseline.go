package cli

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/spf13/cobra"

	"github.com/assay-eval/assay/internal/runview"
)

func newBaselineCommand(g *Globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "baseline",
		Short: "Export a run as a baseline file that gates later runs without a database",
		Long: `A baseline file holds what 'assay gate' needs of a run — per case × target ×
epoch verdicts, failure shapes, cost, latency, a hash of each output and which
calls failed; per target its reported models, temperature and a configuration
hash; the run's spec, dataset, prompt and scorer hashes — in a small, versioned
JSON file meant to be committed beside the spec. 'assay gate' and 'assay drift'
read it in place of a run. It holds no output text, prompt,
error message or secret.`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			return usageError{fmt.Errorf("baseline needs a subcommand: assay baseline export RUN -o baseline.json")}
		},
	}
	cmd.AddCommand(newBaselineExportCommand(g))
	return cmd
}

type baselineExportOptions struct {
	Run     string
	Spec    string // the spec RUN is of (latest: its newest run)
	Output  string
	Targets string
	// AllowIncomplete exports a run that did not finish.
	AllowIncomplete bool
}

func (o *baselineExportOptions) AddFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVarP(&o.Output, "output", "o", "", "write to FILE (default: stdout)")
	addSpecSelectFlag(cmd, &o.Spec)
	f.StringVar(&o.Targets, "targets", "", "export only these targets (comma-separated)")
	addAllowPartialFlag(cmd, &o.AllowIncomplete, "export a run that did not finish (interrupted or failed): a baseline of only the cases it stored")
}

func newBaselineExportCommand(g *Globals) *cobra.Command {
	o := &baselineExportOptions{}
	cmd := &cobra.Command{
		Use:     "export [RUN|latest] [-o FILE]",
		Short:   "Write a run (its latest scoring) as a baseline file",
		Example: "  assay baseline export latest -o baseline.json\n  assay gate latest --baseline baseline.json",
		Args:    rangeArgs(0, 1),
		PreRunE: func(cmd *cobra.Command, args []string) error {
			_, err := splitTargets(o.Targets)
			if err != nil {
				return usageError{err}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Run = runArg(args)
			return runBaselineExport(cmd.Context(), g, o)
		},
	}
	o.AddFlags(cmd)
	return cmd
}

func runBaselineExport(ctx context.Context, g *Globals, o *baselineExportOptions) error {
	st, run, err := openRunOf(ctx, g, "baseline export", o.Run, o.Spec, true)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := requireComplete("baseline export: run", run, o.AllowIncomplete); err != nil {
		return err
	}
	snap, err := runview.FromStore(ctx, st, run)
	if err != nil {
		return fmt.Errorf("baseline export: %w", err)
	}
	if targets, _ := splitTargets(o.Targets); targets != nil {
		for _, t := range targets {
			if snap.Target(t) == nil {
				return usageError{fmt.Errorf("--targets: run %s has no target %q (targets: %s)", run.ID, t, targetList(snap))}
			}
		}
		snap.Targets = slices.DeleteFunc(snap.Targets, func(t *runview.Target) bool { return !slices.Contains(targets, t.Name) })
	}
	if o.Output == "" {
		return runview.WriteBaseline(g.Stdout, snap)
	}
	var size int64
	err = writeOutput(o.Output, func(w io.Writer) error {
		cw := &countingWriter{w: w}
		err := runview.WriteBaseline(cw, snap)
		size = cw.n
		return err
	})
	if err != nil {
		return fmt.Errorf("baseline export: writing %s: %w", o.Output, err)
	}
	fmt.Fprintf(g.Stderr, "wrote %s: run %s, %s × %s × %s (%s)\n", o.Output, run.ID,
		plural(len(snap.Cases), "case"), plural(len(snap.Targets), "target"), plural(snap.Epochs, "epoch"), byteSize(size))
	return nil
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

func byteSize(n int64) string {
	switch {
	case n >= 10<<20:
		return fmt.Sprintf("%d MB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 10<<10:
		return fmt.Sprintf("%d KB", n>>10)
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
