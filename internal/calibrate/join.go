package calibrate

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/spec"
	"github.com/assay-eval/assay/internal/stats"
	"github.com/assay-eval/assay/internal/units"
)

// UnknownJudgeError: the scorer named is not among the run's latest
// scoring's scorers.
type UnknownJudgeError struct {
	Judge   string
	Scoring int
	Valid   []string
}

func (e *UnknownJudgeError) Error() string {
	if len(e.Valid) == 0 {
		return fmt.Sprintf("scorer %q has no verdicts: the run's scoring %d has no scorers", e.Judge, e.Scoring)
	}
	return fmt.Sprintf("scorer %q has no verdicts in the run's scoring %d (scorers are: %s)", e.Judge, e.Scoring, strings.Join(e.Valid, ", "))
}

// ErrNoScoring: the run has no complete scoring to read verdicts from.
var ErrNoScoring = errors.New("the run has no complete scoring: nothing judged yet")

// Score kinds that mean the scorer gave no verdict (scorer.KindJudgeError
// and scorer.KindScorerError): such outputs are not judged.
const (
	kindJudgeError  = "judge_error"
	kindScorerError = "scorer_error"
)

// BootstrapReplicates is the bootstrap's B; its seed is fixed, so the
// same labels give the same interval in the CLI and the serve page.
const BootstrapReplicates = 2000

