package analysis

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/record"
)

// RunComparison compares the same targets across two runs (before and after
// a prompt, parser or model change), paired by case and epoch.
type RunComparison struct {
	Before RunInfo `json:"before"`
	After  RunInfo `json:"after"`
	// Comparisons have A = the target in the after run, B = the same target
	// in the before run: Delta > 0 means the change helped.
	Comparisons []Comparison `json:"comparisons"`
	// Only lists targets present in one run only (not compared).
	Only []string `json:"only_in_one_run,omitempty"`
	// Cases is set when the runs measured different dataset versions and
	// only their shared cases were compared (CompareSharedCases).
	Cases    *CaseDiff `json:"shared_cases,omitempty"`
	Warnings []string  `json:"warnings,omitempty"`
	// Excluded counts, per target with a failed call on either side, the
	// results left out of the comparison because their call failed (a
	// provider error is not behaviour), by side and error kind.
	Excluded []CompareExcluded `json:"excluded,omitempty"`
}

// CompareExcluded is one target's results left out of a run comparison
// because a call failed on either side: Pairs counts the (case, epoch)
// slots where either side failed; Before and After each side's failed
// calls of the target by error kind, and Calls its calls.
type CompareExcluded struct {
	Target      string         `json:"target"`
	Pairs       int            `json:"pairs"`
	BeforeCalls int            `json:"before_calls"`
	AfterCalls  int            `json:"after_calls"`
	Before      map[string]int `json:"before,omitempty"`
	After       map[string]int `json:"after,omitempty"`
}

// CannotJudgeError says a side of a comparison is too unhealthy to judge:
// more than half its calls of a target failed.
type CannotJudgeError struct{ Reasons []string }

func (e *CannotJudgeError) Error() string { return strings.Join(e.Reasons, "; ") }

// CompareRuns pairs every target the two runs share, on the primary scorer
// of each run's latest scoring, with the test Analyze uses for the design
// (pairDense). p-values are Holm-adjusted over the targets, and per slice
// over every target's values of the tag.
//
// Runs on different dataset versions (different dataset hashes) are refused
// with a *DatasetMismatchError: the same case ID may name a different
// question. CompareSharedCases compares them on the cases both measured.
func CompareRuns(ctx context.Context, st record.Reader, before, after *record.Run, o Options) (*RunComparison, error) {
	return compareRuns(ctx, st, before, after, o, false)
}

// CompareSharedCases is CompareRuns that, when the runs measured different
// dataset versions, pairs only the cases both runs measured (by ID) and
// says so in the comparison's warnings.
func CompareSharedCases(ctx context.Context, st record.Reader, before, after *record.Run, o Options) (*RunComparison, error) {
	return compareRuns(ctx, st, before, after, o, true)
}

// DatasetMismatchError says two runs measured different dataset versions.
type DatasetMismatchError struct {
	Before, After         string // run IDs
	BeforeHash, AfterHash string // dataset hashes
	Cases                 CaseDiff
	// Note says how the versions were compared when a side predates
	// content hashes (dataset.Match.Note).
	Note string
}

func (e *DatasetMismatchError) Error() string {
	changed := ""
	if e.Cases.Changed > 0 {
		changed = fmt.Sprintf(" (%d of them with a changed expected value or tags)", e.Cases.Changed)
	}
	return fmt.Sprintf("runs %s and %s measured different dataset versions (dataset %s before, %s after): %s added, %s removed, %d shared%s",
		e.Before, e.After, ShortHash(e.BeforeHash), ShortHash(e.AfterHash),
		countNoun(e.Cases.Added, "case"), countNoun(e.Cases.Removed, "case"), e.Cases.Shared, changed) + e.note()
}

func (e *DatasetMismatchError) note() string {
	if e.Note == "" {
		return ""
	}
	return " (" + e.Note + ")"
}

// ShortHash shortens a content hash for people (dataset.ShortHash).
func ShortHash(h string) string { return dataset.ShortHash(h) }

