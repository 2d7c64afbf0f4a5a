package spec

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

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

// RedactDetectors are the named detectors traces.redact.detectors may
// list, in the order the redaction applies them (after the user's
// patterns).
var RedactDetectors = []string{"email", "key", "card", "phone"}

// MaxRedactPatternName bounds a redaction pattern's name (it is written
// into every replacement).
const MaxRedactPatternName = 40

// MaxTracePath bounds a mapping's dotted path.
const MaxTracePath = 256

// TracePath is one key of the JSONL mapping with its dotted path.
type TracePath struct{ Key, Path string }

// MappingPaths are the JSONL mapping's keys (but the attributes) in their
// documented order, with the paths written ("" when not).
func (t *Traces) MappingPaths() []TracePath {
	return []TracePath{
		{"id", t.ID}, {"input", t.Input}, {"output", t.Output}, {"system", t.System}, {"model", t.Model},
		{"time", t.Time}, {"latency_ms", t.LatencyMS}, {"input_tokens", t.InputTokens}, {"output_tokens", t.OutputTokens},
	}
}

// TracePathFlaw says what is wrong with a mapping's dotted path ("" when
// nothing): a path is one or more field names joined by dots, a number
// indexing a list ("messages.0.content").
func TracePathFlaw(p string) string {
	switch {
	case strings.TrimSpace(p) == "":
		return "is empty"
	case len(p) > MaxTracePath:
		return fmt.Sprintf("is longer than %d characters", MaxTracePath)
	case strings.HasPrefix(p, ".") || strings.HasSuffix(p, "."):
		return "starts or ends with a dot"
	case strings.Contains(p, ".."):
		return "has an empty part (two dots in a row)"
	case !utf8.ValidString(p):
		return "is not valid UTF-8"
	}
	for _, part := range strings.Split(p, ".") {
		if strings.TrimSpace(part) != part {
			return "has a part with surrounding spaces"
		}
		for _, r := range part {
			if unicode.IsControl(r) {
				return "holds a control character"
			}
		}
	}
	return ""
}

var redactNameRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.-]*$`)

// checkTraces checks the traces: section: the mapping's dotted paths, the
// attributes' names, the prices, the redaction's detectors and patterns and
// promote.to.
func (v *validator) checkTraces() {
	t := v.s.Traces
	if t == nil {
		return
	}
	const pathHint = "a dotted path into a log line's JSON object, such as request.model or messages.0.content"
	for _, f := range t.MappingPaths() {
		key := "traces." + f.Key
		if !v.written(key) {
			continue
		}
		if flaw := TracePathFlaw(f.Path); flaw != "" {
			v.at(key, pathHint, "%s %s", key, flaw)
		}
	}
	for _, name := range sortedKeys(t.Attributes) {
		key := "traces.attributes." + name
		if strings.TrimSpace(name) == "" {
			v.at(key, "the attribute's name, such as route", "traces.attributes has an empty name")
			continue
		}
		if flaw := TracePathFlaw(t.Attributes[name]); flaw != "" {
			v.at(key, pathHint, "traces.attributes.%s %s", name, flaw)
		}
	}
	for _, model := range sortedKeys(t.Prices) {
		key := "traces.prices." + model
		if strings.TrimSpace(model) == "" {
			v.at(key, "the model's name as traces record it, such as gpt-4o", "traces.prices has an empty model name")
		}
		p := t.Prices[model]
		for _, f := range []struct {
			key string
			val float64
		}{{"input_per_mtok", p.InputPerMTok}, {"output_per_mtok", p.OutputPerMTok}, {"cached_per_mtok", p.CachedPerMTok}} {
			if f.val < 0 || math.IsNaN(f.val) || math.IsInf(f.val, 0) {
				v.at(key+"."+f.key, "USD per million tokens, 0 or more", "traces.prices.%s.%s must be a number 0 or more, got %v", model, f.key, f.val)
			}
		}
	}
	if r := t.Redact; r != nil {
		seen := map[string]int{}
		for i, d := range r.Detectors {
			key := fmt.Sprintf("traces.redact.detectors[%d]", i)
			if !slices.Contains(RedactDetectors, d) {
				v.at(key, "known detectors are: "+strings.Join(RedactDetectors, ", "), "unknown redaction detector %s", shortQuote(d))
				continue
			}
			if first, dup := seen[d]; dup {
				v.at(key, "", "detector %q is listed twice (first at traces.redact.detectors[%d])", d, first)
				continue
			}
			seen[d] = i
		}
		names := map[string]int{}
		for i, p := range r.Patterns {
			key := fmt.Sprintf("traces.redact.patterns[%d]", i)
			switch {
			case p.Name == "":
				v.at(key+".name", "a short name shown in the replacement [REDACTED:<name>], such as employee_id", "traces.redact.patterns[%d] has no name", i)
			case len(p.Name) > MaxRedactPatternName || !redactNameRE.MatchString(p.Name):
				v.at(key+".name", fmt.Sprintf("a letter, then letters, digits, '_', '.' or '-'; at most %d characters", MaxRedactPatternName), "redaction pattern name %s is not a valid name", shortQuote(p.Name))
			default:
				if first, dup := names[p.Name]; dup {
					v.at(key+".name", "give each pattern its own name", "redaction pattern name %q is used twice (first at traces.redact.patterns[%d])", p.Name, first)
				}
				names[p.Name] = i
			}
			if p.Regex == "" {
				v.at(key+".regex", "an RE2 regular expression, such as EMP-[0-9]{6}", "traces.redact.patterns[%d] has no regex", i)
				continue
			}
			re, err := regexp.Compile(p.Regex)
			if err != nil {
				v.at(key+".regex", "RE2 syntax: https://github.com/google/re2/wiki/Syntax", "traces.redact.patterns[%d].regex does not compile: %s", i, reError(err))
				continue
			}
			if re.MatchString("") {
				v.at(key+".regex", "a pattern that matches nothing would redact nothing; use + rather than *", "traces.redact.patterns[%d].regex matches the empty text", i)
			}
		}
	}
	if pr := t.Promote; pr != nil && v.written("traces.promote.to") {
		switch strings.ToLower(filepath.Ext(pr.To)) {
		case ".jsonl", ".ndjson", ".jsonlines":
		default:
			v.at("traces.promote.to", "a JSONL file relative to the spec, such as promoted.jsonl", "traces.promote.to must name a JSONL file (.jsonl), got %s", shortQuote(pr.To))
		}
	}
}

// reError is a regexp compile error without its "error parsing regexp: "
// prefix.
func reError(err error) string {
	var se *syntax.Error
	if errors.As(err, &se) {
		return se.Code.String() + ": `" + se.Expr + "`"
	}
	return err.Error()
}

// IngestProblems are what keeps `assay ingest` from reading JSONL with this
// spec: no traces: section, or no input or output path.
func (s *Spec) IngestProblems() Problems {
	var ps Problems
	hint := "map a log line's fields in the spec, e.g. traces: {input: request.messages, output: response.text, model: model, time: ts}"
	if s.Traces == nil {
		return Problems{s.Problemf("traces", hint, "the spec has no traces: section, so assay ingest cannot map a log line")}
	}
	for _, k := range []struct{ key, val string }{{"input", s.Traces.Input}, {"output", s.Traces.Output}} {
		if k.val == "" {
			ps = append(ps, s.Problemf("traces", hint, "traces.%s is required to ingest JSONL (the path of the line's %s)", k.key, k.key))
		}
	}
	return ps
}
