package store

import (
	"context"
	"errors"

	"github.com/assay-eval/assay/internal/record"
)

// ErrBadCursor is BrowseResults' answer to a cursor it did not make.
var ErrBadCursor = errors.New("the page cursor is not one this store made (start again from the first page)")

// SnippetBytes bounds ResultRow.Snippet: a list shows the start of an
// output, never the megabytes a model may have written.
const SnippetBytes = 400

// ResultFilter selects results of a run for a list. Every set field must
// match (they are ANDed); the zero filter selects every result.
type ResultFilter struct {
	// Target is the result's target ("" any).
	Target string
	// Tag is "key=value": the result's case has tag key with that value
	// ("" any). A result whose case was never recorded has no tags.
	Tag string
	// Scorer and Verdict: with both, that scorer's verdict in the scoring
	// is Verdict ("pass" or "fail"; a result the scorer did not score does
	// not match); Verdict alone is the primary scorer's verdict; Scorer
	// alone: the scorer scored the result.
	Scorer  string
	Verdict string
	// Shape is the primary score's failure shape: pass, loud or silent
	// ("" any).
	Shape string
	// Kind is the primary score's failure kind (wrong, empty, timeout, …;
	// "" any).
	Kind string
	// Text is searched for in the result's raw output and tool calls,
	// case-insensitively for ASCII letters (byte for byte otherwise); a
	// result also matches when its case is one of TextCases. "" matches
	// every result.
	Text string
	// TextCases are the cases whose inputs contain Text: the store does
	// not hold a case's inputs, so the caller finds them in the run's
	// dataset. Used only with Text.
	TextCases []string
	// CaseIDs restricts the results to these cases (nil: every case).
	CaseIDs []string
}

// ResultRow is one result as a list shows it: its key, the start of its
// output and its primary verdict, without the whole output.
type ResultRow struct {
	CaseID string
	Target string
	Epoch  int
	// Line is the case's line in the dataset (0 when its case was never
	// recorded).
	Line int
	// Snippet is the start of the raw output, at most SnippetBytes bytes
	// (cut at a UTF-8 boundary when the output is valid there); RawBytes is
	// the whole output's length.
	Snippet  string
	RawBytes int
	// ToolCalls counts the calls the model made.
	ToolCalls int
	// Scored is whether the result has a primary score in the scoring;
	// Scorer, Pass, Value, Shape and Kind are that score's.
	Scored bool
	Scorer string
	Pass   bool
	Value  float64
	Shape  string
	Kind   string

	LatencyMS float64
	CostUSD   float64
	FromCache bool
	ErrorKind string
}

// CaseScore is a score with whether its scoring is pending (a rescore
// that has not completed).
type CaseScore struct {
	record.Score
	Pending bool
}

// Browse is what a viewer of a run's results needs beyond record.Reader:
// a filtered list read page by page, and one case's results and scores.
type Browse interface {
	// BrowseResults lists a run's results that match f in dataset order
	// (case line, case ID, target, epoch; results whose case was never
	// recorded last, by case ID), starting after the cursor after ("" from
	// the start). scoring is the scoring whose scores the filter and the
	// rows read; 0 reads the run's latest complete one (LatestScoring).
	//
	// It returns at most limit rows and the cursor to continue from ("" when
	// nothing is left). The work one call does is bounded (keyset
	// pagination, never OFFSET, and a bound on the results it examines), so
	// a call may return fewer than limit rows — even none — with a cursor:
	// the results up to it were examined and did not match. Following the
	// cursors yields every matching result exactly once.
	BrowseResults(ctx context.Context, runID string, scoring int, f ResultFilter, after string, limit int) (rows []ResultRow, next string, err error)

	// CursorPosition says where a cursor BrowseResults returned stands:
	// at or after the case caseID, at line (0 among the results whose case
	// was never recorded, which come last). ok is false for a cursor this
	// store did not make.
	CursorPosition(cursor string) (caseID string, line int, ok bool)

	// CaseResults returns a run's case (nil when it was never recorded) and
	// every result of it, whole, ordered by target and epoch. It is
	// ErrNotFound when the run has neither the case nor a result of it.
	CaseResults(ctx context.Context, runID, caseID string) (*record.Case, []record.Result, error)

	// CaseScores returns every score of a run's case in every scoring
	// (pending ones marked), latest scoring first, then by target, epoch
	// and scorer.
	CaseScores(ctx context.Context, runID, caseID string) ([]CaseScore, error)
}
