package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/assay-eval/assay/internal/labels"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store"
)

func newLabelsCommand(g *Globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "labels",
		Short: "Export, import and sample people's labels of a run's outputs",
		Long: `People label a run's outputs pass, fail (with a reason) or skip, blind, in
labeling queues (assay serve). Labels are kept in the store; as JSONL they
survive a new store and can be committed beside the spec.

  assay labels export [RUN | --all] [-o FILE]   labels as JSONL, one per line
  assay labels import FILE...                   labels from JSONL files (all or nothing)
  assay labels queue RUN --name N --size K      sample a labeling queue from a run
  assay labels queues [RUN]                     every queue with its progress

The JSONL format and a worked example: docs/labels.md.

` + exitCodesHelp,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			return usageError{errors.New("labels needs a subcommand: assay labels export | import | queue | queues")}
		},
	}
	cmd.AddCommand(newLabelsExportCommand(g), newLabelsImportCommand(g), newLabelsQueueCommand(g), newLabelsQueuesCommand(g))
	return cmd
}

type labelsExportOptions struct {
	Run    string
	All    bool
	Output string
}

func newLabelsExportCommand(g *Globals) *cobra.Command {
	o := &labelsExportOptions{}
	cmd := &cobra.Command{
		Use:   "export [RUN | --all]",
		Short: "Write a run's labels (or every run's) as JSONL",
		Long: `Write the labels of RUN (an ID, a unique prefix, or latest), or of every run
with --all, as JSONL: one label per line, ordered by run, time, queue,
case, target, epoch and labeler, so exporting twice writes the same bytes.
-o writes a file, whole or not at all.

` + exitCodesHelp,
		Args: rangeArgs(0, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case len(args) == 1 && o.All:
				return usageError{errors.New("give a RUN or --all, not both")}
			case len(args) == 0 && !o.All:
				return usageError{errors.New("give the RUN whose labels to export, or --all for every run's")}
			case len(args) == 1:
				o.Run = args[0]
			}
			return runLabelsExport(cmd.Context(), g, o)
		},
	}
	cmd.Flags().BoolVar(&o.All, "all", false, "export the labels of every run")
	cmd.Flags().StringVarP(&o.Output, "output", "o", "", "write to this file instead of stdout")
	return cmd
}

func runLabelsExport(ctx context.Context, g *Globals, o *labelsExportOptions) error {
	st, err := openExistingStore(ctx, g)
	if err != nil {
		return fmt.Errorf("labels export: %w", err)
	}
	defer st.Close()
	runID := ""
	if !o.All {
		run, err := st.GetRun(ctx, o.Run)
		if err != nil {
			return fmt.Errorf("labels export: %w", err)
		}
		runID = run.ID
	}
	var ls []record.Label
	if err := st.Labels(ctx, runID, func(l record.Label) error {
		ls = append(ls, l)
		return nil
	}); err != nil {
		return fmt.Errorf("labels export: %w", err)
	}
	if err := printOut(g.Stdout, o.Output, func(w io.Writer) error { return labels.Write(w, ls) }); err != nil {
		return fmt.Errorf("labels export: %w", err)
	}
	if o.Output != "" {
		fmt.Fprintf(g.Stderr, "wrote %s to %s\n", plural(len(ls), "label"), o.Output)
	}
	return nil
}

// labelsImported is what labels import --format json prints.
type labelsImported struct {
	Labels int `json:"labels"` // read from the files
	Stored int `json:"stored"` // new or changed
	Same   int `json:"same"`   // already stored as they are
	Stale  int `json:"stale"`  // of an output since replaced (stored)
}

