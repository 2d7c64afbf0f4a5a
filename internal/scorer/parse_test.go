package scorer

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/spec"
)

func TestParser(t *testing.T) {
	cases := []struct {
		name, format, extract, raw string
		want                       any    // nil when an error is expected
		errHas                     string // substring of the error
	}{
		{"text is trimmed", "", "", "  Paris \n", "Paris", ""},
		{"regex first group", "regex", `A:\s*(.+)$`, "work\nA: 18", "18", ""},
		{"regex implied by extract", "", `A:\s*(.+)$`, "A: 7\n", "7", ""},
		{"regex last match wins", "regex", `A:\s*(.+)$`, "A: 3 is wrong\nso\nA: 4\n", "4", ""},
		{"regex is multi-line", "regex", `^A:\s*(.+)$`, "x\nA: 5\ny", "5", ""},
		{"regex group is trimmed", "regex", `A:(.+)$`, "A:   9  ", "9", ""},
		{"regex without group uses the match", "regex", `\d+`, "1 then 22", "22", ""},
		{"regex no match", "regex", `A:\s*(.+)$`, "the answer is 18", nil, "does not match"},
		{"last number", "last_number", "", "3 apples and 18.", "18", ""},
		{"last number commas and currency", "last_number", "", "total: $1,234,567.00", "1234567", ""},
		{"last number negative", "last_number", "", "it falls to -4.50 degrees", "-4.5", ""},
		{"last number hyphen is not a sign", "last_number", "", "pages 10-12", "12", ""},
		{"last number leading zeros", "last_number", "", "code 007", "7", ""},
		{"last number zero", "last_number", "", "-0.0", "0", ""},
		{"last number none", "last_number", "", "no digits here", nil, "no number"},
		{"json bare", "json", "", `{"a": 1}`, map[string]any{"a": json.Number("1")}, ""},
		{"json fenced", "json", "", "Here you go:\n```json\n{\"a\": [1, 2]}\n```\nAnything else?", map[string]any{"a": []any{json.Number("1"), json.Number("2")}}, ""},
		{"json fence without language", "json", "", "```\n[true, null]\n```", []any{true, nil}, ""},
		{"json in prose", "json", "", `The result is {"team": "billing", "note": "uses } and { in a string"} as requested.`, map[string]any{"team": "billing", "note": "uses } and { in a string"}, ""},
		{"json skips a bracket in prose", "json", "", `See [1] and then {"ok": true}`, []any{json.Number("1")}, ""},
		{"json skips invalid candidates", "json", "", `see [citation needed] then {"ok": true}`, map[string]any{"ok": true}, ""},
		{"json scalar when whole", "json", "", `"yes"`, "yes", ""},
		{"json big number exact", "json", "", `{"id": 12345678901234567890}`, map[string]any{"id": json.Number("12345678901234567890")}, ""},
		{"json truncated", "json", "", `{"team": "billing", "prio`, nil, "no valid JSON"},
		{"json none", "json", "", "I think the team is billing.", nil, "no JSON object or array"},
		{"json empty", "json", "", "  ", nil, "empty"},
		{"json single quotes are not JSON", "json", "", `{'a': 1}`, nil, "no valid JSON"},
		{"json trailing comma is not JSON", "json", "", `{"a": 1,}`, nil, "no valid JSON"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := NewParser(tc.format, tc.extract)
			if err != nil {
				t.Fatal(err)
			}
			got, err := p.Parse(tc.raw)
			if tc.want == nil {
				if err == nil || !strings.Contains(err.Error(), tc.errHas) {
					t.Fatalf("Parse(%q) = %#v, %v; want an error containing %q", tc.raw, got, err, tc.errHas)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse(%q): %v", tc.raw, err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Parse(%q) = %#v, want %#v", tc.raw, got, tc.want)
			}
		})
	}
}

func TestNewParserErrors(t *testing.T) {
	cases := []struct{ format, extract, errHas string }{
		{"regex", "", "needs extract"},
		{"regex", "A:(", "not a valid regular expression"},
		{"json", `A:(.+)`, "extract applies only to format regex"},
		{"yaml", "", `unknown output format "yaml"`},
	}
	for _, tc := range cases {
		if _, err := NewParser(tc.format, tc.extract); err == nil || !strings.Contains(err.Error(), tc.errHas) {
			t.Errorf("NewParser(%q, %q) error %v; want %q", tc.format, tc.extract, err, tc.errHas)
		}
	}
}

func TestExtractJSONBoundedOnHostileInput(t *testing.T) {
	// Many unclosed brackets: each candidate costs a scan, and the number of
	// candidates is bounded, so this finishes quickly and fails cleanly.
	hostile := strings.Repeat("{[", 200_000)
	if _, err := ExtractJSON(hostile); err == nil {
		t.Fatal("unbalanced brackets parsed")
	}
	// Deep nesting beyond encoding/json's limit is an error, not a crash.
	deep := strings.Repeat("[", 20_000) + strings.Repeat("]", 20_000)
	if _, err := ExtractJSON(deep); err == nil {
		t.Fatal("nesting beyond the decoder's limit parsed")
	}
}

