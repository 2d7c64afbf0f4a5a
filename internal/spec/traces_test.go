package spec

import (
	"strings"
	"testing"
)

func TestTracesSection(t *testing.T) {
	src := base + `traces:
  id: request_id
  input: request.messages
  output: response.choices.0.message
  model: request.model
  time: ts
  attributes: {route: http.route, user: user.id}
  prices:
    gpt-4.1: {input_per_mtok: 2, output_per_mtok: 8}
  redact:
    detectors: [email, card]
    patterns:
      - {name: employee_id, regex: 'EMP-[0-9]{6}'}
`
	sp, ps := parse(t, src)
	if ps != nil {
		t.Fatal(ps)
	}
	tr := sp.Traces
	if tr.Input != "request.messages" || tr.Attributes["route"] != "http.route" || tr.Prices["gpt-4.1"].OutputPerMTok != 8 ||
		len(tr.Redact.Detectors) != 2 || tr.Redact.Patterns[0].Name != "employee_id" {
		t.Errorf("decoded %+v", tr)
	}
	if ps := sp.IngestProblems(); ps != nil {
		t.Errorf("ingest problems: %v", ps)
	}
	// An empty detectors list is kept as written (none), not nil (all).
	sp, ps = parse(t, base+"traces:\n  redact: {detectors: []}\n")
	if ps != nil || sp.Traces.Redact.Detectors == nil || len(sp.Traces.Redact.Detectors) != 0 {
		t.Errorf("detectors: [] decoded as %#v (%v)", sp.Traces.Redact.Detectors, ps)
	}
}

func TestTracesProblems(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      []string
	}{
		{"paths", "traces:\n  input: .messages\n  output: a..b\n  model: ' '\n  attributes: {route: 'x.', '': a}\n", []string{
			"s.yaml:10:10: traces.input starts or ends with a dot (a dotted path into a log line's JSON object, such as request.model or messages.0.content)",
			"s.yaml:11:11: traces.output has an empty part (two dots in a row) (a dotted path into a log line's JSON object, such as request.model or messages.0.content)",
			"s.yaml:12:10: traces.model is empty (a dotted path into a log line's JSON object, such as request.model or messages.0.content)",
			"s.yaml:13:33: traces.attributes has an empty name (the attribute's name, such as route)",
			"s.yaml:13:23: traces.attributes.route starts or ends with a dot (a dotted path into a log line's JSON object, such as request.model or messages.0.content)",
		}},
		{"prices", "traces:\n  prices:\n    gpt-4o: {input_per_mtok: -1, output_per_mtok: 10}\n    claude: {cached_per_mtok: -0.5}\n", []string{
			"s.yaml:12:31: traces.prices.claude.cached_per_mtok must be a number 0 or more, got -0.5 (USD per million tokens, 0 or more)",
			"s.yaml:11:30: traces.prices.gpt-4o.input_per_mtok must be a number 0 or more, got -1 (USD per million tokens, 0 or more)",
		}},
		{"price not a number", "traces:\n  prices: {m: {input_per_mtok: cheap}}\n", []string{
			`s.yaml:10:32: traces.prices.m.input_per_mtok must be a number, got the string "cheap"`,
		}},
		{"detectors", "traces:\n  redact:\n    detectors: [email, ssn, email]\n", []string{
			`s.yaml:11:24: unknown redaction detector "ssn" (known detectors are: email, key, card, phone)`,
			`s.yaml:11:29: detector "email" is listed twice (first at traces.redact.detectors[0])`,
		}},
		{"patterns", `traces:
  redact:
    patterns:
      - {regex: 'x+'}
      - {name: '9lives', regex: 'a('}
      - {name: ok, regex: ''}
      - {name: ok, regex: 'a*'}
`, []string{
			"s.yaml:12:9: traces.redact.patterns[0] has no name (a short name shown in the replacement [REDACTED:<name>], such as employee_id)",
			`s.yaml:13:16: redaction pattern name "9lives" is not a valid name (a letter, then letters, digits, '_', '.' or '-'; at most 40 characters)`,
			"s.yaml:13:33: traces.redact.patterns[1].regex does not compile: missing closing ): `a(` (RE2 syntax: https://github.com/google/re2/wiki/Syntax)",
			"s.yaml:14:27: traces.redact.patterns[2] has no regex (an RE2 regular expression, such as EMP-[0-9]{6})",
			`s.yaml:15:16: redaction pattern name "ok" is used twice (first at traces.redact.patterns[2]) (give each pattern its own name)`,
			"s.yaml:15:27: traces.redact.patterns[3].regex matches the empty text (a pattern that matches nothing would redact nothing; use + rather than *)",
		}},
		{"unknown key", "traces:\n  redact: {detector: [email]}\n", []string{
			`s.yaml:10:12: unknown key "detector" in traces.redact (did you mean "detectors"? valid keys are: detectors, patterns)`,
		}},
		{"promote.to", "traces:\n  promote: {to: out.csv}\n", []string{
			`s.yaml:10:17: traces.promote.to must name a JSONL file (.jsonl), got "out.csv" (a JSONL file relative to the spec, such as promoted.jsonl)`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ps := parse(t, base+tc.src)
			got := ps.Error()
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("problems lack %q:\n%s", w, got)
				}
			}
			if len(ps) != len(tc.want) {
				t.Errorf("%d problems, want %d:\n%s", len(ps), len(tc.want), got)
			}
		})
	}
}

func TestIngestProblems(t *testing.T) {
	sp, _ := parse(t, base)
	if got := sp.IngestProblems().Error(); got != "s.yaml:1:1: the spec has no traces: section, so assay ingest cannot map a log line (map a log line's fields in the spec, e.g. traces: {input: request.messages, output: response.text, model: model, time: ts})" {
		t.Errorf("no section: %s", got)
	}
	sp, _ = parse(t, base+"traces:\n  input: q\n")
	if got := sp.IngestProblems().Error(); !strings.HasPrefix(got, "s.yaml:9:1: traces.output is required to ingest JSONL (the path of the line's output)") {
		t.Errorf("no output: %s", got)
	}
}
