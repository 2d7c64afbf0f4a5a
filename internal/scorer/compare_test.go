package scorer

import (
	"encoding/json"
	"math/big"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/spec"
)

// Numbers compare by the value of their written form, exactly.
func TestValuesEqualNumbers(t *testing.T) {
	n := func(s string) json.Number { return json.Number(s) }
	for _, c := range []struct {
		out, exp any
		equal    bool
	}{
		{n("12442.0"), n("12442"), true},
		{n("1.50"), n("1.5"), true},
		{n("9007199254740993"), n("9007199254740993"), true},
		{n("9007199254740993"), n("9007199254740992"), false}, // equal as float64
		{n("12345678901234567891"), n("12345678901234567891"), true},
		{n("12345678901234567891"), n("12345678901234567890"), false},
		{n("1e3"), n("1000"), true},
		{n("1.2345E+2"), n("123.45"), true},
		{n("-0"), n("0.000"), true},
		{n("0.1"), 0.1, true}, // a float64 reads as its shortest form
		{9007199254740992.0, n("9007199254740993"), false},
		{n("100"), 100, true},
		{n("1e999999999999999"), n("1e999999999999999"), true},
		{n("1e999999999999999"), n("1e999999999999998"), false},
		// A string that spells a number equals it; text and CSV answers
		// are strings.
		{"12442.0", n("12442"), true},
		{" 1.50 ", n("1.5"), true},
		{"9007199254740992", n("9007199254740993"), false},
		{"twelve", n("12"), false},
		{"true", true, true},
		{"false", true, false},
		// Two strings compare as text.
		{"1.50", "1.5", false},
		{nil, nil, true},
		{nil, "null", false},
		{map[string]any{"a": n("2.0"), "b": []any{n("1"), "x"}}, map[string]any{"b": []any{1.0, "x"}, "a": n("2")}, true},
		{map[string]any{"a": n("2.0")}, map[string]any{"a": n("2"), "b": nil}, false},
		{[]any{n("1")}, []any{n("1"), n("2")}, false},
	} {
		if got := valuesEqual(c.out, c.exp, nil); got != c.equal {
			t.Errorf("valuesEqual(%#v, %#v) = %v, want %v", c.out, c.exp, got, c.equal)
		}
		if got := valuesEqual(c.exp, c.out, nil); got != c.equal {
			t.Errorf("valuesEqual(%#v, %#v) = %v, want %v (the other way round)", c.exp, c.out, got, c.equal)
		}
	}
}

// parseDecimal agrees with math/big on the value of every literal it reads.
func TestParseDecimalAgreesWithBig(t *testing.T) {
	lits := []string{"0", "-0", "1", "10", "100.00", "0.001", "123.456e-2", "-4.5E+3", "7e0", ".5", "5.", "+3",
		"9007199254740993", "12345678901234567891", "0000.0100", "1e-30", "-1e30"}
	for _, a := range lits {
		da, ok := parseDecimal(a)
		if !ok {
			t.Fatalf("parseDecimal(%q) failed", a)
		}
		ra, ok := new(big.Rat).SetString(strings.TrimPrefix(a, "+"))
		if !ok {
			t.Fatalf("big.Rat cannot read %q", a)
		}
		got, ok := da.rat()
		if !ok || got.Cmp(ra) != 0 {
			t.Errorf("parseDecimal(%q).rat() = %v, want %v", a, got, ra)
		}
		if back, ok := parseDecimal(da.String()); !ok || back != da {
			t.Errorf("decimal %q prints as %q, which reads back as %+v", a, da.String(), back)
		}
		for _, b := range lits {
			db, _ := parseDecimal(b)
			rb, _ := new(big.Rat).SetString(strings.TrimPrefix(b, "+"))
			if (da == db) != (ra.Cmp(rb) == 0) {
				t.Errorf("%q == %q is %v, big.Rat says %v", a, b, da == db, ra.Cmp(rb) == 0)
			}
		}
	}
	for _, bad := range []string{"", "-", ".", "e5", "1e", "1e+", "1.2.3", "0x10", "1,000", "NaN", "Infinity", "1e1234567890123456"} {
		if d, ok := parseDecimal(bad); ok {
			t.Errorf("parseDecimal(%q) = %+v, want not a number", bad, d)
		}
	}
}

