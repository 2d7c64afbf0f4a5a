package analysis

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/runview"
)

// This file holds what keeps a drift check honest about its evidence: a
// side's health (a failed call is not behaviour, and a side whose calls
// mostly failed cannot be judged) and the calibration of the drift signals
// to the model's own noise (hosted APIs are not deterministic at
// temperature 0).

// driftTests is how many tests decide a calibrated drift check (the flips'
// direction, the flip rate and the identical-output rate against the
// calibration): each is decided at alpha/driftTests (Bonferroni).
const driftTests = 3

// driftCal is where a drift check learns a model's self-agreement: a
// second run of the before side's configuration (side, with each before
// case's index in it), or epochs 1 and 2 of the before side (side nil).
type driftCal struct {
	source   string
	warnings []string
	side     *DriftSide
	caseIn   []int // before case → calibration case (-1: none)
	epochs   int
	before   *runview.View
	level    float64
}

// calibrationOf returns the calibration of a drift check: the run given,
// else the before side's first two epochs when it has two or more, else
// nil (uncalibrated).
func calibrationOf(before, calib *DriftSide, alpha float64) (*driftCal, error) {
	level := alpha / driftTests
	bs := before.Snap
	if calib == nil {
		if bs.Epochs < 2 {
			return nil, nil
		}
		return &driftCal{source: "epochs 1 and 2 of run " + before.ID(), before: bs, level: level}, nil
	}
	cs := calib.Snap
	if calib.ID() == before.ID() {
		return nil, fmt.Errorf("the calibration %s is the baseline's own run: a calibration is a second run of its configuration (run the canary set again, e.g. assay run SPEC --no-cache), against which the baseline's self-agreement is measured", sideName(calib))
	}
	if dv := dataset.CompareVersions(sideName(calib), cs.Run.Dataset(), sideName(before), bs.Run.Dataset()); !dv.Same {
		msg := fmt.Sprintf("the calibration %s measured a different dataset version from %s (dataset %s, not %s): a calibration is a second run of the baseline's configuration on the same cases",
			sideName(calib), sideName(before), ShortHash(dv.Before), ShortHash(dv.After))
		if dv.Note != "" {
			msg += " (" + dv.Note + ")"
		}
		return nil, errors.New(msg)
	}
	c := &driftCal{source: sideName(calib), side: calib, epochs: min(bs.Epochs, cs.Epochs), before: bs, level: level}
	_, c.caseIn = compareSnapshotCases(before, calib)
	if cs.Run.PromptHash != bs.Run.PromptHash {
		c.warnings = append(c.warnings, fmt.Sprintf("the calibration %s used another prompt than %s (prompt %s, not %s): its self-agreement may not be the model's",
			sideName(calib), sideName(before), ShortHash(cs.Run.PromptHash), ShortHash(bs.Run.PromptHash)))
	}
	for _, t := range bs.Targets {
		ct := cs.Target(t.Name)
		switch {
		case ct == nil:
			c.warnings = append(c.warnings, fmt.Sprintf("the calibration %s did not run target %s: its drift check is uncalibrated", sideName(calib), t.Name))
		case t.ConfigHash != "" && ct.ConfigHash != "" && t.ConfigHash != ct.ConfigHash:
			c.warnings = append(c.warnings, fmt.Sprintf("target %s is configured differently in the calibration %s and in %s: its self-agreement may not be the model's", t.Name, sideName(calib), sideName(before)))
		}
	}
	return c, nil
}

// target is the calibration's column of a target (nil for the epochs of
// the before side, or when the calibration did not run it).
func (c *driftCal) target(name string) *runview.Target {
	if c.side == nil {
		return nil
	}
	return c.side.Snap.Target(name)
}

// of measures a target's self-agreement and tests the canary's rates (in
// td) against it; nil when the calibration did not run the target.
func (c *driftCal) of(name string, tb *runview.Target, td TargetDrift) *DriftCalibration {
	out := &DriftCalibration{Source: c.source, Level: c.level}
	vb := primaryVerdicts(c.before, tb)
	pair := func(b *runview.Target, jb int, vb []int8, x *runview.Target, jx int, vx []int8) {
		if jb >= len(b.LatencyMS) || jx >= len(x.LatencyMS) || !b.Has(jb) || !x.Has(jx) {
			return
		}
		if flag(b.Errored, jb) || flag(x.Errored, jx) {
			out.Excluded++
			return
		}
		out.Pairs++
		if b.OutputHash[jb] == x.OutputHash[jx] {
			out.Identical++
		}
		if pb, px := verdictAt(vb, jb), verdictAt(vx, jx); pb >= 0 && px >= 0 {
			out.FlipN++
			if pb != px {
				out.Flipped++
			}
		}
	}
	e := c.before.Epochs
	if c.side == nil {
		for i := range c.before.Cases {
			pair(tb, i*e, vb, tb, i*e+1, vb)
		}
	} else {
		ct := c.side.Snap.Target(name)
		if ct == nil {
			return nil
		}
		vc, ce := primaryVerdicts(c.side.Snap, ct), c.side.Snap.Epochs
		for ib, ic := range c.caseIn {
			if ic < 0 {
				continue
			}
			for k := range c.epochs {
				pair(tb, ib*e+k, vb, ct, ic*ce+k, vc)
			}
		}
	}
	if out.Pairs > 0 {
		out.Rate = round6(float64(out.Identical) / float64(out.Pairs))
	}
	if out.FlipN > 0 {
		out.FlipRate = round6(float64(out.Flipped) / float64(out.FlipN))
	}
	out.IdenticalTest = TwoProportionZ(td.Identical.Identical, td.Identical.N, out.Identical, out.Pairs, "smaller")
	out.FlipTest = TwoProportionZ(td.Flips.Flipped, td.Flips.N, out.Flipped, out.FlipN, "larger")
	return out
}

