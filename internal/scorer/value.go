package scorer

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// clip shortens s to at most n runes for a reason or error message, marking
// the cut.
func clip(s string, n int) string {
	// Walk to the n-th rune without converting the whole string: an
	// output may be megabytes.
	i := 0
	for k := 0; k < n; k++ {
		if i >= len(s) {
			return s
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	if i >= len(s) {
		return s
	}
	return s[:i] + "…"
}

// quote renders a value of the output or expected for a reason: strings are
// quoted and clipped, other values JSON-encoded and clipped.
func quote(v any) string {
	if s, ok := v.(string); ok {
		return strconv.Quote(clip(s, 80))
	}
	b, err := json.Marshal(canonical(v))
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	return clip(string(b), 80)
}

// scalarString renders a JSON scalar as text: strings as they are, numbers
// in their shortest exact form, booleans as true/false. ok is false for nil,
// objects and arrays.
func scalarString(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case json.Number:
		return x.String(), true
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), true
	case float32:
		return strconv.FormatFloat(float64(x), 'f', -1, 32), true
	case int:
		return strconv.Itoa(x), true
	case int64:
		return strconv.FormatInt(x, 10), true
	case int32:
		return strconv.FormatInt(int64(x), 10), true
	case uint64:
		return strconv.FormatUint(x, 10), true
	case uint:
		return strconv.FormatUint(uint64(x), 10), true
	case uint32:
		return strconv.FormatUint(uint64(x), 10), true
	case bool:
		return strconv.FormatBool(x), true
	}
	return "", false
}

// canonical rewrites a decoded value for encoding as JSON: maps get string
// keys, json.Number keeps its written form and other integer and float types
// become json.Number. (Equality is valuesEqual's, in compare.go.)
func canonical(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = canonical(e)
		}
		return out
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[fmt.Sprint(k)] = canonical(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = canonical(e)
		}
		return out
	case json.Number:
		// Kept as written, so printing it shows the digits the model or
		// the dataset wrote (a float64 would print 9007199254740993 as
		// 9007199254740992).
		if _, ok := parseDecimal(string(x)); ok {
			return x
		}
		return string(x)
	case nil, string, bool, float64:
		return x
	}
	if d, ok := numberOf(v); ok {
		return json.Number(d.String())
	}
	return v
}

// isEmptyValue reports whether a parsed value carries no answer: nil, a blank
// string, an empty object or an empty array.
func isEmptyValue(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return strings.TrimSpace(x) == ""
	case map[string]any:
		return len(x) == 0
	case []any:
		return len(x) == 0
	}
	return false
}

// isEmptyRaw reports whether a raw reply carries no answer: blank, or (once
// trimmed and any ``` fence removed) a JSON null, "", {} or [].
func isEmptyRaw(raw string) bool {
	t := strings.TrimSpace(raw)
	if t == "" {
		return true
	}
	if len(t) > 64 {
		return false
	}
	if strings.HasPrefix(t, "```") {
		if bodies := fenceBodies(t); len(bodies) == 1 && strings.TrimSpace(strings.TrimPrefix(t, "```")) != "" {
			t = strings.TrimSpace(bodies[0])
			if t == "" {
				return true
			}
		}
	}
	v, err := decodeWhole(t)
	return err == nil && isEmptyValue(v)
}

// numberText is an unsigned decimal number, with thousands commas (groups
// of three) or none, an optional fraction and an optional exponent. It is
// read-only.
var numberText = regexp.MustCompile(`^(?:(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$`)

// readNumber reads a number written by a person or a model, exactly:
// surrounding space, a leading + or -, a currency sign ($ € £ ¥), thousands
// commas and a trailing % are accepted ("$1,234.50", "-3", "12%").
func readNumber(s string) (decimal, error) {
	t := strings.TrimSpace(s)
	t = strings.TrimSuffix(t, "%")
	neg := false
	if strings.HasPrefix(t, "-") || strings.HasPrefix(t, "−") {
		neg = true
		t = strings.TrimPrefix(strings.TrimPrefix(t, "-"), "−")
	} else {
		t = strings.TrimPrefix(t, "+")
	}
	for _, c := range []string{"$", "€", "£", "¥"} {
		t = strings.TrimPrefix(t, c)
	}
	if !neg && (strings.HasPrefix(t, "-") || strings.HasPrefix(t, "−")) {
		neg = true
		t = strings.TrimPrefix(strings.TrimPrefix(t, "-"), "−")
	}
	t = strings.TrimSpace(t)
	if !numberText.MatchString(t) {
		return decimal{}, fmt.Errorf("%s is not a number", strconv.Quote(clip(s, 40)))
	}
	d, ok := parseDecimal(strings.ReplaceAll(t, ",", ""))
	if _, inRange := d.rat(); !ok || !inRange {
		return decimal{}, fmt.Errorf("%s is not a number in range", strconv.Quote(clip(s, 40)))
	}
	if neg && !d.isZero() {
		d.neg = true
	}
	return d, nil
}

// parseNumber is readNumber as a float64 (for limits such as max:).
func parseNumber(s string) (float64, error) {
	d, err := readNumber(s)
	if err != nil {
		return 0, err
	}
	f, err := strconv.ParseFloat(d.String(), 64)
	if err != nil || math.IsInf(f, 0) {
		return 0, fmt.Errorf("%s is not a number in range", strconv.Quote(clip(s, 40)))
	}
	return f, nil
}

// toDecimal converts a parsed or expected value to an exact number: a JSON
// number as written, a string as readNumber reads it.
func toDecimal(v any) (decimal, error) {
	switch x := v.(type) {
	case nil:
		return decimal{}, errors.New("no value")
	case bool:
		return decimal{}, fmt.Errorf("%v is a boolean, not a number", x)
	case string:
		return readNumber(x)
	}
	if d, ok := numberOf(v); ok {
		if _, inRange := d.rat(); !inRange {
			return decimal{}, fmt.Errorf("%s is not a number in range", clip(d.String(), 40))
		}
		return d, nil
	}
	return decimal{}, fmt.Errorf("%s is not a number", quote(v))
}
