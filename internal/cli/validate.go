package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/report"
	"github.com/assay-eval/assay/internal/spec"
	"github.com/assay-eval/assay/internal/task"
	"github.com/assay-eval/assay/internal/units"
)

type validateOptions struct {
	// Files are overlays merged over the spec (-f).
	Files        []string
	Spec         string
	Deep         bool
	Strict       bool
	DupThreshold float64
	MinBucket    int
	Top          int
	Format       string
}

func (o *validateOptions) AddFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	addOverlayFlag(cmd, &o.Files)
	f.BoolVar(&o.Deep, "deep", false, "also check the dataset's health: duplicates, missing expected values, label and tag distributions")
	f.BoolVar(&o.Strict, "strict", false, "with --deep: fail (exit 4) on warnings (duplicate cases) too")
	f.Float64Var(&o.DupThreshold, "dup-threshold", dataset.DefaultDupThreshold, "with --deep: token-set overlap (Jaccard, 0 to 1] at or above which two cases are near-duplicates")
	f.IntVar(&o.MinBucket, "min-bucket", dataset.DefaultMinBucket, "with --deep: tag values with fewer cases are flagged as small")
	f.IntVar(&o.Top, "top", dataset.DefaultTopLabels, "with --deep: how many expected values the label distribution lists")
	f.StringVar(&o.Format, "format", "text", "output format: text|json")
}

func (o *validateOptions) check(cmd *cobra.Command) error {
	if err := checkFormat(o.Format, report.NewRegistry().Validate.Names()); err != nil {
		return err
	}
	if !o.Deep {
		for _, name := range []string{"strict", "dup-threshold", "min-bucket", "top"} {
			if cmd.Flags().Changed(name) {
				return usageError{fmt.Errorf("--%s applies to the dataset health check: add --deep", name)}
			}
		}
	}
	if !(o.DupThreshold > 0 && o.DupThreshold <= 1) {
		return usageError{fmt.Errorf("--dup-threshold %s: want a similarity above 0 and at most 1, e.g. 0.9", units.Plain(o.DupThreshold))}
	}
	if o.MinBucket < 1 {
		return usageError{fmt.Errorf("--min-bucket %d: want at least 1 case", o.MinBucket)}
	}
	if o.Top < 1 {
		return usageError{fmt.Errorf("--top %d: want at least 1 value", o.Top)}
	}
	return nil
}

func newValidateCommand(g *Globals) *cobra.Command {
	o := &validateOptions{}
	cmd := &cobra.Command{
		Use:   "validate SPEC",
		Short: "Check the spec, prompt, scorers and dataset; report every problem at once",
		Long: `Load the spec and everything it names (prompt files, dataset, replay files),
and report every problem at once as FILE:LINE:COL: message. Calls no model.

With --deep, also check the dataset's health (see docs/dataset-health.md):
exact and near-duplicate inputs, cases whose expected value is missing or
not extractable, the distribution of expected values and of each tag's
values, small and missing buckets. A case without a usable expected value
cannot be graded: it makes the dataset invalid (exit 4). Duplicates are
warnings (exit 0) unless --strict.

Exit codes: 0 valid, 4 invalid.`,
		Args: exactArgs(1),
		PreRunE: func(cmd *cobra.Command, args []string) error {
			return o.check(cmd)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Spec = args[0]
			return runValidate(cmd.Context(), g, o)
		},
	}
	o.AddFlags(cmd)
	return cmd
}

