package scorer

import "github.com/assay-eval/assay/internal/spec"

// Projection is the part of an answer a correct grader of one scorer
// compares with the same part of the expected value. selftest uses it for
// a field scorer's chance rate: a constant answer whose priority is the
// commonest priority is right on every case with that priority, whatever
// its other fields say, so the chance of a field_equals on priority is the
// share of that priority, not of the whole answer.
//
// Of calls with expected false it returns the answer's value at the
// scorer's fields (one field: its value; several: the list of their
// values), ok false when one is missing; with expected true the expected
// value's, read as the scorers read it (fieldValues): at the path when the
// expected value is an object, else the value itself for a single field.
type Projection func(v any, expected bool) (any, bool)

// ProjectionOf returns sc's projection, or nil when sc compares the whole
// answer (or is not a field comparison: a judge, a format check, CEL).
func ProjectionOf(sc *spec.Scorer) Projection {
	switch sc.Type {
	case "field_equals", "number", "similarity":
	default:
		return nil
	}
	var paths []jsonPath
	for _, f := range append([]string{sc.Field}, sc.Fields...) {
		if f == "" {
			continue
		}
		p, err := parseJSONPath(f)
		if err != nil {
			return nil // the spec did not compile; selftest never runs on it
		}
		paths = append(paths, p)
	}
	if len(paths) == 0 {
		return nil
	}
	return func(v any, expected bool) (any, bool) {
		if _, isObj := asObject(v); expected && !isObj {
			if len(paths) == 1 {
				return v, v != nil
			}
			return nil, false
		}
		vals := make([]any, len(paths))
		for i, p := range paths {
			w, ok := p.lookup(v)
			if !ok {
				return nil, false
			}
			vals[i] = w
		}
		if len(vals) == 1 {
			return vals[0], true
		}
		return vals, true
	}
}
