package cli

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/spf13/cobra"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/difficulty"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/report"
	"github.com/assay-eval/assay/internal/runview"
	"github.com/assay-eval/assay/internal/spec"
	"github.com/assay-eval/assay/internal/units"
)

type mismatchOptions struct {
	Spec       string
	Benchmark  string
	Workload   string
	Tag        string
	Levels     []string
	ID         string
	Model      string
	Bins       int
	Edges      []float64
	Seed       uint64
	Replicates int
	Alpha      float64
	Margin     float64
	Format     string
	Output     string
}

func (o *mismatchOptions) AddFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.Benchmark, "benchmark", "", "the benchmark: a run (ID, prefix or latest), a baseline file (.json) or a dataset file (.jsonl, .csv) (required)")
	f.StringVar(&o.Workload, "workload", "", "your workload: a run, a baseline file or a dataset file (.jsonl, .csv) (required)")
	f.StringVar(&o.Tag, "tag", "", "the case tag (or a dataset file's field) holding a difficulty (default: the spec's difficulty.tag; none: fitted from the targets' results)")
	f.StringSliceVar(&o.Levels, "levels", nil, "the order of a non-numeric tag's values, easiest first: easy,medium,hard (default: the spec's difficulty.levels)")
	f.StringVar(&o.ID, "id", "", "the field holding a dataset file's case IDs, which a fitted difficulty is matched by (default: the spec's dataset.id; on a tag scale the line number)")
	f.StringVar(&o.Model, "model", "rasch", "the item-response model when the difficulty is fitted: rasch or 2pl")
	f.IntVar(&o.Bins, "bins", 0, "equal-width bins over the pooled range of a continuous difficulty (0: 8; a tag with at most 12 values gets one bin per value)")
	f.Float64SliceVar(&o.Edges, "edges", nil, "explicit bin edges, increasing: 0,2,4,8 (instead of --bins)")
	f.Uint64Var(&o.Seed, "seed", 1, "seed of the bootstrap of the distances' intervals")
	f.IntVar(&o.Replicates, "replicates", difficulty.DefaultReplicates, "bootstrap replicates of the distances' intervals")
	f.Float64Var(&o.Alpha, "alpha", 0.05, "the level of the paired tests (Holm over the pairs) and 1 − the intervals' confidence")
	f.Float64Var(&o.Margin, "margin", 0, "equivalence margin of the paired verdicts (0: the default; negative: no equivalence verdict)")
	f.StringVar(&o.Format, "format", "text", "output format: "+strings.Join(report.NewRegistry().Mismatch.Names(), "|"))
	f.StringVarP(&o.Output, "output", "o", "", "write the report to FILE, whole or not at all")
}

