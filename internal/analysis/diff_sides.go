package analysis

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/runview"
)

// DiffSides is DiffRuns where either side (or both) may be a baseline file
// (runview.LoadBaseline), so an alert can be triaged without the old
// database: the versions, the cases, the models and the flipped verdicts
// come from the sides' snapshots. What a file does not hold is said, not
// guessed: its outputs (a hash of each is kept: a flipped case shows it),
// its expected values (taken from a stored side when there is one) and its
// resolved spec (the spec is compared by hashes, and a target's settings
// by the hash the file keeps). st reads the outputs of a stored side; it
// may be nil when both sides are files.
func DiffSides(ctx context.Context, st record.Reader, before, after *DriftSide, o DiffOptions) (*RunDiff, error) {
	if o.Limit == 0 {
		o.Limit = 20
	}
	bt, at := before.Targets(), after.Targets()
	if o.Target != "" && !slices.Contains(bt, o.Target) && !slices.Contains(at, o.Target) {
		return nil, fmt.Errorf("target %q is in neither run (%s has %s; %s has %s)", o.Target,
			before.ID(), strings.Join(bt, ", "), after.ID(), strings.Join(at, ", "))
	}
	bs, as := before.Snap, after.Snap
	d := &RunDiff{Before: before.info(), After: after.info()}
	for _, s := range []*DriftSide{before, after} {
		if s.Run != nil {
			d.Warnings = append(d.Warnings, incompleteWarnings(s.Run)...)
		} else {
			d.Warnings = append(d.Warnings, fmt.Sprintf("%s holds verdicts and output hashes, not outputs, expected values or the resolved spec: its outputs are not shown, and the spec is compared by its hashes", sideName(s)))
		}
	}
	br, ar := bs.Run, as.Run
	rows := []struct{ name, b, a string }{
		{"spec_hash", br.SpecHash, ar.SpecHash},
		{"prompt_hash", br.PromptHash, ar.PromptHash},
		{"scorers_hash", br.ScorersHash, ar.ScorersHash},
		{"git_commit", br.GitCommit, ar.GitCommit},
		{"assay_version", br.AssayVersion, ar.AssayVersion},
	}
	for _, r := range rows {
		d.Versions = append(d.Versions, VersionChange{Name: r.name, Before: r.b, After: r.a, Same: r.b == r.a})
	}
	// The dataset by content (or by bytes for a side made before content
	// hashes) after the prompt, as DiffRuns shows it, then its file's bytes.
	bd, ad := br.Dataset(), ar.Dataset()
	d.Versions = slices.Insert(d.Versions, 2, datasetRows(dataset.CompareVersions("before", bd, "after", ad), bd, ad)...)
	if n := dataset.CompareVersions(sideName(before), bd, sideName(after), ad).Note; n != "" {
		d.Warnings = append(d.Warnings, n)
	}
	if before.Run != nil && after.Run != nil && len(before.Run.Config) > 0 && len(after.Run.Config) > 0 {
		if sd, err := diffSpecs(before.Run.Config, after.Run.Config); err == nil {
			d.Spec = sd
		}
	}
	for _, n := range at {
		if !slices.Contains(bt, n) {
			d.TargetsAdded = append(d.TargetsAdded, n)
		}
	}
	for _, n := range bt {
		if !slices.Contains(at, n) {
			d.TargetsRemoved = append(d.TargetsRemoved, n)
		}
	}
	cd, afterCase := compareSnapshotCases(before, after)
	d.Cases = cd
	want := func(t string) bool { return o.Target == "" || t == o.Target }
	union := slices.Clone(at)
	for _, n := range bt {
		if !slices.Contains(union, n) {
			union = append(union, n)
		}
	}
	for _, name := range union {
		if !want(name) {
			continue
		}
		tm := TargetModels{Target: name, Before: []ModelCount{}, After: []ModelCount{}}
		tb, ta := bs.Target(name), as.Target(name)
		if tb != nil {
			tm.Before = modelCounts(tb.Fingerprints)
		}
		if ta != nil {
			tm.After = modelCounts(ta.Fingerprints)
		}
		tm.Changed = tb != nil && ta != nil && modelsChanged(tm.Before, tm.After)
		d.Models = append(d.Models, tm)
		if d.Spec == nil && tb != nil && ta != nil && tb.ConfigHash != "" && ta.ConfigHash != "" && tb.ConfigHash != ta.ConfigHash {
			d.Warnings = append(d.Warnings, fmt.Sprintf("target %s is configured differently (the hash of its settings changed; a baseline file keeps the hash, not the settings)", name))
		}
	}
	if bs.Primary != "" && as.Primary != "" && bs.Primary != as.Primary {
		d.Warnings = append(d.Warnings, fmt.Sprintf("the primary scorer differs (%q before, %q after): a flip may be a change in the definition of correct", bs.Primary, as.Primary))
	}
	for _, name := range at {
		if !want(name) || !slices.Contains(bt, name) {
			continue
		}
		tf, err := sideFlips(ctx, st, before, after, name, afterCase, o.Limit)
		if err != nil {
			return nil, err
		}
		d.Flips = append(d.Flips, tf)
	}
	if cd.Changed > 0 {
		d.Warnings = append(d.Warnings, fmt.Sprintf("%s kept their ID but changed their expected value or tags: their flips may come from the case, not the model",
			countNoun(cd.Changed, "shared case")))
	}
	return d, nil
}

