// Package calibrate holds a judge scorer up against people's labels: it
// joins the labels of a run's outputs with the judge's verdicts in the
// run's latest scoring and computes the confusion matrix, per-class rates,
// Cohen's κ, the judged pass rate corrected for the judge's measured error
// (Rogan–Gladen), a verdict (fit, biased, not fit) and how many more labels
// would settle the corrected rate. It computes only: report renders the
// Report. It reads runs through record.Reader and must not import the
// store, the runner or providers.
package calibrate

import (
	"context"
	"errors"
	"fmt"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/spec"
)

// Thresholds are what a judge is held to (the spec's calibration:
// section).
type Thresholds struct {
	MinKappa float64 `json:"min_kappa"` // default 0.6
	MinTNR   float64 `json:"min_tnr"`   // default 0.8 (a judge must catch failures)
	MinTPR   float64 `json:"min_tpr"`   // default 0.8
	// Width is the target width of the corrected pass rate's interval
	// (default 0.10).
	Width float64 `json:"width"`
	Level float64 `json:"level"` // confidence level, default 0.95
}

// DefaultThresholds are the thresholds of a spec without a calibration:
// section.
func DefaultThresholds() Thresholds { return thresholdsOf(spec.DefaultCalibration()) }

func thresholdsOf(c spec.Calibration) Thresholds {
	return Thresholds{MinKappa: c.MinKappa, MinTNR: c.MinTNR, MinTPR: c.MinTPR, Width: c.Width, Level: c.Level}
}

// ThresholdsOf reads the spec's calibration: section from a run's stored
// config (run.Config), defaults where unset. A run without a readable
// config gets the defaults.
func ThresholdsOf(run *record.Run) (Thresholds, error) {
	if run == nil {
		return Thresholds{}, errors.New("calibrate: no run")
	}
	c, _ := spec.ConfigCalibration(run.Config)
	return thresholdsOf(c), nil
}

// Verdicts of a judge.
const (
	// Fit: the judge agrees with people well enough and its corrected
	// pass rate does not differ from its raw one.
	Fit = "fit"
	// Biased: the judge is fit to use, but its raw pass rate lies outside
	// the interval of the corrected one: read the corrected rate.
	Biased = "biased"
	// NotFit: κ, TNR or TPR below the thresholds, or the judge cannot tell
	// a pass from a fail (Youden's J ≤ 0).
	NotFit = "not_fit"
)

// Interval is a two-sided confidence interval.
type Interval struct {
	Low  float64 `json:"low"`
	High float64 `json:"high"`
}

// Rate is a count of successes over a count of trials; Value is nil when
// there were no trials.
type Rate struct {
	Count int      `json:"count"`
	Of    int      `json:"of"`
	Value *float64 `json:"value"`
}

// Counts are what happened to the labels given.
type Counts struct {
	// Labels is every label given for the run.
	Labels int `json:"labels"`
	// Used are the labels compared with the judge (one per result).
	Used int `json:"used"`
	// Skipped labels said neither pass nor fail.
	Skipped int `json:"skipped"`
	// Stale labels judged an output that is no longer stored (its output
	// hash differs from the stored result's).
	Stale int `json:"stale"`
	// Missing labels name a result the run does not have.
	Missing int `json:"missing"`
	// Unjudged labels are of results the judge gave no verdict
	// (a failed call, or no score in the latest scoring).
	Unjudged int `json:"unjudged"`
	// Superseded labels were replaced by a more recent label of the same
	// result (several labelers, or a relabel); Disagreements counts the
	// results whose labels said both pass and fail.
	Superseded    int `json:"superseded"`
	Disagreements int `json:"disagreements"`
}

// Confusion is the judge's verdicts against people's: the human label is
// the truth, pass the positive class.
type Confusion struct {
	TP int `json:"human_pass_judge_pass"`
	FN int `json:"human_pass_judge_fail"`
	FP int `json:"human_fail_judge_pass"`
	TN int `json:"human_fail_judge_fail"`
}

