package gate

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/assay-eval/assay/internal/spec"
)

// Number formats of the checks' reasons, as the decision report writes
// them: rates as percentages with one decimal, differences of rates in
// points with a true minus sign, dollars at any scale, milliseconds with
// separators. The gate cannot import the report, so the few unit formatters
// the reasons need live here; FormatValue, FormatAmount, FormatDelta and
// FormatInterval are exported so that a rendering of a Result (the report
// package) shows its numbers exactly as its reasons do.

func pct(r float64) string {
	if math.IsNaN(r) {
		return "—"
	}
	return strconv.FormatFloat(100*r, 'f', 1, 64) + "%"
}

// signed puts a sign (a true minus) in front of a formatted magnitude.
func signed(x float64, abs func(float64) string) string {
	s := abs(math.Abs(x))
	switch {
	case math.IsNaN(x):
		return "—"
	case strings.Trim(s, "0.$ ms%pt,") == "":
		return "±" + s
	case x < 0:
		return "−" + s
	default:
		return "+" + s
	}
}

func ptsAbs(d float64) string { return strconv.FormatFloat(100*d, 'f', 1, 64) + " pts" }

func usd(x float64) string {
	switch {
	case math.IsNaN(x) || math.IsInf(x, 0):
		return "—"
	case x < 0:
		return "−" + usd(-x)
	case x < 1e-12:
		// Below a trillionth of a dollar is the float noise of a mean of
		// equal costs, not a difference.
		return "$0"
	case x >= 100:
		return "$" + thousands(int64(math.Round(x)))
	case x >= 1:
		return "$" + strconv.FormatFloat(x, 'f', 2, 64)
	}
	digits := 2 - int(math.Floor(math.Log10(x)))
	s := strconv.FormatFloat(x, 'f', digits, 64)
	for strings.HasSuffix(s, "0") && len(s)-strings.IndexByte(s, '.') > 3 {
		s = s[:len(s)-1]
	}
	return "$" + s
}

func ms(x float64) string {
	switch {
	case math.IsNaN(x) || math.IsInf(x, 0):
		return "—"
	case x < 0:
		return "−" + ms(-x)
	case x > 0 && x < 0.1:
		return strconv.FormatFloat(x, 'g', 2, 64) + " ms"
	case x < 10:
		return strconv.FormatFloat(x, 'f', 1, 64) + " ms"
	default:
		return thousands(int64(math.Round(x))) + " ms"
	}
}

