package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/assay-eval/assay/internal/calibrate"
	"github.com/assay-eval/assay/internal/labels"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/report"
)

type calibrateOptions struct {
	Run    string
	Judge  string
	Labels string // a JSONL labels file; "" reads the run's labels from the store
	Queue  string // only the labels given in this labeling queue ("" all)
	Format string
	Output string
}

func (o *calibrateOptions) AddFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.Judge, "judge", "", "the scorer to calibrate: its name in the run's spec (required)")
	f.StringVar(&o.Labels, "labels", "", "read the labels from this JSONL file (assay labels export) instead of the store")
	f.StringVar(&o.Queue, "queue", "", "only the labels given in this labeling queue (default: every label)")
	f.StringVar(&o.Format, "format", "text", "output format: "+strings.Join(report.NewRegistry().Calibrate.Names(), "|"))
	f.StringVarP(&o.Output, "output", "o", "", "write the report to FILE, whole or not at all")
}

func newCalibrateCommand(g *Globals) *cobra.Command {
	o := &calibrateOptions{}
	cmd := &cobra.Command{
		Use:   "calibrate RUN --judge SCORER",
		Short: "Hold a judge scorer up against people's labels (never calls a model)",
		Long: `Compare a judge scorer's verdicts on a run's outputs with the labels people
gave them (assay serve's labeling queues, or assay labels import; --labels
reads a JSONL file instead of the store). The label is the truth.

It reports the confusion matrix, per class precision, recall and F1, the
judge's TPR (the share of people's passes it passes) and TNR (the share of
people's fails it fails), Cohen's κ with its interval, the judge's raw pass
rate over every output of the run it judged, that rate corrected for the
judge's measured error (Rogan–Gladen) with an interval that carries both the
labels' and the judged sample's uncertainty, and how many more labels of
each class would narrow that interval to the spec's calibration.width.

The verdict:
  fit      κ, TNR and TPR meet the spec's calibration: thresholds
           (defaults 0.6, 80%, 80%) and the raw rate lies inside the
           corrected rate's interval
  biased   fit, but the raw rate lies outside that interval: use the
           corrected rate
  not fit  κ, TNR or TPR below its threshold, or Youden's J = TPR + TNR − 1
           not above 0 (a judge that passes everything is never fit, however
           often it agrees with people)

One label counts per output: the most recent pass or fail; skips, labels of
an output since replaced, and labels of outputs the judge gave no verdict
are counted and left out. A label given in a labeling queue (from the store
or the file) weighs its queue item's inverse selection probability, read
from the store: a queue stratified by the judge's verdict over-draws the
rare verdict, and unweighted its labels would bias TPR, TNR and the
corrected rate. The report then shows the label counts and the weighted
cells side by side. docs/calibration.md explains every number.

Exit codes: 0 fit or biased, 3 not fit, 1 error, 2 usage error (an unknown
scorer is one: the message names the run's scorers).`,
		Example: `  assay calibrate latest --judge helpful
  assay calibrate latest --judge helpful --queue first
  assay calibrate 20261202-1135 --judge helpful --labels labels.jsonl --format markdown -o calibration.md`,
		Args: exactArgs(1),
		PreRunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(o.Format, report.NewRegistry().Calibrate.Names()); err != nil {
				return err
			}
			if o.Judge == "" {
				return usageError{errors.New("--judge is required: the name of the scorer to calibrate")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Run = args[0]
			return runCalibrate(cmd.Context(), g, o)
		},
	}
	o.AddFlags(cmd)
	return cmd
}

func runCalibrate(ctx context.Context, g *Globals, o *calibrateOptions) error {
	st, run, err := openRun(ctx, g, "calibrate", o.Run)
	if err != nil {
		return err
	}
	defer st.Close()
	var ls []record.Label
	if o.Labels != "" {
		f, err := os.Open(o.Labels)
		if err != nil {
			return fmt.Errorf("calibrate: %w", err)
		}
		err = labels.Read(f, o.Labels, func(l record.Label) error {
			ls = append(ls, l)
			return nil
		})
		f.Close()
		if err != nil {
			return fmt.Errorf("calibrate: %w", err)
		}
	} else {
		err := st.Labels(ctx, run.ID, func(l record.Label) error {
			ls = append(ls, l)
			return nil
		})
		if err != nil {
			return fmt.Errorf("calibrate: reading the run's labels: %w", err)
		}
	}
	if o.Queue != "" {
		var in []record.Label
		seen := map[string]bool{}
		for _, l := range ls {
			seen[l.Queue] = true
			if l.Queue == o.Queue {
				in = append(in, l)
			}
		}
		if len(in) == 0 {
			var names []string
			for q := range seen {
				if q != "" {
					names = append(names, q)
				}
			}
			slices.Sort(names)
			valid := "none of the labels was given in a queue"
			if len(names) > 0 {
				valid = "the labels' queues are " + strings.Join(names, ", ")
			}
			return usageError{fmt.Errorf("calibrate: --queue %s: no label of run %s was given in that queue (%s)", o.Queue, run.ID, valid)}
		}
		ls = in
	}
	th, err := calibrate.ThresholdsOf(run)
	if err != nil {
		return fmt.Errorf("calibrate: %w", err)
	}
	// Labels given in a queue weigh its items' inverse selection
	// probabilities, read from the store (a file's labels too).
	queues, err := calibrate.ReadQueues(ctx, st, run.ID, ls, record.ErrNotFound)
	if err != nil {
		return fmt.Errorf("calibrate: %w", err)
	}
	rep, err := calibrate.Calibrate(ctx, st, run, o.Judge, ls, th, queues)
	var uj *calibrate.UnknownJudgeError
	switch {
	case errors.As(err, &uj):
		return usageError{fmt.Errorf("calibrate: --judge: %w", err)}
	case err != nil:
		return fmt.Errorf("calibrate: run %s: %w", run.ID, err)
	}
	r, err := report.NewRegistry().Calibrate.Reporter(o.Format, rep)
	if err != nil {
		return usageError{err}
	}
	if err := printOut(g.Stdout, o.Output, r); err != nil {
		return err
	}
	if rep.Verdict == calibrate.NotFit {
		return &ExitError{Code: ExitFailed, Err: fmt.Errorf("calibrate: judge %s is not fit: %s", o.Judge, strings.Join(rep.Reasons, "; "))}
	}
	return nil
}
