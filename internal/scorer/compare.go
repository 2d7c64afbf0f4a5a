package scorer

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Values compare as what they are. A JSON number is compared by its value,
// read exactly from its written form: 12442.0 equals 12442, 1.50 equals
// 1.5, and 9007199254740993 is not 9007199254740992 (float64 would say it
// is). Outputs of the text, regex and last_number formats are strings, and
// CSV cells are strings, so a string that spells a number (after the
// normalisers, surrounding space ignored) equals that number, and one that
// reads true or false equals that boolean. Two strings compare as text, two
// objects by their keys and values, two arrays element by element; null
// equals only null.

// decimal is the exact value of a written number: (-1)^neg × digits ×
// 10^exp, with digits free of leading and trailing zeros ("" for zero, whose
// neg and exp are false and 0). Two decimals are equal exactly when their
// fields are.
type decimal struct {
	neg    bool
	digits string
	exp    int64
}

// maxExponentDigits bounds the exponent a written number may carry; a longer
// one is not read as a number (it would overflow the arithmetic below).
const maxExponentDigits = 15

// parseDecimal reads a number literal: an optional sign, digits with an
// optional fraction (at least one digit in all), and an optional exponent.
// It allocates nothing for the literal's digits beyond the result.
func parseDecimal(s string) (decimal, bool) {
	var d decimal
	i := 0
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		d.neg = s[i] == '-'
		i++
	}
	intStart := i
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	intPart := s[intStart:i]
	fracPart := ""
	if i < len(s) && s[i] == '.' {
		i++
		fs := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		fracPart = s[fs:i]
	}
	if intPart == "" && fracPart == "" {
		return decimal{}, false
	}
	var exp int64
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		eneg := false
		if i < len(s) && (s[i] == '-' || s[i] == '+') {
			eneg = s[i] == '-'
			i++
		}
		es := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		et := strings.TrimLeft(s[es:i], "0")
		if i == es || len(et) > maxExponentDigits {
			return decimal{}, false
		}
		if et != "" {
			n, err := strconv.ParseInt(et, 10, 64)
			if err != nil {
				return decimal{}, false
			}
			exp = n
		}
		if eneg {
			exp = -exp
		}
	}
	if i != len(s) {
		return decimal{}, false
	}
	digits := strings.TrimLeft(intPart+fracPart, "0")
	exp -= int64(len(fracPart))
	if digits == "" {
		return decimal{}, true // zero, whatever its sign
	}
	t := strings.TrimRight(digits, "0")
	exp += int64(len(digits) - len(t))
	d.digits, d.exp = t, exp
	return d, true
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

func (d decimal) isZero() bool { return d.digits == "" }

// integral reports whether d is a whole number.
func (d decimal) integral() bool { return d.exp >= 0 }

// String writes d in plain or exponent notation, as a JSON number.
func (d decimal) String() string {
	if d.isZero() {
		return "0"
	}
	sign := ""
	if d.neg {
		sign = "-"
	}
	n := int64(len(d.digits))
	switch {
	case d.exp >= 0 && n+d.exp <= 21:
		return sign + d.digits + strings.Repeat("0", int(d.exp))
	case d.exp < 0 && -d.exp < n:
		return sign + d.digits[:n+d.exp] + "." + d.digits[n+d.exp:]
	case d.exp < 0 && n-d.exp <= 21:
		return sign + "0." + strings.Repeat("0", int(-d.exp-n)) + d.digits
	}
	m := d.digits[:1]
	if n > 1 {
		m += "." + d.digits[1:]
	}
	return sign + m + "e" + strconv.FormatInt(d.exp+n-1, 10)
}

// maxRatExponent bounds the exponents rat works with: 10^4096 is a few
// hundred bytes, and no float64 is further from 1.
const maxRatExponent = 4096