func thousands(n int64) string {
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

func count(n int) string { return thousands(int64(n)) }

// pval formats a p-value with two significant digits.
func pval(p float64) string {
	switch {
	case math.IsNaN(p):
		return "—"
	case p < 0.0001:
		return "<0.0001"
	case p >= 0.995:
		return "1"
	default:
		return strconv.FormatFloat(p, 'g', 2, 64)
	}
}

// FormatValue formats a metric's value in its unit: "79.0%", "$0.0012",
// "820 ms".
func FormatValue(metric string, x float64) string {
	switch metric {
	case spec.GateCostPerCase:
		return usd(x)
	case spec.GateLatencyP95:
		return ms(x)
	}
	return pct(x)
}

// FormatAmount formats the size of a difference (or a threshold), without
// a sign, in the metric's unit: points for rates ("5.0 pts").
func FormatAmount(metric string, x float64) string {
	switch metric {
	case spec.GateCostPerCase:
		return usd(x)
	case spec.GateLatencyP95:
		return ms(x)
	}
	if math.IsNaN(x) {
		return "—"
	}
	return ptsAbs(x)
}

// FormatDelta formats a difference with its sign (a true minus): "−3.0 pts".
func FormatDelta(metric string, d float64) string {
	return signed(d, func(x float64) string { return FormatAmount(metric, x) })
}

// FormatInterval formats an interval of a difference ("[−3.1, +1.2] pts")
// or of a value ("[75.1%, 83.0%]").
func FormatInterval(metric string, ci [2]Num, ofDelta bool) string {
	lo, hi := float64(ci[0]), float64(ci[1])
	if math.IsNaN(lo) || math.IsNaN(hi) {
		return "—"
	}
	if !ofDelta {
		return "[" + FormatValue(metric, lo) + ", " + FormatValue(metric, hi) + "]"
	}
	if metric == "rate" || metric == spec.GateLoudRate {
		f := func(x float64) string {
			return signed(x, func(a float64) string { return strconv.FormatFloat(100*a, 'f', 1, 64) })
		}
		return "[" + f(lo) + ", " + f(hi) + "] pts"
	}
	return "[" + FormatDelta(metric, lo) + ", " + FormatDelta(metric, hi) + "]"
}

func level(alpha float64) string {
	return strconv.FormatFloat(100*(1-alpha), 'f', -1, 64) + "%"
}

func testName(t string) string {
	switch t {
	case "mcnemar_exact":
		return "McNemar exact"
	case "paired_t":
		return "paired t"
	case "paired_bootstrap":
		return "paired bootstrap"
	}
	return t
}

// what names the check's metric in words.
func what(ch Check) string {
	var s string
	switch ch.Metric {
	case spec.GateCostPerCase:
		s = "cost per case"
	case spec.GateLatencyP95:
		s = "p95 latency"
	case spec.GateLoudRate:
		s = "loud-failure rate"
	default:
		s = ch.Scorer
	}
	if ch.Slice != "" {
		s += " on " + ch.Slice
	}
	return s
}

// reason says in one line why a check has its verdict.
func reason(ch Check, c spec.GateCheck, o Options) string {
	w := what(ch)
	if ch.N == 0 || math.IsNaN(float64(ch.Candidate)) {
		return fmt.Sprintf("%s: no case with results in both runs to measure it on; nothing to decide", w)
	}
	lv := level(o.Alpha)
	m := ch.Metric
	if ch.Kind != "worsening" {
		ok, out := "at or above the floor", "below the floor"
		if ch.Kind == "ceiling" {
			ok, out = "at or below the ceiling", "above the ceiling"
		}
		head := fmt.Sprintf("%s is %s (%s CI %s, n = %s)", w, FormatValue(m, float64(ch.Candidate)), lv, FormatInterval(m, ch.CI, false), count(ch.N))
		bound := FormatValue(m, float64(ch.Threshold))
		switch {
		case ch.Verdict == Pass:
			return fmt.Sprintf("%s: %s of %s", head, ok, bound)
		case ch.Verdict == Fail && o.Strict:
			return fmt.Sprintf("%s: %s of %s (--strict decides on the point estimate)", head, out, bound)
		case ch.Verdict == Fail:
			return fmt.Sprintf("%s: %s of %s, and so is the whole interval", head, out, bound)
		default:
			return fmt.Sprintf("%s: %s of %s, but the interval reaches it, so the data cannot confirm it; passes (--strict would fail it)", head, out, bound)
		}
	}
	move := "drop"
	if !c.HigherIsBetter() {
		move = "rise"
	}
	allowed := FormatAmount(m, float64(ch.Threshold)) + " allowed"
	if c.Worse.Relative {
		allowed += fmt.Sprintf(" (%s of %s)", strconv.FormatFloat(100*c.Worse.Amount, 'f', -1, 64)+"%", FormatValue(m, float64(ch.Baseline)))
	}
	head := fmt.Sprintf("%s %s → %s (%s", w, FormatValue(m, float64(ch.Baseline)), FormatValue(m, float64(ch.Candidate)), FormatDelta(m, float64(ch.Delta)))
	stat := fmt.Sprintf("%s CI %s", lv, FormatInterval(m, ch.CI, true))
	if ch.Test != "" {
		stat += fmt.Sprintf(", %s p %s", testName(ch.Test), pEq(float64(ch.PValue)))
	}
	stat += ", n = " + count(ch.N)
	switch {
	case ch.Verdict == Pass:
		return fmt.Sprintf("%s, %s): within the %s", head, stat, allowed)
	case ch.Verdict == Fail && o.Strict:
		return fmt.Sprintf("%s, %s): more than the %s (--strict decides on the point estimate)", head, stat, allowed)
	case ch.Verdict == Fail:
		return fmt.Sprintf("%s, %s): a confirmed %s, more than the %s", head, stat, move, allowed)
	default:
		return fmt.Sprintf("%s, %s): more than the %s, but the data cannot confirm a %s (the interval includes no change, or p ≥ %s); passes (--strict would fail it)",
			head, stat, allowed, move, strconv.FormatFloat(o.Alpha, 'f', -1, 64))
	}
}

func pEq(p float64) string {
	s := pval(p)
	if strings.HasPrefix(s, "<") {
		return "< " + s[1:]
	}
	return "= " + s
}
