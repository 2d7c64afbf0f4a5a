package analysis

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/runview"
	"github.com/assay-eval/assay/internal/stats"
)

// Drift verdicts.
const (
	DriftDrifted  = "drifted"
	DriftStable   = "stable"
	DriftUnpaired = "unpaired" // the runs share no result of the target
	// DriftCannotJudge: a side of the target is too unhealthy to judge
	// (too many failed calls, or too few pairs with an output on both
	// sides); the command exits 1, never 3.
	DriftCannotJudge = "cannot_judge"
)

// Defaults of DriftOptions' health limits.
const (
	// DefaultDriftMaxErrorRate: a side whose calls failed more often than
	// this (more than half) cannot be judged.
	DefaultDriftMaxErrorRate = 0.5
	// DefaultDriftMinPairs: fewer pairs than this with an output on both
	// sides cannot be judged.
	DefaultDriftMinPairs = 10
)

// DriftOptions tune Drift.
type DriftOptions struct {
	// Alpha is the level of the flip test and of the intervals (0.05).
	Alpha float64
	// IdenticalThreshold is the identical-output rate a target at
	// temperature 0 must be able to reach: it drifted when the upper bound
	// of the rate's interval lies below it (default 0.95).
	IdenticalThreshold float64
	// Target restricts the check to one target ("" = every shared target).
	Target string
	// IgnoreFingerprints shows a changed model fingerprint without letting
	// it decide the verdict (for providers that rotate fingerprints).
	IgnoreFingerprints bool
	// SharedCases compares runs on different dataset versions on the cases
	// both measured; without it such runs are refused (*DatasetMismatchError).
	SharedCases bool
	// Test is the flip test of one pass/fail per case (ParseTest): exact
	// McNemar by default ("" or "exact"), the McNemar score test with
	// "score". Several epochs or clustered cases use a t test on the
	// per-case means. Drift keeps the exact test by default: no difference
	// interval stands beside it to agree with, and a canary alarm should
	// not exceed its level on a handful of flips, where the score test can.
	Test string
	// Calibration is a second run of the before side's configuration (a
	// stored run or a baseline file): the model's self-agreement, its
	// identical-output and flip rates against the before side, is learnt
	// from it. Without it a before side of two or more epochs calibrates
	// with its epochs 1 and 2; with neither, the identical-output rate is
	// uncalibrated and decides nothing.
	Calibration *DriftSide
	// MaxErrorRate is the share of a side's calls of a target that may
	// fail before the target cannot be judged (DefaultDriftMaxErrorRate).
	MaxErrorRate float64
	// MinPairs is the fewest pairs with an output on both sides a target
	// is judged on (DefaultDriftMinPairs).
	MinPairs int
}

// DriftReport says, per target both runs ran, whether its outputs on the
// same cases changed between the runs.
type DriftReport struct {
	Before RunInfo `json:"before"`
	After  RunInfo `json:"after"`
	// BeforeFile and AfterFile name the baseline file a side was read
	// from ("" for a stored run).
	BeforeFile         string        `json:"before_file,omitempty"`
	AfterFile          string        `json:"after_file,omitempty"`
	Alpha              float64       `json:"alpha"`
	IdenticalThreshold float64       `json:"identical_threshold"`
	Targets            []TargetDrift `json:"targets"`
	// Drifted names the targets whose verdict is drifted.
	Drifted []string `json:"drifted"`
	// Only lists targets present in one run only (not checked).
	Only []string `json:"only_in_one_run,omitempty"`
	// Cases is set when the runs measured different dataset versions and
	// only their shared cases were paired.
	Cases    *CaseDiff `json:"shared_cases,omitempty"`
	Warnings []string  `json:"warnings,omitempty"`
	// CannotJudge says, one line per target and side, why a target could
	// not be judged ("cannot judge: 152 of 152 calls of x in run R
	// failed: auth"); the command then exits 1.
	CannotJudge []string `json:"cannot_judge,omitempty"`
	// Calibration says where the model's self-agreement was learnt ("" when
	// the check is uncalibrated).
	Calibration string `json:"calibration,omitempty"`
}

