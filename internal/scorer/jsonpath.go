package scorer

import (
	"fmt"
	"strconv"
	"strings"
)

// jsonPath is a path into a JSON value: object keys separated by dots, array
// indexes in brackets or as a numeric segment ("items[0].sku",
// "items.0.sku").
type jsonPath struct {
	text string
	segs []pathSeg
}

type pathSeg struct {
	key   string
	index int // >= 0 for an array index
}

func parseJSONPath(p string) (jsonPath, error) {
	if strings.TrimSpace(p) == "" {
		return jsonPath{}, fmt.Errorf("empty path (write e.g. a.b or items[0].id)")
	}
	out := jsonPath{text: p}
	for _, part := range strings.Split(p, ".") {
		if part == "" {
			return jsonPath{}, fmt.Errorf("path %q has an empty segment (write e.g. a.b or items[0].id)", p)
		}
		key := part
		var idx []string
		if b := strings.IndexByte(part, '['); b >= 0 {
			key = part[:b]
			rest := part[b:]
			for rest != "" {
				if rest[0] != '[' {
					return jsonPath{}, fmt.Errorf("path %q: unexpected %q after an index (write e.g. items[0].id)", p, rest)
				}
				e := strings.IndexByte(rest, ']')
				if e < 0 {
					return jsonPath{}, fmt.Errorf("path %q: unclosed [", p)
				}
				idx = append(idx, rest[1:e])
				rest = rest[e+1:]
			}
		}
		if key != "" {
			if n, err := strconv.Atoi(key); err == nil && n >= 0 && len(idx) == 0 && key == strconv.Itoa(n) {
				out.segs = append(out.segs, pathSeg{key: key, index: n})
			} else {
				out.segs = append(out.segs, pathSeg{key: key, index: -1})
			}
		}
		for _, s := range idx {
			n, err := strconv.Atoi(s)
			if err != nil || n < 0 {
				return jsonPath{}, fmt.Errorf("path %q: index [%s] is not a non-negative integer", p, s)
			}
			out.segs = append(out.segs, pathSeg{index: n})
		}
	}
	return out, nil
}

// lookup returns the value at the path and whether it exists. A numeric
// segment reads an array element, or an object key of that name.
func (p jsonPath) lookup(v any) (any, bool) {
	cur := v
	for _, s := range p.segs {
		switch x := cur.(type) {
		case map[string]any:
			if s.key == "" {
				return nil, false
			}
			e, ok := x[s.key]
			if !ok {
				return nil, false
			}
			cur = e
		case []any:
			if s.index < 0 || s.index >= len(x) {
				return nil, false
			}
			cur = x[s.index]
		default:
			return nil, false
		}
	}
	return cur, true
}

func (p jsonPath) String() string { return p.text }

// fieldValues reads the parsed output and the expected value a scorer
// compares: with field set, the output at field, and the expected value at
// the same path when it is an object (else the expected value itself).
// where names the field for a reason ("total: "; "" without one). When ok
// is false, v is the verdict to return: the fail-closed one when there is
// no output or expected value, a loud invalid_format when the output lacks
// the field, a scorer_error when the expected object does.
func fieldValues(in *Input, field *jsonPath) (out, exp any, where string, v Verdict, ok bool) {
	out, v, ok = parsedAnswer(in, false)
	if !ok {
		return nil, nil, "", v, false
	}
	exp, v, ok = expectedValue(in)
	if !ok {
		return nil, nil, "", v, false
	}
	if field == nil {
		return out, exp, "", Verdict{}, true
	}
	if _, isObj := asObject(exp); isObj {
		w, found := field.lookup(exp)
		if !found {
			return nil, nil, "", loud(KindScorerError, "the expected value has no field %s", field), false
		}
		exp = w
	}
	got, found := field.lookup(out)
	if !found {
		return nil, nil, "", loud(KindInvalidFormat, "field %s is missing from the output", field), false
	}
	return got, exp, field.String() + ": ", Verdict{}, true
}
