package report

import (
	"fmt"

	"github.com/assay-eval/assay/internal/analysis"
)

// redactionNotes says, for each target whose stored outputs or errors had
// secrets replaced, how many were: the target echoed a key it was given,
// and its outputs now read [REDACTED:VARIABLE] where the key was. esc
// escapes the note for the format: the whole of it, as its brackets are
// markup in Markdown.
func redactionNotes(rep *analysis.Report, esc func(string) string) []string {
	var notes []string
	for _, t := range rep.Targets {
		if t.Redactions > 0 {
			notes = append(notes, esc(fmt.Sprintf("target %s: %s replaced by [REDACTED:VARIABLE] (the variable the spec names) in its outputs and errors before they were stored",
				t.Name, plural(t.Redactions, "secret"))))
		}
	}
	return notes
}