// TargetDrift is one target's drift check, paired by case and epoch.
type TargetDrift struct {
	Target  string `json:"target"`
	Verdict string `json:"verdict"` // drifted | stable | unpaired
	// Reasons say why a target drifted, one per signal that fired.
	Reasons []string `json:"reasons,omitempty"`
	// Notes say how to read the numbers (temperature, cache).
	Notes []string `json:"notes,omitempty"`
	// Paired counts (case, epoch) pairs with a stored result in both runs.
	Paired       int                `json:"paired"`
	Flips        DriftFlips         `json:"flips"`
	Identical    DriftIdentical     `json:"identical"`
	Temperature  DriftTemperature   `json:"temperature"`
	Fingerprints DriftFingerprints  `json:"fingerprints"`
	FromCache    DriftCachedResults `json:"from_cache"`
	// Health counts each side's calls of the target and those that failed,
	// by error kind.
	Health DriftHealth `json:"health"`
	// Excluded counts the pairs left out of the flips and the identical
	// outputs because a call failed on either side.
	Excluded DriftExcluded `json:"excluded"`
	// FlippedCases lists every pair whose primary verdict flipped,
	// pass→fail first, then by case order.
	FlippedCases []DriftFlippedCase `json:"flipped_cases"`
	// Calibration is the model's self-agreement and the canary's tests
	// against it (nil when uncalibrated).
	Calibration *DriftCalibration `json:"calibration,omitempty"`
}

// DriftHealth is a target's calls on each side of a drift check.
type DriftHealth struct {
	Before      DriftSideHealth  `json:"before"`
	After       DriftSideHealth  `json:"after"`
	Calibration *DriftSideHealth `json:"calibration,omitempty"`
}

// DriftSideHealth counts one side's stored results of a target and those
// whose call failed, by provider error kind ("error" when the kind is not
// recorded).
type DriftSideHealth struct {
	Calls  int            `json:"calls"`
	Failed int            `json:"failed"`
	Kinds  map[string]int `json:"failed_by_kind,omitempty"`
}

// DriftExcluded counts the pairs left out because a call failed, and the
// failed calls among them per side and error kind.
type DriftExcluded struct {
	Pairs  int            `json:"pairs"`
	Before map[string]int `json:"before,omitempty"`
	After  map[string]int `json:"after,omitempty"`
}

// DriftFlippedCase is one pair whose primary verdict flipped.
type DriftFlippedCase struct {
	Case      string `json:"case"`
	Epoch     int    `json:"epoch"`
	Direction string `json:"direction"` // pass_to_fail | fail_to_pass
}

// DriftCalibration is a target's self-agreement, measured between two runs
// of the same configuration on the same cases, and the canary's one-sided
// two-sample tests against it (pooled-variance z tests of two proportions:
// the calibration's own sampling error is in the variance).
type DriftCalibration struct {
	Source string `json:"source"`
	// Pairs counts the calibration pairs with an output on both sides;
	// Excluded those left out because a call failed.
	Pairs     int     `json:"pairs"`
	Excluded  int     `json:"excluded"`
	Identical int     `json:"identical"`
	Rate      float64 `json:"identical_rate"`
	// FlipN counts the calibration pairs scored on both sides.
	FlipN    int     `json:"flip_n"`
	Flipped  int     `json:"flipped"`
	FlipRate float64 `json:"flip_rate"`
	// IdenticalTest asks whether the canary's identical-output rate is
	// below the calibrated one; FlipTest whether its flip rate is above.
	IdenticalTest DriftRateTest `json:"identical_test"`
	FlipTest      DriftRateTest `json:"flip_test"`
	// Level is the level each calibrated test is decided at: alpha over
	// the three tests that decide (Bonferroni).
	Level float64 `json:"level"`
}

// DriftRateTest is a one-sided pooled z test of the canary's proportion
// against the calibration's.
type DriftRateTest struct {
	Canary      float64 `json:"canary"`
	Calibrated  float64 `json:"calibrated"`
	Z           float64 `json:"z"`
	PValue      float64 `json:"p_value"`
	Alternative string  `json:"alternative"` // smaller | larger
}

// DriftFlips is the primary verdict's flip rate over the pairs both runs
// scored, with its Wilson interval, and a test of whether the flips lean
// one way: McNemar's exact test (or the score test, with --test score)
// with one epoch per case; with several epochs the paired t-test on the per-case
// mean verdicts (after − before); with a cluster tag, the cluster-robust t
// on G−1 degrees of freedom. Test names the one that gave PValue.
type DriftFlips struct {
	N          int        `json:"n"` // pairs scored in both runs
	PassToFail int        `json:"pass_to_fail"`
	FailToPass int        `json:"fail_to_pass"`
	Flipped    int        `json:"flipped"`
	Rate       float64    `json:"rate"`
	CI         [2]float64 `json:"ci"`
	CIMethod   string     `json:"ci_method"`
	Test       string     `json:"test"`
	PValue     float64    `json:"p_value"`
	// DF and Clusters are the t test's degrees of freedom and clusters
	// (absent for McNemar).
	DF       float64 `json:"df,omitempty"`
	Clusters int     `json:"clusters,omitempty"`
	// Direction is worse (more pass→fail), better, or none.
	Direction string `json:"direction"`
}

