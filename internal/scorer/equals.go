package scorer

import (
	"context"

	"github.com/assay-eval/assay/internal/spec"
)

// equals passes when the parsed output equals the expected value after both
// are normalised. Scalars compare as text, so the number 18 equals "18";
// objects and arrays compare structurally.
type equals struct {
	name       string
	norm       normChain
	allowEmpty bool
}

func buildEquals(b *builder, i int, sc *spec.Scorer) Scorer {
	n := b.normalize(i, sc)
	return &equals{name: sc.Name, norm: n, allowEmpty: sc.AllowEmpty}
}

func (s *equals) Name() string { return s.name }

func (s *equals) Score(_ context.Context, in *Input) Verdict {
	out, v, ok := parsedAnswer(in, s.allowEmpty)
	if !ok {
		return v
	}
	exp, v, ok := expectedValue(in)
	if !ok {
		return v
	}
	if valuesEqual(out, exp, s.norm) {
		return pass("equals " + quote(exp))
	}
	return wrong("%s", mismatch(out, exp, s.norm))
}
