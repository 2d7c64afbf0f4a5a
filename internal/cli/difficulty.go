package cli

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/assay-eval/assay/internal/difficulty"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/report"
	"github.com/assay-eval/assay/internal/runview"
	"github.com/assay-eval/assay/internal/spec"
	"github.com/assay-eval/assay/internal/stats"
	"github.com/assay-eval/assay/internal/store"
)

type difficultyOptions struct {
	Runs    []string
	Spec    string
	Model   string
	Tag     string
	Levels  []string
	PriorSD float64
	Points  int
	Level   float64
	Format  string
	Output  string
}

func (o *difficultyOptions) AddFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.Model, "model", "rasch", "the item-response model: rasch (one discrimination shared by every case) or 2pl (one per case; needs many targets)")
	f.StringVar(&o.Tag, "tag", "", "the case tag holding a difficulty (a tier, a rating, a count): per-tier rates beside the fit (default: the run's spec's difficulty.tag)")
	f.StringSliceVar(&o.Levels, "levels", nil, "the order of a non-numeric tag's values, easiest first: easy,medium,hard (default: the spec's difficulty.levels)")
	f.Float64Var(&o.PriorSD, "prior-sd", 0, "SD of the weak priors on difficulty and log discrimination: 0 the default (finite all-right and all-wrong cases), -1 none (plain marginal maximum likelihood)")
	f.IntVar(&o.Points, "points", 0, "quadrature points of the ability grid (0: 21)")
	f.Float64Var(&o.Level, "level", 0.95, "confidence level of every interval")
	f.StringVar(&o.Format, "format", "text", "output format: "+strings.Join(report.NewRegistry().Difficulty.Names(), "|"))
	f.StringVarP(&o.Output, "output", "o", "", "write the report to FILE, whole or not at all")
	addSpecSelectFlag(cmd, &o.Spec)
}

func newDifficultyCommand(g *Globals) *cobra.Command {
	o := &difficultyOptions{}
	cmd := &cobra.Command{
		Use:   "difficulty [RUN|BASELINE…]",
		Short: "Each case's difficulty and each target's ability on one axis, and where the set can tell targets apart",
		Long: `Place a run's cases and targets on one difficulty axis. It reads the store
only (a store on a read-only mount will do) and calls no model.

Difficulty is fitted from the targets' results by an item-response model:
each case gets a difficulty b (the ability at which a target answers it right
half the time) and each target an ability θ with its interval. --model rasch
(the default) gives every case one shared discrimination; --model 2pl fits
one per case and needs many targets to mean anything. The fit is marginal
maximum likelihood by EM over a fixed grid of abilities (Bock–Aitkin), with
weak priors so a case every target got right (or wrong) still gets a finite
difficulty; --prior-sd -1 turns them off. A response is the right answers
over the epochs of the run's primary scorer; a failed call or an unscored
result is missing, not wrong.

The test-information curve says where on the axis this set of cases can
separate targets: where the standard error of an ability is small. The
report names that range.

With a difficulty tag (--tag, or difficulty.tag in the run's spec: a tier,
an expert's rating, a count such as reasoning steps) the report adds each
target's pass rate per tier with its interval, and each tier's mean fitted
difficulty: where a target's lead comes from. A non-numeric tag needs its
order (--levels easy,medium,hard or difficulty.levels). With fewer than two
targets there is nothing to fit: the tag's tiers are shown alone.

RUN is a run ID, an ID prefix or latest (the default; with --spec, the
newest run of that spec, whose difficulty: section then gives the tag); a
path to a baseline file (assay baseline export) is read as that run. Several runs are fitted
together: the same case ID is the same case, the same target name the same
target. Runs that share neither cannot be put on one scale and are refused,
naming the groups.

docs/difficulty.md explains every number and its limits: a fit from a few
targets is rough.

Exit codes: 0 the report was written; 2 usage error; 4 bad input (an unknown
run, a file that is not a baseline, a tag no case has, too few targets and no
tag).`,
		Example: `  assay difficulty
  assay difficulty latest --tag tier --format html -o difficulty.html
  assay difficulty 20261202-1135 20261203-0910 --model 2pl --format json`,
		PreRunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(o.Format, report.NewRegistry().Difficulty.Names()); err != nil {
				return err
			}
			if o.Model != "rasch" && o.Model != "2pl" {
				return usageError{fmt.Errorf("--model %q: models are rasch, 2pl", o.Model)}
			}
			if !(o.Level > 0 && o.Level < 1) {
				return usageError{fmt.Errorf("--level %g: must be strictly between 0 and 1 (0.95 for 95%% intervals)", o.Level)}
			}
			if math.IsNaN(o.PriorSD) || math.IsInf(o.PriorSD, 0) {
				return usageError{fmt.Errorf("--prior-sd %g: give a number (0 the default, -1 none)", o.PriorSD)}
			}
			if o.Points < 0 || o.Points > 201 {
				return usageError{fmt.Errorf("--points %d: give 0 (the default, 21) or up to 201", o.Points)}
			}
			if err := checkLevels(o.Levels); err != nil {
				return err
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Runs = args
			if len(o.Runs) == 0 {
				o.Runs = []string{"latest"}
			}
			return runDifficulty(cmd.Context(), g, o)
		},
	}
	o.AddFlags(cmd)
	return cmd
}