// DriftIdentical is the rate of byte-identical raw outputs over the paired
// results where both calls produced an output; a pair where either call
// failed is left out (counted in Errored).
type DriftIdentical struct {
	N         int        `json:"n"`
	Identical int        `json:"identical"`
	Rate      float64    `json:"rate"`
	CI        [2]float64 `json:"ci"`
	CIMethod  string     `json:"ci_method"`
	// Errored counts the pairs where either call failed.
	Errored int `json:"errored"`
}

// DriftTemperature is the target's temperature in each run's resolved spec
// (absent when not set: the provider's default applies, or not known).
type DriftTemperature struct {
	Before *float64 `json:"before,omitempty"`
	After  *float64 `json:"after,omitempty"`
	// BeforeUnknown and AfterUnknown are set when a side does not record
	// its temperature: a baseline file written by an older assay.
	BeforeUnknown bool `json:"before_unknown,omitempty"`
	AfterUnknown  bool `json:"after_unknown,omitempty"`
	// Zero is set when both runs asked for temperature 0: identical
	// outputs are then expected, and their absence is the drift signal.
	Zero bool `json:"zero"`
}

// DriftFingerprints lists the models and fingerprints reported in each run.
type DriftFingerprints struct {
	Before  []ModelCount `json:"before"`
	After   []ModelCount `json:"after"`
	Changed bool         `json:"changed"`
}

// DriftCachedResults counts paired results served from the response cache.
type DriftCachedResults struct {
	Before int `json:"before"`
	After  int `json:"after"`
}

// Flip directions of DriftFlips.
const (
	DirectionWorse  = "worse"
	DirectionBetter = "better"
	DirectionNone   = "none"
)

// DriftSide is one side of a drift check: the view of a run
// (runview.FromStore for a stored run, runview.LoadBaseline for a baseline
// file) and, for a stored run, the run record, whose status and resolved
// spec a baseline file does not hold.
type DriftSide struct {
	Snap *runview.View
	// Run is the stored run; nil for a baseline file.
	Run *record.Run
}

// StoredDriftSide reads one side of a drift check from the store: a
// view of the run under its latest scoring (also when it has none).
func StoredDriftSide(ctx context.Context, st record.Reader, run *record.Run) (*DriftSide, error) {
	snap, err := runview.FromStoreUnscored(ctx, st, run)
	if err != nil {
		return nil, err
	}
	return &DriftSide{Snap: snap, Run: run}, nil
}

// BaselineDriftSide is one side of a drift check read from a baseline
// file (runview.LoadBaseline).
func BaselineDriftSide(snap *runview.View) *DriftSide { return &DriftSide{Snap: snap} }

// ID is the run's ID (for a baseline file, the run it was exported from).
func (s *DriftSide) ID() string { return s.Snap.Run.ID }

// File is the baseline file's path, or "" for a stored run.
func (s *DriftSide) File() string {
	if s.Run != nil {
		return ""
	}
	return s.Snap.Source
}

// Targets names the side's targets, in the run's order.
func (s *DriftSide) Targets() []string {
	out := make([]string, len(s.Snap.Targets))
	for i, t := range s.Snap.Targets {
		out[i] = t.Name
	}
	return out
}

func (s *DriftSide) info() RunInfo {
	if s.Run != nil {
		return runInfo(s.Run, 0)
	}
	r := s.Snap.Run
	return RunInfo{ID: r.ID, Spec: r.Spec, SpecHash: r.SpecHash, DatasetHash: r.DatasetHash, FileHash: r.FileHash, PromptHash: r.PromptHash,
		GitCommit: r.GitCommit, ScorersHash: r.ScorersHash, AssayVersion: r.AssayVersion, Cases: len(s.Snap.Cases),
		Epochs: s.Snap.Epochs, Scoring: r.Scoring, Started: r.Created.UTC().Format("2006-01-02T15:04:05Z")}
}

// Drift tests, per target both runs ran, whether the target's outputs on the
// same cases changed: verdict flips (rate, interval, a paired test), the rate
// of identical raw outputs, and the reported model fingerprints. A target
// drifted when its fingerprint changed, when at temperature 0 the interval
// of its identical-output rate lies below the threshold, or when the flip
// test's p-value is below alpha. It is DriftSides on two stored runs.
func Drift(ctx context.Context, st record.Reader, before, after *record.Run, o DriftOptions) (*DriftReport, error) {
	if o.Target != "" && (!slices.Contains(before.Targets, o.Target) || !slices.Contains(after.Targets, o.Target)) {
		return nil, fmt.Errorf("target %q is not in both runs (%s has %s; %s has %s)", o.Target,
			before.ID, strings.Join(before.Targets, ", "), after.ID, strings.Join(after.Targets, ", "))
	}
	b, err := StoredDriftSide(ctx, st, before)
	if err != nil {
		return nil, err
	}
	a, err := StoredDriftSide(ctx, st, after)
	if err != nil {
		return nil, err
	}
	return DriftSides(b, a, o)
}

