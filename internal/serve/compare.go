package serve

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/assay-eval/assay/internal/analysis"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/report"
)

// compareLead is what the compare page shows before its findings are
// computed: the two runs (A before, B after).
type compareLead struct {
	A, B  runRow
	Limit int
}

// comparePick is the compare page without two runs: a form to choose them.
type comparePick struct {
	Runs []runChoice
	A, B string
}

// compareDiff is what `assay diff` finds of two runs: the flipped
// verdicts, and the rest of its text (what changed), shown last.
type compareDiff struct {
	Flips []compareFlips
	// Changes is `assay diff`'s text without its flipped cases.
	Changes string
}

// compareStats is `assay compare`'s text, or why there is none (no shared
// target, say).
type compareStats struct {
	Comparison, ComparisonErr string
}

// compareView is a part of the compare page: the runs and what is
// computed of them so far.
type compareView struct {
	compareLead
	compareDiff
	compareStats
}

// compareFlips are one target's flipped verdicts.
type compareFlips struct {
	Target, Scorer                           string
	Paired, PassToFail, FailToPass, Unlisted int
	Cases                                    []compareFlip
}

type compareFlip struct {
	// CaseID is the case's ID as stored (for links); Case as shown.
	CaseID, Case            string
	Epoch                   int
	PassToFail              bool
	Expected, Before, After string
	BeforeEmpty, AfterEmpty bool
}

// flipsShown is how many flipped cases per target the page lists by
// default (?limit=N, at most maxFlipsShown).
const (
	flipsShown    = 20
	maxFlipsShown = 500
)

// comparePage shows two runs side by side (?a=BEFORE&b=AFTER): the cases
// whose primary verdict flipped first, pass→fail before fail→pass, with
// both outputs; then the paired comparison of every shared target
// (compared on the cases both runs measured, as `assay compare
// --shared-cases`, the warnings saying so); then what changed between the
// runs. Computed once per pair of runs and cached.
func (s *Server) comparePage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	q := r.URL.Query()
	if q.Get("a") == "" || q.Get("b") == "" {
		s.comparePicker(w, r, q.Get("a"), q.Get("b"))
		return
	}
	before, err := s.o.Store.GetRun(ctx, q.Get("a"))
	if err != nil {
		s.fail(w, r, fmt.Errorf("run a=%s: %w", q.Get("a"), err))
		return
	}
	after, err := s.o.Store.GetRun(ctx, q.Get("b"))
	if err != nil {
		s.fail(w, r, fmt.Errorf("run b=%s: %w", q.Get("b"), err))
		return
	}
	limit := flipsShown
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > maxFlipsShown {
			s.fail(w, r, badRequest("limit=%q: give a number of flipped cases per target from 0 to %d", v, maxFlipsShown))
			return
		}
		limit = n
	}
	la, err := s.o.Store.LatestScoring(ctx, before.ID)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	lb, err := s.o.Store.LatestScoring(ctx, after.ID)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	lead := compareLead{A: newRunRow(before), B: newRunRow(after), Limit: limit}
	lead.A.Scorings, lead.B.Scorings = la, lb
	p := page{Title: "compare " + before.ID + " → " + after.ID, Nav: "runs", Body: lead}
	pair := before.ID + "\x00" + after.ID
	stamp := s.runStamp(before, la) + "\x00" + s.runStamp(after, lb)
	diffKey, statsKey := "diff\x00"+pair+"\x00"+strconv.Itoa(limit), "compare\x00"+pair
	var diff compareDiff
	flips := step{Block: "flips", Compute: func() (any, error) {
		v, err := s.cache.get(diffKey, stamp, func() (any, error) {
			return diffRuns(context.WithoutCancel(ctx), s, before, after, limit)
		})
		if err != nil {
			return nil, err
		}
		diff = v.(compareDiff)
		return compareView{compareLead: lead, compareDiff: diff}, nil
	}}
	stats := step{Block: "content", Compute: func() (any, error) {
		v, err := s.cache.get(statsKey, stamp, func() (any, error) {
			return compareStatsOf(context.WithoutCancel(ctx), s, before, after)
		})
		if err != nil {
			return nil, err
		}
		return compareView{lead, diff, v.(compareStats)}, nil
	}}
	if !s.cache.has(diffKey, stamp) {
		flips.Notice = fmt.Sprintf("Finding the flipped verdicts among %d and %d cases…", before.Cases, after.Cases)
	}
	if !s.cache.has(statsKey, stamp) {
		stats.Notice = "Comparing the targets, paired by case…"
	}
	s.streamSteps(w, r, "compare", p, flips, stats)
}

// diffRuns computes what `assay diff` prints of the two runs.
func diffRuns(ctx context.Context, s *Server, before, after *record.Run, limit int) (compareDiff, error) {
	var b compareDiff
	dl := limit
	if dl == 0 {
		dl = -1 // DiffOptions: 0 means the default
	}
	d, err := analysis.DiffRuns(ctx, s.o.Store, before, after, analysis.DiffOptions{Limit: dl})
	if err != nil {
		return b, fmt.Errorf("diff: %w", err)
	}
	for _, f := range d.Flips {
		cf := compareFlips{Target: report.Visible(f.Target, false), Scorer: report.Visible(f.Scorer, false), Paired: f.Paired,
			PassToFail: f.PassToFail, FailToPass: f.FailToPass, Unlisted: f.Unlisted}
		for _, c := range f.Cases {
			cf.Cases = append(cf.Cases, compareFlip{CaseID: c.CaseID, Case: report.Visible(c.CaseID, false), Epoch: c.Epoch,
				PassToFail: c.Direction == analysis.PassToFail, Expected: report.Visible(c.Expected, true),
				Before: report.Visible(c.Before, true), After: report.Visible(c.After, true),
				BeforeEmpty: c.Before == "", AfterEmpty: c.After == ""})
		}
		b.Flips = append(b.Flips, cf)
	}
	rest := *d
	rest.Flips = nil
	var t strings.Builder
	if err := report.RunDiffText(&t, &rest); err != nil {
		return b, err
	}
	b.Changes = t.String()
	return b, nil
}

// compareStatsOf computes what `assay compare --shared-cases` prints of
// the two runs; a refusal (no target in common) is shown, not failed.
func compareStatsOf(ctx context.Context, s *Server, before, after *record.Run) (compareStats, error) {
	rc, err := analysis.CompareSharedCases(ctx, s.o.Store, before, after, analysis.Options{})
	if err != nil {
		return compareStats{ComparisonErr: report.Visible(err.Error(), false)}, nil
	}
	var t strings.Builder
	if err := report.RunComparisonText(&t, rc); err != nil {
		return compareStats{}, err
	}
	return compareStats{Comparison: t.String()}, nil
}

// comparePicker is the compare page's form alone, for choosing two runs.
func (s *Server) comparePicker(w http.ResponseWriter, r *http.Request, a, b string) {
	runs, err := s.o.Store.ListRuns(r.Context(), compareChoices)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	p := comparePick{A: a, B: b}
	for _, run := range runs {
		p.Runs = append(p.Runs, choiceOf(&run))
	}
	s.renderPage(w, r, "runspick", page{Title: "compare two runs", Nav: "runs", Body: p})
}
