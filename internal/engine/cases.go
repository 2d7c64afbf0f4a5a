package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/task"
)

// Cases streams a run's cases in order; it may be called more than once
// (the runner reads it once per target).
type Cases func(fn func(*dataset.Case) error) error

// DatasetCases streams the first limit cases of the task's dataset (all
// when limit is 0).
func DatasetCases(t *task.Task, limit int) Cases {
	return func(fn func(*dataset.Case) error) error {
		n := 0
		err := dataset.Each(t.Spec, func(c *dataset.Case) error {
			if limit > 0 && n >= limit {
				return errLimit
			}
			n++
			return fn(c)
		})
		if errors.Is(err, errLimit) {
			return nil
		}
		return err
	}
}

var errLimit = errors.New("limit reached")

// CaseList streams cases held in memory (a probe's originals or twins).
func CaseList(cases []*dataset.Case) Cases {
	return func(fn func(*dataset.Case) error) error {
		for _, c := range cases {
			if err := fn(c); err != nil {
				return err
			}
		}
		return nil
	}
}

// byID reads the cases into memory by ID: scoring stored results needs each
// result's case (its vars, expected value and tags).
func (cs Cases) byID() (map[string]*dataset.Case, error) {
	out := map[string]*dataset.Case{}
	err := cs(func(c *dataset.Case) error { out[c.ID] = c; return nil })
	return out, err
}

// PutCases records a run's cases (IDs, lines, expected values, tags,
// weights) in batches. Storing a case is idempotent, so a resume records
// them all again: a run killed while recording its cases gets every one
// before a new result can reference a case that is not stored.
func PutCases(ctx context.Context, w record.Writer, runID string, cases Cases) error {
	batch := make([]record.Case, 0, 1000)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := w.PutCases(ctx, batch)
		batch = batch[:0]
		return err
	}
	err := cases(func(c *dataset.Case) error {
		exp, err := json.Marshal(c.Expected)
		if err != nil {
			return fmt.Errorf("case %s: expected value: %w", c.ID, err)
		}
		sc := record.Case{RunID: runID, ID: c.ID, Line: c.Line, Expected: exp, Tags: c.Tags}
		if c.HasWeight {
			w := c.Weight
			sc.Weight = &w
		}
		batch = append(batch, sc)
		if len(batch) == cap(batch) {
			return flush()
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("recording cases: %w", err)
	}
	return flush()
}
