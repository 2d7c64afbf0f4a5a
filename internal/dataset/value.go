package dataset

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Stringify renders a case value as text: strings as they are, numbers as
// written in the file, booleans as true/false, null as "", and objects and
// arrays as compact JSON (their numbers as written too). IDs, tags and expected_extract use it.
func Stringify(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case json.Number:
		return x.String()
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return strconv.FormatFloat(x, 'g', -1, 64)
		}
		return strconv.FormatFloat(x, 'f', -1, 64)
	case int64:
		return strconv.FormatInt(x, 10)
	case int:
		return strconv.Itoa(x)
	case uint64:
		return strconv.FormatUint(x, 10)
	case bool:
		return strconv.FormatBool(x)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

// labelText is Stringify with a number in one spelling, for counting
// expected values: 18.0 and 18 are one label, as are 1.50 and 1.5. A whole
// number keeps every digit (9007199254740993 is not rounded); a number a
// float64 holds only approximately stays as written.
func labelText(v any) string {
	n, ok := v.(json.Number)
	if !ok {
		return Stringify(v)
	}
	s := n.String()
	if _, err := strconv.ParseInt(s, 10, 64); err == nil {
		return s
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) || (f == math.Trunc(f) && math.Abs(f) >= 1<<53) {
		return s
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// celNumbers copies a row's values for a CEL tag expression, whose adapter
// would read a json.Number as a string: a whole number becomes an int (or a
// uint beyond int64), any other number a double, and a number no double
// holds (out of range) stays its written text.
func celNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		s := x.String()
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n
		}
		if n, err := strconv.ParseUint(s, 10, 64); err == nil {
			return n
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsInf(f, 0) {
			return f
		}
		return s
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = celNumbers(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = celNumbers(e)
		}
		return out
	}
	return v
}

// jsonKind names a JSON value's kind for messages.
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case json.Number, float64:
		return "a number"
	case bool:
		return "a boolean"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	}
	return "a value"
}

// preview quotes s, cut to a readable length, for messages.
func preview(s string) string {
	const max = 40
	s = strings.ReplaceAll(s, "\n", `\n`)
	if utf8.RuneCountInString(s) <= max {
		return strconv.Quote(s)
	}
	r := []rune(s)
	return strconv.Quote(string(r[:max])) + "…"
}