// Calibrate joins the labels of a run (skips and labels whose OutputHash no
// longer matches the stored result are counted, not used) with the judge
// scorer's verdicts in the run's latest scoring and computes the report.
//
// One label counts per result: when a result has several (labelers, or a
// relabel), the most recent pass or fail is used, the others are counted
// as superseded, and a result whose labels say both pass and fail counts
// as a disagreement. The judged pass rate is over every output of the run
// the judge gave a verdict (failed calls and judge errors left out), not
// only the labeled ones.
//
// A label given in one of queues counts with the weight of the queue's
// item of its output (the inverse of the item's selection probability),
// so a queue that drew some strata more often than others is weighted
// back to the run; a label with no such item weighs 1. When every label
// weighs the same the measures are plain shares of the counts.
func Calibrate(ctx context.Context, r record.Reader, run *record.Run, judge string, labels []record.Label, th Thresholds, queues Queues) (*Report, error) {
	if run == nil {
		return nil, errors.New("calibrate: no run")
	}
	scoring, err := r.LatestScoring(ctx, run.ID)
	if err != nil {
		return nil, fmt.Errorf("reading the run's scorings: %w", err)
	}
	if scoring == 0 {
		return nil, ErrNoScoring
	}
	names, err := r.ScorerNames(ctx, run.ID, scoring)
	if err != nil {
		return nil, fmt.Errorf("reading the run's scorers: %w", err)
	}
	if !slices.Contains(names, judge) {
		return nil, &UnknownJudgeError{Judge: judge, Scoring: scoring, Valid: names}
	}
	rep := &Report{RunID: run.ID, Judge: judge, Scoring: scoring, JudgeType: scorerType(run.Config, judge), Thresholds: th}
	switch rep.JudgeType {
	case "judge":
	case "":
		rep.Notes = append(rep.Notes, fmt.Sprintf("the run's spec does not say what kind of scorer %q is", judge))
	default:
		rep.Notes = append(rep.Notes, fmt.Sprintf("scorer %q is of type %s, not a model judge (type judge): it is calibrated all the same", judge, rep.JudgeType))
	}

	// The labels, by result.
	rep.Counts.Labels = len(labels)
	// A label given on another run (committed beside the spec, say) counts
	// for this run's output of the same case, target and epoch when that
	// output is the one it judged: the same output hash.
	byKey := map[record.Key][]record.Label{}
	carried := map[string]bool{}
	for _, l := range labels {
		if l.RunID != "" && l.RunID != run.ID {
			carried[l.RunID] = true
		}
		byKey[l.Key()] = append(byKey[l.Key()], l)
	}

	// The stored outputs the labels judged, the failed calls and the
	// judge's verdicts: all of them for the raw rate, the labeled ones for
	// the comparison.
	hashes, verdict, err := judged(ctx, r, run.ID, scoring, judge, byKey, &rep.Raw)
	if err != nil {
		return nil, err
	}
	rep.Raw.Value = share(rep.Raw.Count, rep.Raw.Of)

	var c stats.Confusion
	var weighted []stats.WeightedLabel
	w := newWeigher(queues, run.ID)
	keys := make([]record.Key, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b record.Key) int {
		return cmpKey(a, b)
	})
	invalid := 0
	carriedUsed, carriedOther := 0, 0
	for _, k := range keys {
		hash, stored := hashes[k]
		var usable []record.Label
		for _, l := range byKey[k] {
			other := l.RunID != "" && l.RunID != run.ID
			switch {
			case !stored:
				rep.Counts.Missing++
			case l.Verdict == record.LabelSkip:
				rep.Counts.Skipped++
			case l.Verdict != record.LabelPass && l.Verdict != record.LabelFail:
				invalid++
			case l.OutputHash != hash && other:
				// Another run's label of a different output: it says
				// nothing of this run's.
				rep.Counts.Missing++
				carriedOther++
			case l.OutputHash != hash:
				rep.Counts.Stale++
			default:
				if other {
					carriedUsed++
				}
				usable = append(usable, l)
			}
		}
		if len(usable) == 0 {
			continue
		}
		// The most recent label counts; a later one given at the same
		// time wins, as it was given (or listed) last.
		last := usable[0]
		seen := map[string]bool{}
		for _, l := range usable {
			seen[l.Verdict] = true
			if !l.Created.Before(last.Created) {
				last = l
			}
		}
		rep.Counts.Superseded += len(usable) - 1
		if seen[record.LabelPass] && seen[record.LabelFail] {
			rep.Counts.Disagreements++
		}
		judged, ok := verdict[k]
		if !ok {
			rep.Counts.Unjudged++
			continue
		}
		rep.Counts.Used++
		human := last.Verdict == record.LabelPass
		if human != judged {
			rep.DisagreedTotal++
			if len(rep.Disagreed) < MaxDisagreed {
				rep.Disagreed = append(rep.Disagreed, Disagreement{CaseID: k.CaseID, Target: k.Target, Epoch: k.Epoch,
					Human: last.Verdict, Judge: verdictWord(judged), Labeler: last.Labeler, Reason: last.Reason})
			}
		}
		weighted = append(weighted, w.label(last, human, judged))
		switch {
		case human && judged:
			c.TP++
		case human:
			c.FN++
		case judged:
			c.FP++
		default:
			c.TN++
		}
	}
	if len(carried) > 0 {
		runs := slices.Sorted(maps.Keys(carried))
		rep.Notes = append(rep.Notes, fmt.Sprintf("labels given on run %s: %s of them judged this run's very outputs (same case, target, epoch and output hash) and count; %s judged other outputs and do not",
			strings.Join(runs, ", "), units.Count(carriedUsed), units.Count(carriedOther)))
	}
	if invalid > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%s labels have a verdict other than pass, fail or skip and were not used", units.Count(invalid)))
	}
	if n := rep.Counts.Stale; n > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%s labels judged an output that has since been replaced (its hash differs) and were not used", units.Count(n)))
	}
	if n := rep.Counts.Disagreements; n > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%s outputs were labeled both pass and fail; the most recent label was used", units.Count(n)))
	}
	var wc *stats.WeightedConfusion
	if len(weighted) > 0 {
		all, err := stats.Weigh(weighted)
		if err != nil {
			return nil, fmt.Errorf("weighing the labels: %w", err)
		}
		if !all.EqualWeights() {
			wc = &all
			rep.Weighting = w.weighting(all)
		}
	}
	rep.Notes = append(rep.Notes, w.notes(wc != nil)...)
	compute(rep, c, wc, th)
	return rep, nil
}

// weigher finds each used label's weight in its queue.
type weigher struct {
	runID   string // the run calibrated: its queues are keyed by name alone
	queues  Queues
	items   map[string]map[record.Key]float64
	used    map[string]int // labels weighted by each queue
	missing map[string]int // labels of a queue not given
	noItem  int            // labels of a given queue without an item of their output
	none    int            // labels of no queue
}

