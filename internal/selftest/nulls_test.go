package selftest

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/scorer"
	"github.com/assay-eval/assay/internal/spec"
)

func TestNullTexts(t *testing.T) {
	t.Parallel()
	long := longText(LongBytes)
	if len(long) != LongBytes || !utf8.ValidString(long) {
		t.Errorf("long output is %d bytes (valid UTF-8: %v), want %d", len(long), utf8.ValidString(long), LongBytes)
	}
	if n := len(strings.Fields(long)); n < LongBytes/10 {
		t.Errorf("long output has %d words; want prose, not one token", n)
	}
	spray := sprayText(sprayMax)
	f := strings.Fields(spray)
	if len(f) != 1001 || f[0] != "0" || f[1000] != "1000" {
		t.Errorf("number spray has %d numbers, from %s to %s", len(f), f[0], f[len(f)-1])
	}
}

// Dressing puts an answer in the form the parser reads back, or leaves it.
func TestDresser(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		format, extract, in, want string
	}{
		{"", `A:\s*(.+)$`, "18", "A: 18"},
		{"", `A:\s*(.+)$`, "0 1 2", "A: 0 1 2"},
		{"", `Category:\s*(\w+)`, "billing", "Category: billing"},
		{"", `Category:\s*(\w+)`, "billing, bug", "billing, bug"}, // cannot round-trip: left as it is
		{"", `^\s*(\d+)\s*$`, "42", "42"},
		{"json", "", "billing", `"billing"`},
		{"text", "", "  x ", "  x "},
		{"last_number", "", "7", "7"},
	} {
		p, err := scorer.NewParser(tc.format, tc.extract)
		if err != nil {
			t.Fatal(err)
		}
		if got := newDresser(p, tc.extract)(tc.in); got != tc.want {
			t.Errorf("format %q extract %q: dress(%q) = %q, want %q", tc.format, tc.extract, tc.in, got, tc.want)
		}
	}
}

func TestLabelSet(t *testing.T) {
	t.Parallel()
	st := &Stats{}
	for _, v := range []any{"b", "a", "B", "c", nil, map[string]any{"x": 1.0}} {
		k, ok := answerKey(v)
		st.expected = append(st.expected, v)
		st.keys = append(st.keys, k)
		st.has = append(st.has, ok)
	}
	got := labelSet([]string{"z", "a", ""}, st)
	if strings.Join(got, ",") != "z,a,b,c" {
		t.Errorf("labels %v, want z,a,b,c (scorer values first, no duplicates by key, no blanks or objects)", got)
	}
	// Too many distinct expected values: not a label set.
	st = &Stats{}
	for i := range maxLabels + 1 {
		v := strings.Repeat("x", i+1)
		k, _ := answerKey(v)
		st.expected, st.keys, st.has = append(st.expected, v), append(st.keys, k), append(st.has, true)
	}
	if got := labelSet(nil, st); len(got) != 0 {
		t.Errorf("%d distinct values gave labels %v", maxLabels+1, got)
	}
}

// FuzzAnswerKey: keys never panic, ignore surrounding white space and
// letter case, and equal texts get equal keys.
func FuzzAnswerKey(f *testing.F) {
	for _, s := range []string{"18", "1,000", " Billing ", "café", "-0", "1e400", "", "{}", "\x00", "A: 3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k, ok := answerKey(s)
		if !ok {
			t.Fatalf("string %q has no key", s)
		}
		if k2, _ := answerKey(" \n" + s + "\t "); k2 != k {
			t.Errorf("key(%q) = %q but with white space around it %q", s, k, k2)
		}
		if isASCII(s) {
			if k2, _ := answerKey(strings.ToUpper(s)); k2 != k {
				t.Errorf("key(%q) = %q but upper-cased %q", s, k, k2)
			}
		}
	})
}

// FuzzDresser: dressing never panics, and what it returns is either the
// answer itself or a text the parser reads back as exactly the answer.
func FuzzDresser(f *testing.F) {
	f.Add(`A:\s*(.+)$`, "18")
	f.Add(`Category:\s*(\w+)`, "billing")
	f.Add(`(?s)<a>(.*)</a>`, "x\ny")
	f.Add(`^`, "")
	f.Fuzz(func(t *testing.T, extract, answer string) {
		p, err := scorer.NewParser("", extract)
		if err != nil {
			return
		}
		got := newDresser(p, extract)(answer)
		if got == answer {
			return
		}
		v, err := p.Parse(got)
		if err != nil || v != strings.TrimSpace(answer) {
			t.Errorf("extract %q: dress(%q) = %q, which parses to %#v (%v)", extract, answer, got, v, err)
		}
	})
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// readsRawText must agree with the scorer package: a scorer that reads the
// parsed output fails a result whose output did not parse as loud
// unparseable before it runs; one that reads the raw text (or the call)
// judges it anyway. Checked for every scorer type the package has, so a new
// type cannot be missed.
func TestReadsRawTextMatchesScorer(t *testing.T) {
	t.Parallel()
	configs := map[string]spec.Scorer{
		"equals":          {Type: "equals"},
		"contains":        {Type: "contains", Value: "a"},
		"not_contains":    {Type: "not_contains", Value: "zzz"},
		"regex":           {Type: "regex", Pattern: ".*"},
		"is_json":         {Type: "is_json"},
		"json_schema":     {Type: "json_schema", Schema: map[string]any{}},
		"required_fields": {Type: "required_fields", Fields: []string{"a"}},
		"field_equals":    {Type: "field_equals", Field: "a"},
		"number":          {Type: "number", Tolerance: 1},
		"one_of":          {Type: "one_of", Values: []string{"a"}},
		"max_length":      {Type: "max_length", Max: 1000},
		"latency":         {Type: "latency", Max: "1h"},
		"cost":            {Type: "cost", Max: 100.0},
		"cel":             {Type: "cel", Expr: "true"},
		"judge":           {Type: "judge", Target: "grader", Rubric: "polite?"},
		"similarity":      {Type: "similarity"},
		"tool_call":       {Type: "tool_call"},
		"tool_calls":      {Type: "tool_calls", Match: "subset"},
		"no_tool_call":    {Type: "no_tool_call"},
	}
	for _, typ := range scorer.Types() {
		sc, ok := configs[typ]
		if !ok {
			t.Errorf("scorer type %s is new: add it here and decide whether readsRawText covers it", typ)
			continue
		}
		sc.Name = "s"
		out := spec.Output{Extract: `^A: (.+)$`}
		if typ == "json_schema" || typ == "required_fields" || typ == "field_equals" {
			out = spec.Output{Format: "json"}
		}
		sp := &spec.Spec{File: "assay.yaml", Dir: ".", Name: "t", Output: out, Scorers: []spec.Scorer{sc},
			Targets: []spec.Target{{Name: "grader", Provider: "openai", Model: "m"}}}
		set, probs := scorer.Compile(sp)
		if len(probs) > 0 {
			t.Fatalf("%s: %v", typ, probs)
		}
		r := record.Result{CaseID: "1", Raw: "no answer here"}
		scores := set.Score(context.Background(), &dataset.Case{ID: "1", Expected: "a"}, &r)
		readsParsed := scores[0].Kind == scorer.KindUnparseable
		if readsRawText(typ) == readsParsed {
			t.Errorf("%s: readsRawText=%v, but the scorer package reads the parsed output: %v (kind %q)", typ, readsRawText(typ), readsParsed, scores[0].Kind)
		}
	}
}
