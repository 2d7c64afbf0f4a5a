package units

import (
	"math"
	"strconv"
)

// The tool-call section's forms: means of per-case counts (calls, turns)
// and differences of them and of prices.

// PerCase formats a mean count per case with two decimals: "1.85", "0.00";
// "—" when it is not a number.
func PerCase(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return Missing
	}
	return strconv.FormatFloat(x, 'f', 2, 64)
}

// SignedPerCase formats a difference of mean counts with its sign and two
// decimals: "+0.25", "-1.10", "+0.00".
func SignedPerCase(d float64) string {
	if math.IsNaN(d) || math.IsInf(d, 0) {
		return Missing
	}
	return signed(strconv.FormatFloat(d, 'f', 2, 64))
}

// SignedUSD formats a difference of dollars with its sign, as USD does the
// amount: "+$0.0012", "−$0.50", "$0".
func SignedUSD(d float64) string {
	s := USD(d)
	if d > 0 && s != "$0" && s != Missing {
		return "+" + s
	}
	return s
}

// signed writes a formatted number's sign when it has none (strconv writes
// the minus, and the plus only of +Inf).
func signed(s string) string {
	if s[0] == '-' || s[0] == '+' {
		return s
	}
	return "+" + s
}