func newWeigher(queues Queues, runID string) *weigher {
	w := &weigher{runID: runID, queues: queues, items: map[string]map[record.Key]float64{}, used: map[string]int{}, missing: map[string]int{}}
	for name, q := range queues {
		if q == nil {
			continue
		}
		m := make(map[record.Key]float64, len(q.Items))
		for _, it := range q.Items {
			if it.Weight > 0 && !math.IsInf(it.Weight, 0) {
				m[it.Key()] = it.Weight
			}
		}
		w.items[name] = m
	}
	return w
}

func (w *weigher) label(l record.Label, human, judged bool) stats.WeightedLabel {
	out := stats.WeightedLabel{Human: human, Judge: judged, Weight: 1}
	key, name := QueueKey(w.runID, l), l.Queue
	if key != l.Queue {
		name = l.Queue + " (run " + l.RunID + ")"
	}
	switch items, ok := w.items[key]; {
	case l.Queue == "":
		w.none++
	case !ok:
		w.missing[name]++
	default:
		wt, ok := items[l.Key()]
		if !ok {
			w.noItem++
			break
		}
		out.Weight, out.Design = wt, name
		w.used[name]++
	}
	return out
}

func (w *weigher) weighting(c stats.WeightedConfusion) *Weighting {
	out := &Weighting{
		Cells:     WeightedCells{TP: c.TP, FN: c.FN, FP: c.FP, TN: c.TN},
		Effective: Effective{All: c.Effective(), Pass: c.EffectivePositives(), Fail: c.EffectiveNegatives()},
		Queues:    []string{},
	}
	for name := range w.used {
		out.Queues = append(out.Queues, name)
	}
	slices.Sort(out.Queues)
	out.Unweighted = w.none + w.noItem
	for _, n := range w.missing {
		out.Unweighted += n
	}
	return out
}

// notes say which labels could not be weighted and when the labels mix
// designs; weighted says whether the weights differ.
func (w *weigher) notes(weighted bool) []string {
	var notes []string
	var missing []string
	n := 0
	for name, k := range w.missing {
		missing = append(missing, name)
		n += k
	}
	slices.Sort(missing)
	if n > 0 {
		notes = append(notes, fmt.Sprintf("%s labels name a queue the store does not have (%s): their selection probabilities are unknown, so each weighs 1", units.Count(n), strings.Join(missing, ", ")))
	}
	if w.noItem > 0 {
		notes = append(notes, fmt.Sprintf("%s labels are of outputs their queue did not draw (or drew with no weight): each weighs 1", units.Count(w.noItem)))
	}
	if !weighted {
		return notes
	}
	unweighted := w.none + w.noItem + n
	switch {
	case unweighted > 0:
		notes = append(notes, fmt.Sprintf("the labels mix designs: %s weigh 1 (no queue item) beside %s weighted by their queue's selection probabilities; the weighted rates treat the unweighted ones as a simple random sample of the run",
			units.Count(unweighted), units.Count(w.total()-unweighted)))
	case len(w.used) > 1:
		names := make([]string, 0, len(w.used))
		for name := range w.used {
			names = append(names, name)
		}
		slices.Sort(names)
		notes = append(notes, "the labels come from "+units.Count(len(names))+" queues ("+strings.Join(names, ", ")+") with different designs: each label weighs its own queue's inverse selection probability, as if the queues' samples were one")
	}
	return notes
}

func (w *weigher) total() int {
	n := w.none + w.noItem
	for _, k := range w.missing {
		n += k
	}
	for _, k := range w.used {
		n += k
	}
	return n
}

func cmpKey(a, b record.Key) int {
	if c := strings.Compare(a.CaseID, b.CaseID); c != 0 {
		return c
	}
	if c := strings.Compare(a.Target, b.Target); c != 0 {
		return c
	}
	return a.Epoch - b.Epoch
}

// scorerType reads a scorer's type from the run's stored spec ("" when the
// spec does not list it).
func scorerType(config []byte, name string) string {
	sp, err := spec.Stored(config, "")
	if err != nil {
		return ""
	}
	for _, s := range sp.Scorers {
		if s.Name == name || (s.Name == "" && s.Type == name) {
			return s.Type
		}
	}
	return ""
}