// DriftSides is Drift on two sides, each a stored run or a baseline file.
// What a baseline file does not hold is left out for its side: its cases
// compare by tags only (not expected values), nothing of it came from the
// response cache, and its resolved spec and status are not checked.
func DriftSides(before, after *DriftSide, o DriftOptions) (*DriftReport, error) {
	if o.Alpha == 0 {
		o.Alpha = 0.05
	}
	if o.IdenticalThreshold == 0 {
		o.IdenticalThreshold = 0.95
	}
	if o.Test == "" {
		o.Test = stats.TestMcNemarExact
	}
	if o.MaxErrorRate == 0 {
		o.MaxErrorRate = DefaultDriftMaxErrorRate
	}
	if o.MinPairs == 0 {
		o.MinPairs = DefaultDriftMinPairs
	}
	test, err := ParseTest(o.Test)
	if err != nil {
		return nil, err
	}
	o.Test = test
	bt, at := before.Targets(), after.Targets()
	if o.Target != "" && (!slices.Contains(bt, o.Target) || !slices.Contains(at, o.Target)) {
		return nil, fmt.Errorf("target %q is not in both runs (%s has %s; %s has %s)", o.Target,
			before.ID(), strings.Join(bt, ", "), after.ID(), strings.Join(at, ", "))
	}
	bs, as := before.Snap, after.Snap
	rep := &DriftReport{Before: before.info(), After: after.info(), BeforeFile: before.File(), AfterFile: after.File(),
		Alpha: o.Alpha, IdenticalThreshold: o.IdenticalThreshold, Drifted: []string{}, Targets: []TargetDrift{}}
	for _, s := range []*DriftSide{before, after} {
		if s.Run != nil {
			rep.Warnings = append(rep.Warnings, incompleteWarnings(s.Run)...)
		}
	}
	cd, afterCase := compareSnapshotCases(before, after)
	cal, err := calibrationOf(before, o.Calibration, o.Alpha)
	if err != nil {
		return nil, err
	}
	if cal != nil {
		rep.Calibration = cal.source
		rep.Warnings = append(rep.Warnings, cal.warnings...)
	}
	dv := dataset.CompareVersions(sideName(before), bs.Run.Dataset(), sideName(after), as.Run.Dataset())
	if dv.Note != "" {
		rep.Warnings = append(rep.Warnings, dv.Note)
	}
	if !dv.Same {
		if !o.SharedCases {
			return nil, &DatasetMismatchError{Before: before.ID(), After: after.ID(),
				BeforeHash: dv.Before, AfterHash: dv.After, Cases: cd, Note: dv.Note}
		}
		rep.Cases = &cd
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("the runs measured different dataset versions (%s before, %s after): only the %d cases both measured are paired (shared cases)",
			ShortHash(dv.Before), ShortHash(dv.After), cd.Shared))
		if before.Run == nil || after.Run == nil {
			rep.Warnings = append(rep.Warnings, "a baseline file holds the cases' IDs and tags but not their expected values: a shared case whose expected value changed cannot be told")
		}
	}
	if cd.Changed > 0 {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("%s kept their ID but changed their expected value or tags: a flip there may come from the case, not the model",
			countNoun(cd.Changed, "shared case")))
	}
	if bs.Run.PromptHash != as.Run.PromptHash {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("the prompt changed between the runs (prompt %s before, %s after): outputs may differ because of the prompt, not the model",
			ShortHash(bs.Run.PromptHash), ShortHash(as.Run.PromptHash)))
	}
	if bs.Run.ScorersHash != "" && as.Run.ScorersHash != "" && bs.Run.ScorersHash != as.Run.ScorersHash {
		var note string
		if before.Run != nil && after.Run != nil {
			note = scorerFilesNote(before.Run.Config, after.Run.Config)
		}
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("the scorer configuration changed (scorers %s before, %s after%s): verdicts may flip with no change in the outputs",
			ShortHash(bs.Run.ScorersHash), ShortHash(as.Run.ScorersHash), note))
	}
	var targetChanges map[string][]FieldChange
	if before.Run != nil && after.Run != nil && len(before.Run.Config) > 0 && len(after.Run.Config) > 0 {
		if sd, err := diffSpecs(before.Run.Config, after.Run.Config); err == nil {
			targetChanges = map[string][]FieldChange{}
			for _, tc := range sd.Targets {
				targetChanges[tc.Name] = tc.Changes
			}
		}
	}
	for _, name := range at {
		if !slices.Contains(bt, name) {
			rep.Only = append(rep.Only, name)
			continue
		}
		if o.Target != "" && name != o.Target {
			continue
		}
		tb, ta := bs.Target(name), as.Target(name)
		td := driftOf(name, bs, as, tb, ta, afterCase, o)
		td.Fingerprints = DriftFingerprints{Before: modelCounts(tb.Fingerprints), After: modelCounts(ta.Fingerprints)}
		td.Fingerprints.Changed = modelsChanged(td.Fingerprints.Before, td.Fingerprints.After)
		td.Temperature = DriftTemperature{Before: tb.Temperature, After: ta.Temperature,
			BeforeUnknown: !tb.TemperatureKnown, AfterUnknown: !ta.TemperatureKnown}
		td.Temperature.Zero = tb.TemperatureKnown && ta.TemperatureKnown && tb.Temperature != nil && ta.Temperature != nil &&
			*tb.Temperature == 0 && *ta.Temperature == 0
		td.Health = DriftHealth{Before: sideHealth(tb), After: sideHealth(ta)}
		if cal != nil {
			td.Calibration = cal.of(name, tb, td)
			if ct := cal.target(name); ct != nil {
				h := sideHealth(ct)
				td.Health.Calibration = &h
			}
		}
		decide(&td, o, temperatureUnknown(before, after, td.Temperature))
		if why := cannotJudge(td, o, before, after, o.Calibration); len(why) > 0 {
			td.Verdict = DriftCannotJudge
			td.Reasons = nil
			rep.CannotJudge = append(rep.CannotJudge, why...)
		}
		if cs := targetChanges[name]; len(cs) > 0 {
			fields := make([]string, len(cs))
			for i, c := range cs {
				fields[i] = c.Field
			}
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("target %s is configured differently in the two runs (%s): a change in its outputs may come from that, not from the vendor",
				name, strings.Join(fields, ", ")))
		} else if targetChanges == nil && tb.ConfigHash != "" && ta.ConfigHash != "" && tb.ConfigHash != ta.ConfigHash {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("target %s is configured differently in the two runs (a baseline file records a hash of the target's settings, not the settings): a change in its outputs may come from that, not from the vendor",
				name))
		}
		if td.Verdict == DriftDrifted {
			rep.Drifted = append(rep.Drifted, name)
		}
		if g := td.Flips.Clusters; td.Flips.Test == stats.TestClusterT && g < minClusters {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("target %s: the flip test is clustered by the cluster tag on only %d clusters: below %d a cluster-robust test (CR1, t on %d degrees of freedom) can reject too often",
				name, g, minClusters, g-1))
		}
		rep.Targets = append(rep.Targets, td)
	}
	for _, name := range bt {
		if !slices.Contains(at, name) {
			rep.Only = append(rep.Only, name)
		}
	}
	return rep, nil
}

