package cli

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"

	"github.com/assay-eval/assay/internal/engine"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store"
	"github.com/assay-eval/assay/internal/store/postgres"
)

func newStoreCommand(g *Globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "store",
		Short: "Move records between stores (an SQLite file, a PostgreSQL database)",
		Long: `Commands on whole stores.

  assay store copy --from SRC --to DST [--run ID ...] [--what runs,labels,traces,cache,twins]

SRC and DST are each an SQLite file (a path) or a PostgreSQL database
(postgres://USER@HOST/DB). See 'assay store copy --help'.`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			return usageError{errors.New("store needs a subcommand: assay store copy --from SRC --to DST")}
		},
	}
	cmd.AddCommand(newStoreCopyCommand(g))
	return cmd
}

// The kinds of record --what selects.
const (
	copyRuns   = "runs"
	copyLabels = "labels"
	copyTraces = "traces"
	copyCache  = "cache"
	copyTwins  = "twins"
)

var copyKinds = []string{copyRuns, copyLabels, copyTraces, copyCache, copyTwins}

type storeCopyOptions struct {
	From, To     string
	Runs         []string
	What         []string
	AllowPartial bool
	JSON         bool
}

func (o *storeCopyOptions) AddFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.From, "from", "", "the store to copy from: an SQLite file or a postgres:// URL (must exist)")
	f.StringVar(&o.To, "to", "", "the store to copy into: an SQLite file or a postgres:// URL (created when missing)")
	f.StringArrayVar(&o.Runs, "run", nil, "copy only this run (an ID, a unique prefix, or latest); repeat for several")
	f.StringSliceVar(&o.What, "what", nil, "what to copy, comma-separated: runs, labels, traces, cache, twins (default: all; with --run: runs,labels)")
	f.BoolVar(&o.AllowPartial, "allow-partial", false, "copy a run another process is still writing (what it has stored so far)")
	f.BoolVar(&o.JSON, "json", false, "print the summary as JSON")
}

func newStoreCopyCommand(g *Globals) *cobra.Command {
	o := &storeCopyOptions{}
	cmd := &cobra.Command{
		Use:   "copy --from SRC --to DST",
		Short: "Copy runs, labels, traces and the cache from one store into another",
		Long: `Copy records from one store into another: an SQLite file into the team's
PostgreSQL database, a PostgreSQL database into a file to take away, or one
file into another. SRC must exist; DST is created when missing.

What is copied (--what, comma-separated; default all of them):

  runs    each run with its cases, results, every scoring (its number, status
          and scorers hash) with its scores, and a load test's steps and
          requests
  labels  each copied run's labeling queues (with their items) and labels
  traces  production traces and the samples drawn from them
  cache   the response cache, entries keeping their times and targets
  twins   the twin sets of contamination probes

--run ID (repeatable; an ID, a unique prefix or latest) copies those runs
only, and with it --what defaults to runs,labels: traces, the cache and twins
belong to no run and are copied only when --what names them.

The copy is idempotent: what DST already holds is left as it is and counted
as already there, so copying twice changes nothing ("run X: already there"),
and a copy that was stopped is finished by running it again. A run DST holds
with fewer results (a copy stopped halfway, or a run resumed in SRC since) is
completed: the missing cases, results, scorings and scores are added, never
a second copy of one. A label is copied over DST's when it is newer.

Before writing anything the copy checks every run, and refuses (exit 1,
DST unchanged) when:
  - DST holds a run of the same ID that is another run: a different spec,
    dataset, prompt or scorers hash, or start time; a result of the same
    case, target and epoch with other content; or a scoring of the same
    number made with other scorers;
  - SRC's run is still being written (status running and its lease held by
    a live process), unless --allow-partial copies what it has stored so
    far (copy again when it finishes, to complete it).

A run is created in DST as interrupted until its last score is stored, so a
copy killed halfway never leaves a run that looks complete with part of its
results. Leases are not copied.

Progress goes to stderr, one line per run; the summary (how many runs,
cases, results, scores, labels, traces, samples and cache entries were
copied or already there) to stdout, or as JSON with --json.`,
		Example: `  assay store copy --from .assay/assay.db --to postgres://ci@db.internal/assay
  assay store copy --from postgres://me@db.internal/assay --to run.db --run 20261203-101500-a1b2c3`,
		Args: exactArgs(0),
		PreRunE: func(cmd *cobra.Command, args []string) error {
			return o.check(cmd)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runStoreCopy(cmd.Context(), g, o)
		},
	}
	o.AddFlags(cmd)
	return cmd
}

