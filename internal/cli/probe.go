package cli

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/engine"
	"github.com/assay-eval/assay/internal/probe"
	"github.com/assay-eval/assay/internal/probe/rewriter"
	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/report"
	"github.com/assay-eval/assay/internal/runner"
	"github.com/assay-eval/assay/internal/spec"
	"github.com/assay-eval/assay/internal/store"
	"github.com/assay-eval/assay/internal/task"
)

// newProbeCommand is `assay probe`, the parent of the integrity probes.
func newProbeCommand(g *Globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "probe",
		Short: "Probe an evaluation's integrity (contamination)",
		Long: `Probes that test whether an evaluation measures what it claims.

  assay probe contamination SPEC --twins FILE | --rewriter TARGET | --twins-set ID`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageError{fmt.Errorf("unknown probe %q (probes are: contamination)", args[0])}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newProbeContaminationCommand(g))
	return cmd
}

type probeOptions struct {
	// Files are overlays merged over the spec (-f).
	Files []string
	Spec  string
	// Exactly one source of twins.
	Twins    string
	Rewriter string
	TwinsSet string

	TwinsFormat string
	TwinID      string
	Fields      []string
	Targets     []string
	Limit       int
	MinDrop     float64
	Alpha       float64
	Format      string
	NoCache     bool
	CommitEvery time.Duration
}

func (o *probeOptions) AddFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	addOverlayFlag(cmd, &o.Files)
	f.StringVar(&o.Twins, "twins", "", "twin file (JSONL or CSV), joined to the dataset's cases by ID")
	f.StringVar(&o.Rewriter, "rewriter", "", "spec target that paraphrases each case with a fixed prompt")
	f.StringVar(&o.TwinsSet, "twins-set", "", "reuse a stored twin set by its ID (printed by an earlier probe)")
	f.StringVar(&o.TwinsFormat, "twins-format", "", "format of the twin file: jsonl or csv (default: from its extension)")
	f.StringVar(&o.TwinID, "twin-id", "", "field of the twin file holding the case ID (default: the spec's dataset.id)")
	f.StringArrayVar(&o.Fields, "field", nil, "field the rewriter rewrites (repeatable; default: the fields the user prompt uses)")
	f.StringSliceVar(&o.Targets, "targets", nil, "probe only these targets (comma-separated; default: every target but the rewriter)")
	f.IntVar(&o.Limit, "limit", 0, "probe only the first N cases of the dataset")
	f.Float64Var(&o.MinDrop, "min-drop", 0.05, "smallest drop (a fraction: 0.05 is 5 points) worth flagging")
	f.Float64Var(&o.Alpha, "alpha", 0.05, "false-positive rate: the chance of flagging any target when none drops")
	f.StringVar(&o.Format, "format", "text", "output format: "+strings.Join(report.NewRegistry().Probe.Names(), "|"))
	f.BoolVar(&o.NoCache, "no-cache", false, "call every target anew (every call is made and paid) and store the fresh replies in the response cache")
	f.DurationVar(&o.CommitEvery, "commit-every", 100*time.Millisecond, "longest time a finished result waits before it is committed")
	_ = f.MarkHidden("commit-every")
}

func (o *probeOptions) check() error {
	n := 0
	for _, s := range []string{o.Twins, o.Rewriter, o.TwinsSet} {
		if s != "" {
			n++
		}
	}
	if n != 1 {
		return errors.New("say where the twins come from: exactly one of --twins FILE, --rewriter TARGET or --twins-set ID")
	}
	if o.Twins == "" && (o.TwinID != "" || o.TwinsFormat != "") {
		return errors.New("--twin-id and --twins-format apply to a twin file (--twins FILE)")
	}
	if o.Twins != "" {
		if _, err := probe.FileFormat(o.Twins, o.TwinsFormat); err != nil {
			return err
		}
	}
	if o.Rewriter == "" && len(o.Fields) > 0 {
		return errors.New("--field names what the rewriter rewrites; it needs --rewriter TARGET")
	}
	if o.TwinsSet != "" {
		id, err := normaliseSetID(o.TwinsSet)
		if err != nil {
			return err
		}
		o.TwinsSet = id
	}
	if o.Limit < 0 {
		return fmt.Errorf("--limit must not be negative (got %d)", o.Limit)
	}
	if err := checkFormat(o.Format, report.NewRegistry().Probe.Names()); err != nil {
		return err
	}
	if err := (probe.Options{Alpha: o.Alpha, MinDrop: o.MinDrop}).Check(); err != nil {
		return fmt.Errorf("--alpha/--min-drop: %w", err)
	}
	return nil
}