// compareSnapshotCases compares two sides' cases by ID (a snapshot lists
// each case once), and maps each case of the before side to its index in
// the after side (-1 when it has none). A shared case changed when its
// expected value, tags or weight differ; with a baseline file on either
// side, which holds no expected values, its tags alone are compared.
func compareSnapshotCases(before, after *DriftSide) (CaseDiff, []int) {
	bs, as := before.Snap, after.Snap
	full := before.Run != nil && after.Run != nil
	d := CaseDiff{Before: len(bs.Cases), After: len(as.Cases)}
	inBefore := make(map[string]int, len(bs.Cases))
	for i, c := range bs.Cases {
		inBefore[c.ID] = i
	}
	afterCase := make([]int, len(bs.Cases))
	for i := range afterCase {
		afterCase[i] = -1
	}
	for ia, c := range as.Cases {
		ib, ok := inBefore[c.ID]
		if !ok {
			d.Added++
			if len(d.AddedIDs) < maxIDsShown {
				d.AddedIDs = append(d.AddedIDs, c.ID)
			}
			continue
		}
		afterCase[ib] = ia
		d.Shared++
		bt, at := bs.CaseTags(ib), as.CaseTags(ia)
		changed := !maps.Equal(bt, at)
		if full {
			changed = storedCaseDigest(bs, ib, bt) != storedCaseDigest(as, ia, at)
		}
		if changed {
			d.Changed++
			if len(d.ChangedIDs) < maxIDsShown {
				d.ChangedIDs = append(d.ChangedIDs, c.ID)
			}
		}
	}
	for i, c := range bs.Cases {
		if afterCase[i] < 0 {
			d.Removed++
			if len(d.RemovedIDs) < maxIDsShown {
				d.RemovedIDs = append(d.RemovedIDs, c.ID)
			}
		}
	}
	return d, afterCase
}

