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
	// Each run's view: the after run's with its cases' tags (the slices
	// and clusters of the comparison), the before run's verdicts only.
	vb, fb, sb, err := compareSide(ctx, st, before, false)
	if err != nil {
		return nil, err
	}
	va, fa, sa, err := compareSide(ctx, st, after, true)
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
	// The cases are the after run's view's; the before run's verdicts are
	// paired with them by case ID.
	ci := casesOf(va)
	rows := caseRows(vb, va)
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
		c, ok := pairDense(behaved(va, va.Target(name), sa, nil), behaved(vb, vb.Target(name), sb, rows), ci, o.pairing())
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

// compareSide reads a run for a comparison in one pass over its records:
// its view (runview: every stored score's verdict, the results' failed
// calls, and with withCases the cases' tags), each target's calls and
// failed ones with their error kind, and the primary scorer of its latest
// scoring ("" when unscored).
func compareSide(ctx context.Context, st record.Reader, run *record.Run, withCases bool) (*runview.View, map[string]*runFailures, string, error) {
	scoring, err := st.LatestScoring(ctx, run.ID)
	if err != nil {
		return nil, nil, "", err
	}
	b := runview.NewBuilder(run, scoring, runview.Options{ScoresWithoutResults: true, VerdictsAndTimings: true})
	if withCases {
		if err := st.Cases(ctx, run.ID, func(c record.Case) error {
			c.Expected, c.Weight = nil, nil
			b.AddCase(&c)
			return nil
		}); err != nil {
			return nil, nil, "", err
		}
	}
	failed := map[string]*runFailures{}
	if err := st.Results(ctx, run.ID, func(r record.Result) error {
		b.AddResult(&r)
		f := failed[r.Target]
		if f == nil {
			f = &runFailures{kinds: map[failKey]string{}}
			failed[r.Target] = f
		}
		f.calls++
		if r.ErrorKind != "" {
			f.kinds[failKey{r.CaseID, max(r.Epoch, 1)}] = r.ErrorKind
		}
		return nil
	}); err != nil {
		return nil, nil, "", err
	}
	scorer := ""
	if scoring > 0 {
		if err := st.Scores(ctx, run.ID, scoring, func(s record.Score) error {
			b.AddScore(&s)
			if s.Primary {
				scorer = s.Scorer
			}
			return nil
		}); err != nil {
			return nil, nil, "", err
		}
	}
	return b.View(), failed, scorer, nil
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

// caseRows maps each case of view to to its index in view from (-1 when
// from has no such case).
func caseRows(from, to *runview.View) []int {
	at := make(map[string]int, len(from.Cases))
	for i := range from.Cases {
		at[from.Cases[i].ID] = i
	}
	rows := make([]int, len(to.Cases))
	for i := range to.Cases {
		if j, ok := at[to.Cases[i].ID]; ok {
			rows[i] = j
		} else {
			rows[i] = -1
		}
	}
	return rows
}

// behaved is target t's column of scorer's verdicts in view v as a
// comparison pairs them: the results whose call failed left out (a
// provider error is not a verdict on the model), laid on another view's
// cases by rows (caseRows; nil: v's own). nil when t has no verdict of
// scorer.
func behaved(v *runview.View, t *runview.Target, scorer string, rows []int) *verdicts {
	col := viewColumn(v, t, scorer)
	if col == nil {
		return nil
	}
	n := len(v.Cases)
	if rows != nil {
		n = len(rows)
	}
	e := col.epochs
	out := &verdicts{epochs: e, v: make([]int8, n*e)}
	for i := range n {
		from := i
		if rows != nil {
			from = rows[i]
		}
		for k := range e {
			x := int8(-1)
			if j := from*e + k; from >= 0 && j < len(col.v) && !t.Failed(j) {
				x = col.v[j]
			}
			out.v[i*e+k] = x
		}
	}
	return out
}
