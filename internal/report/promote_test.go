package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/promote"
)

// Promote's summary shows production text — trace IDs, inputs, reasons —
// escaped: a terminal control sequence in a trace is shown, not obeyed.
func TestPromoteTextEscapesTraffic(t *testing.T) {
	esc := "\x1b]0;pwned\x07\x1b[31m"
	r := &promote.Result{Run: "r1", Sample: "s", Scorer: "json", Scoring: 1, Dataset: "cases.jsonl",
		Added:   []promote.Added{{TraceID: "t" + esc, Because: "label by " + esc, Reason: "bad" + esc, Input: "hi" + esc, Line: 3}},
		Skipped: []promote.Skip{{TraceID: esc, Why: promote.SkipExact, Of: &dataset.CaseRef{ID: esc, Line: 1}}, {TraceID: "u", Why: promote.SkipNear, OfTrace: esc, Similarity: 0.93}},
		Before:  "sha256:aaaaaaaaaaaaaaaaaaaa", After: "sha256:bbbbbbbbbbbbbbbbbbbb"}
	var b bytes.Buffer
	if err := PromoteText(&b, r); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.ContainsAny(out, "\x1b\x07") {
		t.Errorf("raw control characters in the summary:\n%q", out)
	}
	for _, want := range []string{`added 1 case(s) to cases.jsonl`, `line 3`, `near-duplicate of trace`, `similarity 0.93`, `sha256:aaaaaaaaaaaa → sha256:bbbbbbbbbbbb`} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
}
