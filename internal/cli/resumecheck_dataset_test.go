package cli

import (
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/engine"
	"github.com/assay-eval/assay/internal/record"
)

// TestResumeComparesDatasetByContent: a run resumes on the same cases
// re-saved in other bytes; other cases are refused; a run recorded before
// content hashes (the byte hash only) resumes on the same bytes and is
// refused on others, saying it can only compare bytes. rescore uses the
// same check.
func TestResumeComparesDatasetByContent(t *testing.T) {
	t.Parallel()
	const content, lf, crlf = "sha256:c0", "sha256:1f", "sha256:c71f"
	now := &dataset.Info{Hash: content, FileHash: crlf}
	for _, c := range []struct {
		name string
		run  record.Run
		want string // "" resumes; else a substring of the reason
	}{
		{"same cases, other bytes", record.Run{DatasetHash: content, FileHash: lf}, ""},
		{"other cases", record.Run{DatasetHash: "sha256:0th3r", FileHash: crlf}, "dataset 0th3r → c0"},
		{"old run, same bytes", record.Run{DatasetHash: crlf}, ""},
		{"old run, other bytes", record.Run{DatasetHash: lf}, "records only its file's byte hash"},
		{"no hash recorded", record.Run{}, ""},
	} {
		got := engine.DatasetChanged(&c.run, now)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