func share(k, n int) *float64 {
	if n == 0 {
		return nil
	}
	return num(float64(k) / float64(n))
}

// num is a defined number or nil.
func num(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

// compute fills the report's measures, verdict and labels needed from
// the confusion matrix and the raw judged rate; wc, when not nil, are the
// labels' unequal weights, and the measures are weighted.
func compute(rep *Report, c stats.Confusion, wc *stats.WeightedConfusion, th Thresholds) {
	alpha := 1 - th.Level
	rep.Confusion = Confusion{TP: c.TP, FN: c.FN, FP: c.FP, TN: c.TN}
	rep.Human = Rate{Count: c.Positives(), Of: c.N(), Value: share(c.Positives(), c.N())}
	rep.TPR = Rate{Count: c.TP, Of: c.Positives(), Value: share(c.TP, c.Positives())}
	rep.TNR = Rate{Count: c.TN, Of: c.Negatives(), Value: share(c.TN, c.Negatives())}
	rep.Youden = num(c.Youden())
	pass, fail := c.Classes()
	if wc != nil {
		rep.Human.Value = num(wc.HumanPass())
		rep.TPR.Value, rep.TNR.Value = num(wc.TPR()), num(wc.TNR())
		rep.Youden = num(wc.Youden())
		pass, fail = wc.Classes()
	}
	rep.Classes = []Class{
		{Name: record.LabelPass, Support: c.Positives(), Judged: c.TP + c.FP, Precision: num(pass.Precision), Recall: num(pass.Recall), F1: num(pass.F1)},
		{Name: record.LabelFail, Support: c.Negatives(), Judged: c.FN + c.TN, Precision: num(fail.Precision), Recall: num(fail.Recall), F1: num(fail.F1)},
	}
	if c.N() > 0 {
		rep.Kappa.Agreement = share(c.TP+c.TN, c.N())
		k, err := stats.CohensKappa(c.Table(), alpha)
		if wc != nil {
			rep.Kappa.Agreement = num(wc.Agreement())
			k, err = stats.WeightedKappa(*wc, alpha)
		}
		if err == nil {
			rep.Kappa.Value, rep.Kappa.SE = num(k.Kappa), num(k.SE)
			rep.Kappa.CI = &Interval{Low: k.CI.Lo, High: k.CI.Hi}
		}
	}

	if rep.Raw.Of > 0 {
		var rg stats.RoganGladen
		var v stats.RGVariances
		var err error
		if wc != nil {
			rg, v, err = stats.RoganGladenWeightedCI(rep.Raw.Count, rep.Raw.Of, *wc, alpha)
		} else {
			rg, err = stats.RoganGladenCI(rep.Raw.Count, rep.Raw.Of, c, alpha)
		}
		switch {
		case err == nil:
			rep.Corrected.Value, rep.Corrected.SE = num(rg.Estimate), num(rg.SE)
			rep.Corrected.CI = &Interval{Low: rg.CI.Lo, High: rg.CI.Hi}
			if rg.Unbounded {
				rep.Corrected.Why = "the judge's Youden J is within its own uncertainty of 0, so the interval is all of [0, 1]"
			}
			rng := rand.New(rand.NewPCG(uint64(c.N()), 15))
			var ci stats.Interval
			var dropped int
			if wc != nil {
				ci, dropped, err = stats.RoganGladenWeightedBootstrap(rng, rep.Raw.Count, rep.Raw.Of, *wc, BootstrapReplicates, alpha)
			} else {
				ci, dropped, err = stats.RoganGladenBootstrap(rng, rep.Raw.Count, rep.Raw.Of, c, BootstrapReplicates, alpha)
			}
			if err == nil {
				rep.Corrected.Bootstrap = &Interval{Low: ci.Lo, High: ci.Hi}
				if dropped*100 > BootstrapReplicates {
					rep.Notes = append(rep.Notes, fmt.Sprintf("the bootstrap interval leaves out %s of its %s resamples, whose labels had no fail or no pass or a J not above 0: with this few labels of a class, read it with care",
						units.Count(dropped), units.Count(BootstrapReplicates)))
				}
			}
			if wc != nil {
				n, err := stats.NeededWeightedLabels(rg, v, *wc, th.Width, alpha)
				rep.Needed = neededOf(n, err, c, th)
			} else {
				n, err := stats.NeededLabels(rg, rep.Raw.Of, c, th.Width, alpha)
				rep.Needed = neededOf(n, err, c, th)
			}
		case errors.Is(err, stats.ErrNotIdentifiable):
			rep.Corrected.Why = notIdentifiable(c, rep.Youden)
			rep.Needed.Why = "no count of labels corrects a judge that does not tell a pass from a fail"
		default:
			rep.Corrected.Why = err.Error()
		}
	} else {
		rep.Corrected.Why = "the judge gave no verdict on any output of the run"
		rep.Needed.Why = rep.Corrected.Why
	}
	rep.Verdict, rep.Reasons = verdictOf(rep, c, th)
}

func notIdentifiable(c stats.Confusion, youden *float64) string {
	switch {
	case c.Positives() == 0 && c.Negatives() == 0:
		return "no labels to measure the judge with"
	case c.Negatives() == 0:
		return "no output was labeled fail, so the judge's TNR is unknown"
	case c.Positives() == 0:
		return "no output was labeled pass, so the judge's TPR is unknown"
	}
	j := c.Youden()
	if youden != nil {
		j = *youden
	}
	return "the judge does not tell a pass from a fail (TPR + TNR − 1 = " + units.Ratio(j) + ", not above 0): its verdicts say nothing of the true pass rate"
}

func neededOf(n stats.LabelsNeeded, err error, c stats.Confusion, th Thresholds) Needed {
	switch {
	case errors.Is(err, stats.ErrWidthUnreachable):
		return Needed{Why: "the judged outputs alone make the interval wider than " + units.Points(th.Width) + ": no count of labels narrows it that far; judge more outputs or ask for a wider interval"}
	case err != nil:
		return Needed{Why: err.Error()}
	}
	out := Needed{Pass: n.Pass, Fail: n.Fail, Random: n.Random, Reached: n.Pass == 0 && n.Fail == 0}
	// The class the cheapest split holds a larger share of than a random
	// draw of the run's outputs would.
	P, F := float64(c.Positives()), float64(c.Negatives())
	now := F / (P + F)
	split := (F + float64(n.Fail)) / (P + F + float64(n.Pass+n.Fail))
	switch {
	case out.Reached:
	case split > now+1e-9:
		out.More = record.LabelFail
	case split < now-1e-9:
		out.More = record.LabelPass
	}
	return out
}

// verdictOf decides fit, biased or not fit and says why.
func verdictOf(rep *Report, c stats.Confusion, th Thresholds) (string, []string) {
	var why []string
	if c.N() == 0 {
		return NotFit, []string{"no usable labels: label outputs of the run first"}
	}
	if k := rep.Kappa.Value; k == nil {
		why = append(why, "κ is undefined: people and the judge put every labeled output in one class")
	} else if *k < th.MinKappa {
		why = append(why, "κ "+units.Ratio(*k)+" is below "+units.Ratio(th.MinKappa))
	}
	if t := rep.TNR.Value; t == nil {
		why = append(why, "TNR unknown: no output was labeled fail, so it is not shown the judge catches failures")
	} else if *t < th.MinTNR {
		why = append(why, "TNR "+units.Pct(*t)+" is below "+units.Pct(th.MinTNR)+": the judge passes "+units.Count(c.FP)+" of the "+units.Count(c.Negatives())+" outputs people failed"+weightedWord(rep))
	}
	if t := rep.TPR.Value; t == nil {
		why = append(why, "TPR unknown: no output was labeled pass")
	} else if *t < th.MinTPR {
		why = append(why, "TPR "+units.Pct(*t)+" is below "+units.Pct(th.MinTPR)+": the judge fails "+units.Count(c.FN)+" of the "+units.Count(c.Positives())+" outputs people passed"+weightedWord(rep))
	}
	if j := rep.Youden; j != nil && *j <= 0 {
		why = append(why, "Youden's J = TPR + TNR − 1 is "+units.Ratio(*j)+": the judge does no better than a verdict drawn at random (a judge that passes everything has TNR 0)")
	}
	if len(why) > 0 {
		return NotFit, why
	}
	raw, corr, ci := rep.Raw.Value, rep.Corrected.Value, rep.Corrected.CI
	if raw != nil && corr != nil && ci != nil && (*raw < ci.Low || *raw > ci.High) {
		return Biased, []string{"the judge's raw pass rate " + units.Pct(*raw) + " lies outside the corrected rate's interval " +
			units.PctCI([2]float64{ci.Low, ci.High}) + ": read the corrected rate " + units.Pct(*corr)}
	}
	why = append(why, "κ "+units.Ratio(*rep.Kappa.Value)+", TNR "+units.Pct(*rep.TNR.Value)+" and TPR "+units.Pct(*rep.TPR.Value)+" meet the thresholds")
	if raw != nil && corr != nil && ci != nil {
		why = append(why, "the raw pass rate "+units.Pct(*raw)+" lies inside the corrected rate's interval "+units.PctCI([2]float64{ci.Low, ci.High}))
	}
	return Fit, why
}

func verdictWord(pass bool) string {
	if pass {
		return record.LabelPass
	}
	return record.LabelFail
}

// weightedWord says, after raw counts, that the rate beside them is
// weighted ("" when the labels are not).
func weightedWord(rep *Report) string {
	if rep.Weighting == nil {
		return ""
	}
	return " (labels; the rate is weighted by the queue's selection probabilities)"
}

// keyReader is what a store offers besides record.Reader to read a run
// without its outputs (store.Keys): on a million results Calibrate reads
// a few index columns instead of every output and reason.
type keyReader interface {
	ResultKeys(ctx context.Context, runID string, fn func(k record.Key, failed bool) error) error
	Verdicts(ctx context.Context, runID string, scoring int, scorer string, fn func(k record.Key, pass bool, kind string) error) error
}

// judged reads the labeled outputs' hashes and the judge's verdicts on
// every output whose call did not fail (raw counts them; a judge or scorer
// error is no verdict), through the store's light streams when it has
// them, else through Results and Scores.
func judged(ctx context.Context, r record.Reader, runID string, scoring int, judge string, labeled map[record.Key][]record.Label, raw *Rate) (map[record.Key]string, map[record.Key]bool, error) {
	hashes := map[record.Key]string{}
	failed := map[record.Key]bool{}
	verdict := map[record.Key]bool{}
	count := func(k record.Key, pass bool, kind string) {
		if failed[k] || kind == kindJudgeError || kind == kindScorerError {
			return
		}
		raw.Of++
		if pass {
			raw.Count++
		}
		if _, ok := labeled[k]; ok {
			verdict[k] = pass
		}
	}
	if kr, ok := r.(keyReader); ok {
		err := kr.ResultKeys(ctx, runID, func(k record.Key, f bool) error {
			if f {
				failed[k] = true
			}
			return nil
		})
		if err != nil {
			return nil, nil, fmt.Errorf("reading the run's results: %w", err)
		}
		for k := range labeled {
			res, err := r.Result(ctx, runID, k)
			if errors.Is(err, record.ErrNotFound) {
				continue
			}
			if err != nil {
				return nil, nil, fmt.Errorf("reading the run's results: %w", err)
			}
			hashes[k] = record.LabelOutputHash(res)
		}
		err = kr.Verdicts(ctx, runID, scoring, judge, func(k record.Key, pass bool, kind string) error {
			count(k, pass, kind)
			return nil
		})
		if err != nil {
			return nil, nil, fmt.Errorf("reading the judge's verdicts: %w", err)
		}
		return hashes, verdict, nil
	}
	err := r.Results(ctx, runID, func(res record.Result) error {
		k := res.Key()
		if res.ErrorKind != "" {
			failed[k] = true
		}
		if _, ok := labeled[k]; ok {
			hashes[k] = record.LabelOutputHash(&res)
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("reading the run's results: %w", err)
	}
	err = r.Scores(ctx, runID, scoring, func(s record.Score) error {
		if s.Scorer == judge {
			count(record.Key{CaseID: s.CaseID, Target: s.Target, Epoch: s.Epoch}, s.Pass, s.Kind)
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("reading the judge's verdicts: %w", err)
	}
	return hashes, verdict, nil
}
