package gate

import (
	"errors"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/runview"
)

// TestDatasetVersionsByContent: the gate pairs runs by the dataset's
// content hash, says so when the files differ in bytes only, and reads a
// baseline recorded before content hashes by its byte hash — the same
// bytes gate with a note, other bytes are refused (never taken for the
// same cases).
func TestDatasetVersionsByContent(t *testing.T) {
	const (
		content = "sha256:c0c0"
		lfBytes = "sha256:1f1f"
		crlf    = "sha256:c71f"
	)
	snap := func(id, hash, file string) *runview.View {
		s := testSnap(id, hash, 1, ids(40), nil, testTarget("m", passes(40, 36), nil, nil, nil, id))
		s.Run.FileHash = file
		return s
	}
	warnings := func(r *Result) string { return strings.Join(r.Warnings, "\n") }

	// Both sides by content: a CRLF copy of the same cases gates.
	res := evaluate(t, snap("b", content, lfBytes), snap("c", content, crlf), nil, Options{})
	if !strings.Contains(warnings(res), "same cases") || !strings.Contains(warnings(res), "differ in bytes") {
		t.Errorf("same cases in other bytes: warnings %q", res.Warnings)
	}
	// The same file: nothing to say.
	res = evaluate(t, snap("b", content, lfBytes), snap("c", content, lfBytes), nil, Options{})
	if strings.Contains(warnings(res), "byte") {
		t.Errorf("same file: warnings %q", res.Warnings)
	}
	// Other content, whatever the bytes: refused.
	if _, err := Evaluate(snap("b", content, lfBytes), snap("c", "sha256:0th3r", lfBytes), nil, Options{}); err == nil {
		t.Errorf("other content gated")
	}

	// A baseline recorded before content hashes: dataset_hash is the byte
	// hash and there is no file_hash.
	old := func() *runview.View { return snap("b", lfBytes, "") }
	res = evaluate(t, old(), snap("c", content, lfBytes), nil, Options{})
	if w := warnings(res); !strings.Contains(w, "baseline records only its dataset file's byte hash") || !strings.Contains(w, "content hash of the baseline is unknown") {
		t.Errorf("old baseline, same bytes: warnings %q", res.Warnings)
	}
	_, err := Evaluate(old(), snap("c", content, crlf), nil, Options{})
	var dm *DatasetMismatchError
	if !errors.As(err, &dm) || !dm.ByBytes || !strings.Contains(err.Error(), "dataset files differ") || !strings.Contains(err.Error(), "re-run or re-export the baseline") {
		t.Errorf("old baseline, other bytes: %v", err)
	}
	// ... and with --shared-cases it is compared, saying how.
	res = evaluate(t, old(), snap("c", content, crlf), nil, Options{SharedCases: true})
	if !strings.Contains(warnings(res), "whether the cases differ is unknown") {
		t.Errorf("old baseline, shared cases: warnings %q", res.Warnings)
	}
}
