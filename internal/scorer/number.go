package scorer

import (
	"context"
	"math"
	"strconv"

	"github.com/assay-eval/assay/internal/spec"
)

// number passes when the parsed output, read as a number, is within
// tolerance of the expected number: |out − exp| ≤ tolerance, or with
// relative: true, |out − exp| ≤ tolerance × |exp|. Both sides may be
// written with thousands commas, a currency sign or a trailing %
// ("1,234", "$18.00"). Tolerance 0 means equal up to float rounding. An
// output that is not a number is loud unparseable.
type number struct {
	name      string
	tolerance float64
	relative  bool
}

func buildNumber(b *builder, i int, sc *spec.Scorer) Scorer {
	if sc.Tolerance < 0 || math.IsNaN(sc.Tolerance) || math.IsInf(sc.Tolerance, 0) {
		b.problemf(i, "tolerance", "tolerance is a number >= 0 (relative: true makes it a fraction of expected)", "tolerance %v is invalid", sc.Tolerance)
		return nil
	}
	return &number{name: sc.Name, tolerance: sc.Tolerance, relative: sc.Relative}
}

func (s *number) Name() string { return s.name }

func (s *number) Score(_ context.Context, in *Input) Verdict {
	outV, v, ok := parsedAnswer(in, false)
	if !ok {
		return v
	}
	expV, v, ok := expectedValue(in)
	if !ok {
		return v
	}
	exp, err := toNumber(expV)
	if err != nil {
		return loud(KindScorerError, "expected value is not a number: %v", err)
	}
	out, err := toNumber(outV)
	if err != nil {
		return loud(KindUnparseable, "output is not a number: %v", err)
	}
	diff := math.Abs(out - exp)
	limit := s.tolerance
	if s.relative {
		limit = s.tolerance * math.Abs(exp)
	}
	// Float rounding: numbers that print alike are equal.
	slack := 1e-9 * math.Max(math.Abs(out), math.Abs(exp))
	got, want := strconv.FormatFloat(out, 'g', -1, 64), strconv.FormatFloat(exp, 'g', -1, 64)
	if diff <= limit+slack {
		return pass("got " + got + ", expected " + want)
	}
	return wrong("got %s, expected %s (off by %s, tolerance %s)", got, want, strconv.FormatFloat(diff, 'g', 6, 64), strconv.FormatFloat(limit, 'g', 6, 64))
}