// A failure says what differed; it never prints the same text twice as if
// that explained anything.
func TestMismatchSaysWhatDiffered(t *testing.T) {
	long := strings.Repeat("a", 100)
	for _, c := range []struct {
		out, exp any
		has      []string
	}{
		{json.Number("9007199254740992"), json.Number("9007199254740993"), []string{"got 9007199254740992, expected 9007199254740993"}},
		{long + "x", long + "y", []string{"differ from character 101"}},
		{true, "yes", []string{"the types differ: boolean vs string"}},
		{map[string]any{"total": "12442"}, map[string]any{"total": true}, []string{`at total: got "12442", expected true (the types differ: string vs boolean)`}},
		{map[string]any{"a": json.Number("1.5")}, map[string]any{"a": json.Number("1.6")}, []string{"at a: got 1.5, expected 1.6"}},
		{map[string]any{}, map[string]any{"a": "x"}, []string{`at a: missing from the output (expected "x")`}},
	} {
		msg := mismatch(c.out, c.exp, nil)
		for _, h := range c.has {
			if !strings.Contains(msg, h) {
				t.Errorf("mismatch(%v, %v) = %q, want it to contain %q", c.out, c.exp, msg, h)
			}
		}
		if got, exp, ok := strings.Cut(strings.TrimPrefix(msg, "got "), ", expected "); ok && got == strings.SplitN(exp, " (", 2)[0] && !strings.Contains(msg, "(") && !strings.Contains(msg, ";") {
			t.Errorf("mismatch(%v, %v) = %q prints both alike and says nothing more", c.out, c.exp, msg)
		}
	}
}

// The values of issue 10: answers written 12442.0, 1.50, 9007199254740993
// and 12345678901234567891 equal the expected 12442, 1.5, 9007199254740993
// and 12345678901234567891 under equals, field_equals and a CEL
// comparison; the neighbour 9007199254740992 (the same float64 as …993)
// fails under each.
func TestExactNumbersThroughScorers(t *testing.T) {
	n := func(s string) json.Number { return json.Number(s) }
	rows := []struct {
		answer, expected string
		pass             bool
	}{
		{"12442.0", "12442", true},
		{"1.50", "1.5", true},
		{"9007199254740993", "9007199254740993", true},
		{"12345678901234567891", "12345678901234567891", true},
		{"9007199254740992", "9007199254740993", false},
	}
	sets := map[string]*Set{
		"equals (text)":      mustCompile(t, newSpec(spec.Output{}, spec.Scorer{Type: "equals"})),
		"equals (json)":      mustCompile(t, newSpec(spec.Output{Format: "json"}, spec.Scorer{Type: "equals"})),
		"field_equals":       mustCompile(t, newSpec(spec.Output{Format: "json"}, spec.Scorer{Type: "field_equals", Field: "total"})),
		"cel (json)":         mustCompile(t, newSpec(spec.Output{Format: "json"}, spec.Scorer{Type: "cel", Expr: "output == expected"})),
		"cel (field)":        mustCompile(t, newSpec(spec.Output{Format: "json"}, spec.Scorer{Type: "cel", Expr: "output.total == expected.total"})),
		"cel (text vs case)": mustCompile(t, newSpec(spec.Output{Format: "last_number"}, spec.Scorer{Type: "cel", Expr: "output == string(case.answer)"})),
	}
	for name, set := range sets {
		for _, r := range rows {
			raw := r.answer
			var exp any = n(r.expected)
			switch name {
			case "field_equals", "cel (field)":
				raw = `{"total": ` + r.answer + `}`
				exp = map[string]any{"total": n(r.expected)}
			}
			c := call{raw: raw, expected: exp, vars: map[string]any{"answer": n(r.expected)}}
			s := c.one(t, set)
			if s.Pass != r.pass {
				t.Errorf("%s: answer %s vs expected %s: pass %v (%s), want %v", name, r.answer, r.expected, s.Pass, s.Reason, r.pass)
			}
			if !r.pass && strings.Contains(s.Reason, "expected 9007199254740992") {
				t.Errorf("%s: reason %q prints the expected value rounded", name, s.Reason)
			}
		}
	}
}

// CEL sees exact ints and uints, and a number no CEL type holds exactly
// fails the expression loudly instead of being rounded.
func TestCELNumbersAreExact(t *testing.T) {
	for _, c := range []struct {
		expr, raw string
		w         want
	}{
		{"type(output.a) == int && output.a == 9007199254740993", `{"a": 9007199254740993}`, passes},
		{"output.a != 9007199254740992", `{"a": 9007199254740993}`, passes},
		{"type(output.a) == uint && output.a == 12345678901234567891u", `{"a": 12345678901234567891}`, passes},
		{"type(output.a) == int && output.a == 12442", `{"a": 12442.0}`, passes},
		{"output.a == 1.5", `{"a": 1.50}`, passes},
		{"output.b == 1", `{"a": 123456789012345678901234, "b": 1}`, passes},
		{"output.a == 123456789012345678901234.0", `{"a": 123456789012345678901234, "b": 1}`, loudKind(KindScorerError)},
		{"output.a == 0.3", `{"a": 0.30000000000000001}`, loudKind(KindScorerError)},
	} {
		set := mustCompile(t, newSpec(spec.Output{Format: "json"}, spec.Scorer{Type: "cel", Expr: c.expr}))
		s := call{raw: c.raw}.one(t, set)
		if s.Pass != c.w.pass || s.Kind != c.w.kind {
			t.Errorf("%s on %s: pass %v kind %q (%s), want pass %v kind %q", c.expr, c.raw, s.Pass, s.Kind, s.Reason, c.w.pass, c.w.kind)
		}
	}
}
