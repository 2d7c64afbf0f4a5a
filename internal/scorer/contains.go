package scorer

import (
	"context"
	"fmt"
	"strings"

	"github.com/assay-eval/assay/internal/spec"
)

// contains passes when the raw output contains every one of its values;
// not_contains (negate) passes when it contains none of them. normalize is
// applied to the output and the values alike (e.g. lower for a
// case-insensitive check). An empty output fails both, unless a
// not_contains scorer sets allow_empty.
type contains struct {
	name       string
	values     []string // normalised
	shown      []string // as written
	norm       normChain
	negate     bool
	allowEmpty bool
}

func buildContains(b *builder, i int, sc *spec.Scorer) Scorer {
	return buildContainsLike(b, i, sc, false)
}
func buildNotContains(b *builder, i int, sc *spec.Scorer) Scorer {
	return buildContainsLike(b, i, sc, true)
}

func buildContainsLike(b *builder, i int, sc *spec.Scorer, negate bool) Scorer {
	n := b.normalize(i, sc)
	vals := sc.Values
	if sc.Value != "" {
		vals = append([]string{sc.Value}, vals...)
	}
	if len(vals) == 0 {
		b.problemf(i, "value", "e.g. value: \"refund\" or values: [a, b]", "%s scorer needs value: or values:", sc.Type)
		return nil
	}
	s := &contains{name: sc.Name, norm: n, negate: negate, allowEmpty: sc.AllowEmpty, shown: vals}
	for j, v := range vals {
		nv := n.apply(v)
		if nv == "" {
			b.problemf(i, "values", "remove it", "%s value %d is empty (after normalize), so it is in every output", sc.Type, j)
			return nil
		}
		s.values = append(s.values, nv)
	}
	return s
}

func (s *contains) Name() string { return s.name }

func (s *contains) Score(_ context.Context, in *Input) Verdict {
	raw, v, ok := rawAnswer(in, s.allowEmpty)
	if !ok {
		return v
	}
	text := s.norm.apply(raw)
	var hit, miss []string
	for j, want := range s.values {
		if strings.Contains(text, want) {
			hit = append(hit, fmt.Sprintf("%q", s.shown[j]))
		} else {
			miss = append(miss, fmt.Sprintf("%q", s.shown[j]))
		}
	}
	if s.negate {
		if len(hit) == 0 {
			return pass("contains none of the banned values")
		}
		return wrong("contains %s", strings.Join(hit, ", "))
	}
	if len(miss) == 0 {
		return pass("contains " + strings.Join(hit, ", "))
	}
	return wrong("does not contain %s", strings.Join(miss, ", "))
}
