package probe

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/spec"
)

// FileOptions say how a twin file is read and joined to the dataset.
type FileOptions struct {
	// Path is the twin file as the user named it (relative to the working
	// directory, not to the spec).
	Path string
	// Format is jsonl or csv; empty means from the file's extension.
	Format string
	// IDField names the field that holds each twin's case ID; empty means
	// the spec's dataset.id (`line` joins by line or row number).
	IDField string
	// Needs are the fields every twin must have: the fields the prompt uses.
	Needs []string
}

// File is a twin file, read and joined.
type File struct {
	// Hash is "sha256:<hex>" of the file's bytes.
	Hash    string
	IDField string
	Format  string
	// Twins maps a case ID to its twin.
	Twins map[string]*Twin
}

// FileFormat is the format of a twin file: override when set (jsonl or
// csv), else the one its extension names.
func FileFormat(path, override string) (string, error) {
	if override != "" {
		if override != "jsonl" && override != "csv" {
			return "", fmt.Errorf("unknown twin file format %q (supported formats are: jsonl, csv)", override)
		}
		return override, nil
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".jsonl", ".ndjson", ".jsonlines":
		return "jsonl", nil
	case ".csv":
		return "csv", nil
	}
	return "", fmt.Errorf("cannot tell the format of twin file %q from its name (name it .jsonl or .csv, or say --twins-format jsonl|csv)", filepath.Base(path))
}

// ReadFile reads a twin file with the dataset reader — the same JSONL/CSV
// rules, the spec's dataset.expected and expected_extract for the twins'
// own answers — and joins it to the dataset's cases by ID. isCase says
// whether an ID names a case of the dataset; examples are a few of those
// IDs, for hints.
//
// Every problem is returned at once as spec.Problems located in the twin
// file (FILE:LINE:COL): a row that is not valid JSON or CSV, a twin ID seen
// twice, a twin without a field the prompt uses or without the expected
// field, a twin whose ID matches no case. Any other error is an I/O error.
func ReadFile(sp *spec.Spec, o FileOptions, isCase func(id string) bool, examples []string) (*File, error) {
	format, err := FileFormat(o.Path, o.Format)
	if err != nil {
		return nil, err
	}
	st, err := os.Stat(o.Path)
	if err == nil && st.IsDir() {
		err = fmt.Errorf("is a directory: %w", fs.ErrInvalid)
	}
	if err != nil {
		return nil, fmt.Errorf("twin file %s: %s", o.Path, spec.FileError(err))
	}
	idField := o.IDField
	if idField == "" {
		idField = sp.Dataset.ID
	}
	// The twin file is read as a dataset of its own: the spec's expected
	// value settings, none of its tags or weights (a twin keeps its
	// original's), every row. Dir is empty so the path stays as given.
	tsp := *sp
	tsp.Dir = ""
	tsp.Dataset = spec.Dataset{Path: o.Path, Format: format, ID: idField,
		Expected: sp.Dataset.Expected, ExpectedExtract: sp.Dataset.ExpectedExtract}
	file := tsp.Resolve(o.Path)

	info, err := dataset.Scan(&tsp)
	var probs spec.Problems
	if err != nil {
		var ps spec.Problems
		if !errors.As(err, &ps) {
			return nil, err
		}
		// Problems the reader locates in the spec (a field no row has) are
		// said again below, located in the twin file.
		for _, p := range ps {
			if p.File == file {
				probs = append(probs, p)
			}
		}
	}
	at := func(line int, hint, format string, args ...any) {
		probs = append(probs, spec.Problem{File: file, Line: max(line, 1), Col: 1, Msg: fmt.Sprintf(format, args...), Hint: hint})
	}
	if info != nil && info.Rows > 0 {
		have := func(f string) bool { _, ok := info.Stats[f]; return ok }
		if idField != spec.DefaultID && !have(idField) {
			hint := "twins join the cases by ID: name the twin file's ID field with --twin-id"
			if near := spec.Nearest(idField, info.Fields); near != "" {
				hint = fmt.Sprintf("did you mean --twin-id %s?", near)
			}
			at(1, hint, "the twin file has no ID field %q (fields: %s)", idField, dataset.FieldList(info.Fields))
		}
		need := func(f, what string) {
			st, ok := info.Stats[f]
			switch {
			case !ok:
				hint := ""
				if near := spec.Nearest(f, info.Fields); near != "" {
					hint = fmt.Sprintf("did you mean %q?", near)
				}
				at(1, hint, "the twins lack field %q that %s (fields: %s)", f, what, dataset.FieldList(info.Fields))
			case st.FirstMissing > 0:
				at(st.FirstMissing, "every twin needs each field the prompt uses and its own expected value",
					"twin lacks field %q that %s (%d of %d twins lack it)", f, what, info.Rows-st.Rows, info.Rows)
			}
		}
		for _, f := range o.Needs {
			need(f, "the prompt uses")
		}
		if e := sp.Dataset.Expected; e != "" && !slices.Contains(o.Needs, e) {
			need(e, "holds the expected value (dataset.expected)")
		}
	}
	if len(probs) > 0 {
		return nil, probs.Sort(sp.File)
	}

	out := &File{Hash: info.FileHash, IDField: idField, Format: format, Twins: map[string]*Twin{}}
	unmatched := 0
	err = dataset.Each(&tsp, func(c *dataset.Case) error {
		if !isCase(c.ID) {
			unmatched++
			if unmatched <= dataset.MaxProblems {
				hint := "twins join the cases by ID (dataset.id, or --twin-id FIELD)"
				if len(examples) > 0 {
					hint += "; the dataset's IDs look like: " + strings.Join(examples, ", ")
				}
				at(c.Line, hint, "twin ID %q matches no case of the dataset", c.ID)
			}
			return nil
		}
		out.Twins[c.ID] = &Twin{CaseID: c.ID, Line: c.Line, Vars: c.Vars, Expected: c.Expected, OwnExpected: sp.Dataset.Expected != ""}
		return nil
	})
	if err != nil {
		var ps spec.Problems
		if errors.As(err, &ps) {
			// Scan found none; the file changed under us.
			return nil, fmt.Errorf("twin file %s changed while it was read: %w", o.Path, err)
		}
		return nil, err
	}
	if unmatched > dataset.MaxProblems {
		probs = append(probs, spec.Problem{File: file, Line: probs[len(probs)-1].Line, Col: 1,
			Msg: fmt.Sprintf("… and %d more twin IDs that match no case", unmatched-dataset.MaxProblems)})
	}
	if len(probs) > 0 {
		return nil, probs
	}
	return out, nil
}
