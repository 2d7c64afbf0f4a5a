package scorer

import (
	"context"
	"strings"

	"github.com/assay-eval/assay/internal/spec"
)

// oneOf passes when the parsed output (normalised) is one of its values
// (normalised alike); a JSON number output is compared by value with the
// values that spell numbers. An output outside the set is a loud invalid_format: a
// label off the list is a detectable failure, not a plausible wrong answer.
type oneOf struct {
	name       string
	values     map[string]bool
	shown      []string
	norm       normChain
	allowEmpty bool
}

func buildOneOf(b *builder, i int, sc *spec.Scorer) Scorer {
	n := b.normalize(i, sc)
	if len(sc.Values) == 0 {
		b.problemf(i, "values", "e.g. values: [billing, technical, account]", "one_of scorer needs values:")
		return nil
	}
	s := &oneOf{name: sc.Name, values: map[string]bool{}, shown: sc.Values, norm: n, allowEmpty: sc.AllowEmpty}
	for _, v := range sc.Values {
		s.values[n.apply(v)] = true
	}
	return s
}

func (s *oneOf) Name() string { return s.name }

func (s *oneOf) Score(_ context.Context, in *Input) Verdict {
	out, v, ok := parsedAnswer(in, s.allowEmpty)
	if !ok {
		return v
	}
	text, scalar := scalarString(out)
	if !scalar && out != nil {
		return loud(KindInvalidFormat, "output %s is not a single value", quote(out))
	}
	if s.values[s.norm.apply(text)] {
		return pass("is " + quote(text))
	}
	if _, isNum := numberOf(out); isNum {
		// A JSON number is one of the values when one of them spells it
		// (2.50 is the value "2.5").
		for _, w := range s.shown {
			if valuesEqual(out, w, s.norm) {
				return pass("is " + quote(out) + " (" + quote(w) + ")")
			}
		}
	}
	return loud(KindInvalidFormat, "%s is not one of %s", quote(text), strings.Join(s.shown, ", "))
}
