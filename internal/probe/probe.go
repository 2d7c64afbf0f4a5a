// Package probe owns the contamination probe: twins (a user's twin file
// joined to the dataset by case ID, or a rewriter model's paraphrases made
// with a fixed, recorded prompt), the content-hash IDs of twin sets and how
// a twin is stored, and the decision — per target, the paired drop from the
// originals to their twins, its Newcombe interval, the one-sided exact
// McNemar p-value Holm-adjusted across targets, and the verdict, as a
// Report (report renders it).
//
// It reads each run through its view (runview: the verdicts the gate and
// drift read too) and calls nothing: asking a rewriter model for twins is
// its subpackage rewriter's job, so probe and the Report that report
// renders do not reach the provider interface. It must not import
// internal/provider (nor scorer, which does), the runner, the CLI or
// report.
package probe

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"slices"
	"time"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/spec"
)

// setVersion is hashed into every twin set ID: a change to how twins are
// made or stored changes it, so old sets are never read as new ones.
const setVersion = "assay-twins-v1"

// Twin is one case's twin, ready to run in place of the original.
type Twin struct {
	CaseID string
	// Line is where a file twin was read (0 for a paraphrase).
	Line int
	// Vars are the twin's fields: a file twin's own row, or the original's
	// fields with the rewritten ones replaced.
	Vars map[string]any
	// Expected is the twin's own reference answer when OwnExpected (a file
	// twin: GSM1K-style twins have new answers). A paraphrase keeps the
	// original's expected value, so the caller takes it from the case.
	Expected    any
	OwnExpected bool
	// Dataset is the hash of the dataset the twin was made for (set when
	// stored), so a stored set is never paired with another dataset's cases.
	Dataset string
}

// storedFields is the JSON a stored twin's Fields holds.
type storedFields struct {
	Vars        map[string]any `json:"vars"`
	Expected    any            `json:"expected,omitempty"`
	OwnExpected bool           `json:"own_expected,omitempty"`
	Line        int            `json:"line,omitempty"`
	Dataset     string         `json:"dataset"`
}

// Record is the twin as the store keeps it: made for the dataset whose hash
// is datasetHash.
func (t *Twin) Record(set, source, datasetHash string, now time.Time) (record.Twin, error) {
	b, err := json.Marshal(storedFields{Vars: t.Vars, Expected: t.Expected, OwnExpected: t.OwnExpected, Line: t.Line, Dataset: datasetHash})
	if err != nil {
		return record.Twin{}, fmt.Errorf("twin of case %s: %w", t.CaseID, err)
	}
	return record.Twin{Set: set, CaseID: t.CaseID, Source: source, Fields: b, CreatedAt: now.UTC()}, nil
}

// FromRecord reads a stored twin.
func FromRecord(r record.Twin) (*Twin, error) {
	var f storedFields
	// Numbers come back as written (json.Number), as the dataset reader
	// gives them: a twin's answer 9007199254740993 must not round to …992.
	dec := json.NewDecoder(bytes.NewReader(r.Fields))
	dec.UseNumber()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("stored twin of case %s in set %s: %w", r.CaseID, r.Set, err)
	}
	if f.Vars == nil {
		return nil, fmt.Errorf("stored twin of case %s in set %s has no fields", r.CaseID, r.Set)
	}
	return &Twin{CaseID: r.CaseID, Line: f.Line, Vars: f.Vars, Expected: f.Expected, OwnExpected: f.OwnExpected, Dataset: f.Dataset}, nil
}

// FileSetID names the twin set read from a twin file: a hash of the
// dataset's hash, the twin file's hash, and how the file is joined and read
// (the ID field, and the expected field and extraction the twins' own
// answers are read with).
func FileSetID(datasetHash, fileHash, idField string, ds spec.Dataset) string {
	h := sha256.New()
	writeField(h, "version", setVersion)
	writeField(h, "kind", "file")
	writeField(h, "dataset", datasetHash)
	writeField(h, "twin_file", fileHash)
	writeField(h, "id", idField)
	writeField(h, "expected", ds.Expected)
	writeField(h, "expected_extract", ds.ExpectedExtract)
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// RewriterSetID names the twin set a rewriter makes: a hash of the
// dataset's hash, the case IDs' field, the rewriter's resolved configuration
// (what decides its reply: provider, model, base URL, parameters, command,
// recording — not its name, limits or key), the rewrite prompt and the
// fields rewritten.
func RewriterSetID(datasetHash, idField string, t *spec.Target, fields []string) string {
	cfg, err := json.Marshal(struct {
		Provider string       `json:"provider"`
		Model    string       `json:"model,omitempty"`
		BaseURL  string       `json:"base_url,omitempty"`
		Params   spec.Params  `json:"params"`
		Command  []string     `json:"command,omitempty"`
		Replay   *spec.Replay `json:"replay,omitempty"`
	}{t.Provider, t.Model, t.BaseURL, t.Params, t.Command, t.Replay})
	if err != nil {
		// Plain data; a failure is a programming error.
		panic(fmt.Sprintf("probe: hashing the rewriter's configuration: %v", err))
	}
	fs := slices.Clone(fields)
	slices.Sort(fs)
	fj, _ := json.Marshal(fs)
	h := sha256.New()
	writeField(h, "version", setVersion)
	writeField(h, "kind", "rewriter")
	writeField(h, "dataset", datasetHash)
	writeField(h, "id", idField)
	writeField(h, "rewriter", string(cfg))
	writeField(h, "prompt", RewritePromptHash())
	writeField(h, "fields", string(fj))
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// ShortID is a set ID cut for people and run tags: its first 12 hex digits.
func ShortID(id string) string {
	const p = "sha256:"
	if len(id) > len(p) && id[:len(p)] == p {
		id = id[len(p):]
	}
	if len(id) > 12 {
		id = id[:12]
	}
	return id
}

// writeField writes a length-prefixed name and value, so no two field
// lists hash alike.
func writeField(h hash.Hash, name, value string) {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(name)))
	h.Write(n[:])
	h.Write([]byte(name))
	binary.BigEndian.PutUint64(n[:], uint64(len(value)))
	h.Write(n[:])
	h.Write([]byte(value))
}