// Class is one class's measures: for pass, recall is the TPR
// (sensitivity); for fail, the TNR (specificity). A measure is nil when it
// is undefined (a division by zero).
type Class struct {
	Name      string   `json:"name"`    // "pass" | "fail"
	Support   int      `json:"support"` // labels of this class
	Judged    int      `json:"judged"`  // judge verdicts of this class
	Precision *float64 `json:"precision"`
	Recall    *float64 `json:"recall"`
	F1        *float64 `json:"f1"`
}

// Kappa is Cohen's κ with its asymptotic standard error and interval, as
// statsmodels' cohens_kappa computes them; nil fields are undefined (every
// label and verdict in one class).
type Kappa struct {
	Value *float64  `json:"value"`
	SE    *float64  `json:"se"`
	CI    *Interval `json:"ci"`
	// Agreement is the observed share of labels the judge agreed with.
	Agreement *float64 `json:"agreement"`
}

// Corrected is the judged pass rate corrected for the judge's error
// (Rogan–Gladen): nil Value, with Why, when the judge cannot be corrected
// (Youden's J ≤ 0: it does not tell a pass from a fail).
type Corrected struct {
	Value *float64 `json:"value"`
	// CI is the delta-method interval (the judging sample's binomial and
	// the labeled passes' and fails' binomials); Bootstrap the percentile
	// interval of a bootstrap over both samples.
	CI        *Interval `json:"ci"`
	SE        *float64  `json:"se"`
	Bootstrap *Interval `json:"bootstrap"`
	Why       string    `json:"why,omitempty"`
}

// Needed is how many labels per class would narrow the corrected
// interval to the target width, holding the rates observed.
type Needed struct {
	// Reached: the interval is already at most the target width.
	Reached bool `json:"reached"`
	// Pass and Fail are the further labels of each class (human verdict)
	// needed, in the cheapest split; Random is the further labels needed
	// when they are drawn at random from the run (the classes come in the
	// proportions people found).
	Pass   int `json:"pass"`
	Fail   int `json:"fail"`
	Random int `json:"random"`
	// More names the class to label more of than a random draw of the
	// run's outputs would give: the class the cheapest split holds a
	// larger share of ("pass" | "fail" | "" when neither).
	More string `json:"more,omitempty"`
	// Why says why no count can be given ("" when one is).
	Why string `json:"why,omitempty"`
}

// Report is the calibration of one judge against the labels of one run.
type Report struct {
	RunID   string `json:"run_id"`
	Judge   string `json:"judge"`
	Scoring int    `json:"scoring"`
	// JudgeType is the judge scorer's type in the run's spec ("judge" for
	// a model judge; "" when the spec does not name it).
	JudgeType  string     `json:"judge_type"`
	Thresholds Thresholds `json:"thresholds"`
	Counts     Counts     `json:"counts"`
	Confusion  Confusion  `json:"confusion"`
	// Classes are pass then fail.
	Classes []Class `json:"classes"`
	// TPR and TNR are the judge's sensitivity and specificity against the
	// labels; Youden is TPR + TNR − 1 (nil when a class has no label).
	TPR    Rate     `json:"tpr"`
	TNR    Rate     `json:"tnr"`
	Youden *float64 `json:"youden"`
	Kappa  Kappa    `json:"kappa"`
	// Human is the pass rate of the labels; Raw the judge's pass rate over
	// every output of the run it judged (not only the labeled ones).
	Human     Rate      `json:"human"`
	Raw       Rate      `json:"raw"`
	Corrected Corrected `json:"corrected"`
	// Weighting is how the labels were weighted back to the run; nil when
	// every label weighs the same (a simple random sample, or labels with
	// no queue), when every measure is a plain share of Confusion's counts.
	// When it is set, Confusion, the Rates' counts and the Classes'
	// supports stay raw label counts, and every rate, precision, recall,
	// F1, κ, agreement and the corrected rate are weighted.
	Weighting *Weighting `json:"weighting,omitempty"`
	Verdict   string     `json:"verdict"`
	// Reasons say in words why the verdict is what it is.
	Reasons []string `json:"reasons"`
	Needed  Needed   `json:"needed"`
	// Disagreed lists the labeled outputs the judge got wrong, in key
	// order, at most MaxDisagreed of them; DisagreedTotal counts all.
	Disagreed      []Disagreement `json:"disagreed"`
	DisagreedTotal int            `json:"disagreed_total"`
	// Notes are caveats (a scorer that is not a model judge, labels not
	// used).
	Notes []string `json:"notes,omitempty"`
}