// sideFlips is flips on two snapshots, paired by case and epoch; a file
// side's output is shown by its hash.
func sideFlips(ctx context.Context, st record.Reader, before, after *DriftSide, name string, afterCase []int, limit int) (TargetFlips, error) {
	bs, as := before.Snap, after.Snap
	tb, ta := bs.Target(name), as.Target(name)
	vb, va := primaryVerdicts(bs, tb), primaryVerdicts(as, ta)
	tf := TargetFlips{Target: name, Scorer: as.Primary, Cases: []FlippedCase{}}
	type flip struct{ ib, ia, e int }
	var down, up []flip
	epochs := min(bs.Epochs, as.Epochs)
	for ib, ia := range afterCase {
		if ia < 0 {
			continue
		}
		for e := range epochs {
			jb, ja := ib*bs.Epochs+e, ia*as.Epochs+e
			pb, pa := verdictAt(vb, jb), verdictAt(va, ja)
			if pb < 0 || pa < 0 {
				continue
			}
			tf.Paired++
			switch {
			case pb == 1 && pa == 0:
				tf.PassToFail++
				if len(down) < limit {
					down = append(down, flip{ib, ia, e})
				}
			case pb == 0 && pa == 1:
				tf.FailToPass++
				if len(up) < limit {
					up = append(up, flip{ib, ia, e})
				}
			}
		}
	}
	list := append(down, up...)
	if len(list) > max(limit, 0) {
		list = list[:max(limit, 0)]
	}
	tf.Unlisted = tf.PassToFail + tf.FailToPass - len(list)
	for k, f := range list {
		fc := FlippedCase{CaseID: bs.Cases[f.ib].ID, Epoch: f.e + 1, Direction: FailToPass}
		if k < len(down) {
			fc.Direction = PassToFail
		}
		switch {
		case as.Expected(f.ia) != nil:
			fc.Expected = expectedText(as.Expected(f.ia))
		case bs.Expected(f.ib) != nil:
			fc.Expected = expectedText(bs.Expected(f.ib))
		}
		var err error
		if fc.Before, err = sideOutput(ctx, st, before, tb, name, fc.CaseID, f.ib*bs.Epochs+f.e, f.e+1); err != nil {
			return tf, err
		}
		if fc.After, err = sideOutput(ctx, st, after, ta, name, fc.CaseID, f.ia*as.Epochs+f.e, f.e+1); err != nil {
			return tf, err
		}
		tf.Cases = append(tf.Cases, fc)
	}
	return tf, nil
}

// sideOutput is a result's output for display: from the store for a
// stored run, else what a baseline file knows of it.
func sideOutput(ctx context.Context, st record.Reader, s *DriftSide, t *runview.Target, target, caseID string, j, epoch int) (string, error) {
	if s.Run != nil && st != nil {
		return shownOutput(ctx, st, s.Run.ID, record.Key{CaseID: caseID, Target: target, Epoch: epoch})
	}
	if flag(t.Errored, j) {
		return fmt.Sprintf("(the call failed: %s; the baseline file holds no output)", errorKindAt(t, j)), nil
	}
	return fmt.Sprintf("(not in the baseline file; output hash %016x)", t.OutputHash[j]), nil
}
