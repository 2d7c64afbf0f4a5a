package scorer

import (
	"math"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/spec"
)

// Similarities worked by hand: Levenshtein distances counted edit by edit,
// token-set ratios from shared and own words (the values rapidfuzz's
// token_set_ratio gives, divided by 100).
func TestSimilarityMeasures(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want float64
	}{
		{"john smith", "jon smith", 1 - 1.0/10}, // delete h
		{"acme corp", "acme corp.", 1 - 1.0/10}, // insert .
		{"smith", "smyth", 1 - 1.0/5},           // substitute
		{"kitten", "sitting", 1 - 3.0/7},        // the textbook 3
		{"", "", 1},                             // identical
		{"abc", "", 0},                          // all deleted
		{"naïve", "naive", 1 - 1.0/5},           // runes, not bytes
		{"日本語", "日本", 1 - 1.0/3},                // runes, not bytes
	} {
		if got := editSimilarity([]rune(c.a), []rune(c.b)); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("editSimilarity(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
	for _, c := range []struct {
		a, b string
		want float64
	}{
		// Same words in another order.
		{"smith john", "john smith", 1},
		// One side's words all in the other.
		{"acme", "acme corp", 1},
		// Shared "acme"; own "corp" and "corporation": the best pair is
		// "acme corp" vs "acme corporation", LCS 9 of 9+16.
		{"acme corp", "acme corporation", 2 * 9.0 / 25},
		// Nothing shared: "abc" vs "abd", LCS 2 of 6.
		{"abc", "abd", 2 * 2.0 / 6},
		// Punctuation is not a word.
		// Case is the normaliser's job: "Acme" ≠ "acme", so nothing is
		// shared, and "Acme Inc" vs "acme inc" have LCS "cme nc", 6 of 16.
		{"Acme, Inc.", "inc acme", 2 * 6.0 / 16},
	} {
		if got := tokenSetRatio(textWords(c.a), textWords(c.b)); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("tokenSetRatio(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

func TestSimilarityScorer(t *testing.T) {
	runSimilarity(t, spec.Output{}, spec.Scorer{Type: "similarity"}, []scoreCase{
		{"a spelling variant passes (0.9 ≥ 0.85)", call{raw: "Jon Smith", expected: "John Smith"}, passes, "0.9 similar"},
		{"case and spacing are not spelling by default", call{raw: "  JOHN   smith ", expected: "John Smith"}, passes, ""},
		{"another short name fails (0.8 < 0.85)", call{raw: "Smyth", expected: "Smith"}, silent, "0.8 similar"},
		{"a number compares as its text", call{raw: "12442", expected: 12442.0}, passes, ""},
		{"no expected value", call{raw: "x"}, loudKind(KindScorerError), "no expected value"},
	})
	runSimilarity(t, spec.Output{}, spec.Scorer{Type: "similarity", Method: "token_set", Threshold: ptrFloat(0.9)}, []scoreCase{
		{"word order does not matter", call{raw: "Smith, John", expected: "John Smith"}, passes, ""},
		{"different words fail", call{raw: "Jane Doe", expected: "John Smith"}, silent, ""},
	})
	runSimilarity(t, spec.Output{Format: "json"}, spec.Scorer{Type: "similarity", Field: "vendor"}, []scoreCase{
		{"field of an object expected", call{raw: `{"vendor": "Acme Corp.", "total": 1}`, expected: map[string]any{"vendor": "ACME Corp"}}, passes, "vendor: "},
		{"field with a scalar expected", call{raw: `{"vendor": "Globex"}`, expected: "Acme"}, silent, ""},
		{"missing field is loud", call{raw: `{"total": 1}`, expected: "Acme"}, loudKind(KindInvalidFormat), "vendor is missing"},
		{"an object field is not text", call{raw: `{"vendor": {"n": "Acme"}}`, expected: "Acme"}, loudKind(KindInvalidFormat), "not text"},
	})

	t.Run("the value is the similarity", func(t *testing.T) {
		set := mustCompile(t, newSpec(spec.Output{}, spec.Scorer{Type: "similarity"}))
		for raw, want := range map[string]float64{"jon smith": 0.9, "smyth": 0.8} {
			exp := map[string]string{"jon smith": "john smith", "smyth": "smith"}[raw]
			s := call{raw: raw, expected: exp}.one(t, set)
			if math.Abs(s.Value-want) > 1e-12 {
				t.Errorf("%q vs %q: value %v, want %v", raw, exp, s.Value, want)
			}
		}
	})

	t.Run("a hostile long output is bounded", func(t *testing.T) {
		set := mustCompile(t, newSpec(spec.Output{}, spec.Scorer{Type: "similarity"}))
		long := make([]byte, 1<<20)
		for i := range long {
			long[i] = 'a'
		}
		s := call{raw: string(long), expected: "Acme"}.one(t, set)
		if s.Pass || s.Kind != KindWrong || s.Value > 4.0/(1<<20)+1e-12 {
			t.Errorf("1 MiB against 4 characters: pass %v kind %s value %v (%s)", s.Pass, s.Kind, s.Value, s.Reason)
		}
	})
}

// runSimilarity is runCases for a scorer whose pass carries its similarity
// as the value (below 1 unless the texts are identical after normalising).
func runSimilarity(t *testing.T, out spec.Output, sc spec.Scorer, cases []scoreCase) {
	t.Helper()
	set := mustCompile(t, newSpec(out, sc))
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.c.one(t, set)
			if s.Pass != tc.w.pass || s.Shape != tc.w.shape || s.Kind != tc.w.kind {
				t.Errorf("score = pass %v shape %q kind %q (%s); want pass %v shape %q kind %q", s.Pass, s.Shape, s.Kind, s.Reason, tc.w.pass, tc.w.shape, tc.w.kind)
			}
			if s.Value < 0 || s.Value > 1 || !s.Pass && s.Value >= 1 {
				t.Errorf("value %v", s.Value)
			}
			if tc.reasonHas != "" && !strings.Contains(s.Reason, tc.reasonHas) {
				t.Errorf("reason %q does not contain %q", s.Reason, tc.reasonHas)
			}
		})
	}
}
