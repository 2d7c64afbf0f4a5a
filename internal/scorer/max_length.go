package scorer

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/assay-eval/assay/internal/spec"
)

// maxLength passes when the raw output has at most max characters (Unicode
// code points, not bytes). Longer is a loud too_long.
type maxLength struct {
	name       string
	max        int
	allowEmpty bool
}

func buildMaxLength(b *builder, i int, sc *spec.Scorer) Scorer {
	f, err := maxNumber(sc.Max)
	if err != nil || f != math.Trunc(f) || f < 1 {
		b.problemf(i, "max", "max is a whole number of characters >= 1, e.g. max: 2000", "max_length needs max: %s", describeMax(sc.Max, err))
		return nil
	}
	return &maxLength{name: sc.Name, max: int(math.Min(f, math.MaxInt32)), allowEmpty: sc.AllowEmpty}
}

func (s *maxLength) Name() string { return s.name }

func (s *maxLength) Score(_ context.Context, in *Input) Verdict {
	raw, v, ok := rawAnswer(in, s.allowEmpty)
	if !ok {
		return v
	}
	n := utf8.RuneCountInString(raw)
	if n <= s.max {
		return pass(fmt.Sprintf("%d characters (max %d)", n, s.max))
	}
	v = loud(KindTooLong, "%d characters, over the max of %d", n, s.max)
	return v
}

// maxNumber reads a numeric max: a YAML number or a numeric string (a
// leading $ is allowed, for costs).
func maxNumber(v any) (float64, error) {
	switch x := v.(type) {
	case nil:
		return 0, fmt.Errorf("missing")
	case bool:
		return 0, fmt.Errorf("%v is not a number", x)
	case string:
		f, err := parseNumber(x)
		if err != nil {
			return 0, err
		}
		return f, nil
	}
	s, ok := scalarString(v)
	if !ok {
		return 0, fmt.Errorf("%s is not a number", quote(v))
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("%s is not a number", s)
	}
	return f, nil
}

// describeMax renders a bad max for a problem message.
func describeMax(v any, err error) string {
	if v == nil {
		return "it is missing"
	}
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("%s is out of range", quote(v))
}