// rat is d as an exact rational, or false when its exponent is beyond
// maxRatExponent (a number no float64 holds either).
func (d decimal) rat() (*big.Rat, bool) {
	if d.isZero() {
		return new(big.Rat), true
	}
	if d.exp > maxRatExponent || d.exp < -maxRatExponent {
		return nil, false
	}
	n, ok := new(big.Int).SetString(d.digits, 10)
	if !ok {
		return nil, false
	}
	if d.neg {
		n.Neg(n)
	}
	p := new(big.Int).Exp(big.NewInt(10), big.NewInt(abs64(d.exp)), nil)
	r := new(big.Rat)
	if d.exp >= 0 {
		return r.SetInt(n.Mul(n, p)), true
	}
	return r.SetFrac(n, p), true
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// int64Value is d as an int64 when it is a whole number in range.
func (d decimal) int64Value() (int64, bool) {
	if !d.integral() || int64(len(d.digits))+d.exp > 19 {
		return 0, false
	}
	s := d.digits + strings.Repeat("0", int(d.exp))
	if d.neg {
		s = "-" + s
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// uint64Value is d as a uint64 when it is a whole number >= 0 in range.
func (d decimal) uint64Value() (uint64, bool) {
	if d.neg || !d.integral() || int64(len(d.digits))+d.exp > 20 {
		return 0, false
	}
	n, err := strconv.ParseUint(d.digits+strings.Repeat("0", int(d.exp)), 10, 64)
	return n, err == nil
}

// float64Value is d as a float64 when that float64 stands for d alone: its
// shortest decimal form has d's value, so two such floats are equal exactly
// when their decimals are. 0.1 qualifies; 9007199254740993 and
// 0.30000000000000001 (which round to a float whose shortest form is another
// number) do not.
func (d decimal) float64Value() (float64, bool) {
	if d.isZero() {
		return 0, true
	}
	if d.exp > 400 || d.exp < -400-int64(len(d.digits)) {
		return 0, false
	}
	f, err := strconv.ParseFloat(d.String(), 64)
	if err != nil || math.IsInf(f, 0) {
		return 0, false
	}
	back, ok := floatDecimal(f)
	return f, ok && back == d
}

// floatDecimal is the decimal of f's shortest form.
func floatDecimal(f float64) (decimal, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return decimal{}, false
	}
	return parseDecimal(strconv.FormatFloat(f, 'g', -1, 64))
}

// numberOf reads a Go value that holds a JSON number (json.Number, a float,
// an integer) as a decimal; strings are not numbers here.
func numberOf(v any) (decimal, bool) {
	switch x := v.(type) {
	case json.Number:
		return parseDecimal(string(x))
	case float64:
		return floatDecimal(x)
	case float32:
		return parseDecimal(strconv.FormatFloat(float64(x), 'g', -1, 32))
	case int:
		return parseDecimal(strconv.Itoa(x))
	case int64:
		return parseDecimal(strconv.FormatInt(x, 10))
	case int32:
		return parseDecimal(strconv.FormatInt(int64(x), 10))
	case uint64:
		return parseDecimal(strconv.FormatUint(x, 10))
	case uint:
		return parseDecimal(strconv.FormatUint(uint64(x), 10))
	case uint32:
		return parseDecimal(strconv.FormatUint(uint64(x), 10))
	}
	return decimal{}, false
}

// numeral reads a string that spells a number (surrounding space ignored).
func numeral(s string) (decimal, bool) {
	return parseDecimal(strings.TrimSpace(s))
}

// kindOf names a value's JSON type for messages.
func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "boolean"
	case map[string]any, map[any]any:
		return "object"
	case []any:
		return "array"
	}
	if _, ok := numberOf(v); ok {
		return "number"
	}
	return fmt.Sprintf("%T", v)
}

// aKind is kindOf with its article, for "not an object" and the like.
func aKind(v any) string {
	switch k := kindOf(v); k {
	case "null":
		return k
	case "object", "array":
		return "an " + k
	default:
		return "a " + k
	}
}

// asObject returns v as an object with string keys.
func asObject(v any) (map[string]any, bool) {
	switch x := v.(type) {
	case map[string]any:
		return x, true
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[fmt.Sprint(k)] = e
		}
		return out, true
	}
	return nil, false
}

// valuesEqual compares an output value with an expected value, strings
// normalised by n, as the comment at the top of this file says.
func valuesEqual(out, exp any, n normChain) bool {
	return difference(out, exp, n, "") == nil
}

// diff is where and how two values differ.
type diff struct {
	path     string // "" at the top, else a JSON path like items[0].sku
	got, exp any
	why      string // what differs when printing both would not show it
}