// check validates the flags before any store is opened.
func (o *storeCopyOptions) check(cmd *cobra.Command) error {
	var problems []string
	if o.From == "" {
		problems = append(problems, "--from is required (the store to copy from)")
	}
	if o.To == "" {
		problems = append(problems, "--to is required (the store to copy into)")
	}
	if o.From != "" && o.To != "" && sameStore(o.From, o.To) {
		problems = append(problems, fmt.Sprintf("--from and --to name the same store (%s)", storeName(o.From)))
	}
	if !cmd.Flags().Changed("what") {
		o.What = copyKinds
		if len(o.Runs) > 0 {
			o.What = []string{copyRuns, copyLabels}
		}
	}
	for _, w := range o.What {
		if !slices.Contains(copyKinds, w) {
			problems = append(problems, fmt.Sprintf("--what %q: the kinds are %s", w, strings.Join(copyKinds, ", ")))
		}
	}
	if len(problems) > 0 {
		return usageError{fmt.Errorf("store copy: %s", strings.Join(problems, "; "))}
	}
	return nil
}

// sameStore reports whether two store references name one store: the same
// URL, or paths to the same file.
func sameStore(a, b string) bool {
	if postgres.IsURL(a) || postgres.IsURL(b) {
		return a == b
	}
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	if errA == nil && errB == nil {
		return os.SameFile(fa, fb)
	}
	absA, errA := filepath.Abs(a)
	absB, errB := filepath.Abs(b)
	return errA == nil && errB == nil && absA == absB
}

// copyCount is how many records of one kind were copied and how many the
// destination already held.
type copyCount struct {
	Copied int `json:"copied"`
	There  int `json:"already_there"`
}

func (c *copyCount) add(copied, there int) { c.Copied += copied; c.There += there }

// runCopy is what the copy did to one run.
type runCopy struct {
	ID string `json:"id"`
	// Outcome is "copied" (new in the destination), "completed" (it was
	// there with less) or "already there".
	Outcome  string    `json:"outcome"`
	Cases    copyCount `json:"cases"`
	Results  copyCount `json:"results"`
	Scorings copyCount `json:"rescorings"` // assay rescore's scorings (a run's own is the run)
	Scores   copyCount `json:"scores"`
	Steps    copyCount `json:"load_steps"`
	Requests copyCount `json:"load_requests"`
	Queues   copyCount `json:"queues"`
	Labels   copyCount `json:"labels"`
}

// copied reports whether the copy added anything to the run.
func (r *runCopy) copied() bool {
	for _, c := range []copyCount{r.Cases, r.Results, r.Scorings, r.Scores, r.Steps, r.Requests, r.Queues, r.Labels} {
		if c.Copied > 0 {
			return true
		}
	}
	return false
}

// storeCopySummary is `assay store copy`'s result (--json prints it).
type storeCopySummary struct {
	From string   `json:"from"`
	To   string   `json:"to"`
	What []string `json:"what"`
	Runs struct {
		Copied    int `json:"copied"`
		Completed int `json:"completed"`
		There     int `json:"already_there"`
	} `json:"runs"`
	Cases        copyCount `json:"cases"`
	Results      copyCount `json:"results"`
	Scorings     copyCount `json:"rescorings"`
	Scores       copyCount `json:"scores"`
	LoadSteps    copyCount `json:"load_steps"`
	LoadRequests copyCount `json:"load_requests"`
	Queues       copyCount `json:"queues"`
	Labels       copyCount `json:"labels"`
	Traces       copyCount `json:"traces"`
	Samples      copyCount `json:"samples"`
	Cache        copyCount `json:"cache_entries"`
	Twins        copyCount `json:"twins"`
	RunList      []runCopy `json:"run_list"`
}

// copyBatch is how many records go to the destination per write.
const copyBatch = 1000

// progressEvery is how many results of a large run the copy reports
// having copied, as it goes.
const progressEvery = 100_000

// dumpStore is a store that copying can read and write whole.
type dumpStore interface {
	store.Store
	store.Dump
}

// runStoreCopy copies; Ctrl-C stops it at once (the batch being written
// is rolled back, what was written is kept) with ErrInterrupted.
func runStoreCopy(ctx context.Context, g *Globals, o *storeCopyOptions) error {
	cctx, cancel := cancelOnInterrupt(ctx, g, "interrupt: stopping the copy; what was copied is kept")
	defer cancel()
	err := copyStores(cctx, g, o)
	if err != nil && cctx.Err() != nil && ctx.Err() == nil {
		return fmt.Errorf("store copy: %w: what was copied is kept; run the same command again to finish the copy", ErrInterrupted)
	}
	return err
}

