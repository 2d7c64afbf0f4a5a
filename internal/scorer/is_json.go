package scorer

import (
	"context"
	"strings"

	"github.com/assay-eval/assay/internal/spec"
)

// isJSON passes when the whole raw output, trimmed, is one JSON value. It is
// strict on purpose: a reply wrapped in ``` fences or prose fails it even
// though output format json would still parse it, which tells a team whose
// consumer needs bare JSON what the parser forgave.
type isJSON struct{ name string }

func buildIsJSON(_ *builder, _ int, sc *spec.Scorer) Scorer { return &isJSON{name: sc.Name} }

func (s *isJSON) Name() string { return s.name }

func (s *isJSON) Score(_ context.Context, in *Input) Verdict {
	raw, v, ok := rawAnswer(in, false)
	if !ok {
		return v
	}
	if _, err := decodeWhole(strings.TrimSpace(raw)); err != nil {
		return loud(KindInvalidFormat, "the output is not bare JSON: %s", clip(err.Error(), 200))
	}
	return pass("the output is JSON")
}
