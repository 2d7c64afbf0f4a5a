package engine

import (
	"fmt"
	"strings"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/spec"
)

// ResumeChanged refuses to resume a run when anything that decides its
// verdicts changed since it started: the spec, the dataset, the prompt, or
// the definition of correct (the scorers hash, which covers a JSON schema,
// the files it $refs and a file:// rubric by content). Results scored two
// ways would be mixed in one run. The error names each hash that changed
// and, from the run's stored resolved spec, each file. The dataset is
// compared by content (the same cases re-saved with other line ends, a
// byte-order mark or quoting resume), or by the file's bytes for a run
// recorded before content hashes (DatasetChanged).
func ResumeChanged(run *record.Run, sp *spec.Spec, ds *dataset.Info) error {
	var what []string
	if d := DatasetChanged(run, ds); d != "" {
		what = append(what, d)
	}
	for _, h := range []struct{ name, before, now string }{
		{"spec", run.SpecHash, sp.Hash},
		{"prompt", run.PromptHash, sp.PromptHash()},
		{"scorers", run.ScorersHash, sp.ScorersHash()},
	} {
		// A run recorded before a hash existed has "" for it: nothing to
		// compare with.
		if h.before != "" && h.before != h.now {
			what = append(what, fmt.Sprintf("%s %s → %s", h.name, Short(h.before), Short(h.now)))
		}
	}
	if len(what) == 0 {
		return nil
	}
	msg := fmt.Sprintf("resuming %s: what decides its verdicts changed since the run started (%s)", run.ID, strings.Join(what, ", "))
	if before, ok := spec.ConfigFiles(run.Config); ok {
		var files []string
		for _, c := range spec.ChangedFiles(before, sp.Files) {
			files = append(files, fmt.Sprintf("%s %s (read by the %s)", quotePath(c.Path), c.Change, c.For))
		}
		if len(files) > 0 {
			msg += ": " + strings.Join(files, ", ")
		}
	}
	return fmt.Errorf("%s; start a new run instead", msg)
}

// DatasetChanged compares the dataset a run measured with the one read
// now; "" when they are the same cases (or the run recorded no hash), else
// "dataset OLD → NEW" with, for a run recorded before content hashes whose
// bytes differ, why the cases cannot be told apart.
func DatasetChanged(run *record.Run, ds *dataset.Info) string {
	m := dataset.CompareVersions("run", dataset.Version{Hash: run.DatasetHash, File: run.FileHash},
		"dataset now", dataset.Version{Hash: ds.Hash, File: ds.FileHash})
	if m.Same {
		return ""
	}
	if m.ByBytes {
		return fmt.Sprintf("dataset file %s → %s: the run records only its file's byte hash, so the file must be the one it read byte for byte",
			Short(m.Before), Short(m.After))
	}
	return fmt.Sprintf("dataset %s → %s", Short(m.Before), Short(m.After))
}

// quotePath quotes a path only when it needs it (spaces, control
// characters), so the usual path reads as written.
func quotePath(p string) string {
	q := fmt.Sprintf("%q", p)
	if q[1:len(q)-1] == p && !strings.ContainsAny(p, " ") {
		return p
	}
	return q
}

// Short is a hash for a message: its first 12 hex digits.
func Short(h string) string {
	h = strings.TrimPrefix(h, "sha256:")
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
