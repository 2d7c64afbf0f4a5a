package scorer

import (
	"context"
	"fmt"
	"strings"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/spec"
)

// fieldEquals compares fields of a JSON output with the expected value: for
// each path, the output at the path must equal the expected value at the
// same path, or the expected value itself when it is a scalar (then only one
// field may be named). normalize applies to both sides.
//
// Its value is the fraction of fields that match (per-field accuracy), and
// its reason lists every field's outcome, e.g.
// `team ok; priority wrong (got "low", expected "high"); customer.id missing`.
// It passes only when every field matches. A missing field is a loud
// invalid_format; a present but different field is a silent wrong.
//
// Values compare as what they are (see compare.go): numbers by their exact
// value. With tolerance: (and relative:), a field whose output and
// expected values both read as numbers matches within the tolerance, as in
// the number scorer; other fields compare as usual.
//
// Every verdict the scorer reaches by comparing carries the per-field
// outcomes (Verdict.Fields: field, ok | wrong | missing, in field order),
// which the store keeps with the score for per-field reports. A result
// failed before the scorer ran (a provider error, empty output, a refusal,
// a parse failure) and a scorer error (the expected value lacks a field)
// carry none.
type fieldEquals struct {
	name  string
	paths []jsonPath
	norm  normChain
	tol   *tolerance // nil: no tolerance
}

func buildFieldEquals(b *builder, i int, sc *spec.Scorer) Scorer {
	type field struct{ path, at string }
	var fields []field
	if sc.Field != "" {
		fields = append(fields, field{sc.Field, "field"})
	}
	for j, f := range sc.Fields {
		fields = append(fields, field{f, fmt.Sprintf("fields[%d]", j)})
	}
	if len(fields) == 0 {
		b.problemf(i, "field", "e.g. field: team, or fields: [team, priority]", "field_equals scorer needs field: or fields:")
		return nil
	}
	s := &fieldEquals{name: sc.Name, norm: b.normalize(i, sc)}
	if sc.Tolerance != 0 || sc.Relative {
		tol, ok := buildTolerance(b, i, sc)
		if !ok {
			return nil
		}
		s.tol = &tol
	}
	for _, f := range fields {
		p, err := parseJSONPath(f.path)
		if err != nil {
			b.problemf(i, f.at, "", "%v", err)
			continue
		}
		s.paths = append(s.paths, p)
	}
	if len(s.paths) != len(fields) {
		return nil
	}
	return s
}

func (s *fieldEquals) Name() string { return s.name }

// fieldResult is one field's outcome in a field_equals verdict.
type fieldResult struct {
	Path     string
	Status   string // ok | wrong | missing
	Got      any
	Expected any
}

// fieldResults compares each field; err is set when the expected value
// cannot be read at a path.
func (s *fieldEquals) fieldResults(out, exp any) ([]fieldResult, error) {
	_, scalarExp := scalarString(exp)
	if scalarExp && len(s.paths) > 1 {
		return nil, fmt.Errorf("expected value %s is a scalar, but %d fields are compared; the expected value must be an object holding them", quote(exp), len(s.paths))
	}
	res := make([]fieldResult, 0, len(s.paths))
	for _, p := range s.paths {
		want := exp
		if !scalarExp {
			w, ok := p.lookup(exp)
			if !ok {
				return nil, fmt.Errorf("the expected value has no field %s", p)
			}
			want = w
		}
		fr := fieldResult{Path: p.String(), Expected: want}
		got, ok := p.lookup(out)
		switch {
		case !ok:
			fr.Status = "missing"
		case s.matches(got, want):
			fr.Status, fr.Got = "ok", got
		default:
			fr.Status, fr.Got = "wrong", got
		}
		res = append(res, fr)
	}
	return res, nil
}

// matches compares one field's output value with its expected value.
func (s *fieldEquals) matches(got, want any) bool {
	if isEmptyValue(got) && !isEmptyValue(want) {
		return false
	}
	if s.tol != nil {
		if g, err := toDecimal(got); err == nil {
			if w, err := toDecimal(want); err == nil {
				ok, _, _ := s.tol.within(g, w)
				return ok
			}
		}
	}
	return valuesEqual(got, want, s.norm)
}

func (s *fieldEquals) Score(_ context.Context, in *Input) Verdict {
	out, v, ok := parsedAnswer(in, false)
	if !ok {
		return v
	}
	exp, v, ok := expectedValue(in)
	if !ok {
		return v
	}
	res, err := s.fieldResults(out, exp)
	if err != nil {
		return loud(KindScorerError, "%v", err)
	}
	var parts []string
	okN, missing := 0, 0
	fields := make([]record.FieldVerdict, 0, len(res))
	for _, fr := range res {
		fields = append(fields, record.FieldVerdict{Field: fr.Path, Status: fr.Status})
		switch fr.Status {
		case "ok":
			okN++
			parts = append(parts, fr.Path+" ok")
		case "missing":
			missing++
			parts = append(parts, fr.Path+" missing")
		default:
			parts = append(parts, fmt.Sprintf("%s wrong (%s)", fr.Path, mismatch(fr.Got, fr.Expected, s.norm)))
		}
	}
	reason := strings.Join(parts, "; ")
	frac := float64(okN) / float64(len(res))
	switch {
	case okN == len(res):
		v = pass(reason)
	case missing > 0:
		v = loud(KindInvalidFormat, "%s", reason)
	default:
		v = wrong("%s", reason)
	}
	if !v.Pass {
		v.Value = frac
	}
	v.Fields = fields
	return v
}