func copyStores(ctx context.Context, g *Globals, o *storeCopyOptions) error {
	src, err := openExistingStoreAt(ctx, g, o.From)
	if err != nil {
		return fmt.Errorf("store copy: --from: %w", err)
	}
	defer src.Close()
	from, ok := src.(dumpStore)
	if !ok {
		return fmt.Errorf("store copy: the store %s cannot be copied from", storeName(o.From))
	}
	wants := func(k string) bool { return slices.Contains(o.What, k) }

	// Every refusal that depends on SRC alone comes before DST is opened
	// (and so created).
	var runs []*record.Run
	if wants(copyRuns) || wants(copyLabels) {
		if runs, err = copyRunList(ctx, from, o.Runs); err != nil {
			return fmt.Errorf("store copy: %w", err)
		}
		if err := refuseLiveRuns(ctx, g, from, runs, o.AllowPartial); err != nil {
			return err
		}
	}

	dst, err := openStoreAt(ctx, g, o.To)
	if err != nil {
		return fmt.Errorf("store copy: --to: %w", err)
	}
	defer dst.Close()
	if ro, ok := dst.(readOnlyStore); ok && ro.ReadOnly() {
		return fmt.Errorf("store copy: the store %s is read-only here (a read-only mount, a CI cache or another user's file): nothing was copied", storeName(o.To))
	}
	to, ok := dst.(dumpStore)
	if !ok {
		return fmt.Errorf("store copy: the store %s cannot be copied into", storeName(o.To))
	}

	c := &storeCopier{from: from, to: to, g: g, toName: storeName(o.To), labels: wants(copyLabels), runs: wants(copyRuns)}
	sum := &storeCopySummary{From: storeName(o.From), To: storeName(o.To), What: o.What, RunList: []runCopy{}}
	if len(runs) > 0 {
		plans, err := c.plan(ctx, runs)
		if err != nil {
			return err
		}
		for _, p := range plans {
			rc, err := c.copyRun(ctx, p)
			if err != nil {
				return fmt.Errorf("store copy: run %s: %w (what was stored is kept; copy again to finish)", p.run.ID, err)
			}
			sum.addRun(rc)
			c.progress(rc)
		}
	}
	if wants(copyTraces) {
		if err := c.copyTraces(ctx, sum); err != nil {
			return fmt.Errorf("store copy: %w", err)
		}
	}
	if wants(copyCache) {
		if err := c.copyCache(ctx, sum); err != nil {
			return fmt.Errorf("store copy: %w", err)
		}
	}
	if wants(copyTwins) {
		if err := c.copyTwins(ctx, sum); err != nil {
			return fmt.Errorf("store copy: %w", err)
		}
	}
	if o.JSON {
		return writeJSONOut(g.Stdout, sum)
	}
	return sum.write(g.Stdout)
}

// copyRunList resolves --run (every run when empty), oldest first, so the
// destination stores them in the order they were made.
func copyRunList(ctx context.Context, st store.Store, refs []string) ([]*record.Run, error) {
	var runs []*record.Run
	if len(refs) == 0 {
		all, err := st.ListRuns(ctx, 0)
		if err != nil {
			return nil, err
		}
		for i := range slices.Backward(all) {
			runs = append(runs, &all[i])
		}
		return runs, nil
	}
	seen := map[string]bool{}
	for _, ref := range refs {
		r, err := st.GetRun(ctx, ref)
		if err != nil {
			return nil, fmt.Errorf("--run %s: %w", ref, err)
		}
		if !seen[r.ID] {
			seen[r.ID] = true
			runs = append(runs, r)
		}
	}
	slices.SortStableFunc(runs, func(a, b *record.Run) int { return a.Started.Compare(b.Started) })
	return runs, nil
}

