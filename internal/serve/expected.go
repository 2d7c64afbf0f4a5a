package serve

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/record"
)

// expectedPage says what "set the expected value" wrote.
type expectedPage struct {
	RunID, CaseID string
	// File is the dataset file as the spec names it.
	File  string
	Field string
	*dataset.ExpectedSet
}

// expectedMissing is the spec's dataset.expected field when a person may
// write the case's expected value on its page: the run recorded none, the
// spec names the field, the dataset is a JSONL file (not a sample of
// traces), and the case's line in the file lacks the field. "" otherwise.
func (s *Server) expectedMissing(run *record.Run, caseID string, c *record.Case) string {
	if c == nil || run.Sample != "" {
		return ""
	}
	if e := bytes.TrimSpace(c.Expected); len(e) > 0 && string(e) != "null" {
		return ""
	}
	sp, err := runSpec(run)
	if err != nil || sp.Dataset.Expected == "" || sp.Dataset.Format == "csv" {
		return ""
	}
	// Read only for a case the run recorded without an expected value:
	// the file as it is now (another person may have written the value).
	_, has, err := dataset.FieldOf(sp.Resolve(sp.Dataset.Path), sp.Dataset.ID, caseID, sp.Dataset.Expected)
	if err != nil || has {
		return ""
	}
	return sp.Dataset.Expected
}

// setExpected writes a person's expected value into the case's line of the
// run's JSONL dataset (dataset.SetExpected: that line only; an existing
// value is never overwritten). The run's results do not change: the file
// is a new dataset version, measured by the next run.
func (s *Server) setExpected(w http.ResponseWriter, r *http.Request) {
	run, ok := s.pathRun(w, r)
	if !ok {
		return
	}
	caseID := r.PathValue("case")
	value := strings.ReplaceAll(r.PostForm.Get("expected"), "\r\n", "\n")
	if len(value) > maxReason {
		s.fail(w, r, badRequest("the expected value is at most %d KiB", maxReason>>10))
		return
	}
	if strings.TrimSpace(value) == "" {
		s.fail(w, r, badRequest("the expected value is empty: write the answer the case expects"))
		return
	}
	if run.Sample != "" {
		s.fail(w, r, badRequest("run %s scored a sample of traces, not a dataset: there is no dataset line to write an expected value into", run.ID))
		return
	}
	sp, err := runSpec(run)
	if err != nil {
		s.fail(w, r, badRequest("%v", err))
		return
	}
	field := sp.Dataset.Expected
	if field == "" {
		s.fail(w, r, badRequest("run %s's spec names no dataset.expected field to write the value into; set it in the spec", run.ID))
		return
	}
	if !extractMatches(sp, value) {
		s.fail(w, r, badRequest("the expected value does not match the spec's dataset.expected_extract %q, so the case would not read; write it as the dataset's expected field holds answers", sp.Dataset.ExpectedExtract))
		return
	}
	appendMu.Lock() // the file add.go appends to
	got, err := dataset.SetExpected(sp.Resolve(sp.Dataset.Path), sp.Dataset.ID, caseID, field, value)
	appendMu.Unlock()
	switch {
	case errors.Is(err, dataset.ErrHasExpected), errors.Is(err, dataset.ErrDuplicateID), errors.Is(err, dataset.ErrNotJSONL):
		s.fail(w, r, badRequest("%v", err))
		return
	case errors.Is(err, dataset.ErrNoCase):
		s.fail(w, r, fmt.Errorf("%v: %w", err, record.ErrNotFound))
		return
	case err != nil:
		s.fail(w, r, err)
		return
	}
	s.render(w, r, "expectedset", "set the expected value", expectedPage{RunID: run.ID, CaseID: caseID, File: sp.Dataset.Path, Field: field, ExpectedSet: got})
}
