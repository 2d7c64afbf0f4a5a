// Package units formats numbers the way every assay output shows them: rates
// as percentages with one decimal, dollars readably at any scale,
// milliseconds and counts with separators, p-values with two significant
// digits, and "—" for a value that is not there (NaN or infinite). The
// report and the gate's reasons both use it, so a number reads the same in a
// verdict and in the table beside it. It is pure formatting and imports
// nothing of assay.
package units

import (
	"math"
	"strconv"
	"strings"
)

// Missing is how an absent value (NaN, ±Inf) is shown.
const Missing = "—"

// Pct formats a rate in [0,1] as "75.5%".
func Pct(r float64) string {
	if math.IsNaN(r) || math.IsInf(r, 0) {
		return Missing
	}
	return strconv.FormatFloat(100*r, 'f', 1, 64) + "%"
}

// USD formats dollars readably at any scale: "$0.0000753", "$0.0151",
// "$0.50", "$15.06", "$151", "$12,345"; negative amounts with a true minus.
// Below a trillionth of a dollar is the float noise of a mean of equal
// costs, and reads "$0".
func USD(x float64) string {
	switch {
	case math.IsNaN(x) || math.IsInf(x, 0):
		return Missing
	case x < 0:
		return "−" + USD(-x)
	case x < 1e-12:
		return "$0"
	case x >= 100:
		return "$" + Thousands(int64(math.Round(x)))
	case x >= 1:
		return "$" + strconv.FormatFloat(x, 'f', 2, 64)
	}
	// Three significant digits, at least two decimals, no trailing zeros
	// beyond those.
	digits := 2 - int(math.Floor(math.Log10(x)))
	s := strconv.FormatFloat(x, 'f', digits, 64)
	for strings.HasSuffix(s, "0") && len(s)-strings.IndexByte(s, '.') > 3 {
		s = s[:len(s)-1]
	}
	return "$" + s
}

// MS formats milliseconds: "2,140 ms", "820 ms", "4.2 ms", and two
// significant digits below a tenth ("0.042 ms"); negative with a true minus.
func MS(x float64) string {
	switch {
	case math.IsNaN(x) || math.IsInf(x, 0):
		return Missing
	case x < 0:
		return "−" + MS(-x)
	case x > 0 && x < 0.1:
		return strconv.FormatFloat(x, 'g', 2, 64) + " ms"
	case x < 10:
		return strconv.FormatFloat(x, 'f', 1, 64) + " ms"
	default:
		return Thousands(int64(math.Round(x))) + " ms"
	}
}

// Thousands formats an integer with comma separators: "12,345".
func Thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// Count formats a count with separators.
func Count(n int) string { return Thousands(int64(n)) }

// PValue formats a p-value with two significant digits; tiny ones as
// "<0.0001", those that round to 1 as "1".
func PValue(p float64) string {
	switch {
	case math.IsNaN(p):
		return Missing
	case p < 0.0001:
		return "<0.0001"
	case p >= 0.995:
		return "1"
	default:
		return strconv.FormatFloat(p, 'g', 2, 64)
	}
}

// The plan's numbers (`assay plan`) read shorter: a decimal only where it
// says something, and the user's own values quoted back as given.

// Num formats a number with one decimal, none when the decimal is zero
// ("3", "2.5"), and two significant digits when it is small enough that
// one decimal would hide it ("0.042"); negative with an ASCII minus.
func Num(x float64) string {
	if x != 0 && math.Abs(x) < 0.1 {
		return strconv.FormatFloat(x, 'g', 2, 64)
	}
	return strings.TrimSuffix(strconv.FormatFloat(x, 'f', 1, 64), ".0")
}

// Points formats a difference of rates, given as a fraction, in
// percentage points: "3 points", "2.5 points".
func Points(d float64) string { return Num(100*d) + " points" }

// SignedPoints formats a difference of rates in points with its sign, an
// ASCII one: "+3", "-2.5", "0".
func SignedPoints(d float64) string {
	s := Num(100 * d)
	if d > 0 {
		s = "+" + s
	}
	return s
}

// PctShort formats a rate in [0,1] as a percentage as Num writes numbers:
// "80%", "12.5%"; a rate just short of 1 keeps the digits that say so
// ("99.9999%", never "100%": a power of 99.99% is not certainty).
func PctShort(r float64) string {
	s := Num(100 * r)
	if s == "100" && r < 1 {
		s = strconv.FormatFloat(100*r, 'g', 6, 64)
	}
	return s + "%"
}

// GivenPct and GivenPoints quote a fraction the user gave back in percent
// or points, to six significant digits (0.999999 is "99.9999%", not
// "100%").
func GivenPct(r float64) string { return strconv.FormatFloat(100*r, 'g', 6, 64) + "%" }

// GivenPoints: see GivenPct.
func GivenPoints(d float64) string { return strconv.FormatFloat(100*d, 'g', 6, 64) + " points" }

// RoundSig rounds x to four significant digits, for a derived level
// quoted beside the user's own values (0.05/3 reads 0.01667).
func RoundSig(x float64) float64 {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	p := math.Pow(10, 3-math.Floor(math.Log10(math.Abs(x))))
	return math.Round(x*p) / p
}

// PctWhole formats a rate in [0,1] as a whole percentage: "90%", "33%".
func PctWhole(r float64) string { return strconv.FormatFloat(100*r, 'f', 0, 64) + "%" }

