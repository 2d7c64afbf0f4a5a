package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/assay-eval/assay/internal/export"
)

type exportOptions struct {
	Run      string
	Spec     string // the spec RUN is of (latest: its newest run)
	Format   string
	Output   string
	Scoring  int
	NoInputs bool
	// Blind writes a blinded sample of SPEC's cases instead (import.go).
	Blind blindExportOptions
}

func newExportCommand(g *Globals) *cobra.Command {
	o := &exportOptions{}
	cmd := &cobra.Command{
		Use:   "export [RUN] -o FILE [--format jsonl|csv|parquet]",
		Short: "Write a run's results as one row per case × target × epoch (JSONL, CSV, Parquet)",
		Long: `Write every result of a run (default: the latest) as one row per case ×
target × epoch, for pandas, DuckDB or a spreadsheet: case ID and line, the
case's input fields (inputs, a JSON object), expected value, tags, raw and
parsed output, the headline verdict (pass, value, shape, kind) and every
scorer's verdict as score.<name>.pass|value|shape|kind|reason, error kind and
message, attempts, retries (run --retry-errors), tokens, cost, latency and
the model that answered.

The store keeps a case's ID, expected value and tags, not its fields, so
inputs are read again from the run's dataset, and only when the file still
has the content the run measured (its hash); otherwise export stops and
says so, and --no-inputs exports without them. --scoring picks a scoring
(default: the latest complete one). The file is written through a temporary
file and renamed, so it is never half-written. The format is taken from
FILE's extension unless --format says.

export --blind SPEC -o sample.jsonl writes a blinded sample of SPEC's cases
for a vendor instead: see --blind below and docs/vendors.md.

` + exitCodesHelp,
		Args: rangeArgs(0, 1),
		PreRunE: func(cmd *cobra.Command, args []string) error {
			if o.Blind.On {
				return o.Blind.check(cmd, o)
			}
			if err := o.Blind.unused(cmd); err != nil {
				return err
			}
			if o.Output == "" {
				return usageError{errors.New("-o FILE is required (the export is written to a file)")}
			}
			if o.Format == "" {
				ext := strings.TrimPrefix(strings.ToLower(filepath.Ext(o.Output)), ".")
				if !slices.Contains(export.Formats, ext) {
					return usageError{fmt.Errorf("-o %s: give --format (formats are %s), or a file ending .jsonl, .csv or .parquet", o.Output, strings.Join(export.Formats, ", "))}
				}
				o.Format = ext
			}
			if o.Scoring < 0 {
				return usageError{fmt.Errorf("--scoring must be 1 or more (got %d; 0 or absent: the latest)", o.Scoring)}
			}
			return checkFormat(o.Format, export.Formats)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Blind.On {
				return runBlindExport(cmd.Context(), g, o, args)
			}
			o.Run = runArg(args)
			return runExport(cmd.Context(), g, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Format, "format", "", "jsonl, csv or parquet (default: from FILE's extension); with --blind: the summary printed, text or json")
	addSpecSelectFlag(cmd, &o.Spec)
	f.StringVarP(&o.Output, "output", "o", "", "the file to write")
	f.IntVar(&o.Scoring, "scoring", 0, "the scoring to export (default: the latest complete one)")
	f.BoolVar(&o.NoInputs, "no-inputs", false, "leave out the cases' input fields (they are read from the run's dataset)")
	o.Blind.AddFlags(cmd)
	return cmd
}

func runExport(ctx context.Context, g *Globals, o *exportOptions) error {
	st, run, err := openRunOf(ctx, g, "export", o.Run, o.Spec, true)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := requireScoring(ctx, st, "export", run, o.Scoring); err != nil {
		return err
	}
	scoring := o.Scoring
	if scoring == 0 {
		if scoring, err = st.LatestScoring(ctx, run.ID); err != nil {
			return err
		}
		if scoring == 0 {
			scoring = 1 // no scores yet: results only
		}
	}
	names, err := st.ScorerNames(ctx, run.ID, scoring)
	if err != nil {
		return err
	}
	if o.Scoring > 0 && len(names) == 0 {
		return usageError{fmt.Errorf("--scoring %d: run %s has no scores in that scoring", o.Scoring, run.ID)}
	}
	cols := export.Columns{Scorers: names, Inputs: !o.NoInputs}
	src := export.Source{Store: st, Run: run, Scoring: scoring, Columns: cols}
	if !o.NoInputs {
		in, err := export.OpenInputs(run)
		if errors.Is(err, export.ErrDatasetChanged) {
			return fmt.Errorf("export: %w; exporting would pair its results with other cases' inputs: restore the dataset the run measured, or export without inputs (--no-inputs)", err)
		}
		if err != nil {
			return fmt.Errorf("export: the cases' inputs cannot be read: %w; run export where the run was made, or export without inputs (--no-inputs)", err)
		}
		defer in.Close()
		src.Inputs = in
	}
	rows := 0
	err = export.WriteFile(o.Output, o.Format, cols, func(w export.Writer) error {
		return export.Rows(ctx, src, func(r *export.Row) error {
			rows++
			return w.Write(r)
		})
	})
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	fmt.Fprintf(g.Stderr, "exported %d rows of run %s (scoring %d, %d scorers) to %s\n", rows, run.ID, scoring, len(names), o.Output)
	return nil
}
