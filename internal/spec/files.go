package spec

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"sort"
)

// File uses: what a file read on the spec's behalf decides.
const (
	FileForPrompt  = "prompt"  // a file:// prompt template
	FileForScorers = "scorers" // a file:// rubric, a JSON schema or a file it $refs
)

// FileDigest is one file read on the spec's behalf, named by its path
// relative to the spec's directory (slash-separated; absolute when it lies
// outside it), with the hash of the content that was used.
type FileDigest struct {
	Path   string `json:"path"`
	For    string `json:"for"` // FileForPrompt or FileForScorers
	SHA256 string `json:"sha256"`
}

// ReadFile returns the content of a file a scorer reads (a JSON schema, a
// file it $refs), p being absolute or relative to the spec's directory. The
// first read of a path is kept and recorded in Files, so ScorersHash covers
// it by content and a second compile of the same spec uses the very bytes
// that were hashed, even if the file changed meanwhile. Files are bounded
// at MaxPromptBytes. Not safe for concurrent use.
func (s *Spec) ReadFile(p string) ([]byte, error) {
	abs, err := filepath.Abs(s.Resolve(p))
	if err != nil {
		return nil, err
	}
	if b, ok := s.read[abs]; ok {
		return b, nil
	}
	b, err := readLimited(abs)
	if err != nil {
		return nil, err
	}
	if s.read == nil {
		s.read = map[string][]byte{}
	}
	s.read[abs] = b
	s.record(FileForScorers, abs, b)
	return b, nil
}

// record adds a file's digest to Files, keeping them sorted by use, then
// path, so the hashes that fold them in are the same whatever the order of
// reading.
func (s *Spec) record(use, p string, b []byte) {
	sum := sha256.Sum256(b)
	s.recordDigest(use, p, "sha256:"+hex.EncodeToString(sum[:]))
}

// recordDigest is record with the content's hash already computed (a file
// read as a stream, like an agent's replay file).
func (s *Spec) recordDigest(use, p, digest string) {
	name := filepath.ToSlash(p)
	if dir, err := filepath.Abs(s.Dir); err == nil {
		if abs, err := filepath.Abs(s.Resolve(p)); err == nil {
			if rel, err := filepath.Rel(dir, abs); err == nil && filepath.IsLocal(rel) {
				name = filepath.ToSlash(rel)
			} else {
				name = filepath.ToSlash(abs)
			}
		}
	}
	d := FileDigest{Path: name, For: use, SHA256: digest}
	for i, f := range s.Files {
		if f.Path == d.Path && f.For == d.For {
			s.Files[i] = d
			return
		}
	}
	s.Files = append(s.Files, d)
	sort.Slice(s.Files, func(i, j int) bool {
		if s.Files[i].For != s.Files[j].For {
			return s.Files[i].For < s.Files[j].For
		}
		return s.Files[i].Path < s.Files[j].Path
	})
}

// filesFor returns the digests of the files read for one use.
func (s *Spec) filesFor(use string) []FileDigest {
	var out []FileDigest
	for _, f := range s.Files {
		if f.For == use {
			out = append(out, f)
		}
	}
	return out
}

// FileChange is a file read for the prompt or the scorers that differs
// between two specs: Change is "changed", "added" or "removed".
type FileChange struct {
	Path   string `json:"path"`
	For    string `json:"for"`
	Change string `json:"change"`
}

// ChangedFiles compares two lists of file digests (Spec.Files, as two runs
// recorded them) by use and path, in the order of after's list then the
// removed ones.
func ChangedFiles(before, after []FileDigest) []FileChange {
	key := func(f FileDigest) string { return f.For + "\x00" + f.Path }
	old := map[string]string{}
	for _, f := range before {
		old[key(f)] = f.SHA256
	}
	seen := map[string]bool{}
	var out []FileChange
	for _, f := range after {
		k := key(f)
		seen[k] = true
		switch h, ok := old[k]; {
		case !ok:
			out = append(out, FileChange{Path: f.Path, For: f.For, Change: "added"})
		case h != f.SHA256:
			out = append(out, FileChange{Path: f.Path, For: f.For, Change: "changed"})
		}
	}
	for _, f := range before {
		if !seen[key(f)] {
			out = append(out, FileChange{Path: f.Path, For: f.For, Change: "removed"})
		}
	}
	return out
}

// ConfigFiles returns the file digests a resolved spec stored as JSON (a
// run's config) carries; ok is false when the JSON does not decode.
func ConfigFiles(config []byte) (files []FileDigest, ok bool) {
	var c struct {
		Files []FileDigest `json:"files"`
	}
	if err := json.Unmarshal(config, &c); err != nil {
		return nil, false
	}
	return c.Files, true
}