// storedCaseDigest is caseDigest of case i of a view taken from the store.
func storedCaseDigest(v *runview.View, i int, tags map[string]string) [16]byte {
	return caseDigest(record.Case{ID: v.Cases[i].ID, Expected: v.Expected(i), Tags: tags, Weight: v.Weight(i)})
}

// driftOf pairs one target's results by case and epoch and counts flips
// and identical outputs.
func driftOf(name string, bs, as *runview.View, b, a *runview.Target, afterCase []int, o DriftOptions) TargetDrift {
	td := TargetDrift{Target: name}
	f, id := &td.Flips, &td.Identical
	vb, va := primaryVerdicts(bs, b), primaryVerdicts(as, a)
	epochs := min(bs.Epochs, as.Epochs)
	// Per case: the mean verdict after and before over the epochs both
	// scored, and its cluster, for the t tests.
	var meanA, meanB []float64
	var clusters []string
	clustered := false
	for ib := range afterCase {
		if _, ok := bs.Tag(ib, clusterTag); ok {
			clustered = true
			break
		}
	}
	for ib, ia := range afterCase {
		if ia < 0 {
			continue
		}
		var sumA, sumB, k float64
		for e := range epochs {
			jb, ja := ib*bs.Epochs+e, ia*as.Epochs+e
			if flag(b.Errored, jb) || flag(a.Errored, ja) {
				continue // a failed call is not behaviour
			}
			if pb, pa := verdictAt(vb, jb), verdictAt(va, ja); pb >= 0 && pa >= 0 {
				sumA, sumB, k = sumA+float64(pa), sumB+float64(pb), k+1
			}
		}
		if k > 0 {
			meanA, meanB = append(meanA, sumA/k), append(meanB, sumB/k)
			if clustered {
				cl := "case:" + bs.Cases[ib].ID
				if v, ok := bs.Tag(ib, clusterTag); ok {
					cl = "c:" + v
				}
				clusters = append(clusters, cl)
			}
		}
		for e := range epochs {
			jb, ja := ib*bs.Epochs+e, ia*as.Epochs+e
			if jb >= len(b.LatencyMS) || ja >= len(a.LatencyMS) {
				continue
			}
			if !b.Has(jb) || !a.Has(ja) {
				continue
			}
			td.Paired++
			if flag(b.Cached, jb) {
				td.FromCache.Before++
			}
			if flag(a.Cached, ja) {
				td.FromCache.After++
			}
			// A failed call says nothing of the model's behaviour: the
			// pair is counted apart, by side and error kind.
			eb, ea := flag(b.Errored, jb), flag(a.Errored, ja)
			if eb || ea {
				id.Errored++
				td.Excluded.Pairs++
				if eb {
					td.Excluded.Before = addKind(td.Excluded.Before, errorKindAt(b, jb))
				}
				if ea {
					td.Excluded.After = addKind(td.Excluded.After, errorKindAt(a, ja))
				}
				continue
			}
			id.N++
			if b.OutputHash[jb] == a.OutputHash[ja] {
				id.Identical++
			}
			pb, pa := verdictAt(vb, jb), verdictAt(va, ja)
			if pb < 0 || pa < 0 {
				continue
			}
			f.N++
			switch {
			case pb == 1 && pa == 0:
				f.PassToFail++
				td.FlippedCases = append(td.FlippedCases, DriftFlippedCase{Case: bs.Cases[ib].ID, Epoch: e + 1, Direction: "pass_to_fail"})
			case pb == 0 && pa == 1:
				f.FailToPass++
				td.FlippedCases = append(td.FlippedCases, DriftFlippedCase{Case: bs.Cases[ib].ID, Epoch: e + 1, Direction: "fail_to_pass"})
			}
		}
	}
	f.Flipped = f.PassToFail + f.FailToPass
	if td.FlippedCases == nil {
		td.FlippedCases = []DriftFlippedCase{}
	}
	// pass→fail first (stable: case order within each direction).
	sort.SliceStable(td.FlippedCases, func(i, j int) bool {
		return td.FlippedCases[i].Direction == "pass_to_fail" && td.FlippedCases[j].Direction != "pass_to_fail"
	})
	f.CIMethod, id.CIMethod = "wilson", "wilson"
	if f.N > 0 {
		f.Rate = round6(float64(f.Flipped) / float64(f.N))
		w := stats.Wilson(f.Flipped, f.N, o.Alpha)
		f.CI = [2]float64{round6(w.Lo), round6(w.Hi)}
	}
	f.Test, f.PValue = o.Test, 1
	var p stats.Paired
	var err error
	switch {
	case clustered:
		p, err = stats.ClusteredPaired(meanA, meanB, clusters, o.Alpha)
	case epochs > 1:
		p, err = stats.PairedMeans(meanA, meanB, o.Alpha)
	default:
		// A = after, B = before: A only is fail→pass.
		p, err = stats.PairedBinaryWith(stats.PairTable{Both: f.N - f.Flipped, AOnly: f.FailToPass, BOnly: f.PassToFail}, o.Alpha, o.Test)
	}
	if err == nil && (clustered || epochs > 1) && p.SE == 0 {
		// Every case moved by the same amount: the t test would call two
		// cases that both flipped certain (p = 0). Test them as that many
		// pass/fail cases.
		if q, qerr := stats.ConstantDifference(meanA, meanB, o.Alpha); qerr == nil {
			p = q
		}
	}
	if err == nil {
		f.Test, f.DF, f.Clusters = p.Test, round6(p.DF), p.Clusters
		f.PValue = p.PValue
		if math.IsNaN(f.PValue) {
			// No variation to test (every case the same difference, or a
			// single cluster): nothing shows the flips lean one way.
			f.PValue = 1
		}
	}
	switch {
	case f.PassToFail > f.FailToPass:
		f.Direction = DirectionWorse
	case f.PassToFail < f.FailToPass:
		f.Direction = DirectionBetter
	default:
		f.Direction = DirectionNone
	}
	if id.N > 0 {
		id.Rate = round6(float64(id.Identical) / float64(id.N))
		w := stats.Wilson(id.Identical, id.N, o.Alpha)
		id.CI = [2]float64{round6(w.Lo), round6(w.Hi)}
	}
	return td
}