func runValidate(ctx context.Context, g *Globals, o *validateOptions) error {
	t, err := task.LoadWith(o.Spec, specOptions(g, o.Files))
	var problems spec.Problems
	if err != nil && !errors.As(err, &problems) {
		return err
	}
	rep := report.Validation{Spec: o.Spec, Problems: spec.Problems{}, Warnings: []string{}, Strict: o.Strict}
	var sp *spec.Spec
	if t != nil {
		sp = t.Spec
	}
	if sp != nil {
		rep.Name, rep.Targets, rep.Scorers, rep.DatasetLimit = sp.Name, len(sp.Targets), len(sp.Scorers), sp.Dataset.Limit
		rep.Candidates, rep.Judges = sp.CandidateNames(), runJudges(sp, sp.CandidateNames())
		if t.Dataset != nil {
			rep.Cases = t.Dataset.Count
		}
		if len(problems) == 0 {
			rep.Hashes = map[string]string{"spec": sp.Hash, "dataset": t.Dataset.Hash, "dataset_file": t.Dataset.FileHash, "prompt": sp.PromptHash(), "scorers": sp.ScorersHash()}
		}
		if t.Dataset != nil {
			for _, p := range t.Dataset.Warnings {
				rep.Warnings = append(rep.Warnings, p.String())
			}
		}
		for i := range sp.Targets {
			missing, unusable := g.providers().KeyProblems(sp, i, g.Getenv)
			problems = append(problems, unusable...) // set, but unusable
			for _, p := range missing {
				rep.Warnings = append(rep.Warnings, p.String())
			}
		}
	}

	var healthWarnings []string
	if o.Deep && sp != nil && t.Dataset != nil {
		h, herr := dataset.CheckHealth(sp, dataset.HealthOptions{
			TextFields:   healthTextFields(t),
			DupThreshold: o.DupThreshold,
			MinBucket:    o.MinBucket,
			TopLabels:    o.Top,
		})
		var hp spec.Problems
		switch {
		case errors.As(herr, &hp):
			// The dataset cannot be read: task.Load has said why.
		case herr != nil:
			return herr
		default:
			rep.Health = h
			problems = append(problems, expectedProblems(sp, h, problems)...)
			healthWarnings = h.Warnings()
			rep.Warnings = append(rep.Warnings, healthWarnings...)
		}
	}

	strictFail := o.Strict && len(healthWarnings) > 0
	rep.Valid = len(problems) == 0 && !strictFail
	if len(problems) > 0 {
		rep.Problems = problems
	}

	r, err := report.NewRegistry().Validate.Reporter(o.Format, &rep)
	if err != nil {
		return err
	}
	if err := printOut(g.Stdout, "", r); err != nil {
		return err
	}
	if o.Format == "json" {
		if !rep.Valid {
			return &ExitError{Code: ExitInvalid, Err: errSilent}
		}
		return nil
	}
	for _, w := range rep.Warnings {
		if !slices.Contains(healthWarnings, w) {
			fmt.Fprintf(g.Stderr, "warning: %s\n", w)
		}
	}
	if len(problems) > 0 {
		if sp == nil {
			return problems
		}
		return problems.Sort(sp.File)
	}
	if strictFail {
		return &ExitError{Code: ExitInvalid, Err: fmt.Errorf("--strict: the dataset has %d health warning(s)", len(healthWarnings))}
	}
	return nil
}

// healthTextFields are the fields whose text is a case's input: those the
// prompt uses, but the ID and the expected answer. Nil (every string field)
// when the prompt uses none or did not compile.
func healthTextFields(t *task.Task) []string {
	if t.Prompt == nil {
		return nil
	}
	ds := &t.Spec.Dataset
	var out []string
	for _, f := range t.Prompt.Fields() {
		if f != ds.Expected && f != ds.ID {
			out = append(out, f)
		}
	}
	return out
}

// expectedProblems turns cases without a usable expected value into
// problems at their lines in the dataset, skipping lines task.Load already
// reported (an expected_extract that does not match is one of its
// problems).
func expectedProblems(sp *spec.Spec, h *dataset.Health, have spec.Problems) spec.Problems {
	file := sp.Resolve(sp.Dataset.Path)
	seen := map[int]bool{}
	for _, p := range have {
		if p.File == file {
			seen[p.Line] = true
		}
	}
	e := &h.Expected
	var out spec.Problems
	add := func(list []dataset.CaseRef, total int, msg, hint string) {
		shown := 0
		for _, c := range list {
			if seen[c.Line] {
				continue
			}
			out = append(out, spec.Problem{File: file, Line: c.Line, Col: 1, Msg: fmt.Sprintf(msg, report.ShowData(c.ID, 40)), Hint: hint})
			shown++
		}
		if more := total - len(list); more > 0 && shown > 0 {
			last := list[len(list)-1]
			out = append(out, spec.Problem{File: file, Line: last.Line, Col: 1, Msg: fmt.Sprintf("… and %d more such cases", more)})
		}
	}
	add(e.MissingList, e.Missing, "case %s has no expected value (field "+strconv.Quote(e.Field)+" is missing, null or blank)",
		"every graded case needs one; a case whose right answer is a refusal belongs in bucket should-refuse")
	add(e.UnextractableList, e.Unextractable, "case %s: expected field "+strconv.Quote(e.Field)+" does not match dataset.expected_extract", "")
	return out
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
