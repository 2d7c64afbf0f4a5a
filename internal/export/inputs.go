package export

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/spec"
)

// ErrDatasetChanged is returned by OpenInputs when the run's dataset file
// no longer has the content the run measured: its inputs would be another
// dataset's.
var ErrDatasetChanged = errors.New("the dataset changed since the run")

// Inputs reads the fields of a run's cases from its dataset. The store
// records a case's ID, line, expected value, tags and weight, not the
// fields the prompt was made of, so an export reads them again from the
// dataset file the run's resolved spec names, after checking that the file
// still holds the cases the run measured: the same bytes, or — for a run
// that recorded its dataset's content hash — the same cases saved another
// way (line ends, a byte-order mark, CSV quoting, JSONL key order).
type Inputs struct {
	r    *dataset.Reader
	path string
	cur  *dataset.Case
	json json.RawMessage
}

// OpenInputs opens the dataset of run for reading its cases' fields. The
// dataset path is resolved against the directory of the run's spec file as
// the run recorded it. An error says why the inputs cannot be read: the
// run has no resolved spec, the file is gone, or its content changed
// (ErrDatasetChanged).
func OpenInputs(run *record.Run) (*Inputs, error) {
	if len(run.Config) == 0 {
		return nil, fmt.Errorf("run %s does not carry its resolved spec, so its dataset is unknown", run.ID)
	}
	sp, err := spec.Stored(run.Config, run.SpecPath)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", run.ID, err)
	}
	path := sp.Resolve(sp.Dataset.Path)
	got, err := fileHash(path)
	if err != nil {
		return nil, fmt.Errorf("run %s: reading its dataset %s: %w", run.ID, path, err)
	}
	if v := (dataset.Version{Hash: run.DatasetHash, File: run.FileHash}); run.DatasetHash != "" && got != v.Bytes() {
		if v.Content() == "" {
			return nil, fmt.Errorf("run %s: %w: %s has hash %s, the run measured %s (the run records only the file's byte hash, made before datasets were identified by content)",
				run.ID, ErrDatasetChanged, path, short(got), short(v.Bytes()))
		}
		// Other bytes: the same cases saved another way still have the
		// run's content hash. One streaming pass tells.
		info, err := dataset.Scan(sp)
		var probs spec.Problems
		if errors.As(err, &probs) && len(probs) > 0 {
			// It no longer reads as the run's spec reads it: not its cases.
			return nil, fmt.Errorf("run %s: %w: %s no longer reads as the run's dataset (%s)", run.ID, ErrDatasetChanged, path, probs[0].String())
		}
		if err != nil {
			return nil, fmt.Errorf("run %s: reading its dataset %s: %w", run.ID, path, err)
		}
		if info.Hash != v.Content() {
			return nil, fmt.Errorf("run %s: %w: %s holds dataset %s, the run measured %s", run.ID, ErrDatasetChanged, path, short(info.Hash), short(v.Content()))
		}
	}
	r, err := dataset.Open(sp)
	if err != nil {
		return nil, fmt.Errorf("run %s: opening its dataset %s: %w", run.ID, path, err)
	}
	return &Inputs{r: r, path: path}, nil
}

// Fields returns the fields of the case with this ID as a JSON object.
// Cases must be asked for in dataset order (a case may be asked for again
// while it is the current one), as Rows does.
func (in *Inputs) Fields(caseID string) (json.RawMessage, error) {
	for in.cur == nil || in.cur.ID != caseID {
		c, err := in.r.Next()
		if err == io.EOF {
			return nil, fmt.Errorf("case %q is not in the dataset %s (or not in the order the run stored)", caseID, in.path)
		}
		if err != nil {
			return nil, fmt.Errorf("reading the dataset %s: %w", in.path, err)
		}
		b, err := json.Marshal(c.Vars)
		if err != nil {
			return nil, fmt.Errorf("case %q of %s: %w", c.ID, in.path, err)
		}
		in.cur, in.json = c, b
	}
	return in.json, nil
}

// Close closes the dataset.
func (in *Inputs) Close() error { return in.r.Close() }

// fileHash is "sha256:<hex>" of a file's bytes, as dataset.Info.FileHash.
func fileHash(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

func short(h string) string {
	const prefix = "sha256:"
	if len(h) > len(prefix)+12 && h[:len(prefix)] == prefix {
		return h[len(prefix) : len(prefix)+12]
	}
	return h
}
