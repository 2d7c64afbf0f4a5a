package scorer

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/assay-eval/assay/internal/spec"
)

// Similarity methods (`method:`).
const (
	SimilarityEdit     = "edit"
	SimilarityTokenSet = "token_set"
)

// DefaultSimilarityThreshold is the similarity at or above which the
// similarity scorer passes when threshold: is not set. 0.85 allows about
// one edit in seven characters: "Jon Smith" for "John Smith" (0.90) and
// "Acme Corp." for "Acme Corp" (0.90) pass, while one changed letter in a
// five-letter name ("Smyth" for "Smith", 0.80), which often is another
// name, fails.
const DefaultSimilarityThreshold = 0.85

// maxSimilarityCells bounds the work of one comparison: the product of the
// two texts' lengths in characters (the dynamic programme's cells).
const maxSimilarityCells = 25_000_000

// similarity passes when the output's text is at least threshold similar
// to the expected value's, for names and labels that differ in spelling.
// Its value is the similarity, in [0, 1] (also on a pass).
//
//   - method edit (default): 1 − Levenshtein distance / the longer length,
//     in characters.
//   - method token_set: the token-set ratio (as in rapidfuzz): the texts
//     are split into words (letters and digits), and the words both share,
//     sorted, are compared with each side's shared-plus-own words by the
//     indel ratio (1 − insertions and deletions / total length), taking
//     the best. Word order does not matter, and when every word of one side
//     is in the other the similarity is 1 ("Acme" and "Acme Corp"): use edit
//     when extra words must cost.
//
// Both texts pass through the normalisers listed; with none listed, through
// trim, collapse_spaces and lower (case and spacing are not spelling).
// With field:, the text is read at that path of a JSON output (and of the
// expected value when it is an object). A number or boolean compares as its
// text; an object or array output is a loud invalid_format. Below the
// threshold is a silent wrong.
type similarity struct {
	name      string
	method    string
	threshold float64
	field     *jsonPath
	norm      normChain
}

func buildSimilarity(b *builder, i int, sc *spec.Scorer) Scorer {
	s := &similarity{name: sc.Name, method: sc.Method, threshold: DefaultSimilarityThreshold}
	if s.method == "" {
		s.method = SimilarityEdit
	}
	methods := []string{SimilarityEdit, SimilarityTokenSet}
	ok := true
	if !slices.Contains(methods, s.method) {
		hint := "methods: " + strings.Join(methods, ", ")
		if n := nearest(s.method, methods); n != "" {
			hint = fmt.Sprintf("did you mean %s? %s", n, hint)
		}
		b.problemf(i, "method", hint, "unknown similarity method %q", s.method)
		ok = false
	}
	if sc.Threshold != nil {
		t := *sc.Threshold
		if math.IsNaN(t) || t <= 0 || t > 1 {
			b.problemf(i, "threshold", fmt.Sprintf("a similarity in (0, 1]; the default is %v", DefaultSimilarityThreshold), "threshold %v is out of range", t)
			ok = false
		}
		s.threshold = t
	}
	if sc.Field != "" {
		p, err := parseJSONPath(sc.Field)
		if err != nil {
			b.problemf(i, "field", "", "%v", err)
			ok = false
		}
		s.field = &p
	}
	if len(sc.Normalize) > 0 {
		s.norm = b.normalize(i, sc)
	} else {
		s.norm = normChain{strings.TrimSpace, collapseSpaces, strings.ToLower}
	}
	if !ok {
		return nil
	}
	return s
}

func (s *similarity) Name() string { return s.name }

