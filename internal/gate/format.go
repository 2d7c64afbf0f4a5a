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
	case spec.GateLatencyP95, spec.GateTTFTP95:
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
	case spec.GateLatencyP95, spec.GateTTFTP95:
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

// what names the check's metric in words.
func what(ch Check) string {
	var s string
	switch ch.Metric {
	case spec.GateCostPerCase:
		s = "cost per case"
	case spec.GateLatencyP95:
		s = "p95 latency"
	case spec.GateTTFTP95:
		s = "p95 time to first token"
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

// reason says in one line why a check has its verdict: the one-sided bound
// that decided (or the two that could not), the limit, and for a failure
// the p-value after Holm over the run's checks.
func reason(ch Check, c spec.GateCheck, o Options, family int) string {
	w := what(ch)
	switch {
	case ch.note != "" && ch.Verdict == Fail && o.Strict && ch.N > 0 && !strings.HasPrefix(ch.note, "the candidate has no"):
		return ch.note + "; --strict fails what the data cannot show to be within the limit"
	case ch.note != "" && ch.Verdict == Inconclusive && ch.N > 0:
		return ch.note + "; passes (--strict would fail it)"
	case ch.note != "":
		return ch.note
	case ch.N == 0 || math.IsNaN(float64(ch.Candidate)):
		return fmt.Sprintf("%s: no case with results in both runs to measure it on; nothing to decide", w)
	}
	lv := oneSidedLevel(o.Alpha)
	m := ch.Metric
	lo, hi := float64(ch.Bounds[0]), float64(ch.Bounds[1])
	n := "n = " + units.Count(ch.N)
	if ch.Clusters > 0 {
		n += " in " + units.Count(ch.Clusters) + " clusters"
	}
	fails := failClause(ch, o, family)
	if ch.Kind != "worsening" {
		floor := ch.Kind == "floor"
		name, good, bad := "ceiling", "below", "above"
		if floor {
			name, good, bad = "floor", "above", "below"
		}
		limit := fmt.Sprintf("the %s of %s", name, FormatValue(m, float64(ch.Threshold)))
		head := fmt.Sprintf("%s is %s (%s)", w, FormatValue(m, float64(ch.Candidate)), n)
		// The bound on the bad side (the floor's lower one) shows it is
		// within; the one on the good side shows it is beyond.
		within, beyond := "at least "+FormatValue(m, lo), "at most "+FormatValue(m, hi)
		if !floor {
			within, beyond = "at most "+FormatValue(m, hi), "at least "+FormatValue(m, lo)
		}
		switch ch.Verdict {
		case Pass:
			return fmt.Sprintf("%s: %s (%s bound), %s %s", head, within, lv, good, limit)
		case Fail:
			if !(float64(ch.PFailAdjusted) < o.Alpha) {
				return fmt.Sprintf("%s: between %s and %s (%s bounds), so the data cannot show it is %s %s; --strict fails it",
					head, FormatValue(m, lo), FormatValue(m, hi), lv, good, limit)
			}
			return fmt.Sprintf("%s: %s (%s bound), %s %s; %s", head, beyond, lv, bad, limit, fails)
		}
		if float64(ch.PFail) < o.Alpha {
			return fmt.Sprintf("%s: %s (%s bound), %s %s on its own (one-sided p %s), but not after Holm over the run's %d checks (%s ≥ %s); passes (--strict would fail it)",
				head, beyond, lv, bad, limit, pEq(float64(ch.PFail)), family, units.PValue(float64(ch.PFailAdjusted)), strconv.FormatFloat(o.Alpha, 'f', -1, 64))
		}
		return fmt.Sprintf("%s: between %s and %s (%s bounds), so the data cannot tell whether it is %s %s; passes (--strict would fail it)",
			head, FormatValue(m, lo), FormatValue(m, hi), lv, good, limit)
	}
	move := "drop"
	if !c.HigherIsBetter() {
		move = "rise"
	}
	allowed := FormatAmount(m, float64(ch.Threshold)) + " allowed"
	if c.Worse.Relative {
		allowed += fmt.Sprintf(" (%s of %s)", strconv.FormatFloat(100*c.Worse.Amount, 'f', -1, 64)+"%", FormatValue(m, float64(ch.Baseline)))
	}
	head := fmt.Sprintf("%s %s → %s (%s, %s)", w, FormatValue(m, float64(ch.Baseline)), FormatValue(m, float64(ch.Candidate)), FormatDelta(m, float64(ch.Delta)), n)
	// The worsening's bounds: of −Δ when higher is better.
	wlo, whi := lo, hi
	if c.HigherIsBetter() {
		wlo, whi = -hi, -lo
	}
	atMost := worseBound(m, move, whi, "at most")
	atLeast := worseBound(m, move, wlo, "at least")
	switch ch.Verdict {
	case Pass:
		return fmt.Sprintf("%s: %s (%s bound), within the %s", head, atMost, lv, allowed)
	case Fail:
		if !(float64(ch.PFailAdjusted) < o.Alpha) {
			return fmt.Sprintf("%s: the %s could be up to %s (%s bound), so the data cannot show it is within the %s; --strict fails it",
				head, move, FormatAmount(m, whi), lv, allowed)
		}
		return fmt.Sprintf("%s: %s (%s bound), more than the %s; %s", head, atLeast, lv, allowed, fails)
	}
	if float64(ch.PFail) < o.Alpha {
		return fmt.Sprintf("%s: %s (%s bound), more than the %s on its own (one-sided p %s), but not after Holm over the run's %d checks (%s ≥ %s); passes (--strict would fail it)",
			head, atLeast, lv, allowed, pEq(float64(ch.PFail)), family, units.PValue(float64(ch.PFailAdjusted)), strconv.FormatFloat(o.Alpha, 'f', -1, 64))
	}
	return fmt.Sprintf("%s: the %s lies between %s and %s (%s bounds), so the data cannot tell whether it is within the %s; passes (--strict would fail it)",
		head, move, signedAmount(m, wlo), signedAmount(m, whi), lv, allowed)
}

// worseBound writes a bound of the worsening: "a drop of at most 2.1 pts",
// or, when the bound is no worsening at all, "no drop (at least a 1.0 pts
// rise)".
func worseBound(metric, move string, x float64, side string) string {
	other := "rise"
	if move == "rise" {
		other = "drop"
	}
	if side == "at most" && x < 0 {
		return fmt.Sprintf("no %s (at least a %s of %s)", move, other, FormatAmount(metric, -x))
	}
	return fmt.Sprintf("a %s of %s %s", move, side, FormatAmount(metric, x))
}

// signedAmount writes a bound of the worsening that may be negative (an
// improvement) with a true minus.
func signedAmount(metric string, x float64) string {
	if x < 0 {
		return "−" + FormatAmount(metric, -x)
	}
	return FormatAmount(metric, x)
}

// failClause is the evidence of a failure: the one-sided p-value and the
// same after Holm over the run's checks.
func failClause(ch Check, o Options, family int) string {
	a := strconv.FormatFloat(o.Alpha, 'f', -1, 64)
	if family <= 1 {
		return fmt.Sprintf("one-sided p %s < %s", pEq(float64(ch.PFail)), a)
	}
	return fmt.Sprintf("one-sided p %s, %s after Holm over the run's %d checks < %s", pEq(float64(ch.PFail)), units.PValue(float64(ch.PFailAdjusted)), family, a)
}

// oneSidedLevel names a one-sided bound's confidence: "one-sided 95%
// bound".
func oneSidedLevel(alpha float64) string {
	return "one-sided " + level(alpha)
}

func pEq(p float64) string {
	s := units.PValue(p)
	if strings.HasPrefix(s, "<") {
		return "< " + s[1:]
	}
	return "= " + s
}

// clip quotes a value for a message, shortened.
func clip(s string) string {
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return strconv.Quote(s)
}