// difference returns the first difference between out and exp (objects in
// sorted key order), or nil when they are equal.
func difference(out, exp any, n normChain, path string) *diff {
	here := func(why string) *diff { return &diff{path: path, got: out, exp: exp, why: why} }
	on, oNum := numberOf(out)
	en, eNum := numberOf(exp)
	switch {
	case oNum && eNum:
		if on == en {
			return nil
		}
		return here("")
	case oNum || eNum:
		num, other := on, exp
		if eNum {
			num, other = en, out
		}
		if s, ok := other.(string); ok {
			if d, ok := numeral(n.apply(s)); ok {
				if d == num {
					return nil
				}
				return here("") // a numeral of another value
			}
		}
		return here(kindsDiffer(out, exp))
	}
	switch o := out.(type) {
	case string:
		switch e := exp.(type) {
		case string:
			a, b := n.apply(o), n.apply(e)
			if a == b {
				return nil
			}
			return here(firstTextDifference(a, b))
		case bool:
			switch strings.TrimSpace(n.apply(o)) {
			case strconv.FormatBool(e):
				return nil
			case strconv.FormatBool(!e):
				return here("")
			}
		}
		return here(kindsDiffer(out, exp))
	case bool:
		switch e := exp.(type) {
		case bool:
			if o == e {
				return nil
			}
			return here("")
		case string:
			switch strings.TrimSpace(n.apply(e)) {
			case strconv.FormatBool(o):
				return nil
			case strconv.FormatBool(!o):
				return here("")
			}
		}
		return here(kindsDiffer(out, exp))
	case nil:
		if exp == nil {
			return nil
		}
		return here(kindsDiffer(out, exp))
	case []any:
		e, ok := exp.([]any)
		if !ok {
			return here(kindsDiffer(out, exp))
		}
		if len(o) != len(e) {
			return here(fmt.Sprintf("%d elements, expected %d", len(o), len(e)))
		}
		for i := range o {
			if d := difference(o[i], e[i], n, fmt.Sprintf("%s[%d]", path, i)); d != nil {
				return d
			}
		}
		return nil
	}
	oo, ok := asObject(out)
	if !ok {
		if fmt.Sprint(out) == fmt.Sprint(exp) && kindOf(out) == kindOf(exp) {
			return nil
		}
		return here(kindsDiffer(out, exp))
	}
	eo, ok := asObject(exp)
	if !ok {
		return here(kindsDiffer(out, exp))
	}
	keys := make([]string, 0, len(oo)+len(eo))
	for k := range eo {
		keys = append(keys, k)
	}
	for k := range oo {
		if _, both := eo[k]; !both {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		p := k
		if path != "" {
			p = path + "." + k
		}
		ov, inOut := oo[k]
		ev, inExp := eo[k]
		switch {
		case !inOut:
			return &diff{path: p, exp: ev, why: "missing from the output"}
		case !inExp:
			return &diff{path: p, got: ov, why: "not in the expected value"}
		}
		if d := difference(ov, ev, n, p); d != nil {
			return d
		}
	}
	return nil
}

// kindsDiffer says how two unequal values differ in type, or "" when they
// have the same type.
func kindsDiffer(out, exp any) string {
	a, b := kindOf(out), kindOf(exp)
	if a == b {
		return ""
	}
	return "the types differ: " + a + " vs " + b
}

// firstTextDifference says where two different strings first differ.
func firstTextDifference(a, b string) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	// Back up to the start of the rune.
	for i > 0 && !utf8.RuneStart(a[min(i, len(a)-1)]) {
		i--
	}
	return fmt.Sprintf("they differ from character %d", utf8.RuneCountInString(a[:i])+1)
}

// mismatch renders why out is not exp for a reason: "got X, expected Y",
// then, when that does not show the difference (both print alike, or they
// are objects or arrays), where and how they differ.
func mismatch(out, exp any, n normChain) string {
	msg := fmt.Sprintf("got %s, expected %s", quote(out), quote(exp))
	d := difference(out, exp, n, "")
	if d == nil {
		return msg
	}
	sameText := quote(out) == quote(exp)
	switch {
	case d.path != "":
		msg += "; at " + d.path + ": "
		switch {
		case d.why == "missing from the output":
			msg += fmt.Sprintf("missing from the output (expected %s)", quote(d.exp))
		case d.why == "not in the expected value":
			msg += fmt.Sprintf("%s is not in the expected value", quote(d.got))
		default:
			msg += fmt.Sprintf("got %s, expected %s", quote(d.got), quote(d.exp))
			if d.why != "" && (quote(d.got) == quote(d.exp) || strings.HasPrefix(d.why, "the types")) {
				msg += " (" + d.why + ")"
			}
		}
	case sameText && d.why != "":
		msg += " (" + d.why + ")"
	case sameText:
		msg += fmt.Sprintf(" (a %s vs a %s that print alike)", kindOf(out), kindOf(exp))
	case d.why != "" && strings.HasPrefix(d.why, "the types"):
		msg += " (" + d.why + ")"
	case d.why != "" && !isScalar(out):
		msg += " (" + d.why + ")"
	}
	return msg
}

func isScalar(v any) bool {
	_, ok := scalarString(v)
	return ok
}
