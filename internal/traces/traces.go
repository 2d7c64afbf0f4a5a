// Package traces owns production traces before they are stored: OpenTelemetry
// GenAI spans (current and older semantic-convention forms) and JSONL log
// lines mapped by the spec's traces: section into record.Trace, priced from
// its price table, and redacted for privacy (named detectors and the user's
// patterns, counted). It reads bytes and pdata; it stores nothing.
package traces

import (
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/spec"
)

// IngestResult is what `assay ingest` did, file by file.
type IngestResult struct {
	Files []IngestFile `json:"files"`
}

// IngestFile is one ingested file.
type IngestFile struct {
	Path       string `json:"path"`
	Lines      int    `json:"lines"`
	Stored     int    `json:"stored"`     // new traces
	Duplicates int    `json:"duplicates"` // lines whose ID was already stored
	Redactions int    `json:"redactions"`
	Unpriced   int    `json:"unpriced"` // traces whose model has no price
	// Bad counts the lines skipped as not a trace (--skip-bad); Problems
	// are the first of them.
	Bad      int            `json:"bad"`
	Problems []spec.Problem `json:"problems,omitempty"`
}

// Vars are a trace's inputs as a case's fields, the way a score-traces run
// records them and serve shows them: "input", the conversation's last user
// message; "messages", the whole conversation when it has more than one
// message; "system", the system instructions when there are any.
func Vars(t *record.Trace) map[string]any {
	vars := map[string]any{}
	for _, m := range t.Input {
		if m.Role == "user" {
			vars["input"] = m.Content
		}
	}
	if len(t.Input) > 1 {
		vars["messages"] = t.Input
	}
	if t.System != "" {
		vars["system"] = t.System
	}
	return vars
}