func newMismatchCommand(g *Globals) *cobra.Command {
	o := &mismatchOptions{}
	cmd := &cobra.Command{
		Use:   "mismatch [SPEC] --benchmark RUN|FILE --workload RUN|FILE",
		Short: "A benchmark's difficulty against your workload's: gaps, distances, scores re-weighted to your mix",
		Long: `Put a benchmark's cases and your workload's on one difficulty axis and say
what the benchmark's scores mean for your workload. It reads the store only
(a read-only store will do) and calls no model.

Each side is a run (its ID, a prefix or latest — with SPEC, the newest run
of that spec), a baseline file (assay baseline export), or a dataset file (.jsonl or .csv: its cases, no scores;
a workload needs only its mix of difficulties). The axis is a difficulty tag
(--tag, or difficulty.tag in SPEC or the benchmark run's spec: a tier, an
expert's rating, a count such as reasoning steps; a non-numeric tag needs
--levels or difficulty.levels, easiest first). A dataset file's tag is the
field of that name, or the SPEC's dataset.tags expression for it. Without a
tag the difficulty is fitted from the targets' results (as assay difficulty
does) and both sides' cases take their fitted difficulty by case ID.

The report gives:
  - both sides' difficulties binned on one axis (one bin per value of a tag
    with at most 12 values; else --bins equal-width bins or --edges);
  - distances between them (Wasserstein-1, Kolmogorov–Smirnov, total
    variation over the bins) with bootstrap intervals (--replicates, --seed);
  - coverage gaps: the largest stretch of the axis, inside the workload's
    range, holding no benchmark case, and the workload's share in bins the
    benchmark has no case in;
  - each target's benchmark score raw and post-stratified to the workload's
    mix (its rate per bin weighted by the workload's share of the bin), with
    standard errors and Kish's effective sample size. A bin the workload
    needs and the benchmark lacks is UNMEASURABLE: the re-weighted score then
    says it cannot be computed (never extrapolated), and a "covered" score
    over the measurable bins is given beside it with the share it covers;
  - every pair of targets compared on their shared cases, raw and under the
    workload's weights (paired differences of case means, Holm-adjusted),
    and whether the ranking or a verdict changes;
  - the divergence rubric: data distribution, prompt format, scoring rubric
    and decision stakes, each rated low or high with its reasons, from
    computed signals and SPEC's difficulty.rubric questionnaire (stakes,
    domain; without a SPEC, the workload run's recorded spec's). Any axis
    rated high: the benchmark may shortlist but not select.

The rubric's verdict is in the report, not in the exit code: 0 means the
report was written, whatever it says (gate-like exit codes are assay
gate's). docs/difficulty.md explains every number and its limits.

Exit codes: 0 the report was written; 2 usage error; 4 bad input (an unknown
run, a file that is neither a baseline nor a dataset, a tag no case has, a
value outside the levels).`,
		Example: `  assay mismatch --benchmark latest --workload workload.jsonl --tag steps
  assay mismatch eval.yaml --benchmark 20261202-1135 --workload sampled.jsonl --format html -o mismatch.html
  assay mismatch --benchmark bench-baseline.json --workload prod-run --tag tier --levels easy,medium,hard`,
		Args: rangeArgs(0, 1),
		PreRunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(o.Format, report.NewRegistry().Mismatch.Names()); err != nil {
				return err
			}
			if o.Benchmark == "" || o.Workload == "" {
				return usageError{errors.New("--benchmark and --workload are both required: each a run, a baseline file or a dataset file")}
			}
			if o.Model != "rasch" && o.Model != "2pl" {
				return usageError{fmt.Errorf("--model %q: models are rasch, 2pl", o.Model)}
			}
			if !(o.Alpha > 0 && o.Alpha < 1) {
				return usageError{fmt.Errorf("--alpha %g: must be strictly between 0 and 1 (0.05 for 95%% intervals)", o.Alpha)}
			}
			if o.Bins < 0 || o.Bins > 1000 {
				return usageError{fmt.Errorf("--bins %d: give 1 to 1000 (0: the default, 8)", o.Bins)}
			}
			if o.Replicates < 1 || o.Replicates > 1_000_000 {
				return usageError{fmt.Errorf("--replicates %d: give 1 to 1000000", o.Replicates)}
			}
			if math.IsNaN(o.Margin) || math.IsInf(o.Margin, 0) {
				return usageError{fmt.Errorf("--margin %g: give a number", o.Margin)}
			}
			if cmd.Flags().Changed("edges") {
				if cmd.Flags().Changed("bins") {
					return usageError{errors.New("--edges and --bins: give one (--edges sets the bins)")}
				}
				if len(o.Edges) < 2 {
					return usageError{fmt.Errorf("--edges: %d given, need at least 2 (the bins lie between them)", len(o.Edges))}
				}
				for i, e := range o.Edges {
					if math.IsNaN(e) || math.IsInf(e, 0) || i > 0 && !(e > o.Edges[i-1]) {
						return usageError{fmt.Errorf("--edges %s: edges are finite numbers, increasing", joinFloats(o.Edges, ","))}
					}
				}
			}
			return checkLevels(o.Levels)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.Spec = args[0]
			}
			return runMismatch(cmd.Context(), g, o)
		},
	}
	o.AddFlags(cmd)
	return cmd
}

// joinFloats writes numbers as given, separated by sep.
func joinFloats(xs []float64, sep string) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = units.Plain(x)
	}
	return strings.Join(s, sep)
}

// mismatchSide is one side as read: its set, and what the rubric reads of
// it.
type mismatchSide struct {
	set    *difficulty.Set
	source profileSource
}

