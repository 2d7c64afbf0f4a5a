package analysis

import (
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/record"
)

// A run that did not complete says so in its report's warnings: a killed
// run stays "running" in the store, and its rates are of the results it
// stored; a complete run says nothing.
func TestUnfinishedWarnings(t *testing.T) {
	for status, want := range map[string]string{
		record.StatusRunning:     "run r1 is still running, or its process was killed: its rates are over the results stored so far (assay run SPEC --resume r1 completes it)",
		record.StatusInterrupted: "run r1 is interrupted, not complete: its rates are over the results it stored (assay run SPEC --resume r1 completes it)",
		record.StatusFailed:      "run r1 is failed, not complete",
	} {
		ws := unfinishedWarnings(&record.Run{ID: "r1", Status: status})
		if len(ws) != 1 || !strings.HasPrefix(ws[0], want) {
			t.Errorf("%s: %q, want %q", status, ws, want)
		}
	}
	if ws := unfinishedWarnings(&record.Run{ID: "r1", Status: record.StatusComplete}); ws != nil {
		t.Errorf("complete: %q", ws)
	}
}