// primaryVerdicts is a target's column of primary verdicts (nil when the
// run has no scores).
func primaryVerdicts(s *runview.View, t *runview.Target) []int8 {
	if s.Primary == "" {
		return nil
	}
	return t.Pass[s.Primary]
}

func verdictAt(v []int8, j int) int8 {
	if j >= len(v) {
		return -1
	}
	return v[j]
}

// flag reads a per-result flag column that may be absent (nil).
func flag(col []bool, j int) bool { return j < len(col) && col[j] }

// modelCounts lists a snapshot's fingerprints as reported models, most
// results first.
func modelCounts(fps []runview.Fingerprint) []ModelCount {
	out := make([]ModelCount, len(fps))
	for i, fp := range fps {
		out[i] = ModelCount{Model: fp.Model, Fingerprint: fp.System, Results: fp.Count}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Results != out[j].Results {
			return out[i].Results > out[j].Results
		}
		if out[i].Model != out[j].Model {
			return out[i].Model < out[j].Model
		}
		return out[i].Fingerprint < out[j].Fingerprint
	})
	return out
}

// temperatureUnknown says why a target's temperature is not known ("" when
// it is known on both sides).
func temperatureUnknown(before, after *DriftSide, t DriftTemperature) string {
	var why []string
	for _, x := range []struct {
		unknown bool
		side    *DriftSide
	}{{t.BeforeUnknown, before}, {t.AfterUnknown, after}} {
		switch {
		case !x.unknown:
		case x.side.Run == nil:
			why = append(why, fmt.Sprintf("the baseline file %s does not record it (an older assay wrote it; export the baseline again to record it)", x.side.Snap.Source))
		default:
			why = append(why, fmt.Sprintf("run %s carries no resolved spec", x.side.ID()))
		}
	}
	return strings.Join(why, "; ")
}

