package selftest

import (
	"encoding/json"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"

	"golang.org/x/text/unicode/norm"

	"github.com/assay-eval/assay/internal/stats"
)

// The rule that calls a null model's pass rate "clearly above chance".
const (
	// Confidence is the simultaneous confidence of the intervals on one
	// scorer: each interval is a Wilson interval at 1 - (1-Confidence)/K,
	// K being the number of (null model, mode) cells tested on that scorer
	// (Bonferroni), so the chance that any of a sound scorer's cells is
	// flagged is at most 1-Confidence even when every true rate sits right
	// at its chance rate plus Margin.
	Confidence = 0.95
	// Margin is how far above its chance rate a null model must be (at the
	// lower end of its interval) to be flagged: it absorbs coincidences
	// (a number spray that happens to end in a case's answer) and answer
	// equivalences a scorer may rightly apply beyond the ones the chance
	// rate already counts.
	Margin = 0.02
)

// Decide applies the rule to k passes in n cases against chance, with the
// interval widened for tests cells on the scorer. It returns the interval
// and whether the rate is clearly above chance: the interval's lower end
// exceeds chance + Margin. With n == 0 nothing is above chance.
func Decide(k, n int, chance float64, tests int) (stats.Interval, bool) {
	if tests < 1 {
		tests = 1
	}
	iv := stats.Wilson(k, n, (1-Confidence)/float64(tests))
	return iv, n > 0 && iv.Lo > chance+Margin
}

// numberRe is a plain decimal number, with optional thousands commas.
var numberRe = regexp.MustCompile(`^[+-]?(?:(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$`)

// answerKey is the canonical form of an answer for the chance rate: two
// answers with the same key are the same answer, so a scorer passing one
// for the other is right to. Text is compared after Unicode NFC, trimming,
// lower-casing and collapsing runs of white space; text that is a plain
// number (thousands commas allowed) and JSON numbers compare as numbers
// ("1,000" = "1000" = 1000.0); objects and arrays compare as canonical JSON
// with their strings so normalised. ok is false for nil: a missing value is
// never anyone's answer.
func answerKey(v any) (string, bool) {
	switch x := v.(type) {
	case nil:
		return "", false
	case string:
		t := normText(x)
		if numberRe.MatchString(t) {
			if k, ok := decimalKey(strings.ReplaceAll(t, ",", "")); ok {
				return k, true
			}
		}
		return "s:" + t, true
	case float64:
		return numberKey(x), true
	case json.Number:
		if k, ok := decimalKey(x.String()); ok {
			return k, true
		}
		return "s:" + x.String(), true
	case int:
		return numberKey(float64(x)), true
	case bool:
		return "b:" + strconv.FormatBool(x), true
	}
	return "j:" + jsonText(normStrings(v)), true
}

// numberKey is a float's key: the exact value of its shortest decimal
// form, so 1.5 and "1.50" share one.
func numberKey(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "s:" + strconv.FormatFloat(f, 'g', -1, 64)
	}
	k, _ := decimalKey(strconv.FormatFloat(f, 'g', -1, 64))
	return k
}

// maxKeyExponent bounds the exponent of a number written in text that is
// keyed exactly: 1e999999999 as a fraction would take gigabytes.
const maxKeyExponent = 400

// decimalKey is a number written in decimal (JSON or plain text, no
// commas) keyed by its exact value, so 12442.0 = 12442 = 1.2442e4 while
// 9007199254740993 ≠ 9007199254740992 (a float64 holds neither apart).
// ok is false for text that is not such a number, or whose exponent is
// beyond maxKeyExponent.
func decimalKey(s string) (string, bool) {
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.Atoi(strings.TrimPrefix(s[i+1:], "+"))
		if err != nil || e > maxKeyExponent || e < -maxKeyExponent {
			return "", false
		}
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return "", false
	}
	return "n:" + r.RatString(), true
}

func normText(s string) string {
	// Invalid bytes become U+FFFD first, so the same text gets the same key
	// whatever follows it (case folding and normalisation treat a stray
	// byte differently at the end of a string and before other text).
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.Join(strings.Fields(strings.ToLower(norm.NFC.String(s))), " ")
}

// normStrings applies normText to every string inside v.
func normStrings(v any) any {
	switch x := v.(type) {
	case string:
		return normText(x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = normStrings(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normStrings(e)
		}
		return out
	}
	return v
}

// chanceHit reports whether a correct grader would pass answer value on a
// case whose expected answer has key expKey (hasExp false: the case has
// none): the answer is the expected one. A refusal is also right on a
// case in the should-refuse bucket.
func chanceHit(valueKey string, valueOK bool, expKey string, hasExp bool, refusal, shouldRefuse bool) bool {
	if refusal && shouldRefuse {
		return true
	}
	return valueOK && hasExp && valueKey == expKey
}