func newLabelsImportCommand(g *Globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "import FILE...",
		Short: "Store labels from JSONL files, all or nothing",
		Long: `Store the labels in JSONL files (as labels export writes them). Every label
is checked before anything is stored: its fields (FILE:LINE:COL), and that
its run is in the store and has a result for its case, target and epoch
(FILE:LINE). One problem stores nothing. A label with the run, case,
target, epoch, queue and labeler of a stored one replaces it, so importing
a file twice stores nothing the second time. A label whose output_hash no
longer matches the stored output (the result was retried since) is stored
and reported; calibration leaves it out.

` + exitCodesHelp,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageError{fmt.Errorf("give at least one JSONL file of labels (usage: %s)", cmd.UseLine())}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runLabelsImport(cmd.Context(), g, args, asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the counts as JSON")
	return cmd
}

// maxImportProblems bounds the problems labels import lists.
const maxImportProblems = 50

func runLabelsImport(ctx context.Context, g *Globals, files []string, asJSON bool) error {
	st, err := openExistingStore(ctx, g)
	if err != nil {
		return fmt.Errorf("labels import: %w", err)
	}
	defer st.Close()
	if ro, ok := st.(readOnlyStore); ok && ro.ReadOnly() {
		return fmt.Errorf("labels import: the store %s is read-only (a read-only mount, a CI cache, or a file this user may not write): nothing was stored", storeName(g.DB))
	}
	var (
		all      []record.Label
		problems []string
		stale    int
		runs     = map[string]bool{} // run ID → in the store
	)
	for _, file := range files {
		f, err := os.Open(file)
		if err != nil {
			return fmt.Errorf("labels import: %w", err)
		}
		err = labels.ReadLines(f, file, func(line int, l record.Label) error {
			msg, isStale, err := checkLabelInStore(ctx, st, storeName(g.DB), runs, &l)
			if err != nil {
				return err
			}
			if msg != "" {
				problems = append(problems, fmt.Sprintf("%s:%d: %s", file, line, msg))
				if len(problems) >= maxImportProblems {
					return errTooManyProblems
				}
				return nil
			}
			if isStale {
				stale++
			}
			all = append(all, l)
			return nil
		})
		f.Close()
		switch {
		case errors.Is(err, errTooManyProblems):
			problems = append(problems, fmt.Sprintf("stopped after %d problems", maxImportProblems))
		case err != nil:
			var le *labels.Error
			if !errors.As(err, &le) && !strings.HasPrefix(err.Error(), file+":") {
				return fmt.Errorf("labels import: %w", err)
			}
			problems = append(problems, strings.Split(err.Error(), "\n")...)
		}
		if len(problems) >= maxImportProblems {
			break
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("labels import: nothing was stored:\n  %s", strings.Join(problems, "\n  "))
	}
	n, err := st.PutLabels(ctx, all)
	if err != nil {
		return fmt.Errorf("labels import: nothing was stored: %w", err)
	}
	if stale > 0 {
		fmt.Fprintf(g.Stderr, "%s judged an output that has changed since (its output_hash is not the stored output's, which a retry replaced): kept, and left out of calibration\n", plural(stale, "label"))
	}
	if asJSON {
		return writeJSONOut(g.Stdout, labelsImported{Labels: len(all), Stored: n, Same: len(all) - n, Stale: stale})
	}
	fmt.Fprintf(g.Stdout, "imported %s: %d new or changed, %d already stored\n", plural(len(all), "label"), n, len(all)-n)
	return nil
}

var errTooManyProblems = errors.New("too many problems")

// checkLabelInStore says what is wrong with a label against the store: a
// run it does not have (runs caches the answer), or a result the run does
// not have. isStale reports a label of an output since replaced.
func checkLabelInStore(ctx context.Context, st store.Store, db string, runs map[string]bool, l *record.Label) (msg string, isStale bool, err error) {
	known, seen := runs[l.RunID]
	if !seen {
		run, err := st.GetRun(ctx, l.RunID)
		switch {
		case errors.Is(err, store.ErrNotFound):
		case err != nil:
			return "", false, err
		default:
			known = run.ID == l.RunID // a prefix of another run's ID is not its ID
		}
		runs[l.RunID] = known
	}
	if !known {
		return fmt.Sprintf("run %q is not in the store %s (labels are imported into the store that holds their run: --db)", termSafe(l.RunID), db), false, nil
	}
	res, err := st.Result(ctx, l.RunID, l.Key())
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Sprintf("run %s has no result for case %q, target %q, epoch %d", l.RunID, termSafe(l.CaseID), termSafe(l.Target), l.Epoch), false, nil
	}
	if err != nil {
		return "", false, err
	}
	return "", record.LabelOutputHash(res) != l.OutputHash, nil
}

type labelsQueueOptions struct {
	Run    string
	Name   string
	Size   int
	Seed   uint64
	Judge  string
	Slices []string
	JSON   bool
}

func newLabelsQueueCommand(g *Globals) *cobra.Command {
	o := &labelsQueueOptions{}
	cmd := &cobra.Command{
		Use:   "queue RUN --name NAME --size K [--seed S] [--judge SCORER] [--slice KEY]...",
		Short: "Sample a labeling queue from a run's outputs",
		Long: `Sample a labeling queue of K outputs from RUN (an ID, a unique prefix, or
latest) for people to label blind in assay serve. The outputs are
stratified by target, by the verdict of --judge (a scorer of the run's
latest scoring) and by each --slice (a tag of the run's cases): every
stratum with outputs gets one while K allows, the rest in proportion to
each stratum's size. Failed calls are left out (there is no output to
judge). The draw and the order are seeded: --seed (by default derived from
the name) makes the same queue again. K above the run's outputs takes them
all. The strata are printed with their sizes and weights.

` + exitCodesHelp,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Run = args[0]
			if strings.TrimSpace(o.Name) == "" {
				return usageError{errors.New("give the queue a --name")}
			}
			if o.Size < 1 {
				return usageError{fmt.Errorf("--size %d: give the number of outputs to label (at least 1; 30 to 50 calibrate a judge)", o.Size)}
			}
			if !cmd.Flags().Changed("seed") {
				h := fnv.New64a()
				h.Write([]byte(o.Name))
				o.Seed = h.Sum64()
			}
			return runLabelsQueue(cmd.Context(), g, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Name, "name", "", "the queue's name (unique within the run)")
	f.IntVar(&o.Size, "size", 0, "how many outputs to sample")
	f.Uint64Var(&o.Seed, "seed", 0, "seed of the draw and the order (default: derived from --name)")
	f.StringVar(&o.Judge, "judge", "", "stratify by this scorer's verdict (shown to the labeler only after labeling)")
	f.StringArrayVar(&o.Slices, "slice", nil, "stratify by this case tag (repeatable)")
	f.BoolVar(&o.JSON, "json", false, "print the queue's strata as JSON (never its items: they are for blind labeling)")
	return cmd
}

func runLabelsQueue(ctx context.Context, g *Globals, o *labelsQueueOptions) error {
	st, run, err := openRun(ctx, g, "labels queue", o.Run)
	if err != nil {
		return err
	}
	defer st.Close()
	if ro, ok := st.(readOnlyStore); ok && ro.ReadOnly() {
		return fmt.Errorf("labels queue: the store %s is read-only: no queue was created", storeName(g.DB))
	}
	q, err := labels.NewQueue(ctx, st, run, labels.QueueSpec{Name: o.Name, Size: o.Size, Seed: o.Seed, Judge: o.Judge, Slices: o.Slices}, g.Now())
	if err != nil {
		return fmt.Errorf("labels queue: %w", err)
	}
	if err := st.CreateQueue(ctx, q); errors.Is(err, store.ErrQueueExists) {
		return fmt.Errorf("labels queue: run %s already has a queue named %q; choose another --name (assay labels queues %s lists them)", run.ID, termSafe(o.Name), run.ID)
	} else if err != nil {
		return fmt.Errorf("labels queue: %w", err)
	}
	cells := strataOf(q)
	if o.JSON {
		return writeJSONOut(g.Stdout, queueCreated{RunID: q.RunID, Name: q.Name, Judge: q.Judge, Size: q.Size, Seed: q.Seed,
			Strata: q.Strata, Items: len(q.Items), Cells: cells})
	}
	fmt.Fprintf(g.Stdout, "created queue %q of run %s: %s (asked %d, seed %d), stratified by %s\n",
		termSafe(q.Name), run.ID, plural(len(q.Items), "output"), q.Size, q.Seed, strings.Join(q.Strata, ", "))
	width := len("stratum")
	for _, c := range cells {
		width = max(width, utf8.RuneCountInString(termSafe(c.Stratum)))
	}
	bw := bufio.NewWriter(g.Stdout)
	fmt.Fprintf(bw, "  %-*s  %7s  %5s  %6s\n", width, "stratum", "outputs", "drawn", "weight")
	for _, c := range cells {
		w := strconv.FormatFloat(math.Round(c.Weight*100)/100, 'f', -1, 64) // to 2 decimals, no exponent
		fmt.Fprintf(bw, "  %-*s  %7d  %5d  %6s\n", width, termSafe(c.Stratum), c.Outputs, c.Drawn, w)
	}
	return bw.Flush()
}

// queueCreated is what labels queue --format json prints: the queue
// without its items.
type queueCreated struct {
	RunID  string        `json:"run_id"`
	Name   string        `json:"name"`
	Judge  string        `json:"judge,omitempty"`
	Size   int           `json:"size"`
	Seed   uint64        `json:"seed"`
	Strata []string      `json:"strata"`
	Items  int           `json:"items"`
	Cells  []stratumCell `json:"cells"`
}

// stratumCell is one stratum of a queue: its outputs in the run, the items
// drawn from it and their weight (outputs / drawn).
type stratumCell struct {
	Stratum string  `json:"stratum"`
	Outputs int     `json:"outputs"`
	Drawn   int     `json:"drawn"`
	Weight  float64 `json:"weight"`
}

// strataOf counts a queue's items per stratum, sorted by stratum.
func strataOf(q *record.Queue) []stratumCell {
	by := map[string]*stratumCell{}
	for _, it := range q.Items {
		c := by[it.Stratum]
		if c == nil {
			c = &stratumCell{Stratum: it.Stratum, Weight: it.Weight}
			by[it.Stratum] = c
		}
		c.Drawn++
	}
	cells := make([]stratumCell, 0, len(by))
	for _, c := range by {
		c.Outputs = int(c.Weight*float64(c.Drawn) + 0.5)
		cells = append(cells, *c)
	}
	slices.SortFunc(cells, func(a, b stratumCell) int { return strings.Compare(a.Stratum, b.Stratum) })
	return cells
}

type labelsQueuesOptions struct {
	Run  string
	JSON bool
}

func newLabelsQueuesCommand(g *Globals) *cobra.Command {
	o := &labelsQueuesOptions{}
	cmd := &cobra.Command{
		Use:   "queues [RUN]",
		Short: "List labeling queues with their progress",
		Long: `List the labeling queues of RUN (an ID, a unique prefix, or latest), or of
every run, oldest first: items, items labeled, and the labels given in each
(pass, fail, skip).

` + exitCodesHelp,
		Args: rangeArgs(0, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.Run = args[0]
			}
			return runLabelsQueues(cmd.Context(), g, o)
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print JSON")
	return cmd
}

func runLabelsQueues(ctx context.Context, g *Globals, o *labelsQueuesOptions) error {
	st, err := openExistingStore(ctx, g)
	if err != nil {
		return fmt.Errorf("labels queues: %w", err)
	}
	defer st.Close()
	runID := ""
	if o.Run != "" {
		run, err := st.GetRun(ctx, o.Run)
		if err != nil {
			return fmt.Errorf("labels queues: %w", err)
		}
		runID = run.ID
	}
	qs, err := st.Queues(ctx, runID)
	if err != nil {
		return fmt.Errorf("labels queues: %w", err)
	}
	if o.JSON {
		if qs == nil {
			qs = []store.QueueProgress{}
		}
		return writeJSONOut(g.Stdout, qs)
	}
	if len(qs) == 0 {
		fmt.Fprintln(g.Stdout, "no labeling queues (assay labels queue RUN --name N --size K makes one)")
		return nil
	}
	tw := tabwriter.NewWriter(g.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tQUEUE\tJUDGE\tLABELED\tPASS\tFAIL\tSKIP")
	for _, q := range qs {
		judge := q.Judge
		if judge == "" {
			judge = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d/%d\t%d\t%d\t%d\n", q.RunID, termSafe(q.Name), termSafe(judge), q.Labeled, q.Items, q.Pass, q.Fail, q.Skip)
	}
	return tw.Flush()
}