// checkLevels refuses an empty or repeated level of --levels.
func checkLevels(levels []string) error {
	seen := map[string]bool{}
	for _, l := range levels {
		if strings.TrimSpace(l) == "" {
			return usageError{errors.New("--levels: a level is empty (give the tag's values easiest first: easy,medium,hard)")}
		}
		if seen[l] {
			return usageError{fmt.Errorf("--levels: %q is listed twice (each level once, easiest first)", l)}
		}
		seen[l] = true
	}
	return nil
}

// invalid marks an error in what the user gave (a run, a file, a tag) as
// exit 4.
func invalid(err error) error {
	if err == nil {
		return nil
	}
	var ee *ExitError
	if errors.As(err, &ee) || errors.Is(err, ErrInterrupted) || errors.Is(err, context.Canceled) {
		return err
	}
	return &ExitError{Code: ExitInvalid, Err: err}
}

// runSource reads runs and baseline files for difficulty and mismatch: the
// store is opened once, read-only when it is on a read-only mount, and
// only when a run reference needs it.
type runSource struct {
	g    *Globals
	what string
	st   store.Store
	// spec, when set, is the name of the spec whose newest run latest is.
	spec string
}

func (s *runSource) Close() {
	if s.st != nil {
		s.st.Close()
	}
}

// looksLikeFile says whether ref names a file (it exists, or it looks like
// a path: a separator or a file extension assay reads).
func looksLikeFile(ref string) bool {
	if _, err := os.Stat(ref); err == nil {
		return true
	}
	if strings.ContainsRune(ref, filepath.Separator) || strings.Contains(ref, "/") {
		return true
	}
	switch strings.ToLower(filepath.Ext(ref)) {
	case ".json", ".jsonl", ".ndjson", ".jsonlines", ".csv":
		return true
	}
	return false
}

// view reads ref: a baseline file when it is a file, else a run of the
// store. The run (nil for a file) carries its resolved spec.
func (s *runSource) view(ctx context.Context, ref string) (*runview.View, *record.Run, error) {
	if looksLikeFile(ref) {
		fi, err := os.Stat(ref)
		if err != nil {
			return nil, nil, invalid(fmt.Errorf("%s: %s: no such file (give a run ID, latest, or a baseline file)", s.what, ref))
		}
		if fi.IsDir() {
			return nil, nil, invalid(fmt.Errorf("%s: %s is a directory, not a baseline file", s.what, ref))
		}
		v, err := runview.LoadBaseline(ref)
		if err != nil {
			return nil, nil, invalid(fmt.Errorf("%s: %w", s.what, err))
		}
		return v, nil, nil
	}
	if s.st == nil {
		st, err := openExistingStore(ctx, s.g)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", s.what, err)
		}
		s.st = st
	}
	id, err := latestOf(ctx, s.st, ref, s.spec)
	if err != nil {
		return nil, nil, invalid(fmt.Errorf("%s: %w", s.what, err))
	}
	run, err := getRun(ctx, s.st, s.what, id)
	if err != nil {
		if errors.Is(err, record.ErrNotFound) {
			return nil, nil, invalid(err)
		}
		return nil, nil, err
	}
	v, err := runview.FromStore(ctx, s.st, run)
	if err != nil {
		return nil, nil, invalid(fmt.Errorf("%s: %w", s.what, err))
	}
	return v, run, nil
}

// storedDifficulty is the difficulty: section of a run's resolved spec
// (nil when it has none or the run carries no spec).
func storedDifficulty(run *record.Run) *spec.Difficulty {
	if run == nil {
		return nil
	}
	sp, err := spec.Stored(run.Config, run.SpecPath)
	if err != nil {
		return nil
	}
	return sp.Difficulty
}