func (s *similarity) Score(_ context.Context, in *Input) Verdict {
	outV, expV, where, v, ok := fieldValues(in, s.field)
	if !ok {
		return v
	}
	exp, isText := scalarString(expV)
	if !isText {
		return loud(KindScorerError, "%sthe expected value %s is not text (similarity compares text; set field: to pick one)", where, quote(expV))
	}
	out, isText := scalarString(outV)
	if !isText {
		return loud(KindInvalidFormat, "%sthe output %s is not text (similarity compares text; set field: to pick one)", where, quote(outV))
	}
	a, b := s.norm.apply(out), s.norm.apply(exp)
	var sim float64
	switch s.method {
	case SimilarityTokenSet:
		ta, tb := textWords(a), textWords(b)
		if n := len(strings.Join(ta, " ")) * len(strings.Join(tb, " ")); n > maxSimilarityCells {
			return loud(KindScorerError, "%sthe texts are too long to compare (%d and %d bytes); similarity is for short texts such as names", where, len(a), len(b))
		}
		sim = tokenSetRatio(ta, tb)
	default:
		ra, rb := []rune(a), []rune(b)
		if len(ra)*len(rb) > maxSimilarityCells {
			// The distance is at least the difference in length, so the
			// similarity is at most shorter/longer.
			bound := float64(min(len(ra), len(rb))) / float64(max(len(ra), len(rb)))
			if bound < s.threshold {
				v := wrong("%sgot %s, expected %s: %d characters against %d, at most %s similar (threshold %s)", where, quote(out), quote(exp), len(ra), len(rb), pct(bound), pct(s.threshold))
				v.Value = bound
				return v
			}
			return loud(KindScorerError, "%sthe texts are too long to compare (%d and %d characters); similarity is for short texts such as names", where, len(ra), len(rb))
		}
		sim = editSimilarity(ra, rb)
	}
	if sim >= s.threshold {
		v := pass(fmt.Sprintf("%s%s is %s similar to %s (%s, threshold %s)", where, quote(out), pct(sim), quote(exp), s.method, pct(s.threshold)))
		v.Value = sim
		return v
	}
	v = wrong("%sgot %s, expected %s: %s similar (%s), below the threshold %s", where, quote(out), quote(exp), pct(sim), s.method, pct(s.threshold))
	v.Value = sim
	return v
}

// pct renders a similarity for a reason, to four decimals at most.
func pct(x float64) string {
	s := strconv.FormatFloat(x, 'f', 4, 64)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// editSimilarity is 1 − Levenshtein(a, b) / max(|a|, |b|); two empty texts
// are identical.
func editSimilarity(a, b []rune) float64 {
	n := max(len(a), len(b))
	if n == 0 {
		return 1
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return 1 - float64(prev[len(b)])/float64(n)
}

// textWords splits s into its words: runs of letters and digits.
func textWords(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// tokenSetRatio is rapidfuzz's token_set_ratio, as a fraction: with I the
// sorted shared words and A, B each side's other words (sorted), the best
// indel ratio among (I, I+A), (I, I+B) and (I+A, I+B); 1 when I is not
// empty and A or B is.
func tokenSetRatio(a, b []string) float64 {
	sa, sb := wordSet(a), wordSet(b)
	var inter, onlyA, onlyB []string
	for w := range sa {
		if sb[w] {
			inter = append(inter, w)
		} else {
			onlyA = append(onlyA, w)
		}
	}
	for w := range sb {
		if !sa[w] {
			onlyB = append(onlyB, w)
		}
	}
	if len(sa) == 0 && len(sb) == 0 {
		return 1
	}
	if len(inter) > 0 && (len(onlyA) == 0 || len(onlyB) == 0) {
		return 1
	}
	slices.Sort(inter)
	slices.Sort(onlyA)
	slices.Sort(onlyB)
	t0 := strings.Join(inter, " ")
	join := func(rest []string) string {
		if t0 == "" {
			return strings.Join(rest, " ")
		}
		return t0 + " " + strings.Join(rest, " ")
	}
	t1, t2 := join(onlyA), join(onlyB)
	best := indelRatio(t1, t2)
	if t0 != "" {
		best = max(best, indelRatio(t0, t1), indelRatio(t0, t2))
	}
	return best
}

func wordSet(ws []string) map[string]bool {
	m := make(map[string]bool, len(ws))
	for _, w := range ws {
		m[w] = true
	}
	return m
}

// indelRatio is 1 − (insertions + deletions) / (|a| + |b|) in characters,
// that is 2·LCS / (|a| + |b|).
func indelRatio(x, y string) float64 {
	a, b := []rune(x), []rune(y)
	if len(a)+len(b) == 0 {
		return 1
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			if a[i-1] == b[j-1] {
				cur[j] = prev[j-1] + 1
			} else {
				cur[j] = max(prev[j], cur[j-1])
			}
		}
		prev, cur = cur, prev
	}
	return 2 * float64(prev[len(b)]) / float64(len(a)+len(b))
}
