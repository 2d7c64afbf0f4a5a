package dataset

import (
	"strings"
	"testing"
)

// TestCompareVersions: content hashes decide when both sides have one; a
// side recorded before content hashes (its Hash the byte hash, no File)
// is compared by bytes, with a note, and different bytes are never taken
// for the same cases.
func TestCompareVersions(t *testing.T) {
	const (
		content  = "sha256:c0"
		content2 = "sha256:c1"
		lf       = "sha256:b0"
		crlf     = "sha256:b1"
	)
	for _, c := range []struct {
		name                string
		before, after       Version
		same, byBytes, unkn bool
		note                []string // substrings of the note; nil: no note
	}{
		{"same cases, same file", Version{content, lf}, Version{content, lf}, true, false, false, nil},
		{"same cases, other bytes", Version{content, lf}, Version{content, crlf}, true, false, false, []string{"same cases", "differ in bytes"}},
		{"other cases", Version{content, lf}, Version{content2, crlf}, false, false, false, nil},
		{"old baseline, same bytes", Version{lf, ""}, Version{content, lf}, true, true, false, []string{"baseline records only", "byte hash", "content hash of the baseline is unknown"}},
		{"old baseline, other bytes", Version{lf, ""}, Version{content, crlf}, false, true, false, []string{"baseline records only", "bytes differ", "unknown", "re-run or re-export the baseline"}},
		{"old candidate", Version{content, lf}, Version{lf, ""}, true, true, false, []string{"candidate records only"}},
		{"both old, same", Version{lf, ""}, Version{lf, ""}, true, true, false, nil},
		{"both old, other", Version{lf, ""}, Version{crlf, ""}, false, true, false, nil},
		{"none recorded", Version{}, Version{content, lf}, true, false, true, nil},
	} {
		m := CompareVersions("baseline", c.before, "candidate", c.after)
		if m.Same != c.same || m.ByBytes != c.byBytes || m.Unknown != c.unkn {
			t.Errorf("%s: %+v, want same %v by bytes %v unknown %v", c.name, m, c.same, c.byBytes, c.unkn)
		}
		if c.note == nil && m.Note != "" {
			t.Errorf("%s: unexpected note %q", c.name, m.Note)
		}
		for _, s := range c.note {
			if !strings.Contains(m.Note, s) {
				t.Errorf("%s: note %q lacks %q", c.name, m.Note, s)
			}
		}
	}
}