// decide sets a target's verdict, reasons and notes; tempUnknown says why
// its temperature is not known ("" when it is).
func decide(td *TargetDrift, o DriftOptions, tempUnknown string) {
	level := fmt.Sprintf("%g%%", 100*(1-o.Alpha))
	if td.Paired == 0 && td.Flips.N == 0 {
		td.Verdict = DriftUnpaired
		td.Notes = append(td.Notes, "the runs share no result of this target: nothing to compare")
		return
	}
	fp := td.Fingerprints
	if fp.Changed {
		r := fmt.Sprintf("the reported model changed: %s before, %s after", modelList(fp.Before), modelList(fp.After))
		if o.IgnoreFingerprints {
			td.Notes = append(td.Notes, r+" (not counted: fingerprints ignored)")
		} else {
			td.Reasons = append(td.Reasons, r)
		}
	}
	id := td.Identical
	cal := td.Calibration
	// With a calibration three tests decide (the flips' direction, the
	// flip rate and the identical-output rate against the model's own),
	// each at alpha/3, so a merely non-deterministic model is flagged at
	// most alpha of the time.
	flipLevel := o.Alpha
	if cal != nil {
		flipLevel = cal.Level
	}
	switch {
	case cal != nil && id.N > 0 && cal.Pairs > 0:
		t := cal.IdenticalTest
		msg := fmt.Sprintf("%d of %d outputs are identical (%.1f%%) against the model's own self-agreement of %d of %d (%.1f%%, %s)",
			id.Identical, id.N, 100*id.Rate, cal.Identical, cal.Pairs, 100*cal.Rate, cal.Source)
		if t.PValue < cal.Level {
			td.Reasons = append(td.Reasons, fmt.Sprintf("%s: fewer than the model's noise explains (one-sided two-proportion z = %.2f, p = %.2g < %.3g)", msg, t.Z, t.PValue, cal.Level))
		} else {
			td.Notes = append(td.Notes, fmt.Sprintf("%s: within the model's own noise (one-sided p = %.2g)", msg, t.PValue))
		}
	case cal != nil:
		td.Notes = append(td.Notes, "the calibration has no pair with an output on both sides: the identical-output rate is uncalibrated and decides nothing")
	case td.Temperature.Zero && id.N > 0 && id.CI[1] < o.IdenticalThreshold:
		td.Notes = append(td.Notes, fmt.Sprintf("uncalibrated: at temperature 0 only %d of %d outputs are identical (%.1f%%, %s CI [%.1f, %.1f], below the %g%% threshold), but hosted APIs are not deterministic at temperature 0, so this decides nothing alone; calibrate with --calibrate RUN or a baseline of two epochs",
			id.Identical, id.N, 100*id.Rate, level, 100*id.CI[0], 100*id.CI[1], 100*o.IdenticalThreshold))
	case td.Temperature.Zero:
		td.Notes = append(td.Notes, "both runs asked for temperature 0; the identical-output rate is uncalibrated (the model's own self-agreement is not known) and decides nothing alone: calibrate with --calibrate RUN or a baseline of two epochs")
	case tempUnknown != "":
		td.Notes = append(td.Notes, "the temperature is unknown: "+tempUnknown+"; the identical-output rate is shown but decides nothing")
	case td.Temperature.Before == nil || td.Temperature.After == nil:
		td.Notes = append(td.Notes, "the temperature is not set in both runs' specs (the provider's default applies): the identical-output rate is shown but decides nothing; set temperature: 0 on a canary target")
	default:
		td.Notes = append(td.Notes, fmt.Sprintf("temperature %g before, %g after: identical outputs are expected to be rare above 0, so the identical-output rate decides nothing; the flips do",
			*td.Temperature.Before, *td.Temperature.After))
	}
	f := td.Flips
	if f.N > 0 && f.PValue < flipLevel {
		td.Reasons = append(td.Reasons, fmt.Sprintf("the primary verdict flipped %d times pass→fail and %d times fail→pass (%s p = %.2g < %.3g)",
			f.PassToFail, f.FailToPass, TestLabel(f.Test), f.PValue, flipLevel))
	}
	if cal != nil && f.N > 0 && cal.FlipN > 0 {
		t := cal.FlipTest
		msg := fmt.Sprintf("the primary verdict flipped in %d of %d pairs (%.1f%%) against the model's own %d of %d (%.1f%%)",
			f.Flipped, f.N, 100*f.Rate, cal.Flipped, cal.FlipN, 100*cal.FlipRate)
		if t.PValue < cal.Level {
			td.Reasons = append(td.Reasons, fmt.Sprintf("%s: more than the model's noise explains (one-sided two-proportion z = %.2f, p = %.2g < %.3g)", msg, t.Z, t.PValue, cal.Level))
		} else {
			td.Notes = append(td.Notes, fmt.Sprintf("%s: within the model's own noise (one-sided p = %.2g)", msg, t.PValue))
		}
	}
	if td.Excluded.Pairs > 0 {
		td.Notes = append(td.Notes, fmt.Sprintf("%s left out of the flips and identical outputs because a call failed (before: %s; after: %s): errors are not behaviour",
			countNoun(td.Excluded.Pairs, "pair"), kindList(td.Excluded.Before), kindList(td.Excluded.After)))
	}
	if c := td.FromCache; c.After > 0 || c.Before > 0 {
		td.Notes = append(td.Notes, fmt.Sprintf("%d of %d results after and %d before came from the response cache: a cached reply is identical by construction, so drift cannot show in it; re-run the canary set with `assay run --no-cache`",
			c.After, td.Paired, c.Before))
	}
	td.Verdict = DriftStable
	if len(td.Reasons) > 0 {
		td.Verdict = DriftDrifted
	}
}

func modelList(ms []ModelCount) string {
	if len(ms) == 0 {
		return "none reported"
	}
	parts := make([]string, len(ms))
	for i, m := range ms {
		s := m.Model
		if s == "" {
			s = "(no model)"
		}
		if m.Fingerprint != "" {
			s += " " + m.Fingerprint
		}
		parts[i] = s
	}
	return strings.Join(parts, ", ")
}