func runMismatch(ctx context.Context, g *Globals, o *mismatchOptions) error {
	var sp *spec.Spec
	if o.Spec != "" {
		var err error
		sp, err = spec.LoadWith(o.Spec, specOptions(g, nil))
		if err != nil {
			return err // spec problems exit 4
		}
	}
	src := &runSource{g: g, what: "mismatch"}
	if sp != nil {
		// As everywhere with a spec at hand, latest is its newest run.
		src.spec = sp.Name
	}
	defer src.Close()

	// The scale: --tag, else the spec's difficulty.tag, else the benchmark
	// run's spec's (read below); none: fitted.
	tag, levels := o.Tag, o.Levels
	var answers *spec.Rubric
	if sp != nil && sp.Difficulty != nil {
		if tag == "" || tag == sp.Difficulty.Tag {
			if tag == "" {
				tag = sp.Difficulty.Tag
			}
			if levels == nil {
				levels = sp.Difficulty.Levels
			}
		}
		answers = sp.Difficulty.Rubric
	}
	// Runs and baselines are read first: a run's spec may name the tag.
	refs := []struct {
		what, ref string
		side      *mismatchSide
		view      *runview.View
		run       *record.Run
	}{{what: "--benchmark", ref: o.Benchmark}, {what: "--workload", ref: o.Workload}}
	for i := range refs {
		r := &refs[i]
		if isDatasetFile(r.ref) {
			continue
		}
		v, run, err := src.view(ctx, r.ref)
		if err != nil {
			return prefixSide(err, r.what)
		}
		r.view, r.run = v, run
		if tag == "" {
			if d := storedDifficulty(run); d != nil && d.Tag != "" {
				tag = d.Tag
				if levels == nil {
					levels = d.Levels
				}
			}
		}
	}
	// The questionnaire is about the workload: without a SPEC, the
	// workload run's recorded spec may hold the answers.
	if answers == nil {
		if d := storedDifficulty(refs[1].run); d != nil {
			answers = d.Rubric
		}
	}
	sc := difficulty.Scale{Source: difficulty.SourceFitted, Model: o.Model}
	if tag != "" {
		sc = difficulty.Scale{Source: difficulty.SourceTag, Tag: tag, Levels: levels}
	}
	sides := make([]*mismatchSide, 2)
	for i := range refs {
		r := &refs[i]
		var s *mismatchSide
		var err error
		if r.view == nil {
			s, err = datasetSide(ctx, sp, r.ref, o.ID, sc)
			// The SPEC describes the workload: its prompt and scorers are
			// the ones a workload file's cases are run with (never a
			// benchmark file's: the rubric would compare the workload's
			// prompt with itself).
			if err == nil && i == 1 && sp != nil {
				s.source.SpecDescribes = true
			}
		} else {
			var set *difficulty.Set
			set, err = difficulty.FromView(r.view, sc)
			s = &mismatchSide{set: set, source: profileSource{Name: r.view.Source, Run: r.run, View: r.view}}
		}
		if err != nil {
			return prefixSide(invalid(fmt.Errorf("mismatch: %w", err)), r.what)
		}
		sides[i] = s
	}
	bench, work := sides[0], sides[1]
	if sc.Source == difficulty.SourceFitted {
		if err := fitSides(bench.set, work.set, o.Model); err != nil {
			return err
		}
	}
	m, err := difficulty.Compare(bench.set, work.set, difficulty.MismatchOptions{
		Bins: o.Bins, Edges: o.Edges, Alpha: o.Alpha, Replicates: o.Replicates, Seed: o.Seed, Margin: o.Margin,
	})
	if err != nil {
		return invalid(fmt.Errorf("mismatch: %w", err))
	}
	if err := rateMismatch(ctx, m, bench, work, answers); err != nil {
		return err
	}
	r, err := report.NewRegistry().Mismatch.Reporter(o.Format, m)
	if err != nil {
		return usageError{err}
	}
	return printOut(g.Stdout, o.Output, r)
}

// prefixSide names the flag a side came from in its error.
func prefixSide(err error, what string) error {
	msg := func(e error) string { return "mismatch: " + what + ": " + strings.TrimPrefix(e.Error(), "mismatch: ") }
	var ee *ExitError
	if errors.As(err, &ee) {
		return &ExitError{Code: ee.Code, Err: errors.New(msg(ee.Err))}
	}
	if errors.Is(err, ErrInterrupted) || errors.Is(err, context.Canceled) {
		return err
	}
	return errors.New(msg(err))
}

// isDatasetFile says whether ref names a dataset file by its extension.
func isDatasetFile(ref string) bool {
	switch strings.ToLower(filepath.Ext(ref)) {
	case ".jsonl", ".ndjson", ".jsonlines", ".csv":
		return true
	}
	return false
}

