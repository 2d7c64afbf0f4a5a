package serve

import (
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/spec"
)

// appendMu serializes "add to dataset" appends in this process, so two
// adds of one case cannot both pass the duplicate check (the file is a
// process-wide resource; dataset.Append does not lock it).
var appendMu sync.Mutex

// addPage says what "add to dataset" did.
type addPage struct {
	RunID  string
	CaseID string
	Target string
	Epoch  string
	// File is the dataset file as the spec names it; Path resolved.
	File string
	// Dataset is the spec's dataset file when File is another one (a
	// file of regressions some other spec reads): the run's own dataset
	// does not change then, and the page says so.
	Dataset string
	*dataset.Appended
}

// AddForm is the data of the "addcase" template block: a form that adds a
// case to the dataset the run's spec names (labels.add_to), from a case's
// page or a labeled failure.
type AddForm struct {
	CSRF, RunID, CaseID, Target string
	Epoch                       int
	Reason, Corrected           string
}

// addToDataset appends the case (its input fields, the reason, the
// corrected output as the expected answer when given) to the spec's
// labels.add_to file (the dataset itself when it is JSONL and add_to is
// unset), deduplicated by content, and shows what was appended.
func (s *Server) addToDataset(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	run, ok := s.pathRun(w, r)
	if !ok {
		return
	}
	caseID := r.PathValue("case")
	f := r.PostForm
	reason := strings.TrimSpace(strings.ReplaceAll(f.Get("reason"), "\r\n", "\n"))
	corrected := strings.ReplaceAll(f.Get("corrected"), "\r\n", "\n")
	if len(reason) > maxReason || len(corrected) > maxReason {
		s.fail(w, r, badRequest("the reason and the corrected output are at most %d KiB each", maxReason>>10))
		return
	}
	if e := f.Get("epoch"); e != "" {
		if _, err := strconv.Atoi(e); err != nil {
			s.fail(w, r, badRequest("epoch %q is not a whole number", e))
			return
		}
	}
	sp, err := runSpec(run)
	if err != nil {
		s.fail(w, r, badRequest("%v", err))
		return
	}
	path := sp.AddToPath()
	if path == "" {
		s.fail(w, r, badRequest("run %s's spec names no file to add cases to: its dataset %s is CSV, and added cases go to JSONL; set labels.add_to in the spec to a .jsonl file", run.ID, sp.Dataset.Path))
		return
	}
	if corrected != "" && !extractMatches(sp, corrected) {
		s.fail(w, r, badRequest("the corrected output does not match the spec's dataset.expected_extract %q, so the added case would not read; write it as the dataset's expected field holds answers", sp.Dataset.ExpectedExtract))
		return
	}
	in, err := s.inputsOf(ctx, run, []string{caseID})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	fields := in.Fields[caseID]
	if fields == nil {
		s.fail(w, r, fmt.Errorf("case %s of run %s is not in its dataset file: %w", caseID, run.ID, record.ErrNotFound))
		return
	}
	appendMu.Lock()
	got, err := dataset.Append(path, dataset.Addition{Fields: fields, BaseID: caseID, IDField: sp.Dataset.ID,
		ExpectedField: sp.Dataset.Expected, Corrected: corrected, Reason: reason})
	appendMu.Unlock()
	if errors.Is(err, dataset.ErrNotJSONL) {
		s.fail(w, r, badRequest("%v", err))
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	page := addPage{RunID: run.ID, CaseID: caseID, Target: f.Get("target"), Epoch: f.Get("epoch"), File: sp.Dataset.Path, Appended: got}
	if sp.Labels != nil && sp.Labels.AddTo != "" {
		page.File = sp.Labels.AddTo
		if filepath.Clean(path) != filepath.Clean(sp.Resolve(sp.Dataset.Path)) {
			page.Dataset = sp.Dataset.Path
		}
	}
	s.render(w, r, "added", "add to dataset", page)
}

// extractMatches says an expected answer written by a person reads through
// the spec's dataset.expected_extract (true when there is none).
func extractMatches(sp *spec.Spec, answer string) bool {
	if sp.Dataset.ExpectedExtract == "" {
		return true
	}
	re, err := regexp.Compile(sp.Dataset.ExpectedExtract)
	return err != nil || re.NumSubexp() == 0 || re.MatchString(answer)
}
