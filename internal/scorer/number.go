package scorer

import (
	"context"
	"math"
	"math/big"
	"strconv"

	"github.com/assay-eval/assay/internal/spec"
)

// number passes when the parsed output, read as a number, is within
// tolerance of the expected number: |out − exp| ≤ tolerance, or with
// relative: true, |out − exp| ≤ tolerance × |exp|. Both sides may be
// written with thousands commas, a currency sign or a trailing %
// ("1,234", "$18.00"). The arithmetic is exact on the written digits, so
// 9007199254740993 is not 9007199254740992 (float64 would say it is).
// Tolerance 0 means equal: exactly for whole numbers, and up to float
// rounding (a relative 1e-9) when either is a fraction, so a model that
// writes 0.30000000000000004 for 0.3 is not failed for its arithmetic.
// An output that is not a number is loud unparseable.
//
// With field:, the number is read at that path of a JSON output, and of
// the expected value when it is an object (else the expected value is the
// number); a missing field is a loud invalid_format.
type number struct {
	name  string
	tol   tolerance
	field *jsonPath
}

// tolerance is a compiled tolerance:/relative: pair.
type tolerance struct {
	abs      *big.Rat // the tolerance as written (0 when unset)
	relative bool
}

func buildTolerance(b *builder, i int, sc *spec.Scorer) (tolerance, bool) {
	if sc.Tolerance < 0 || math.IsNaN(sc.Tolerance) || math.IsInf(sc.Tolerance, 0) {
		b.problemf(i, "tolerance", "tolerance is a number >= 0 (relative: true makes it a fraction of expected)", "tolerance %v is invalid", sc.Tolerance)
		return tolerance{}, false
	}
	// The tolerance as the YAML wrote it (0.01 is exactly 1/100).
	d, _ := floatDecimal(sc.Tolerance)
	r, ok := d.rat()
	if !ok {
		b.problemf(i, "tolerance", "", "tolerance %v is out of range", sc.Tolerance)
		return tolerance{}, false
	}
	return tolerance{abs: r, relative: sc.Relative}, true
}

// within reports whether out is within the tolerance of exp, with the
// difference and the tolerance (as text, for a reason: the spec's, or its
// share of exp when relative; the rounding allowance is not shown).
func (t tolerance) within(out, exp decimal) (ok bool, diff, limit string) {
	o, _ := out.rat()
	e, _ := exp.rat()
	d := new(big.Rat).Sub(o, e)
	d.Abs(d)
	lim := new(big.Rat).Set(t.abs)
	if t.relative {
		lim.Mul(lim, new(big.Rat).Abs(e))
	}
	shown := ratText(lim) // the tolerance the spec set, without the rounding allowance
	if !out.integral() || !exp.integral() {
		// Float rounding: a relative 1e-9 of the larger.
		m := new(big.Rat).Abs(o)
		if ae := new(big.Rat).Abs(e); ae.Cmp(m) > 0 {
			m = ae
		}
		lim.Add(lim, m.Mul(m, big.NewRat(1, 1_000_000_000)))
	}
	return d.Cmp(lim) <= 0, ratText(d), shown
}

// ratText renders r for a reason: exactly when it is short, else to six
// significant digits.
func ratText(r *big.Rat) string {
	if r.IsInt() && len(r.Num().String()) <= 20 {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', 6, 64)
}

func buildNumber(b *builder, i int, sc *spec.Scorer) Scorer {
	tol, ok := buildTolerance(b, i, sc)
	if !ok {
		return nil
	}
	s := &number{name: sc.Name, tol: tol}
	if sc.Field != "" {
		p, err := parseJSONPath(sc.Field)
		if err != nil {
			b.problemf(i, "field", "", "%v", err)
			return nil
		}
		s.field = &p
	}
	return s
}

func (s *number) Name() string { return s.name }

func (s *number) Score(_ context.Context, in *Input) Verdict {
	outV, expV, where, v, ok := fieldValues(in, s.field)
	if !ok {
		return v
	}
	exp, err := toDecimal(expV)
	if err != nil {
		return loud(KindScorerError, "%sexpected value is not a number: %v", where, err)
	}
	out, err := toDecimal(outV)
	if err != nil {
		return loud(KindUnparseable, "%soutput is not a number: %v", where, err)
	}
	got, want := clip(out.String(), 40), clip(exp.String(), 40)
	if ok, diff, limit := s.tol.within(out, exp); !ok {
		return wrong("%sgot %s, expected %s (off by %s, tolerance %s)", where, got, want, diff, limit)
	}
	return pass(where + "got " + got + ", expected " + want)
}