// SignedPts formats a difference of rates in points with one decimal and
// an ASCII sign always written: "+73.7", "-8.2", "+0.0".
func SignedPts(d float64) string { return signed(strconv.FormatFloat(100*d, 'f', 1, 64)) }

// Plain formats a number as the shortest decimal that reads back as it,
// without an exponent: a limit or level quoted as configured ("5", "0.05").
func Plain(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

// Seconds formats milliseconds as seconds with two decimals: "1.25s".
func Seconds(ms float64) string { return strconv.FormatFloat(ms/1000, 'f', 2, 64) + "s" }

// Pts formats a difference of rates in points, or a rate in percent, with
// one decimal and neither sign nor unit: "18.4", "0.0" (a bound quoted in a
// sentence, a column headed "pts" or "%"; SignedPts when the sign says
// which way).
func Pts(d float64) string { return strconv.FormatFloat(100*d, 'f', 1, 64) }

// PtsWhole formats a difference of rates, or an interval's half-width, in
// whole points rounded half away from zero: "12" (0.125 is 13 points).
func PtsWhole(d float64) string { return strconv.FormatFloat(math.Round(100*d), 'f', 0, 64) }

// Ratio formats a ratio in [0,1] that is not a rate — a similarity, an
// overlap — with two decimals: "0.93", "1.00".
func Ratio(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return Missing
	}
	return strconv.FormatFloat(x, 'f', 2, 64)
}

// Given formats a value quoted from the user's data to six significant
// digits without an exponent: 12442, 1.5, 0.333333, 1234570.
func Given(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return Missing
	}
	v, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 6, 64), 64)
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// The main report's table forms.

// USDCell formats dollars for a column headed "$": four decimals, no
// symbol ("0.0151", "12.3456").
func USDCell(x float64) string { return strconv.FormatFloat(x, 'f', 4, 64) }

// WholeCI formats an interval of rates in whole percentage points, without
// the sign: "[62, 81]".
func WholeCI(lo, hi float64) string {
	return "[" + strconv.FormatFloat(100*lo, 'f', 0, 64) + ", " + strconv.FormatFloat(100*hi, 'f', 0, 64) + "]"
}

// SignedPtsWhole formats a difference of rates in whole points with its
// sign always written: "+12", "-3", "+0".
func SignedPtsWhole(d float64) string { return signed(strconv.FormatFloat(100*d, 'f', 0, 64)) }

// Z formats a multiple of a standard error with two decimals: "1.87".
func Z(x float64) string { return strconv.FormatFloat(x, 'f', 2, 64) }

// PctCI formats an interval of rates in percent with one decimal:
// "[69.1, 80.9]".
func PctCI(ci [2]float64) string {
	return "[" + strconv.FormatFloat(100*ci[0], 'f', 1, 64) + ", " + strconv.FormatFloat(100*ci[1], 'f', 1, 64) + "]"
}

// Delta formats a difference of rates in points with one decimal and its
// sign, a true minus: "+8.5", "−3.0", and "0.0" for no difference (nor a
// rounded-away one).
func Delta(d float64) string {
	s := strconv.FormatFloat(100*d, 'f', 1, 64)
	switch {
	case s == "0.0" || s == "-0.0":
		return "0.0"
	case strings.HasPrefix(s, "-"):
		return "−" + s[1:]
	default:
		return "+" + s
	}
}

// DeltaCI formats an interval of differences as Delta writes them:
// "[+2.8, +14.2]".
func DeltaCI(ci [2]float64) string { return "[" + Delta(ci[0]) + ", " + Delta(ci[1]) + "]" }

// PValueCell formats a p-value in a table column: four decimals, and
// "<0.0001" below.
func PValueCell(p float64) string {
	if p < 1e-4 {
		return "<0.0001"
	}
	return strconv.FormatFloat(p, 'f', 4, 64)
}

// MSCell formats milliseconds in a column headed "ms": whole from 9.95
// up, two significant digits below (at most three decimals), "<0.001"
// below that, so a local target's sub-millisecond latency is shown.
func MSCell(x float64) string {
	switch {
	case x >= 9.95 || x <= 0 || math.IsNaN(x) || math.IsInf(x, 0):
		return strconv.FormatFloat(x, 'f', 0, 64)
	case x < 0.001:
		return "<0.001"
	}
	decimals := min(3, 1-int(math.Floor(math.Log10(x))))
	return strconv.FormatFloat(x, 'f', decimals, 64)
}

// PlainPct formats a configured level or rate as a percentage, exactly:
// "95%", "99.5%".
func PlainPct(r float64) string { return Plain(100*r) + "%" }

// PctTick labels a rate axis: "40%", "12.5%".
func PctTick(v float64) string { return strconv.FormatFloat(math.Round(1000*v)/10, 'f', -1, 64) + "%" }

// PtsTick labels a difference axis, its value v already in points:
// "+20", "0", "−7.5".
func PtsTick(v float64) string {
	s := strconv.FormatFloat(math.Round(10*v)/10, 'f', -1, 64)
	switch {
	case s == "0" || s == "-0":
		return "0"
	case strings.HasPrefix(s, "-"):
		return "−" + s[1:]
	default:
		return "+" + s
	}
}
