package scorer

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
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
