package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/assay-eval/assay/internal/engine"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store"
)

type runsOptions struct {
	JSON  bool
	Limit int
}

func newRunsCommand(g *Globals) *cobra.Command {
	o := &runsOptions{}
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "List the stored runs, newest first (runs rm deletes runs)",
		Long: `List the runs in the store, newest first: ID, kind (eval, or load for a
load test of assay load), spec, targets, status, cases, epochs, when it was
created and how many scorings it has (1 plus each rescore). A running run
shows its progress: results stored of those expected (running 120/400), as
the process or the workers (run --distributed) store them; "(writer gone)"
marks one no live process holds any more (killed, or its machine lost), which
only assay run SPEC --resume ID finishes (--json: writer_gone). A run of
assay score-traces shows the sample it scored after its spec. --json prints
them as a JSON array.

` + exitCodesHelp,
		Args: exactArgs(0),
		PreRunE: func(cmd *cobra.Command, args []string) error {
			if o.Limit < 0 {
				return usageError{fmt.Errorf("--limit must not be negative (got %d; 0 lists every run)", o.Limit)}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRuns(cmd.Context(), g, o)
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the runs as a JSON array")
	cmd.Flags().IntVar(&o.Limit, "limit", 20, "list at most N runs (0: all)")
	cmd.AddCommand(newRunsRmCommand(g))
	return cmd
}

// runListing is one run as `assay runs` shows it.
type runListing struct {
	ID         string    `json:"id"`
	Kind       string    `json:"kind"` // eval, or load (assay load)
	Spec       string    `json:"spec"`
	SpecPath   string    `json:"spec_path"`
	Experiment string    `json:"experiment,omitempty"`
	Sample     string    `json:"sample,omitempty"` // the trace sample a score-traces run scored
	Targets    []string  `json:"targets"`
	Status     string    `json:"status"`
	Cases      int       `json:"cases"`
	Epochs     int       `json:"epochs"`
	Created    time.Time `json:"created"`
	Ended      time.Time `json:"ended,omitzero"`
	// Scorings is the latest complete scoring: 1 for a run never
	// rescored, 0 for one with no scores yet.
	Scorings int `json:"scorings"`
	// Stored and Expected are the results a running run holds so far and
	// should hold (cases × targets × epochs): its progress, whichever
	// process or workers make its calls. Absent for other statuses.
	Stored   *int `json:"stored,omitempty"`
	Expected int  `json:"expected,omitempty"`
	// WriterGone marks a running evaluation no live process holds (its
	// lease lapsed, or its process on this host is dead): it was killed
	// or its machine lost, and only a resume finishes it.
	WriterGone bool `json:"writer_gone,omitempty"`
}

func runRuns(ctx context.Context, g *Globals, o *runsOptions) error {
	st, err := openExistingStore(ctx, g)
	if err != nil {
		return fmt.Errorf("runs: %w", err)
	}
	defer st.Close()
	limit := o.Limit
	if limit > 0 {
		limit++ // one more tells whether there are more
	}
	runs, err := st.ListRuns(ctx, limit)
	if err != nil {
		return err
	}
	more := o.Limit > 0 && len(runs) > o.Limit
	if more {
		runs = runs[:o.Limit]
	}
	list := make([]runListing, 0, len(runs))
	for _, r := range runs {
		n, err := st.LatestScoring(ctx, r.ID)
		if err != nil {
			return err
		}
		kind := r.Kind
		if kind == record.KindEval {
			kind = "eval"
		}
		l := runListing{ID: r.ID, Kind: kind, Spec: r.Spec, SpecPath: r.SpecPath, Experiment: r.Experiment,
			Sample: r.Sample, Targets: r.Targets, Status: r.Status, Cases: r.Cases, Epochs: r.Epochs,
			Created: r.Started.UTC(), Ended: r.Ended.UTC(), Scorings: n}
		if r.Status == record.StatusRunning && r.Kind == record.KindEval {
			done, err := st.DoneKeys(ctx, r.ID)
			if err != nil {
				return err
			}
			stored := len(done)
			l.Stored, l.Expected = &stored, r.Cases*len(r.Targets)*max(1, r.Epochs)
			lease, live, err := engine.Writer(ctx, st, r.ID, g.Now())
			if err != nil {
				return err
			}
			// A run is recorded a moment before its lease is taken.
			l.WriterGone = !live && (lease != nil || g.Now().Sub(r.Started) > engine.LeaseTTL)
		}
		list = append(list, l)
	}
	if more {
		defer fmt.Fprintf(g.Stderr, "showing the newest %d runs; --limit 0 lists them all\n", o.Limit)
	}
	if o.JSON {
		return writeJSONOut(g.Stdout, list)
	}
	if len(list) == 0 {
		fmt.Fprintln(g.Stderr, "no runs yet: assay run SPEC makes one")
		return nil
	}
	tw := tabwriter.NewWriter(g.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tKIND\tSPEC\tTARGETS\tSTATUS\tCASES\tEPOCHS\tCREATED\tSCORINGS")
	var gone []string // hints for runs no live process holds
	for _, r := range list {
		spec := termSafe(r.Spec)
		if r.Sample != "" {
			spec += " (sample " + termSafe(r.Sample) + ")"
		}
		status := r.Status
		if r.Stored != nil {
			status = fmt.Sprintf("%s %d/%d", r.Status, *r.Stored, r.Expected)
		}
		if r.WriterGone {
			status += " (writer gone)"
			specPath := r.SpecPath
			if specPath == "" {
				specPath = "SPEC"
			}
			gone = append(gone, fmt.Sprintf("run %s: no live process holds it (killed, or its machine lost): finish it with assay run %s --resume %s", termSafe(r.ID), termSafe(specPath), termSafe(r.ID)))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s\t%d\n", termSafe(r.ID), r.Kind, spec, termSafe(strings.Join(r.Targets, ",")),
			status, r.Cases, r.Epochs, r.Created.Format("2006-01-02 15:04:05Z"), r.Scorings)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, h := range gone {
		fmt.Fprintln(g.Stderr, h)
	}
	return nil
}

type runsRmOptions struct {
	IDs   []string
	Force bool
	JSON  bool
}

// runRemoved is one deleted run as `assay runs rm --format json` prints it.
type runRemoved struct {
	ID     string `json:"id"`
	Spec   string `json:"spec"`
	Status string `json:"status"`
	store.Deleted
}

func newRunsRmCommand(g *Globals) *cobra.Command {
	o := &runsRmOptions{}
	cmd := &cobra.Command{
		Use:   "rm RUN...",
		Short: "Delete runs with their cases, results, scores, scorings and labels",
		Long: `Delete runs from the store with everything recorded under them: cases,
results, scores, scorings, the run's lease, and its labeling queues and
labels (assay labels export keeps labels first). The response cache is shared
by every run and is left as it is, so running the spec again is served from
it. Each RUN is a run ID or a unique prefix of one ("latest" is not taken
here). Every RUN is checked before anything is deleted: an unknown ID, or a
run that a live process is writing (a run or rescore in progress), deletes
nothing; --force deletes a run whose writer is still alive. Nothing is
asked; what was deleted is printed.

` + exitCodesHelp,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageError{errors.New("give the ID of at least one run to delete (assay runs lists them)")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.IDs = args
			return runRunsRm(cmd.Context(), g, o)
		},
	}
	cmd.Flags().BoolVar(&o.Force, "force", false, "delete a run even while a live process holds its lease (that process then fails)")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print what was deleted as a JSON array")
	return cmd
}

// readOnlyStore is implemented by a store that can say it was opened
// read-only.
type readOnlyStore interface{ ReadOnly() bool }

func runRunsRm(ctx context.Context, g *Globals, o *runsRmOptions) error {
	st, err := openExistingStore(ctx, g)
	if err != nil {
		return fmt.Errorf("runs rm: %w", err)
	}
	defer st.Close()
	if ro, ok := st.(readOnlyStore); ok && ro.ReadOnly() {
		return fmt.Errorf("runs rm: the store %s is read-only (a read-only mount, a CI cache, or a file this user may not write): nothing was deleted", storeName(g.DB))
	}
	// Every run is resolved and checked before anything is deleted.
	var runs []*record.Run
	var problems []string
	for _, id := range o.IDs {
		if id == "latest" {
			problems = append(problems, `"latest" is not taken by runs rm: give the run's ID (assay runs lists them)`)
			continue
		}
		run, err := st.GetRun(ctx, id)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		if slices.ContainsFunc(runs, func(r *record.Run) bool { return r.ID == run.ID }) {
			continue
		}
		if !o.Force {
			if err := newEngine(g, st).RequireNoWriter(ctx, "run "+run.ID, run); err != nil {
				problems = append(problems, err.Error()+", or pass --force")
				continue
			}
		}
		runs = append(runs, run)
	}
	if len(problems) > 0 {
		return fmt.Errorf("runs rm: nothing was deleted:\n  %s", strings.Join(problems, "\n  "))
	}
	removed := []runRemoved{}
	for _, run := range runs {
		del, err := st.DeleteRun(ctx, run.ID)
		if err != nil {
			return fmt.Errorf("runs rm: %w", err)
		}
		if o.JSON {
			removed = append(removed, runRemoved{ID: run.ID, Spec: run.Spec, Status: run.Status, Deleted: del})
			continue
		}
		lease := ""
		if del.Lease {
			lease = " and its lease"
		}
		scorings := "scorings"
		if del.Scorings == 1 {
			scorings = "scoring"
		}
		if del.Labels > 0 || del.Queues > 0 {
			lease += fmt.Sprintf(", %s and %s", plural(del.Labels, "label"), plural(del.Queues, "labeling queue"))
		}
		fmt.Fprintf(g.Stdout, "removed run %s (%s, %s): %d cases, %d results, %d scores in %d %s%s\n",
			run.ID, termSafe(run.Spec), run.Status, del.Cases, del.Results, del.Scores, del.Scorings, scorings, lease)
	}
	fmt.Fprintln(g.Stderr, "the response cache is kept: assay cache clear empties it")
	if o.JSON {
		return writeJSONOut(g.Stdout, removed)
	}
	return nil
}

// termSafe is s as a terminal shows it: s itself when every rune is
// printable, else Go-quoted so no control or bidirectional character
// reaches the terminal.
func termSafe(s string) string {
	for _, r := range s {
		if !unicode.IsPrint(r) || r == unicode.ReplacementChar {
			q := strconv.QuoteToASCII(s)
			return q[1 : len(q)-1]
		}
	}
	return s
}