func runDifficulty(ctx context.Context, g *Globals, o *difficultyOptions) error {
	src := &runSource{g: g, what: "difficulty"}
	defer src.Close()
	var views []*runview.View
	var runs []*record.Run // nil for a baseline file
	var sources []string
	tag, levels := o.Tag, o.Levels
	if o.Spec != "" {
		sp, err := spec.LoadWith(o.Spec, specOptions(g, nil))
		if err != nil {
			return err // spec problems exit 4
		}
		src.spec = sp.Name
		if d := sp.Difficulty; d != nil && (tag == "" || tag == d.Tag) {
			tag = d.Tag
			if levels == nil {
				levels = d.Levels
			}
		}
	}
	for _, ref := range o.Runs {
		v, run, err := src.view(ctx, ref)
		if err != nil {
			return err
		}
		if tag == "" {
			if d := storedDifficulty(run); d != nil && d.Tag != "" {
				tag = d.Tag
				if levels == nil {
					levels = d.Levels
				}
			}
		}
		views = append(views, v)
		runs = append(runs, run)
		sources = append(sources, v.Source)
	}
	if o.Tag != "" && levels == nil {
		for _, run := range runs {
			if d := storedDifficulty(run); d != nil && d.Tag == o.Tag {
				levels = d.Levels
				break
			}
		}
	}
	sc := difficulty.Scale{Source: difficulty.SourceFitted, Model: o.Model}
	if tag != "" {
		sc = difficulty.Scale{Source: difficulty.SourceTag, Tag: tag, Levels: levels, Model: o.Model}
	}
	var sets []*difficulty.Set
	targets := map[string]bool{}
	for _, v := range views {
		s, err := difficulty.FromView(v, sc)
		if err != nil {
			return invalid(fmt.Errorf("difficulty: %w", err))
		}
		for _, t := range s.Targets {
			if slices.ContainsFunc(t.Trials, func(n int32) bool { return n > 0 }) {
				targets[t.Name] = true
			}
		}
		sets = append(sets, s)
	}
	var res *difficulty.Fitted
	switch {
	case len(targets) >= 2:
		var err error
		res, err = difficulty.Fit(sets, difficulty.FitOptions{Model: o.Model, PriorSD: o.PriorSD, Points: o.Points, Level: o.Level, Tag: tag, Levels: levels})
		if err != nil {
			return invalid(fmt.Errorf("difficulty: %w", err))
		}
	case tag != "":
		res = tagTiers(sets, sc, o.Level)
		res.Warnings = append(res.Warnings, fmt.Sprintf("%s: nothing to fit (a fit needs two targets or more); the tag %q's tiers are shown alone", plural(len(targets), "target with results"), tag))
	default:
		names := make([]string, 0, len(targets))
		for n := range targets {
			names = append(names, n)
		}
		slices.Sort(names)
		have := "none has results"
		if len(names) > 0 {
			have = "only " + strings.Join(names, ", ") + " has results"
		}
		return invalid(fmt.Errorf("difficulty: fitting needs the results of two targets or more, and in %s %s; give --tag to see a difficulty tag's tiers instead, or add runs of other targets", strings.Join(sources, ", "), have))
	}
	res.Sources = sources
	r, err := report.NewRegistry().Difficulty.Reporter(o.Format, res)
	if err != nil {
		return usageError{err}
	}
	return printOut(g.Stdout, o.Output, r)
}

// tagTiers is the per-tier view without a fit: each tier of the tag with
// its cases and each target's pass rate on them (Wilson intervals over
// the epochs' trials).
func tagTiers(sets []*difficulty.Set, sc difficulty.Scale, level float64) *difficulty.Fitted {
	type tier struct {
		value float64
		label string
		cases int
		rates map[string]*[2]int
	}
	tiers := map[float64]*tier{}
	var names []string
	unknown := 0
	for _, s := range sets {
		for i, v := range s.Values {
			if math.IsNaN(v) {
				unknown++
				continue
			}
			t := tiers[v]
			if t == nil {
				label := ""
				if s.Tags != nil {
					label = s.Tags[i]
				}
				if k := int(v); len(sc.Levels) > 0 && float64(k) == v && k >= 0 && k < len(sc.Levels) {
					label = sc.Levels[k]
				}
				t = &tier{value: v, label: label, rates: map[string]*[2]int{}}
				tiers[v] = t
			}
			t.cases++
			for _, tr := range s.Targets {
				if tr.Trials[i] == 0 {
					continue
				}
				if !slices.Contains(names, tr.Name) {
					names = append(names, tr.Name)
				}
				c := t.rates[tr.Name]
				if c == nil {
					c = &[2]int{}
					t.rates[tr.Name] = c
				}
				c[0] += int(tr.Right[i])
				c[1] += int(tr.Trials[i])
			}
		}
	}
	values := make([]float64, 0, len(tiers))
	for v := range tiers {
		values = append(values, v)
	}
	slices.Sort(values)
	res := &difficulty.Fitted{Scale: sc, Level: level}
	for _, v := range values {
		t := tiers[v]
		out := difficulty.Tier{Label: t.label, Value: v, Cases: t.cases, MeanB: 0}
		for _, n := range names {
			c := t.rates[n]
			if c == nil {
				continue
			}
			out.Rates = append(out.Rates, difficulty.Rate{Target: n, Passed: c[0], N: c[1], Rate: float64(c[0]) / float64(c[1]),
				CI: stats.Wilson(c[0], c[1], 1-level)})
		}
		res.Tiers = append(res.Tiers, out)
	}
	if unknown > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%s without the tag %q: left out", plural(unknown, "case"), sc.Tag))
	}
	return res
}