func countNoun(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func compareRuns(ctx context.Context, st record.Reader, before, after *record.Run, o Options, shared bool) (*RunComparison, error) {
	var cases *CaseDiff
	dv := dataset.CompareVersions("run "+before.ID, runDataset(before), "run "+after.ID, runDataset(after))
	if !dv.Same {
		cd, err := diffCases(ctx, st, before.ID, after.ID)
		if err != nil {
			return nil, err
		}
		cases = &cd
		if !shared {
			return nil, &DatasetMismatchError{Before: before.ID, After: after.ID,
				BeforeHash: dv.Before, AfterHash: dv.After, Cases: cd, Note: dv.Note}
		}
		if cd.Shared == 0 {
			return nil, fmt.Errorf("runs %s and %s share no case: there is nothing to pair", before.ID, after.ID)
		}
	}
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	ci := newCaseIndex()
	if err = st.Cases(ctx, after.ID, func(c record.Case) error {
		ci.add(c.ID, c.Tags)
		return nil
	}); err != nil {
		return nil, err
	}
	fb, err := failedCalls(ctx, st, before)
	if err != nil {
		return nil, err
	}
	fa, err := failedCalls(ctx, st, after)
	if err != nil {
		return nil, err
	}
	var unjudged []string
	for _, f := range []struct {
		run   *record.Run
		calls map[string]*runFailures
	}{{before, fb}, {after, fa}} {
		for _, name := range f.run.Targets {
			if rf := f.calls[name]; rf != nil && float64(len(rf.kinds)) > DefaultDriftMaxErrorRate*float64(rf.calls) {
				unjudged = append(unjudged, fmt.Sprintf("cannot judge: %d of %d calls of %s in run %s failed: %s",
					len(rf.kinds), rf.calls, name, f.run.ID, kindList(rf.byKind())))
			}
		}
	}
	if len(unjudged) > 0 {
		return nil, &CannotJudgeError{Reasons: unjudged}
	}
	pb, sb, err := primaryPasses(ctx, st, before, ci, fb)
	if err != nil {
		return nil, err
	}
	pa, sa, err := primaryPasses(ctx, st, after, ci, fa)
	if err != nil {
		return nil, err
	}
	rc := &RunComparison{Before: runInfo(before, 0), After: runInfo(after, 0), Cases: cases}
	// A run let through unfinished (--allow-partial) is said to be one, as
	// diff and drift say it.
	rc.Warnings = append(rc.Warnings, incompleteWarnings(before, after)...)
	if dv.Note != "" {
		rc.Warnings = append(rc.Warnings, dv.Note)
	}
	if cases != nil {
		rc.Warnings = append(rc.Warnings, fmt.Sprintf("the runs measured different dataset versions (%s before, %s after): only the %d cases both measured are compared (shared cases); %s added and %s removed are left out",
			ShortHash(dv.Before), ShortHash(dv.After), cases.Shared, countNoun(cases.Added, "case"), countNoun(cases.Removed, "case")))
		if cases.Changed > 0 {
			rc.Warnings = append(rc.Warnings, fmt.Sprintf("%s kept their ID but changed their expected value or tags (e.g. %s): they are paired, yet ask something different",
				countNoun(cases.Changed, "shared case"), strings.Join(cases.ChangedIDs, ", ")))
		}
	}
	if before.ScorersHash != "" && after.ScorersHash != "" && before.ScorersHash != after.ScorersHash {
		rc.Warnings = append(rc.Warnings, fmt.Sprintf("the scorer configuration differs (scorers %s before, %s after%s): the runs use two definitions of correct, so a verdict may have flipped with no change in the outputs",
			ShortHash(before.ScorersHash), ShortHash(after.ScorersHash), scorerFilesNote(before.Config, after.Config)))
	}
	if sa != sb {
		rc.Warnings = append(rc.Warnings, fmt.Sprintf("the primary scorer differs (%q before, %q after): the comparison mixes two definitions of correct", sb, sa))
	}
	for _, name := range after.Targets {
		if !slices.Contains(before.Targets, name) {
			rc.Only = append(rc.Only, name)
			continue
		}
		if ex, ok := excludedOf(name, fb[name], fa[name]); ok {
			rc.Excluded = append(rc.Excluded, ex)
			rc.Warnings = append(rc.Warnings, fmt.Sprintf("target %s: %s left out because a call failed (before: %s; after: %s): a provider error is not behaviour",
				name, countNoun(ex.Pairs, "result"), kindCounts(ex.Before), kindCounts(ex.After)))
		}
		c, ok := pairDense(pa[name], pb[name], ci, o.pairing())
		if !ok {
			rc.Warnings = append(rc.Warnings, fmt.Sprintf("target %s shares no scored case between the runs", name))
			continue
		}
		c.A, c.B, c.Scorer = name+"@"+after.ID, name+"@"+before.ID, sa
		for _, byValue := range c.Slices {
			for v, sc := range byValue {
				sc.A, sc.B, sc.Scorer = c.A, c.B, sa
				byValue[v] = sc
			}
		}
		rc.Comparisons = append(rc.Comparisons, c)
	}
	for _, name := range before.Targets {
		if !slices.Contains(after.Targets, name) {
			rc.Only = append(rc.Only, name)
		}
	}
	adjustOverall(rc.Comparisons, o.Alpha, o.Margin)
	adjustSlices(rc.Comparisons, o.Alpha, o.Margin)
	rc.Warnings = append(rc.Warnings, clusterWarnings(rc.Comparisons)...)
	return rc, nil
}

// runFailures is one target's calls in a run and the failed ones, by
// result key (case ID and epoch) with their error kind.
type runFailures struct {
	calls int
	kinds map[failKey]string
}

type failKey struct {
	caseID string
	epoch  int
}

func (f *runFailures) byKind() map[string]int {
	m := map[string]int{}
	for _, k := range f.kinds {
		m[k]++
	}
	return m
}

// failedCalls reads a run's results and keeps, per target, the count of
// calls and the failed ones (a provider error kind).
func failedCalls(ctx context.Context, st record.Reader, run *record.Run) (map[string]*runFailures, error) {
	out := map[string]*runFailures{}
	err := st.Results(ctx, run.ID, func(r record.Result) error {
		f := out[r.Target]
		if f == nil {
			f = &runFailures{kinds: map[failKey]string{}}
			out[r.Target] = f
		}
		f.calls++
		if r.ErrorKind != "" {
			f.kinds[failKey{r.CaseID, max(r.Epoch, 1)}] = r.ErrorKind
		}
		return nil
	})
	return out, err
}

// excludedOf counts a target's results left out of a comparison because a
// call failed on either side (ok false when none failed).
func excludedOf(name string, before, after *runFailures) (CompareExcluded, bool) {
	ex := CompareExcluded{Target: name}
	union := map[failKey]bool{}
	if before != nil {
		ex.BeforeCalls = before.calls
		if len(before.kinds) > 0 {
			ex.Before = before.byKind()
		}
		for k := range before.kinds {
			union[k] = true
		}
	}
	if after != nil {
		ex.AfterCalls = after.calls
		if len(after.kinds) > 0 {
			ex.After = after.byKind()
		}
		for k := range after.kinds {
			union[k] = true
		}
	}
	ex.Pairs = len(union)
	return ex, ex.Pairs > 0
}

// primaryPasses reads the primary verdicts of a run's latest scoring,
// leaving out the results whose call failed (failed, from failedCalls):
// a provider error is not a verdict on the model.
func primaryPasses(ctx context.Context, st record.Reader, run *record.Run, ci *caseIndex, failed map[string]*runFailures) (map[string]*verdicts, string, error) {
	scoring, err := st.LatestScoring(ctx, run.ID)
	if err != nil {
		return nil, "", err
	}
	out := map[string]*verdicts{}
	scorer := ""
	err = st.Scores(ctx, run.ID, scoring, func(s record.Score) error {
		if !s.Primary {
			return nil
		}
		scorer = s.Scorer
		if f := failed[s.Target]; f != nil {
			if _, bad := f.kinds[failKey{s.CaseID, max(s.Epoch, 1)}]; bad {
				return nil
			}
		}
		if out[s.Target] == nil {
			out[s.Target] = newVerdicts(run.Epochs)
		}
		out[s.Target].set(ci.add(s.CaseID, nil), s.Epoch, s.Pass)
		return nil
	})
	return out, scorer, err
}
