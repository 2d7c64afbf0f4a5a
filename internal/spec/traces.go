package spec

// Traces is the traces: section: how production traces are read, priced
// and redacted (assay collect, ingest, sample, score-traces, trend,
// promote). Every key is optional; a spec without the section collects
// OTLP spans unpriced, redacted by every named detector, and cannot ingest
// JSONL (there is no mapping).
type Traces struct {
	// The JSONL mapping (assay ingest): each is a dotted path into a log
	// line's JSON object. Input and Output are required to ingest; their
	// value is a string (one user / assistant message) or a list of
	// messages ({role, content, tool_calls?}) in OpenAI's or the GenAI
	// semantic conventions' form.
	ID           string `yaml:"id,omitempty" json:"id,omitempty"`
	Input        string `yaml:"input,omitempty" json:"input,omitempty"`
	Output       string `yaml:"output,omitempty" json:"output,omitempty"`
	System       string `yaml:"system,omitempty" json:"system,omitempty"`
	Model        string `yaml:"model,omitempty" json:"model,omitempty"`
	Time         string `yaml:"time,omitempty" json:"time,omitempty"` // RFC 3339, or Unix seconds / milliseconds
	LatencyMS    string `yaml:"latency_ms,omitempty" json:"latency_ms,omitempty"`
	InputTokens  string `yaml:"input_tokens,omitempty" json:"input_tokens,omitempty"`
	OutputTokens string `yaml:"output_tokens,omitempty" json:"output_tokens,omitempty"`
	// Attributes names the fields kept as the trace's attributes (name →
	// dotted path); a line's other top-level fields are kept too, under
	// their own names, so nothing is dropped.
	Attributes map[string]string `yaml:"attributes,omitempty" json:"attributes,omitempty"`

	// Prices price each model's traces (USD per million tokens), by the
	// trace's model name.
	Prices map[string]Price `yaml:"prices,omitempty" json:"prices,omitempty"`

	// Promote says how assay promote turns a trace into a dataset case
	// (nil: the defaults of TracePromote).
	Promote *TracePromote `yaml:"promote,omitempty" json:"promote,omitempty"`

	// Redact is the privacy redaction applied before a trace is stored
	// (collect and ingest); nil means every named detector.
	Redact *Redact `yaml:"redact,omitempty" json:"redact,omitempty"`
}

// Redact configures the privacy redaction: named detectors (email, phone,
// card, key) and the user's own patterns. A match is replaced by
// "[REDACTED:<name>]" and counted.
type Redact struct {
	// Detectors are the named detectors to apply; nil means all of them,
	// an empty list none.
	Detectors []string `yaml:"detectors" json:"detectors"`
	// Patterns are the user's own regular expressions (RE2), each with a
	// name shown in the replacement.
	Patterns []RedactPattern `yaml:"patterns,omitempty" json:"patterns,omitempty"`
}

// RedactPattern is one named regular expression of the redaction.
type RedactPattern struct {
	Name  string `yaml:"name" json:"name"`
	Regex string `yaml:"regex" json:"regex"`
}

// TracePromote maps a promoted trace onto a dataset case's fields.
type TracePromote struct {
	// Input is the field that takes the conversation's last user message
	// (default "input"); Messages the field that takes the whole
	// conversation as a message list ("" for none: the default); Context
	// the field that takes the system instructions ("" for none).
	Input    string `yaml:"input,omitempty" json:"input,omitempty"`
	Messages string `yaml:"messages,omitempty" json:"messages,omitempty"`
	Context  string `yaml:"context,omitempty" json:"context,omitempty"`
	// To is the JSONL file promoted cases are appended to, relative to the
	// spec (default: labels.add_to, else the dataset when it is JSONL).
	To string `yaml:"to,omitempty" json:"to,omitempty"`
}