func TestIsEmptyRaw(t *testing.T) {
	for _, s := range []string{"", " ", "\n\t", "{}", "{ }", "[]", "null", `""`, "```json\n{}\n```", "```\n\n```"} {
		if !isEmptyRaw(s) {
			t.Errorf("isEmptyRaw(%q) = false", s)
		}
	}
	for _, s := range []string{"0", "false", "no", `{"a":1}`, "[0]", `" "x`, "```json\n{\"a\":1}\n```"} {
		if isEmptyRaw(s) {
			t.Errorf("isEmptyRaw(%q) = true", s)
		}
	}
}

// The json parser says what it tolerated: nothing, a fence, or prose; with
// output.strict the output must be one JSON value and the error says what
// was around it.
func TestJSONParseNotesAndStrict(t *testing.T) {
	loose, err := NewStrictParser("json", "", false)
	if err != nil {
		t.Fatal(err)
	}
	strict, err := NewStrictParser("json", "", true)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, raw string
		note      string // loose parser's note
		strictErr string // "" when strict accepts
	}{
		{"whole", " {\"a\": 1}\n", "", ""},
		{"scalar", "42", "", ""},
		{"fenced", "```json\n{\"a\": 1}\n```", NoteFenced, "a ``` fence around it"},
		{"fenced with prose", "Sure!\n```json\n{\"a\": 1}\n```\nBye", NoteFenced, "a ``` fence around it"},
		{"prose before", `The answer: {"a": 1}`, NoteProse, "text before or after it"},
		{"prose after", `{"a": 1} Hope this helps.`, NoteProse, "text before or after it"},
	} {
		t.Run(c.name, func(t *testing.T) {
			v, note, err := loose.ParseWithNote(c.raw)
			if err != nil || note != c.note {
				t.Fatalf("loose: %#v note %q err %v, want note %q", v, note, err, c.note)
			}
			sv, snote, serr := strict.ParseWithNote(c.raw)
			switch {
			case c.strictErr == "" && (serr != nil || !reflect.DeepEqual(sv, v) || snote != ""):
				t.Errorf("strict: %#v %q %v, want %#v", sv, snote, serr, v)
			case c.strictErr != "" && (serr == nil || !strings.Contains(serr.Error(), c.strictErr) || !strings.Contains(serr.Error(), "output.strict")):
				t.Errorf("strict error %v, want one saying %q and naming output.strict", serr, c.strictErr)
			}
		})
	}
	if _, err := NewStrictParser("text", "", true); err == nil || !strings.Contains(err.Error(), "only to output format json") {
		t.Errorf("strict text parser: %v", err)
	}
}

// An object that repeats a key fails the parse, naming the key, however the
// value was found; a nested object is never taken in its place.
func TestJSONDuplicateKeysFailTheParse(t *testing.T) {
	p, _ := NewParser("json", "")
	for _, c := range []struct{ raw, has string }{
		{`{"total": 12442, "total": 1}`, `repeats the key "total"`},
		{"```json\n{\"a\": {\"x\": 1}, \"a\": 2}\n```", `repeats the key "a"`},
		{`Here: {"a": {"x": 1}, "a": 2} ok`, `repeats the key "a"`},
		{`{"items": [{"sku": 1, "sku": 2}]}`, `repeats the key "sku" in the object at items[0]`},
	} {
		v, err := p.Parse(c.raw)
		if err == nil || !strings.Contains(err.Error(), c.has) {
			t.Errorf("Parse(%q) = %#v, %v; want an error containing %q", c.raw, v, err, c.has)
		}
	}
	set := mustCompile(t, newSpec(spec.Output{Format: "json"}, spec.Scorer{Type: "equals"}, spec.Scorer{Name: "j", Type: "is_json"}))
	for _, s := range (call{raw: `{"total": 1, "total": 1}`, expected: map[string]any{"total": json.Number("1")}}).score(t, set) {
		if s.Pass || !strings.Contains(s.Reason, `"total"`) {
			t.Errorf("%s: pass %v (%s); a repeated key must fail loudly, naming it", s.Scorer, s.Pass, s.Reason)
		}
	}
}

// Every score of a result records what the parser tolerated.
func TestSetRecordsParseNote(t *testing.T) {
	set := mustCompile(t, newSpec(spec.Output{Format: "json"},
		spec.Scorer{Type: "equals", Primary: true}, spec.Scorer{Name: "f", Type: "field_equals", Field: "a", Primary: true}, spec.Scorer{Name: "len", Type: "max_length", Max: 1000}))
	exp := map[string]any{"a": json.Number("1")}
	for raw, want := range map[string]string{
		`{"a": 1}`:                 "",
		"```json\n{\"a\": 1}\n```": "fenced",
		`Answer: {"a": 1}`:         "prose",
		`no json here`:             "",
	} {
		ss := call{raw: raw, expected: exp}.score(t, set)
		if len(ss) != 4 {
			t.Fatalf("%d scores", len(ss))
		}
		for _, s := range ss {
			if s.ParseNote != want {
				t.Errorf("%q: score %s has ParseNote %q, want %q", raw, s.Scorer, s.ParseNote, want)
			}
		}
	}
}