// Weighting is how labels drawn with unequal probabilities (a queue
// stratified by the judge's verdict draws the rare verdict more often)
// were weighted back to the run: each label counts its queue item's
// weight, the inverse of its selection probability.
type Weighting struct {
	// Cells is the confusion matrix of weights: each cell estimates how
	// many of the run's outputs fall in it.
	Cells WeightedCells `json:"cells"`
	// Effective is Kish's effective number of labels, (Σw)²/Σw²: all of
	// them, the passes and the fails.
	Effective Effective `json:"effective"`
	// Queues name the queues whose items' weights were used; Unweighted
	// counts the used labels that weigh 1 (no queue item for them).
	Queues     []string `json:"queues"`
	Unweighted int      `json:"unweighted"`
}

// WeightedCells are the weighted confusion matrix's cells.
type WeightedCells struct {
	TP float64 `json:"human_pass_judge_pass"`
	FN float64 `json:"human_pass_judge_fail"`
	FP float64 `json:"human_fail_judge_pass"`
	TN float64 `json:"human_fail_judge_fail"`
}

// Effective are Kish's effective numbers of labels.
type Effective struct {
	All  float64 `json:"all"`
	Pass float64 `json:"pass"`
	Fail float64 `json:"fail"`
}

// Queues are the labeling queues labels were given in, keyed by QueueKey
// (a queue of the run calibrated by its name), whose items carry the
// weights of the labels given in them: Calibrate reads a label's weight
// from the item of its queue with the label's case, target and epoch.
type Queues map[string]*record.Queue

// QueueReader reads a run's labeling queue with its items (the store's
// Labels.Queue).
type QueueReader interface {
	Queue(ctx context.Context, runID, name string) (*record.Queue, error)
}

// ReadQueues reads the queues that labels of the run name, for
// Calibrate's weights. A queue the reader answers notFound for is left
// out (its labels weigh 1, and the report says so).
func ReadQueues(ctx context.Context, qr QueueReader, runID string, labels []record.Label, notFound error) (Queues, error) {
	qs := Queues{}
	for _, l := range labels {
		key := QueueKey(runID, l)
		if l.Queue == "" {
			continue
		}
		if _, done := qs[key]; done {
			continue
		}
		of := runID
		if l.RunID != "" {
			of = l.RunID
		}
		q, err := qr.Queue(ctx, of, l.Queue)
		switch {
		case errors.Is(err, notFound):
			q = nil // looked up once; the label weighs 1, and a note says why
		case err != nil:
			return nil, fmt.Errorf("reading labeling queue %s of run %s: %w", l.Queue, of, err)
		}
		qs[key] = q
	}
	for k, q := range qs {
		if q == nil {
			delete(qs, k)
		}
	}
	return qs, nil
}

// QueueKey is the key of a label's queue in Queues: its name for a label
// of the run calibrated (runID), the name after the label's run and a NUL
// for a label given on another run (its queue is that run's).
func QueueKey(runID string, l record.Label) string {
	if l.RunID == "" || l.RunID == runID {
		return l.Queue
	}
	return l.RunID + "\x00" + l.Queue
}

// MaxDisagreed bounds Report.Disagreed.
const MaxDisagreed = 50

// Disagreement is one labeled output the judge got wrong: what the
// person said (and why) against the judge's verdict.
type Disagreement struct {
	CaseID  string `json:"case_id"`
	Target  string `json:"target"`
	Epoch   int    `json:"epoch"`
	Human   string `json:"human"` // "pass" | "fail"
	Judge   string `json:"judge"` // "pass" | "fail"
	Labeler string `json:"labeler"`
	Reason  string `json:"reason,omitempty"`
}