// normaliseSetID accepts a twin set ID with or without its "sha256:" prefix.
func normaliseSetID(id string) (string, error) {
	hexPart := strings.TrimPrefix(id, "sha256:")
	if b, err := hex.DecodeString(hexPart); err != nil || len(b) != 32 {
		return "", fmt.Errorf("--twins-set %q is not a twin set ID (sha256: and 64 hex digits, as a probe prints it)", id)
	}
	return "sha256:" + strings.ToLower(hexPart), nil
}

func newProbeContaminationCommand(g *Globals) *cobra.Command {
	o := &probeOptions{}
	cmd := &cobra.Command{
		Use:   "contamination SPEC (--twins FILE | --rewriter TARGET | --twins-set ID)",
		Short: "Compare each target on the cases and on their twins: a drop on twins suggests memorised test data",
		Long: `Pair every case with a twin — the same question written anew — run the
candidates on the originals and on the twins, and report per target the paired
drop (original rate − twin rate) with its interval and McNemar p-value.

Twins come from one of:
  --twins FILE        a twin dataset (JSONL or CSV) joined to the cases by ID
                      (the spec's dataset.id; --twin-id FIELD overrides). Each
                      twin has the fields the prompt uses and its own expected
                      value. Cases without a twin are left out and reported.
  --rewriter TARGET   a spec target paraphrases the --field(s) of each case with
                      a fixed prompt (recorded by its hash); the expected value
                      is kept. Unusable rewrites are counted and left out.
  --twins-set ID      a twin set stored by an earlier probe.
Twin sets are stored under an ID hashed from what made them, so probing again
with the same inputs reuses the twins and calls no rewriter.

The originals and the twins are stored as two ordinary runs (printed; assay
report works on each). A target is flagged contaminated? when its drop exceeds
--min-drop (5 points), the lower end of its 1 − 2·alpha (90%) interval (a
one-sided 95% bound) is above zero, and the one-sided exact McNemar p-value,
Holm-adjusted across the targets, is below --alpha (0.05): the chance of
flagging any target when none drops stays at or below alpha.

Exit codes: 0 no target flagged, 3 a target flagged contaminated?, 1 error,
2 usage, 4 invalid spec, dataset or twin file, 130 interrupted.`,
		Args: exactArgs(1),
		PreRunE: func(cmd *cobra.Command, args []string) error {
			if err := o.check(); err != nil {
				return usageError{err}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Spec = args[0]
			return runProbeContamination(cmd.Context(), g, o)
		},
	}
	o.AddFlags(cmd)
	return cmd
}

// probeTwins is the twin set a probe uses.
type probeTwins struct {
	info     probe.SetInfo
	twins    map[string]*probe.Twin
	failures []probe.Failure // rewrites that made no twin, in case order
}

func runProbeContamination(ctx context.Context, g *Globals, o *probeOptions) error {
	t, err := task.LoadWith(o.Spec, specOptions(g, o.Files))
	if err != nil {
		return err
	}
	sp := t.Spec
	opts := probe.Options{Alpha: o.Alpha, MinDrop: o.MinDrop}

	rewriter := -1
	if o.Rewriter != "" {
		rewriter = slices.IndexFunc(sp.Targets, func(t spec.Target) bool { return t.Name == o.Rewriter })
		if rewriter < 0 {
			return usageError{fmt.Errorf("--rewriter: no target named %q (targets are: %s)", o.Rewriter, targetNames(sp))}
		}
	}
	names, err := probeCandidates(sp, o.Targets, o.Rewriter)
	if err != nil {
		return err
	}
	fields, err := rewriteFields(t, o)
	if err != nil {
		return err
	}

	// The originals, in dataset order (the first --limit of them).
	var cases []*dataset.Case
	byID := map[string]*dataset.Case{}
	if err := engine.DatasetCases(t, o.Limit)(func(c *dataset.Case) error {
		cases = append(cases, c)
		byID[c.ID] = c
		return nil
	}); err != nil {
		return err
	}
	if o.Rewriter != "" {
		// Every field to rewrite must be text, in every case, before any call.
		for _, c := range cases {
			if _, err := probe.TextFields(c, fields); err != nil {
				return usageError{err}
			}
		}
	}

	st, err := openStore(ctx, g)
	if err != nil {
		return err
	}
	defer st.Close()

	// Providers and scorers are built before anything is called: a missing
	// key is a spec problem (exit 4), reported with every other.
	e := newEngine(g, st)
	var closers engine.Closers
	defer closers.Close()
	targets, problems, err := e.Targets(sp, names, o.NoCache, &closers)
	if err != nil {
		return err
	}
	var rewriterP provider.Provider
	if rewriter >= 0 {
		p, perr := e.Provider(sp, sp.Targets[rewriter].Name, o.NoCache, &closers)
		var ps spec.Problems
		switch {
		case errors.As(perr, &ps):
			problems = append(problems, ps...)
		case perr != nil:
			return perr
		}
		rewriterP = p
	}
	if len(problems) > 0 {
		return problems.Sort(sp.File)
	}
	set, err := e.Scorers(sp, o.NoCache, &closers)
	if err != nil {
		return err
	}

	// Ctrl-C: the first stops issuing calls (rewrites and runs) and keeps
	// what finished; the second aborts calls in flight.
	runCtx, stop, unwatch := watchInterrupts(ctx, g)
	defer unwatch()

	var tw *probeTwins
	switch {
	case o.Twins != "":
		tw, err = fileTwins(ctx, g, st, t, o, byID, cases)
	case o.Rewriter != "":
		tw, err = rewriterTwins(runCtx, g, st, t, &sp.Targets[rewriter], rewriterP, fields, cases, stop)
	default:
		tw, err = storedTwins(ctx, g, st, o.TwinsSet, t.Dataset.FileHash)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(g.Stderr, "twin set %s\n", tw.info.ID)
	if runner.Closed(stop) {
		return fmt.Errorf("%w before the runs: %d twins stored in set %s; probe again to finish", ErrInterrupted, tw.info.Stored+tw.info.Added, tw.info.ID)
	}

	// Pair the cases with their twins; a twin replaces its original's
	// fields and (when it has one) expected value, and keeps its tags and
	// weight, so slices of the two runs line up.
	need := t.Prompt.Fields()
	var originals, twins []*dataset.Case
	rep := &probe.Report{Spec: sp.Name, TwinSet: tw.info}
	rep.Cases.Dataset = len(cases)
	failed := map[string]bool{}
	for _, f := range tw.failures {
		failed[f.CaseID] = true
	}
	for _, c := range cases {
		x := tw.twins[c.ID]
		if x == nil {
			if !failed[c.ID] {
				rep.Cases.NoTwin++
				if len(rep.Cases.NoTwinIDs) < probe.MaxListed {
					rep.Cases.NoTwinIDs = append(rep.Cases.NoTwinIDs, c.ID)
				}
			}
			continue
		}
		for _, f := range need {
			if _, ok := x.Vars[f]; !ok {
				return fmt.Errorf("the twin of case %s in set %s lacks field %q that the prompt uses: the set was made for another prompt; make a new one with --twins or --rewriter", c.ID, probe.ShortID(tw.info.ID), f)
			}
		}
		twin := &dataset.Case{ID: c.ID, Line: c.Line, Vars: x.Vars, Expected: c.Expected, Tags: c.Tags, Weight: c.Weight, HasWeight: c.HasWeight}
		if x.Line > 0 {
			twin.Line = x.Line
		}
		if x.OwnExpected {
			twin.Expected = x.Expected
		}
		originals = append(originals, c)
		twins = append(twins, twin)
	}
	rep.Cases.Paired = len(originals)
	rep.Cases.RewriteFailed = len(tw.failures)
	if len(tw.failures) > 0 {
		rep.Cases.RewriteByKind = map[string]int{}
		for _, f := range tw.failures {
			rep.Cases.RewriteByKind[f.Kind]++
		}
		rep.Cases.RewriteFailures = tw.failures[:min(len(tw.failures), probe.MaxListed)]
	}
	if len(originals) == 0 {
		why := ""
		if n := len(tw.failures); n > 0 {
			f := tw.failures[0]
			why = fmt.Sprintf("; the rewriter made no usable twin for %d (case %s: %s: %s)", n, f.CaseID, f.Kind, f.Reason)
		}
		return fmt.Errorf("no case of %s has a twin in set %s (%d cases read%s): nothing to probe", sp.Dataset.Path, probe.ShortID(tw.info.ID), len(cases), why)
	}

	// Two ordinary runs: the originals, then the twins (whose run records
	// the twin set's ID as its dataset hash: it measured the twins, and
	// commands that re-read the dataset, rescore and resume, refuse it
	// rather than score twin outputs against the originals).
	kit := &engine.Kit{Targets: targets, Scorers: set}
	origID, err := probeRun(runCtx, ctx, g, e, t, kit, names, originals, "", stop, o.CommitEvery, "originals")
	if err != nil {
		return err
	}
	twinID, err := probeRun(runCtx, ctx, g, e, t, kit, names, twins, tw.info.ID, stop, o.CommitEvery, "twins")
	if err != nil {
		return err
	}
	rep.Runs = probe.Runs{Original: origID, Twins: twinID}

	vo, err := probe.Verdicts(ctx, st, origID)
	if err != nil {
		return err
	}
	vt, err := probe.Verdicts(ctx, st, twinID)
	if err != nil {
		return err
	}
	rep.Targets, err = probe.Assess(names, probe.Tables(names, vo, vt), opts)
	if err != nil {
		return err
	}
	probe.SetErrors(rep.Targets, vo, vt)
	rep.Method = probe.NewMethod(opts, len(names))
	rep.Finish()

	r, err := report.NewRegistry().Probe.Reporter(o.Format, rep)
	if err != nil {
		return err
	}
	if err := printOut(g.Stdout, "", r); err != nil {
		return err
	}
	if len(rep.Flagged) > 0 {
		return &ExitError{Code: ExitFailed, Err: fmt.Errorf("probe: %d of %d targets flagged contaminated? (%s)", len(rep.Flagged), len(names), strings.Join(rep.Flagged, ", "))}
	}
	return nil
}

func targetNames(sp *spec.Spec) string {
	var all []string
	for _, t := range sp.Targets {
		all = append(all, t.Name)
	}
	return strings.Join(all, ", ")
}

// probeCandidates are the targets probed: --targets, or every target of
// the spec but the rewriter.
func probeCandidates(sp *spec.Spec, want []string, rewriter string) ([]string, error) {
	if len(want) > 0 {
		return selectTargets(sp, want)
	}
	// The spec's candidates: a target that is only a judge, or the
	// rewriter, is not under test.
	var out []string
	for _, name := range sp.CandidateNames() {
		if name != rewriter {
			out = append(out, name)
		}
	}
	if len(out) == 0 {
		return nil, usageError{fmt.Errorf("no target to probe: the spec's only candidate is the rewriter %s (name others with --targets)", rewriter)}
	}
	return out, nil
}

// rewriteFields are the fields the rewriter rewrites: --field, or the
// fields the user prompt uses, never the ID or the expected value.
func rewriteFields(t *task.Task, o *probeOptions) ([]string, error) {
	if o.Rewriter == "" {
		return nil, nil
	}
	ds := &t.Spec.Dataset
	protected := func(f string) string {
		switch {
		case f == ds.Expected:
			return "it holds the expected value, which a paraphrase keeps"
		case f == ds.ID:
			return "it holds the case ID"
		}
		return ""
	}
	if len(o.Fields) > 0 {
		var out []string
		for _, f := range o.Fields {
			if !slices.Contains(t.Dataset.Fields, f) {
				hint := ""
				if near := spec.Nearest(f, t.Dataset.Fields); near != "" {
					hint = fmt.Sprintf(" (did you mean %q?)", near)
				}
				return nil, usageError{fmt.Errorf("--field %q: the dataset has no such field%s (fields: %s)", f, hint, dataset.FieldList(t.Dataset.Fields))}
			}
			if why := protected(f); why != "" {
				return nil, usageError{fmt.Errorf("--field %q cannot be rewritten: %s", f, why)}
			}
			if !slices.Contains(out, f) {
				out = append(out, f)
			}
		}
		sort.Strings(out)
		return out, nil
	}
	var out []string
	for _, f := range t.Prompt.UserFields() {
		if protected(f) == "" {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		return nil, usageError{errors.New("the user prompt uses no field the rewriter could rewrite; name the text fields with --field")}
	}
	return out, nil
}

// loadTwins reads the twins stored in a set, by case ID.
func loadTwins(ctx context.Context, st store.Store, set string) (map[string]*probe.Twin, error) {
	out := map[string]*probe.Twin{}
	err := st.Twins(ctx, set, func(r record.Twin) error {
		tw, err := probe.FromRecord(r)
		if err != nil {
			return err
		}
		out[tw.CaseID] = tw
		return nil
	})
	return out, err
}

// putTwins stores twins of a set made for the dataset whose hash is datasetHash.
func putTwins(ctx context.Context, g *Globals, st store.Store, set, source, datasetHash string, twins []*probe.Twin) error {
	recs := make([]record.Twin, 0, len(twins))
	for _, tw := range twins {
		r, err := tw.Record(set, source, datasetHash, g.Now())
		if err != nil {
			return err
		}
		recs = append(recs, r)
	}
	if len(recs) == 0 {
		return nil
	}
	return st.PutTwins(ctx, recs)
}

func fileTwins(ctx context.Context, g *Globals, st store.Store, t *task.Task, o *probeOptions, byID map[string]*dataset.Case, cases []*dataset.Case) (*probeTwins, error) {
	var examples []string
	for _, c := range cases[:min(3, len(cases))] {
		examples = append(examples, c.ID)
	}
	// Twins join every case of the dataset, not only the first --limit
	// (or dataset.limit): an ID past a limit is not an error in the twin file.
	known := func(id string) bool { return byID[id] != nil }
	if o.Limit > 0 || t.Spec.Dataset.Limit > 0 {
		all := map[string]bool{}
		whole := *t.Spec
		whole.Dataset.Limit = 0
		if err := dataset.Each(&whole, func(c *dataset.Case) error { all[c.ID] = true; return nil }); err != nil {
			return nil, err
		}
		known = func(id string) bool { return all[id] }
	}
	f, err := probe.ReadFile(t.Spec, probe.FileOptions{Path: o.Twins, Format: o.TwinsFormat, IDField: o.TwinID, Needs: t.Prompt.Fields()}, known, examples)
	if err != nil {
		return nil, err
	}
	id := probe.FileSetID(t.Dataset.FileHash, f.Hash, f.IDField, t.Spec.Dataset)
	have, err := loadTwins(ctx, st, id)
	if err != nil {
		return nil, err
	}
	var add []*probe.Twin
	for _, tw := range f.Twins {
		if have[tw.CaseID] == nil {
			add = append(add, tw)
		}
	}
	sort.Slice(add, func(i, j int) bool { return add[i].Line < add[j].Line })
	source := "file:" + o.Twins
	if err := putTwins(ctx, g, st, id, source, t.Dataset.FileHash, add); err != nil {
		return nil, err
	}
	return &probeTwins{info: probe.SetInfo{ID: id, Source: source, Stored: len(have), Added: len(add), JoinField: f.IDField}, twins: f.Twins}, nil
}

func storedTwins(ctx context.Context, g *Globals, st store.Store, id, datasetHash string) (*probeTwins, error) {
	have, err := loadTwins(ctx, st, id)
	if err != nil {
		return nil, err
	}
	for _, tw := range have {
		if tw.Dataset != datasetHash {
			return nil, fmt.Errorf("--twins-set: set %s was made for another version of the dataset (dataset %s; the spec's is %s): its case IDs may name other questions", probe.ShortID(id), engine.Short(tw.Dataset), engine.Short(datasetHash))
		}
	}
	if len(have) == 0 {
		return nil, fmt.Errorf("--twins-set: the store %s holds no twin set %s (a probe with --twins or --rewriter prints the ID of the set it made)", storeName(g.DB), id)
	}
	source := "stored"
	return &probeTwins{info: probe.SetInfo{ID: id, Source: source, Stored: len(have)}, twins: have}, nil
}

// rewriteBatch is how many new twins are stored at once while rewriting.
const rewriteBatch = 64

func rewriterTwins(ctx context.Context, g *Globals, st store.Store, t *task.Task, rt *spec.Target, p provider.Provider, fields []string, cases []*dataset.Case, stop <-chan struct{}) (*probeTwins, error) {
	id := probe.RewriterSetID(t.Dataset.FileHash, t.Spec.Dataset.ID, rt, fields)
	source := "rewriter:" + rt.Name
	have, err := loadTwins(ctx, st, id)
	if err != nil {
		return nil, err
	}
	info := probe.SetInfo{ID: id, Source: source, Stored: len(have), RewritePromptHash: probe.RewritePromptHash(), Fields: fields}
	var todo []*dataset.Case
	for _, c := range cases {
		if have[c.ID] == nil {
			todo = append(todo, c)
		}
	}
	if len(todo) == 0 {
		return &probeTwins{info: info, twins: have}, nil
	}
	fmt.Fprintf(g.Stderr, "rewriting %d cases with %s (%d twins already stored)\n", len(todo), rt.Name, len(have))

	workers := rt.Limits.Concurrency
	if workers <= 0 {
		workers = 8
	}
	var (
		mu       sync.Mutex
		made     = map[string]*probe.Twin{}
		failures = map[string]probe.Failure{}
	)
	// Twins are stored as they are made, through the one batched writer
	// (with a context of its own: an interrupt keeps what finished).
	w := runner.StartWriter(runner.WriterOptions[*probe.Twin]{What: "twins", Batch: rewriteBatch,
		Commit: func(wctx context.Context, batch []*probe.Twin) error {
			return putTwins(wctx, g, st, id, source, t.Dataset.FileHash, batch)
		}})
	// The first Ctrl-C (stop) issues no more rewrites; the ones in flight
	// finish and are stored.
	pool := runner.Pool[*dataset.Case]{Workers: workers, Stop: stop}
	_ = pool.Run(ctx, func(send func(*dataset.Case) error) error {
		for _, c := range todo {
			if err := send(c); err != nil {
				return err
			}
		}
		return nil
	}, func(c *dataset.Case) {
		if runner.Closed(stop) || ctx.Err() != nil {
			return // queued, never issued
		}
		tw, fail := rewriter.Rewrite(ctx, p, rt, c, fields)
		if ctx.Err() != nil {
			return // aborted, not a verdict on the rewrite
		}
		mu.Lock()
		if fail != nil {
			failures[c.ID] = *fail
		} else {
			made[c.ID] = tw
		}
		mu.Unlock()
		if fail == nil {
			w.Add(tw)
		}
	})
	if err := w.Close(); err != nil {
		return nil, err
	}

	twins := have
	for k, v := range made {
		twins[k] = v
	}
	info.Added = len(made)
	out := &probeTwins{info: info, twins: twins}
	for _, c := range cases {
		if f, ok := failures[c.ID]; ok {
			out.failures = append(out.failures, f)
		}
	}
	return out, nil
}

// probeRun is one of the probe's two runs: the targets on an in-memory
// list of cases (the originals, or their twins when datasetHash names the
// twin set), run by the engine like any run — its record, cases, every
// result as it completes, the pairwise judges and its final status. runCtx
// aborts calls; ctx is for the bookkeeping that must happen even then. It
// returns the run's ID.
func probeRun(runCtx, ctx context.Context, g *Globals, e *engine.Engine, t *task.Task, kit *engine.Kit, names []string, cases []*dataset.Case, datasetHash string, stop <-chan struct{}, commitEvery time.Duration, what string) (string, error) {
	run, err := e.Start(ctx, t, engine.StartOptions{Targets: names, Epochs: 1, CommitEvery: commitEvery,
		Cases: cases, DatasetHash: datasetHash, Kit: kit})
	if err != nil {
		return "", err
	}
	defer run.Close()
	id := run.Record.ID
	fmt.Fprintf(g.Stderr, "run %s (%s): %d cases × %d targets\n", id, what, len(cases), len(kit.Targets))
	prog := newProgress(g, run.Total())
	_, _ = run.Execute(runCtx, engine.ExecuteOptions{Stop: stop, Progress: prog.add, CallsDone: prog.finish})
	out, err := run.Finish(ctx)
	if err != nil {
		return id, fmt.Errorf("run %s (%s): %w", id, what, err)
	}
	if out.Status == record.StatusInterrupted {
		return id, fmt.Errorf("%w: run %s (%s) has %d of %d results; probe again to finish (completed calls come from the response cache)", ErrInterrupted, id, what, out.Have, out.Total)
	}
	return id, nil
}
