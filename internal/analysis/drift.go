package analysis

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/assay-eval/assay/internal/stats"
	"github.com/assay-eval/assay/internal/store"
)

// Drift verdicts.
const (
	DriftDrifted  = "drifted"
	DriftStable   = "stable"
	DriftUnpaired = "unpaired" // the runs share no result of the target
)

// DriftOptions tune Drift.
type DriftOptions struct {
	// Alpha is the level of the McNemar test and of the intervals (0.05).
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
}

// DriftReport says, per target both runs ran, whether its outputs on the
// same cases changed between the runs.
type DriftReport struct {
	Before             RunInfo       `json:"before"`
	After              RunInfo       `json:"after"`
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
}

// DriftFlips is the primary verdict's flip rate over the pairs both runs
// scored, with its Wilson interval, and McNemar's exact test of whether the
// flips lean one way.
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
	// Direction is worse (more pass→fail), better, or none.
	Direction string `json:"direction"`
}

// DriftIdentical is the rate of byte-identical raw outputs over the paired
// results; a pair where either call failed counts as not identical.
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
// (absent when not set: the provider's default applies).
type DriftTemperature struct {
	Before *float64 `json:"before,omitempty"`
	After  *float64 `json:"after,omitempty"`
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

// Drift tests, per target both runs ran, whether the target's outputs on the
// same cases changed: verdict flips (rate, interval, McNemar exact), the rate
// of identical raw outputs, and the reported model fingerprints. A target
// drifted when its fingerprint changed, when at temperature 0 the interval
// of its identical-output rate lies below the threshold, or when McNemar's
// p-value is below alpha.
func Drift(ctx context.Context, st store.Store, before, after *store.Run, o DriftOptions) (*DriftReport, error) {
	if o.Alpha == 0 {
		o.Alpha = 0.05
	}
	if o.IdenticalThreshold == 0 {
		o.IdenticalThreshold = 0.95
	}
	if o.Target != "" && (!slices.Contains(before.Targets, o.Target) || !slices.Contains(after.Targets, o.Target)) {
		return nil, fmt.Errorf("target %q is not in both runs (%s has %s; %s has %s)", o.Target,
			before.ID, strings.Join(before.Targets, ", "), after.ID, strings.Join(after.Targets, ", "))
	}
	rep := &DriftReport{Before: runInfo(before, 0), After: runInfo(after, 0), Alpha: o.Alpha,
		IdenticalThreshold: o.IdenticalThreshold, Drifted: []string{}, Targets: []TargetDrift{}}
	rep.Warnings = append(rep.Warnings, incompleteWarnings(before, after)...)
	ci := newCaseIndex()
	cd, err := readCases(ctx, st, before.ID, after.ID, ci)
	if err != nil {
		return nil, err
	}
	if before.DatasetHash != after.DatasetHash {
		if !o.SharedCases {
			return nil, &DatasetMismatchError{Before: before.ID, After: after.ID,
				BeforeHash: before.DatasetHash, AfterHash: after.DatasetHash, Cases: cd}
		}
		rep.Cases = &cd
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("the runs measured different dataset versions (%s before, %s after): only the %d cases both measured are paired (shared cases)",
			ShortHash(before.DatasetHash), ShortHash(after.DatasetHash), cd.Shared))
	}
	if cd.Changed > 0 {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("%s kept their ID but changed their expected value or tags: a flip there may come from the case, not the model",
			countNoun(cd.Changed, "shared case")))
	}
	if before.PromptHash != after.PromptHash {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("the prompt changed between the runs (prompt %s before, %s after): outputs may differ because of the prompt, not the model",
			ShortHash(before.PromptHash), ShortHash(after.PromptHash)))
	}
	if before.ScorersHash != "" && after.ScorersHash != "" && before.ScorersHash != after.ScorersHash {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("the scorer configuration changed (scorers %s before, %s after): verdicts may flip with no change in the outputs",
			ShortHash(before.ScorersHash), ShortHash(after.ScorersHash)))
	}
	var targetChanges map[string][]FieldChange
	if len(before.Config) > 0 && len(after.Config) > 0 {
		if sd, err := diffSpecs(before.Config, after.Config); err == nil {
			targetChanges = map[string][]FieldChange{}
			for _, tc := range sd.Targets {
				targetChanges[tc.Name] = tc.Changes
			}
		}
	}
	want := func(t string) bool {
		return (o.Target == "" || t == o.Target) && slices.Contains(before.Targets, t) && slices.Contains(after.Targets, t)
	}
	b, err := loadSide(ctx, st, before, ci, want)
	if err != nil {
		return nil, err
	}
	a, err := loadSide(ctx, st, after, ci, want)
	if err != nil {
		return nil, err
	}
	tb, ta := temperatures(before.Config), temperatures(after.Config)
	for _, name := range after.Targets {
		if !slices.Contains(before.Targets, name) {
			rep.Only = append(rep.Only, name)
			continue
		}
		if !want(name) {
			continue
		}
		td := driftOf(name, b.targets[name], a.targets[name], o)
		td.Fingerprints = DriftFingerprints{Before: b.models(name), After: a.models(name)}
		td.Fingerprints.Changed = modelsChanged(td.Fingerprints.Before, td.Fingerprints.After)
		td.Temperature = DriftTemperature{Before: tb[name], After: ta[name]}
		td.Temperature.Zero = tb[name] != nil && ta[name] != nil && *tb[name] == 0 && *ta[name] == 0
		decide(&td, o)
		if cs := targetChanges[name]; len(cs) > 0 {
			fields := make([]string, len(cs))
			for i, c := range cs {
				fields[i] = c.Field
			}
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("target %s is configured differently in the two runs (%s): a change in its outputs may come from that, not from the vendor",
				name, strings.Join(fields, ", ")))
		}
		if td.Verdict == DriftDrifted {
			rep.Drifted = append(rep.Drifted, name)
		}
		rep.Targets = append(rep.Targets, td)
	}
	for _, name := range before.Targets {
		if !slices.Contains(after.Targets, name) {
			rep.Only = append(rep.Only, name)
		}
	}
	return rep, nil
}