// datasetSide reads a dataset file's cases: on a tag scale, their tag
// values (the field of that name, or the SPEC's dataset.tags expression for
// it); on a fitted scale, only their IDs, which take the fitted difficulty
// of the same case. Case IDs are --id's field, else (on a fitted scale,
// where they must match the runs') the SPEC's dataset.id, else line
// numbers. The SPEC's expected field is named (so the rubric does not count
// the answer as input text) but its expected_extract and weight are not
// read (a workload file may have no answers), and of its other tags only plain fields are kept
// (the rubric compares them; an expression could fail on another file's
// lines).
func datasetSide(ctx context.Context, user *spec.Spec, path, idField string, sc difficulty.Scale) (*mismatchSide, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("%s: no such file (give a run ID, latest, a baseline file or a dataset file)", path)
	}
	if fi.IsDir() {
		return nil, fmt.Errorf("%s is a directory, not a dataset file", path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	sp := &spec.Spec{}
	if user != nil {
		cp := *user
		sp = &cp
	}
	sp.File, sp.Dir = abs, filepath.Dir(abs)
	ds := spec.Dataset{Path: abs, ID: spec.DefaultID, Format: "jsonl"}
	if strings.EqualFold(filepath.Ext(path), ".csv") {
		ds.Format = "csv"
	}
	tagged := sc.Source == difficulty.SourceTag
	if user != nil {
		if !tagged {
			ds.ID = user.Dataset.ID
		}
		ds.Expected = user.Dataset.Expected
		for _, t := range user.Dataset.Tags {
			if t.Key == sc.Tag || plainField.MatchString(t.Expr) {
				ds.Tags = append(ds.Tags, t)
			}
		}
	}
	if idField != "" {
		ds.ID = idField
	}
	if !tagged && ds.ID == spec.DefaultID {
		return nil, fmt.Errorf("%s is a dataset file, whose cases take a fitted difficulty by case ID: name the field holding the IDs the runs' cases have with --id (line numbers of another file are not those IDs), or give the tag holding a difficulty with --tag", path)
	}
	if tagged && !hasTagKey(ds.Tags, sc.Tag) {
		ds.Tags = append(ds.Tags, spec.Tag{Key: sc.Tag, Expr: sc.Tag})
	}
	sp.Dataset = ds
	var ids, values []string
	var has []bool
	err = dataset.Each(sp, func(c *dataset.Case) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		v, ok := c.Tags[sc.Tag]
		ids, values, has = append(ids, c.ID), append(values, v), append(has, ok)
		return nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("reading the dataset %s: %w", path, err)
	}
	src := profileSource{Name: path, Dataset: sp}
	if !tagged {
		if len(ids) == 0 {
			return nil, fmt.Errorf("%s has no cases", path)
		}
		set := &difficulty.Set{Name: path, Kind: difficulty.KindDataset, Scale: sc, Cases: ids, Values: make([]float64, len(ids))}
		for i := range set.Values {
			set.Values[i] = math.NaN()
		}
		return &mismatchSide{set: set, source: src}, nil
	}
	set, err := difficulty.FromTags(path, difficulty.KindDataset, ids, values, has, sc)
	if err != nil {
		return nil, err
	}
	return &mismatchSide{set: set, source: src}, nil
}

// plainField is a tag expression that names a field (not a CEL
// expression).
var plainField = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func hasTagKey(tags []spec.Tag, key string) bool {
	for _, t := range tags {
		if t.Key == key {
			return true
		}
	}
	return false
}

// fitSides puts both sides on a fitted scale: the item-response fit of
// every side with results, each case taking its fitted difficulty by case
// ID (a case the fit did not hold is unknown).
func fitSides(bench, work *difficulty.Set, model string) error {
	var sets []*difficulty.Set
	for _, s := range []*difficulty.Set{bench, work} {
		if len(s.Targets) > 0 {
			sets = append(sets, s)
		}
	}
	if len(sets) == 0 {
		return usageError{errors.New("mismatch: neither side has results to fit a difficulty from: give the tag holding the cases' difficulty (--tag, or difficulty.tag in the spec)")}
	}
	f, err := difficulty.Fit(sets, difficulty.FitOptions{Model: model})
	if err != nil {
		return invalid(fmt.Errorf("mismatch: fitting the difficulty (no tag was given): %w", err))
	}
	b := make(map[string]float64, len(f.Cases))
	for _, c := range f.Cases {
		b[c.ID] = c.B
	}
	for _, s := range []*difficulty.Set{bench, work} {
		s.Scale = f.Scale
		matched := 0
		for i, id := range s.Cases {
			if x, ok := b[id]; ok {
				s.Values[i] = x
				matched++
			} else {
				s.Values[i] = math.NaN()
			}
		}
		if matched == 0 {
			return invalid(fmt.Errorf("mismatch: none of the %s cases of %s is a case of the fitted runs (its IDs are like %q): a fitted difficulty is matched by case ID", units.Count(len(s.Cases)), s.Name, s.Cases[0]))
		}
	}
	return nil
}

// rateMismatch rates the divergence rubric of the two sides and sets it on
// the result.
func rateMismatch(ctx context.Context, m *difficulty.Mismatch, bench, work *mismatchSide, answers *spec.Rubric) error {
	bp, err := profileOf(ctx, bench.source)
	if err != nil {
		return invalid(fmt.Errorf("mismatch: --benchmark: %w", err))
	}
	wp, err := profileOf(ctx, work.source)
	if err != nil {
		return invalid(fmt.Errorf("mismatch: --workload: %w", err))
	}
	m.Rubric = difficulty.RateRubric(bp, wp, answers)
	return nil
}
