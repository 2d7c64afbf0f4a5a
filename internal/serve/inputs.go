package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/spec"
	"github.com/assay-eval/assay/internal/traces"
)

// runSpec is the run's resolved spec, as the run stored it, with its
// directory set from the spec path the run recorded (so dataset.path and
// labels.add_to resolve as they did for the run).
func runSpec(run *record.Run) (*spec.Spec, error) {
	if len(run.Config) == 0 {
		return nil, fmt.Errorf("run %s does not carry its resolved spec, so its dataset is unknown", run.ID)
	}
	sp, err := spec.Stored(run.Config, run.SpecPath)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", run.ID, err)
	}
	return sp, nil
}

// caseInputs are some cases' input fields read from the run's dataset
// file, and a note when the file no longer holds the cases the run
// measured (cases added since, or edited: the fields shown are the file's).
type caseInputs struct {
	Fields map[string]map[string]any
	Note   string
}

// inputsOf reads the fields of the cases with these IDs from the run's
// dataset, in one streaming pass, cached per run and ID set until the file
// changes.
func (s *Server) inputsOf(ctx context.Context, run *record.Run, ids []string) (*caseInputs, error) {
	if run.Sample != "" {
		return s.traceInputs(ctx, run, ids)
	}
	sp, err := runSpec(run)
	if err != nil {
		return nil, err
	}
	path := sp.Resolve(sp.Dataset.Path)
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("the run's dataset %s cannot be read: %v", path, err)
	}
	ids = slices.Clone(ids)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	key := "inputs\x00" + run.ID + "\x00" + strings.Join(ids, "\x00")
	stamp := fmt.Sprintf("%d/%d", st.Size(), st.ModTime().UnixNano())
	v, err := s.cache.get(key, stamp, func() (any, error) { return readInputs(ctx, sp, run, path, ids) })
	if err != nil {
		return nil, err
	}
	return v.(*caseInputs), nil
}

func readInputs(ctx context.Context, sp *spec.Spec, run *record.Run, path string, ids []string) (*caseInputs, error) {
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	r, err := dataset.Open(sp)
	if err != nil {
		return nil, fmt.Errorf("opening the run's dataset %s: %w", path, err)
	}
	defer r.Close()
	in := &caseInputs{Fields: map[string]map[string]any{}}
	bad := 0
	for n := 0; ; n++ {
		if n%1024 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		c, err := r.Next()
		if err == io.EOF {
			break
		}
		var probs spec.Problems
		if errors.As(err, &probs) {
			bad++ // a row the run's spec cannot read: not one of its cases
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading the run's dataset %s: %w", path, err)
		}
		if want[c.ID] {
			in.Fields[c.ID] = c.Vars
		}
	}
	v := dataset.Version{Hash: run.DatasetHash, File: run.FileHash}
	switch {
	case bad > 0:
		in.Note = fmt.Sprintf("the dataset %s no longer reads as the run read it (%d rows with problems): the inputs shown are its current cases of these IDs", path, bad)
	case sp.Dataset.Limit == 0 && v.Content() != "" && r.Hash() != v.Content():
		in.Note = fmt.Sprintf("the dataset %s changed since the run (cases added or edited): the inputs shown are its current cases of these IDs", path)
	}
	return in, nil
}

// traceInputs are the inputs of a score-traces run's cases: each case is a
// stored trace, whose conversation (traces.Vars) is its fields. A trace
// the store no longer holds is named in the note.
func (s *Server) traceInputs(ctx context.Context, run *record.Run, ids []string) (*caseInputs, error) {
	in := &caseInputs{Fields: map[string]map[string]any{}}
	var missing []string
	for _, id := range ids {
		t, err := s.o.Store.Trace(ctx, id)
		if errors.Is(err, record.ErrNotFound) {
			missing = append(missing, id)
			continue
		}
		if err != nil {
			return nil, err
		}
		in.Fields[id] = traces.Vars(t)
	}
	if len(missing) > 0 {
		in.Note = fmt.Sprintf("the store no longer holds %d of these traces (%s)", len(missing), strings.Join(missing, ", "))
	}
	return in, nil
}