// driftOf pairs one target's results and counts flips and identical outputs.
func driftOf(name string, b, a *targetSide, o DriftOptions) TargetDrift {
	td := TargetDrift{Target: name}
	f, id := &td.Flips, &td.Identical
	pairSlots(b, a, func(_, _, jb, ja int) {
		fb, fa := b.flags[jb], a.flags[ja]
		if fb&sideHasResult != 0 && fa&sideHasResult != 0 {
			td.Paired++
			id.N++
			switch {
			case fb&sideErrored != 0 || fa&sideErrored != 0:
				id.Errored++
			case b.digest[jb] == a.digest[ja]:
				id.Identical++
			}
			if fb&sideCached != 0 {
				td.FromCache.Before++
			}
			if fa&sideCached != 0 {
				td.FromCache.After++
			}
		}
		vb, va := b.verdict[jb], a.verdict[ja]
		if vb < 0 || va < 0 {
			return
		}
		f.N++
		switch {
		case vb == 1 && va == 0:
			f.PassToFail++
		case vb == 0 && va == 1:
			f.FailToPass++
		}
	})
	f.Flipped = f.PassToFail + f.FailToPass
	f.CIMethod, f.Test, id.CIMethod = "wilson", "mcnemar_exact", "wilson"
	if f.N > 0 {
		f.Rate = round6(float64(f.Flipped) / float64(f.N))
		w := stats.Wilson(f.Flipped, f.N, o.Alpha)
		f.CI = [2]float64{round6(w.Lo), round6(w.Hi)}
	}
	f.PValue = stats.McNemarExact(f.PassToFail, f.FailToPass)
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

// decide sets a target's verdict, reasons and notes.
func decide(td *TargetDrift, o DriftOptions) {
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
	switch {
	case td.Temperature.Zero && id.N > 0 && id.CI[1] < o.IdenticalThreshold:
		td.Reasons = append(td.Reasons, fmt.Sprintf("at temperature 0 only %d of %d outputs are identical (%.1f%%, %s CI [%.1f, %.1f]): the upper bound is below the %g%% threshold",
			id.Identical, id.N, 100*id.Rate, level, 100*id.CI[0], 100*id.CI[1], 100*o.IdenticalThreshold))
	case td.Temperature.Zero:
		td.Notes = append(td.Notes, "both runs asked for temperature 0: non-identical outputs are the drift signal")
	case td.Temperature.Before == nil || td.Temperature.After == nil:
		td.Notes = append(td.Notes, "the temperature is not set in both runs' specs (the provider's default applies): the identical-output rate is shown but decides nothing; set temperature: 0 on a canary target")
	default:
		td.Notes = append(td.Notes, fmt.Sprintf("temperature %g before, %g after: identical outputs are expected to be rare above 0, so the identical-output rate decides nothing; the flips do",
			*td.Temperature.Before, *td.Temperature.After))
	}
	f := td.Flips
	if f.N > 0 && f.PValue < o.Alpha {
		td.Reasons = append(td.Reasons, fmt.Sprintf("the primary verdict flipped %d times pass→fail and %d times fail→pass (McNemar exact p = %.2g < %g)",
			f.PassToFail, f.FailToPass, f.PValue, o.Alpha))
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

// temperatures reads each target's params.temperature from a resolved spec.
func temperatures(config []byte) map[string]*float64 {
	out := map[string]*float64{}
	var sp struct {
		Targets []struct {
			Name   string `json:"name"`
			Params struct {
				Temperature *float64 `json:"temperature"`
			} `json:"params"`
		} `json:"targets"`
	}
	if len(config) == 0 || json.Unmarshal(config, &sp) != nil {
		return out
	}
	for _, t := range sp.Targets {
		out[t.Name] = t.Params.Temperature
	}
	return out
}
