package postgres

import (
	"context"
	"errors"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store"
)

// Stubs of the browse part: delete each stub as its method lands, and this file when it is empty.

var errTodoBrowse = errors.New("postgres: not implemented yet")

func (d *DB) BrowseResults(ctx context.Context, runID string, scoring int, f store.ResultFilter, after string, limit int) (rows []store.ResultRow, next string, err error) {
	return nil, "", errTodoBrowse
}

func (d *DB) CursorPosition(cursor string) (caseID string, line int, ok bool) { return "", 0, false }

func (d *DB) CaseResults(ctx context.Context, runID, caseID string) (*record.Case, []record.Result, error) {
	return nil, nil, errTodoBrowse
}

func (d *DB) CaseScores(ctx context.Context, runID, caseID string) ([]store.CaseScore, error) {
	return nil, errTodoBrowse
}

func (d *DB) ResultKeys(ctx context.Context, runID string, fn func(k record.Key, failed bool) error) error {
	return errTodoBrowse
}

func (d *DB) Verdicts(ctx context.Context, runID string, scoring int, scorer string, fn func(k record.Key, pass bool, kind string) error) error {
	return errTodoBrowse
}
