package traces

import (
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/spec"
)

// Redactor replaces private values in a trace before it is stored.
type Redactor struct{}

// NewRedactor builds the redaction a spec's traces.redact asks for (nil:
// every named detector).
func NewRedactor(r *spec.Redact) (*Redactor, error) { return &Redactor{}, nil }

// Trace redacts every text of t in place — system instructions, messages'
// contents, tool calls' arguments, string values of the attributes and the
// resource — and adds what it replaced to t.Redactions.
func (r *Redactor) Trace(t *record.Trace) {}

// Price sets t's cost from prices by its model (Priced false, cost 0 when
// the model has no price).
func Price(t *record.Trace, prices map[string]spec.Price) {}