// TwoProportionZ is the one-sided two-sample z test of proportions with
// the pooled variance (statsmodels' proportions_ztest): is x1/n1 smaller
// (alternative "smaller") or larger ("larger") than x0/n0? With no
// variation in the pooled sample, or an empty sample, the p-value is 1:
// nothing shows a difference.
func TwoProportionZ(x1, n1, x0, n0 int, alternative string) DriftRateTest {
	t := DriftRateTest{Alternative: alternative, PValue: 1}
	if n1 > 0 {
		t.Canary = round6(float64(x1) / float64(n1))
	}
	if n0 > 0 {
		t.Calibrated = round6(float64(x0) / float64(n0))
	}
	if n1 == 0 || n0 == 0 {
		return t
	}
	p1, p0 := float64(x1)/float64(n1), float64(x0)/float64(n0)
	pooled := float64(x1+x0) / float64(n1+n0)
	v := pooled * (1 - pooled) * (1/float64(n1) + 1/float64(n0))
	if !(v > 0) {
		return t
	}
	z := (p1 - p0) / math.Sqrt(v)
	t.Z = z
	// "smaller": Φ(z) = erfc(−z/√2)/2; "larger": 1 − Φ(z) = erfc(z/√2)/2.
	if alternative == "smaller" {
		t.PValue = 0.5 * math.Erfc(-z/math.Sqrt2)
	} else {
		t.PValue = 0.5 * math.Erfc(z/math.Sqrt2)
	}
	return t
}

// sideHealth counts a target's stored results on one side and those whose
// call failed, by error kind.
func sideHealth(t *runview.Target) DriftSideHealth {
	var h DriftSideHealth
	for j := range t.LatencyMS {
		if !t.Has(j) {
			continue
		}
		h.Calls++
		if flag(t.Errored, j) {
			h.Failed++
			h.Kinds = addKind(h.Kinds, errorKindAt(t, j))
		}
	}
	return h
}

// errorKindAt is the provider error kind of a failed result: the primary
// verdict's failure kind, which for a failed call is its error kind, or
// "error" when the run was not scored.
func errorKindAt(t *runview.Target, j int) string {
	if j < len(t.Kind) {
		if k := t.KindAt(j); k != "" {
			return k
		}
	}
	return "error"
}

func addKind(m map[string]int, kind string) map[string]int {
	if m == nil {
		m = map[string]int{}
	}
	m[kind]++
	return m
}

// kindCounts lists error kinds with their counts, most first ("none"
// when there are none).
func kindCounts(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	kinds := sortedKinds(m)
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%d %s", m[k], k)
	}
	return strings.Join(parts, ", ")
}

// kindList names the error kinds ("auth"), with counts when there are
// several ("150 auth, 2 timeout").
func kindList(m map[string]int) string {
	if len(m) == 1 {
		for k := range m {
			return k
		}
	}
	return kindCounts(m)
}

func sortedKinds(m map[string]int) []string {
	kinds := make([]string, 0, len(m))
	for k := range m {
		kinds = append(kinds, k)
	}
	sort.Slice(kinds, func(i, j int) bool {
		if m[kinds[i]] != m[kinds[j]] {
			return m[kinds[i]] > m[kinds[j]]
		}
		return kinds[i] < kinds[j]
	})
	return kinds
}

// sideName names a side for people: "run R", or "baseline file F (run R)".
func sideName(s *DriftSide) string {
	if s.Run == nil {
		return fmt.Sprintf("baseline file %s (run %s)", s.Snap.Source, s.ID())
	}
	return "run " + s.ID()
}

// cannotJudge says why a target cannot be judged (nil when it can): a
// side (or the calibration) whose calls of it failed more often than
// o.MaxErrorRate, or fewer than o.MinPairs pairs with an output on both
// sides.
func cannotJudge(td TargetDrift, o DriftOptions, before, after, calib *DriftSide) []string {
	var why []string
	sides := []struct {
		h    *DriftSideHealth
		side *DriftSide
	}{{&td.Health.Before, before}, {&td.Health.After, after}}
	if td.Health.Calibration != nil && calib != nil {
		sides = append(sides, struct {
			h    *DriftSideHealth
			side *DriftSide
		}{td.Health.Calibration, calib})
	}
	for _, s := range sides {
		if s.h.Calls > 0 && float64(s.h.Failed) > o.MaxErrorRate*float64(s.h.Calls) {
			why = append(why, fmt.Sprintf("cannot judge: %d of %d calls of %s in %s failed: %s",
				s.h.Failed, s.h.Calls, td.Target, sideName(s.side), kindList(s.h.Kinds)))
		}
	}
	if len(why) > 0 || td.Verdict == DriftUnpaired {
		return why
	}
	if td.Identical.N < o.MinPairs {
		why = append(why, fmt.Sprintf("cannot judge: only %d pairs of %s have an output on both sides (%d left out because a call failed), fewer than --min-pairs %d",
			td.Identical.N, td.Target, td.Excluded.Pairs, o.MinPairs))
	}
	if c := td.Calibration; c != nil && c.Pairs < o.MinPairs {
		why = append(why, fmt.Sprintf("cannot judge: only %d calibration pairs of %s (%s) have an output on both sides, fewer than --min-pairs %d",
			c.Pairs, td.Target, c.Source, o.MinPairs))
	}
	return why
}