// refuseLiveRuns refuses runs another process is writing: status running
// and a lease whose holder is alive.
func refuseLiveRuns(ctx context.Context, g *Globals, st store.Store, runs []*record.Run, allow bool) error {
	if allow {
		return nil
	}
	var errs []error
	for _, r := range runs {
		if r.Status != record.StatusRunning {
			continue
		}
		l, live, err := engine.Writer(ctx, st, r.ID, g.Now())
		if err != nil {
			return fmt.Errorf("store copy: %w", err)
		}
		if !live {
			continue
		}
		errs = append(errs, fmt.Errorf("store copy: run %s is being written (pid %d on %s holds its lease, last heartbeat %s): copy it when it finishes, or pass --allow-partial to copy what it has stored so far",
			r.ID, l.PID, l.Host, l.Heartbeat.UTC().Format(time.RFC3339)))
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w\nnothing was copied", errors.Join(errs...))
	}
	return nil
}

type storeCopier struct {
	from, to dumpStore
	g        *Globals
	toName   string // the destination as messages name it
	// runs and labels: what of each run is copied (--what).
	runs, labels bool
}

// copyPlan is one run to copy and what the destination holds of it.
type copyPlan struct {
	run *record.Run
	// there is the destination's run of that ID (nil when it has none).
	there *record.Run
	// scorings are the source's; thereScorings the destination's by number.
	scorings      []store.Scoring
	thereScorings map[int]store.Scoring
}

// plan reads what the destination holds of each run and refuses, before
// anything is written, every run whose copy there is another run.
func (c *storeCopier) plan(ctx context.Context, runs []*record.Run) ([]copyPlan, error) {
	var plans []copyPlan
	var errs []error
	for _, r := range runs {
		p := copyPlan{run: r, thereScorings: map[int]store.Scoring{}}
		there, err := c.to.GetRun(ctx, r.ID)
		switch {
		case err == nil && there.ID == r.ID:
			p.there = there
		case err == nil, errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrAmbiguousID):
			// Not there (GetRun matched a longer ID by prefix, or several).
		default:
			return nil, fmt.Errorf("store copy: %w", err)
		}
		if p.there == nil && !c.runs {
			errs = append(errs, fmt.Errorf("store copy: run %s is not in %s: copy it with --what runs,labels", r.ID, c.toName))
			continue
		}
		if c.runs {
			if p.scorings, err = c.from.Scorings(ctx, r.ID); err != nil {
				return nil, fmt.Errorf("store copy: %w", err)
			}
		}
		if p.there != nil {
			if d := runDifference(r, p.there); d != "" {
				errs = append(errs, fmt.Errorf("store copy: run %s: the destination holds another run of that ID (%s); nothing of it can be copied there", r.ID, d))
				continue
			}
			if c.runs {
				if err := c.checkThere(ctx, &p); err != nil {
					errs = append(errs, err)
					continue
				}
			}
		}
		plans = append(plans, p)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%w\nnothing was copied", errors.Join(errs...))
	}
	return plans, nil
}

// runDifference names what makes two runs of one ID different runs ("" for
// none): what a run is fixed with when it is created.
func runDifference(a, b *record.Run) string {
	var diffs []string
	for _, f := range []struct{ name, a, b string }{
		{"spec", a.Spec, b.Spec},
		{"spec hash", a.SpecHash, b.SpecHash},
		{"dataset hash", a.DatasetHash, b.DatasetHash},
		{"prompt hash", a.PromptHash, b.PromptHash},
		{"scorers hash", a.ScorersHash, b.ScorersHash},
		{"kind", a.Kind, b.Kind},
	} {
		if f.a != f.b {
			diffs = append(diffs, fmt.Sprintf("%s %q here, %q there", f.name, f.a, f.b))
		}
	}
	if !a.Started.Equal(b.Started) {
		diffs = append(diffs, fmt.Sprintf("started %s here, %s there", a.Started.UTC().Format(time.RFC3339Nano), b.Started.UTC().Format(time.RFC3339Nano)))
	}
	return strings.Join(diffs, "; ")
}

