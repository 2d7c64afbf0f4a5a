package gate

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/assay-eval/assay/internal/spec"
	"github.com/assay-eval/assay/internal/units"
)

// Number formats of the checks' reasons, as the decision report writes
// them: rates as percentages with one decimal, differences of rates in
// points with a true minus sign, dollars at any scale, milliseconds with
// separators — the units package's, which the report uses too. FormatValue,
// FormatAmount, FormatDelta and FormatInterval are exported so that a
// rendering of a Result (the report package) shows its numbers exactly as
// its reasons do.

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

// FormatValue formats a metric's value in its unit: "79.0%", "$0.0012",
// "820 ms".
func FormatValue(metric string, x float64) string {
	switch metric {
	case spec.GateCostPerCase:
		return units.USD(x)
	case spec.GateLatencyP95:
		return units.MS(x)
	}
	return units.Pct(x)
}

// FormatAmount formats the size of a difference (or a threshold), without
// a sign, in the metric's unit: points for rates ("5.0 pts").
func FormatAmount(metric string, x float64) string {
	switch metric {
	case spec.GateCostPerCase:
		return units.USD(x)
	case spec.GateLatencyP95:
		return units.MS(x)
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
		head := fmt.Sprintf("%s is %s (%s CI %s, n = %s)", w, FormatValue(m, float64(ch.Candidate)), lv, FormatInterval(m, ch.CI, false), units.Count(ch.N))
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
	stat += ", n = " + units.Count(ch.N)
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
	s := units.PValue(p)
	if strings.HasPrefix(s, "<") {
		return "< " + s[1:]
	}
	return "= " + s
}