// checkThere refuses a run whose scorings or results in the destination
// differ from the source's: a scoring of one number made with other
// scorers, a result of one key with other content.
func (c *storeCopier) checkThere(ctx context.Context, p *copyPlan) error {
	id := p.run.ID
	there, err := c.to.Scorings(ctx, id)
	if err != nil {
		return fmt.Errorf("store copy: %w", err)
	}
	for _, s := range there {
		p.thereScorings[s.Scoring] = s
	}
	for _, s := range p.scorings {
		t, ok := p.thereScorings[s.Scoring]
		if ok && s.Recorded && t.Recorded && s.ScorersHash != t.ScorersHash {
			return fmt.Errorf("store copy: run %s: scoring %d was made with other scorers in the destination (scorers hash %q here, %q there); nothing of the run can be copied there", id, s.Scoring, s.ScorersHash, t.ScorersHash)
		}
	}
	digests := map[record.Key][sha256.Size]byte{}
	err = c.to.Results(ctx, id, func(r record.Result) error {
		d, err := resultDigest(&r)
		digests[r.Key()] = d
		return err
	})
	if err != nil {
		return fmt.Errorf("store copy: %w", err)
	}
	if len(digests) == 0 {
		return nil
	}
	var differ []string
	n := 0
	err = c.from.Results(ctx, id, func(r record.Result) error {
		d, err := resultDigest(&r)
		if err != nil {
			return err
		}
		if t, ok := digests[r.Key()]; ok && t != d {
			n++
			if len(differ) < 3 {
				differ = append(differ, fmt.Sprintf("case %q, target %s, epoch %d", r.CaseID, shownTarget(r.Target), r.Epoch))
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store copy: %w", err)
	}
	if n > 0 {
		more := ""
		if n > len(differ) {
			more = fmt.Sprintf(" and %d more", n-len(differ))
		}
		return fmt.Errorf("store copy: run %s: %s differ from the destination's (%s%s); nothing of the run can be copied there", id, plural(n, "result"), strings.Join(differ, "; "), more)
	}
	return nil
}

// resultDigest is a hash of everything a result records.
func resultDigest(r *record.Result) ([sha256.Size]byte, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return [sha256.Size]byte{}, err
	}
	return sha256.Sum256(b), nil
}

// copyRun copies one planned run: what it has that the destination lacks.
func (c *storeCopier) copyRun(ctx context.Context, p copyPlan) (runCopy, error) {
	r := p.run
	rc := runCopy{ID: r.ID, Outcome: "already there"}
	if c.runs {
		if p.there == nil {
			// Interrupted until its last score is stored: a copy killed
			// halfway never leaves a run that looks complete.
			first := *r
			if first.Status == record.StatusComplete {
				first.Status = record.StatusInterrupted
			}
			if err := c.to.CreateRun(ctx, &first); err != nil {
				return rc, err
			}
		}
		if err := c.copyCases(ctx, p, &rc); err != nil {
			return rc, err
		}
		if err := c.copyResults(ctx, p, &rc); err != nil {
			return rc, err
		}
		if err := c.copyScorings(ctx, p, &rc); err != nil {
			return rc, err
		}
		if err := c.copyLoad(ctx, p, &rc); err != nil {
			return rc, err
		}
		// The source's status and end when the run is new here, or when
		// the source finished it and the destination had not.
		if p.there == nil || (r.Status == record.StatusComplete && p.there.Status != record.StatusComplete) {
			if err := c.to.UpdateRun(ctx, r); err != nil {
				return rc, err
			}
			if p.there != nil {
				rc.Outcome = "completed"
			}
		}
	}
	if c.labels {
		if err := c.copyLabels(ctx, p, &rc); err != nil {
			return rc, err
		}
	}
	switch {
	case p.there == nil && c.runs:
		rc.Outcome = "copied"
	case rc.copied():
		rc.Outcome = "completed"
	}
	return rc, nil
}

func (c *storeCopier) copyCases(ctx context.Context, p copyPlan, rc *runCopy) error {
	have := map[string]bool{}
	if p.there != nil {
		err := c.to.Cases(ctx, p.run.ID, func(cs record.Case) error {
			have[cs.ID] = true
			return nil
		})
		if err != nil {
			return err
		}
	}
	return pipe(ctx, func(ctx context.Context, emit func(record.Case) error) error {
		return c.from.Cases(ctx, p.run.ID, func(cs record.Case) error {
			if have[cs.ID] {
				rc.Cases.There++
				return nil
			}
			return emit(cs)
		})
	}, func(ctx context.Context, batch []record.Case) error {
		if err := c.to.PutCases(ctx, batch); err != nil {
			return err
		}
		rc.Cases.Copied += len(batch)
		return nil
	})
}

func (c *storeCopier) copyResults(ctx context.Context, p copyPlan, rc *runCopy) error {
	done := map[record.Key]struct{}{}
	if p.there != nil {
		var err error
		if done, err = c.to.DoneKeys(ctx, p.run.ID); err != nil {
			return err
		}
	}
	return pipe(ctx, func(ctx context.Context, emit func(record.Result) error) error {
		return c.from.Results(ctx, p.run.ID, func(r record.Result) error {
			if _, ok := done[r.Key()]; ok {
				rc.Results.There++
				return nil
			}
			return emit(r)
		})
	}, func(ctx context.Context, batch []record.Result) error {
		if err := c.to.PutResults(ctx, batch, nil); err != nil {
			return err
		}
		before := rc.Results.Copied
		rc.Results.Copied += len(batch)
		if rc.Results.Copied/progressEvery > before/progressEvery {
			fmt.Fprintf(c.g.Stderr, "run %s: %d results copied…\n", p.run.ID, rc.Results.Copied)
		}
		return nil
	})
}

// scoreKey is a score's identity within a scoring.
type scoreKey struct {
	record.Key
	scorer string
}

// copyScorings copies each scoring: a reserved one's row first, as pending
// (so a reader never takes a half-copied scoring for the latest), then its
// scores, then its completion.
func (c *storeCopier) copyScorings(ctx context.Context, p copyPlan, rc *runCopy) error {
	id := p.run.ID
	for _, s := range p.scorings {
		t, there := p.thereScorings[s.Scoring]
		if s.Recorded {
			if there && t.Recorded {
				rc.Scorings.There++
			} else {
				row := s
				row.Pending = true
				if _, err := c.to.PutScoring(ctx, id, row); err != nil {
					return err
				}
				rc.Scorings.Copied++
				t = row
			}
		}
		have := map[scoreKey]bool{}
		if there && t.Scores > 0 {
			err := c.to.Scores(ctx, id, s.Scoring, func(sc record.Score) error {
				have[scoreKey{record.Key{CaseID: sc.CaseID, Target: sc.Target, Epoch: sc.Epoch}, sc.Scorer}] = true
				return nil
			})
			if err != nil {
				return err
			}
		}
		err := pipe(ctx, func(ctx context.Context, emit func(record.Score) error) error {
			return c.from.Scores(ctx, id, s.Scoring, func(sc record.Score) error {
				if have[scoreKey{record.Key{CaseID: sc.CaseID, Target: sc.Target, Epoch: sc.Epoch}, sc.Scorer}] {
					rc.Scores.There++
					return nil
				}
				return emit(sc)
			})
		}, func(ctx context.Context, batch []record.Score) error {
			if err := c.to.PutScores(ctx, batch); err != nil {
				return err
			}
			rc.Scores.Copied += len(batch)
			return nil
		})
		if err != nil {
			return err
		}
		if s.Recorded && !s.Pending && t.Pending {
			if err := c.to.CompleteScoring(ctx, id, s.Scoring); err != nil {
				return err
			}
		}
	}
	return nil
}

// copyLoad copies a load test's steps (a step that differs is the
// source's, which recorded it later or as far) and requests.
func (c *storeCopier) copyLoad(ctx context.Context, p copyPlan, rc *runCopy) error {
	id := p.run.ID
	type stepKey struct {
		target string
		step   int
	}
	type reqKey struct {
		target    string
		step, seq int
	}
	steps := map[stepKey]record.LoadStep{}
	reqs := map[reqKey]bool{}
	if p.there != nil {
		err := c.to.LoadSteps(ctx, id, func(s record.LoadStep) error {
			steps[stepKey{s.Target, s.Step}] = s
			return nil
		})
		if err == nil {
			err = c.to.LoadRequests(ctx, id, func(r record.LoadRequest) error {
				reqs[reqKey{r.Target, r.Step, r.Seq}] = true
				return nil
			})
		}
		if err != nil {
			return err
		}
	}
	var put []record.LoadStep
	err := c.from.LoadSteps(ctx, id, func(s record.LoadStep) error {
		if t, ok := steps[stepKey{s.Target, s.Step}]; ok && t == s {
			rc.Steps.There++
			return nil
		}
		put = append(put, s)
		return nil
	})
	if err != nil {
		return err
	}
	if len(put) > 0 {
		if err := c.to.PutLoadSteps(ctx, put); err != nil {
			return err
		}
		rc.Steps.Copied += len(put)
	}
	return pipe(ctx, func(ctx context.Context, emit func(record.LoadRequest) error) error {
		return c.from.LoadRequests(ctx, id, func(r record.LoadRequest) error {
			if reqs[reqKey{r.Target, r.Step, r.Seq}] {
				rc.Requests.There++
				return nil
			}
			return emit(r)
		})
	}, func(ctx context.Context, batch []record.LoadRequest) error {
		if err := c.to.PutLoadRequests(ctx, batch); err != nil {
			return err
		}
		rc.Requests.Copied += len(batch)
		return nil
	})
}

// labelKey is a label's identity (store.Labels' PutLabels key).
type labelKey struct {
	record.Key
	queue, labeler string
}

// copyLabels copies a run's queues (a queue of a name the destination
// has is left as it is) and its labels (one the destination has is
// replaced only by a newer one).
func (c *storeCopier) copyLabels(ctx context.Context, p copyPlan, rc *runCopy) error {
	id := p.run.ID
	queues, err := c.from.Queues(ctx, id)
	if err != nil {
		return err
	}
	for _, qp := range queues {
		q, err := c.from.Queue(ctx, id, qp.Name)
		if err != nil {
			return err
		}
		switch err := c.to.CreateQueue(ctx, q); {
		case errors.Is(err, store.ErrQueueExists):
			rc.Queues.There++
		case err != nil:
			return err
		default:
			rc.Queues.Copied++
		}
	}
	have := map[labelKey]time.Time{}
	if p.there != nil {
		err := c.to.Labels(ctx, id, func(l record.Label) error {
			have[labelKey{l.Key(), l.Queue, l.Labeler}] = l.Created
			return nil
		})
		if err != nil {
			return err
		}
	}
	var put []record.Label
	err = c.from.Labels(ctx, id, func(l record.Label) error {
		if t, ok := have[labelKey{l.Key(), l.Queue, l.Labeler}]; ok && !l.Created.After(t) {
			rc.Labels.There++
			return nil
		}
		put = append(put, l)
		return nil
	})
	if err != nil {
		return err
	}
	for chunk := range slices.Chunk(put, copyBatch) {
		if _, err := c.to.PutLabels(ctx, chunk); err != nil {
			return err
		}
	}
	rc.Labels.Copied += len(put)
	return nil
}

func (c *storeCopier) copyTraces(ctx context.Context, sum *storeCopySummary) error {
	err := pipe(ctx, func(ctx context.Context, emit func(record.Trace) error) error {
		return c.from.Traces(ctx, store.TraceFilter{}, func(t *record.Trace) error { return emit(*t) })
	}, func(ctx context.Context, batch []record.Trace) error {
		n, err := c.to.PutTraces(ctx, batch)
		if err != nil {
			return err
		}
		sum.Traces.add(n, len(batch)-n)
		return nil
	})
	if err != nil {
		return err
	}
	samples, err := c.from.Samples(ctx)
	if err != nil {
		return err
	}
	for _, s := range samples {
		sm, err := c.from.Sample(ctx, s.ID)
		if err != nil {
			return err
		}
		switch err := c.to.PutSample(ctx, sm); {
		case errors.Is(err, store.ErrSampleExists):
			sum.Samples.There++
		case err != nil:
			return err
		default:
			sum.Samples.Copied++
		}
	}
	if sum.Traces.Copied+sum.Traces.There+sum.Samples.Copied+sum.Samples.There > 0 {
		fmt.Fprintf(c.g.Stderr, "traces: %d copied, %d already there; samples: %d copied, %d already there\n",
			sum.Traces.Copied, sum.Traces.There, sum.Samples.Copied, sum.Samples.There)
	}
	return nil
}

func (c *storeCopier) copyCache(ctx context.Context, sum *storeCopySummary) error {
	err := pipe(ctx, func(ctx context.Context, emit func(store.CacheEntry) error) error {
		return c.from.CacheEntries(ctx, emit)
	}, func(ctx context.Context, batch []store.CacheEntry) error {
		n, err := c.to.PutCacheEntries(ctx, batch)
		if err != nil {
			return err
		}
		sum.Cache.add(n, len(batch)-n)
		return nil
	})
	if err != nil {
		return err
	}
	if sum.Cache.Copied+sum.Cache.There > 0 {
		fmt.Fprintf(c.g.Stderr, "cache: %s copied, %d already there\n", entries(int64(sum.Cache.Copied)), sum.Cache.There)
	}
	return nil
}

func (c *storeCopier) copyTwins(ctx context.Context, sum *storeCopySummary) error {
	sets, err := c.from.TwinSets(ctx)
	if err != nil {
		return err
	}
	for _, set := range sets {
		have := map[string]bool{}
		err := c.to.Twins(ctx, set, func(t record.Twin) error {
			have[t.CaseID] = true
			return nil
		})
		if err != nil {
			return err
		}
		var put []record.Twin
		err = c.from.Twins(ctx, set, func(t record.Twin) error {
			if have[t.CaseID] {
				sum.Twins.There++
				return nil
			}
			put = append(put, t)
			return nil
		})
		if err != nil {
			return err
		}
		for chunk := range slices.Chunk(put, copyBatch) {
			if err := c.to.PutTwins(ctx, chunk); err != nil {
				return err
			}
		}
		sum.Twins.Copied += len(put)
	}
	return nil
}

// pipe copies a stream in batches of copyBatch: read calls emit with each
// record (inside the source's stream), and put writes each batch to the
// destination from a goroutine of its own, so reading one store and
// writing the other overlap (one batch read ahead). It stops at the first
// error of either side.
func pipe[T any](ctx context.Context, read func(ctx context.Context, emit func(T) error) error, put func(ctx context.Context, batch []T) error) error {
	g, gctx := errgroup.WithContext(ctx)
	batches := make(chan []T, 1)
	g.Go(func() error {
		for b := range batches {
			if err := put(gctx, b); err != nil {
				return err
			}
		}
		return nil
	})
	g.Go(func() error {
		defer close(batches)
		var batch []T
		send := func() error {
			select {
			case batches <- batch:
				batch = make([]T, 0, copyBatch)
				return nil
			case <-gctx.Done():
				return gctx.Err()
			}
		}
		err := read(gctx, func(v T) error {
			batch = append(batch, v)
			if len(batch) == copyBatch {
				return send()
			}
			return nil
		})
		if err == nil && len(batch) > 0 {
			err = send()
		}
		return err
	})
	return g.Wait()
}

// progress prints one run's line on stderr.
func (c *storeCopier) progress(rc runCopy) {
	if rc.Outcome == "already there" {
		fmt.Fprintf(c.g.Stderr, "run %s: already there\n", rc.ID)
		return
	}
	fmt.Fprintf(c.g.Stderr, "run %s: %s (%s, %s, %s", rc.ID, rc.Outcome,
		plural(rc.Results.Copied, "result"), plural(rc.Scores.Copied, "score"), plural(rc.Labels.Copied, "label"))
	if rc.Results.There+rc.Scores.There+rc.Labels.There > 0 {
		fmt.Fprintf(c.g.Stderr, "; %d results, %d scores and %d labels already there", rc.Results.There, rc.Scores.There, rc.Labels.There)
	}
	fmt.Fprintln(c.g.Stderr, ")")
}

func (s *storeCopySummary) addRun(rc runCopy) {
	switch rc.Outcome {
	case "copied":
		s.Runs.Copied++
	case "completed":
		s.Runs.Completed++
	default:
		s.Runs.There++
	}
	s.Cases.add(rc.Cases.Copied, rc.Cases.There)
	s.Results.add(rc.Results.Copied, rc.Results.There)
	s.Scorings.add(rc.Scorings.Copied, rc.Scorings.There)
	s.Scores.add(rc.Scores.Copied, rc.Scores.There)
	s.LoadSteps.add(rc.Steps.Copied, rc.Steps.There)
	s.LoadRequests.add(rc.Requests.Copied, rc.Requests.There)
	s.Queues.add(rc.Queues.Copied, rc.Queues.There)
	s.Labels.add(rc.Labels.Copied, rc.Labels.There)
	s.RunList = append(s.RunList, rc)
}

// write prints the summary as a table of what was copied and what was
// already there.
func (s *storeCopySummary) write(w io.Writer) error {
	fmt.Fprintf(w, "copied from %s to %s (%s)\n", s.From, s.To, strings.Join(s.What, ", "))
	rows := []struct {
		name string
		c    copyCount
	}{
		{"runs", copyCount{s.Runs.Copied, s.Runs.There}},
		{"cases", s.Cases}, {"results", s.Results}, {"rescorings", s.Scorings}, {"scores", s.Scores},
		{"load steps", s.LoadSteps}, {"load requests", s.LoadRequests},
		{"label queues", s.Queues}, {"labels", s.Labels},
		{"traces", s.Traces}, {"samples", s.Samples}, {"cache entries", s.Cache}, {"twins", s.Twins},
	}
	fmt.Fprintf(w, "%-14s %8s %14s\n", "", "copied", "already there")
	for _, r := range rows {
		fmt.Fprintf(w, "%-14s %8d %14d\n", r.name, r.c.Copied, r.c.There)
		if r.name == "runs" && s.Runs.Completed > 0 {
			fmt.Fprintf(w, "%-14s %8d\n", "runs completed", s.Runs.Completed)
		}
	}
	return nil
}
