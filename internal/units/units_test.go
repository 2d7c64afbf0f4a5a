package units

import (
	"fmt"
	"math"
	"testing"
)

func TestFormats(t *testing.T) {
	nan := math.NaN()
	for _, c := range []struct{ got, want string }{
		{Pct(0.755), "75.5%"}, {Pct(1), "100.0%"}, {Pct(nan), "—"},
		{USD(0.0000753), "$0.0000753"}, {USD(0.0151), "$0.0151"}, {USD(0.5), "$0.50"},
		{USD(15.06), "$15.06"}, {USD(151.4), "$151"}, {USD(12345), "$12,345"},
		{USD(0), "$0"}, {USD(-6.19e-21), "−$0"}, {USD(-0.0012), "−$0.0012"}, {USD(math.Inf(1)), "—"},
		{MS(2140), "2,140 ms"}, {MS(820.4), "820 ms"}, {MS(4.24), "4.2 ms"}, {MS(0.042), "0.042 ms"},
		{MS(0), "0.0 ms"}, {MS(-12), "−12 ms"}, {MS(nan), "—"},
		{Thousands(1234567), "1,234,567"}, {Thousands(-1234), "-1,234"}, {Thousands(999), "999"}, {Count(1000), "1,000"},
		{PValue(0.00001), "<0.0001"}, {PValue(0.0123), "0.012"}, {PValue(0.999), "1"}, {PValue(nan), "—"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

// The plan's forms, each against the fmt verb the plan wrote them with
// before they moved here (their output is locked by the plan's tests).
func TestPlanForms(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{Num(3), "3"}, {Num(2.54), "2.5"}, {Num(0.042), "0.042"}, {Num(0), "0"}, {Num(-8.33), "-8.3"}, {Num(0.00001), "1e-05"},
		{Points(0.03), "3 points"}, {Points(0.0004), "0.04 points"},
		{SignedPoints(0.269), "+26.9"}, {SignedPoints(-0.083), "-8.3"}, {SignedPoints(0), "0"},
		{PctShort(0.8), "80%"}, {PctShort(0.423), "42.3%"}, {PctShort(0.99999), "99.999%"}, {PctShort(1), "100%"},
		{GivenPct(0.999999), "99.9999%"}, {GivenPct(0.05), "5%"}, {GivenPoints(0.03), "3 points"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
	for _, c := range []struct{ x, want float64 }{{0.05 / 3, 0.01667}, {0.025, 0.025}, {0, 0}, {123456, 123500}} {
		if got := RoundSig(c.x); got != c.want {
			t.Errorf("RoundSig(%v) = %v, want %v", c.x, got, c.want)
		}
	}
}

// The integrity reports' forms, against the fmt verbs they replaced.
func TestReportForms(t *testing.T) {
	nan := math.NaN()
	for _, c := range []struct{ got, want string }{
		{PctWhole(0.9), fmt.Sprintf("%.0f%%", 90.0)}, {PctWhole(1.0 / 3), "33%"},
		{SignedPts(0.737), "+73.7"}, {SignedPts(-0.082), "-8.2"}, {SignedPts(0), "+0.0"}, {SignedPts(-0.0004), fmt.Sprintf("%+.1f", -0.04)},
		{SignedPts(math.Inf(1)), fmt.Sprintf("%+.1f", math.Inf(1))},
		{Plain(5), "5"}, {Plain(0.05), "0.05"}, {Plain(1e-7), "0.0000001"},
		{Seconds(1254), "1.25s"}, {Seconds(3), "0.00s"},
		{Pts(0.184), fmt.Sprintf("%.1f", 18.4)}, {Pts(0), "0.0"}, {Pts(0.18449), fmt.Sprintf("%.1f", 100*0.18449)},
		{PtsWhole(0.123), fmt.Sprint(int(math.Round(12.3)))}, {PtsWhole(0.125), "13"}, {PtsWhole(0.0049), "0"}, {PtsWhole(0.31), "31"},
		{Given(12442), "12442"}, {Given(1.5), "1.5"}, {Given(1.0 / 3), "0.333333"}, {Given(1234567), "1234570"}, {Given(-2.5e-7), "-0.00000025"},
		{USDCell(0.01512), fmt.Sprintf("%.4f", 0.01512)}, {USDCell(-6e-21), fmt.Sprintf("%.4f", -6e-21)}, {USDCell(12.34567), "12.3457"},
		{WholeCI(0.615, 0.8149), fmt.Sprintf("[%.0f, %.0f]", 100*0.615, 100*0.8149)}, {WholeCI(0, 1), "[0, 100]"},
		{SignedPtsWhole(0.123), fmt.Sprintf("%+.0f", 12.3)}, {SignedPtsWhole(-0.031), fmt.Sprintf("%+.0f", -3.1)}, {SignedPtsWhole(0), fmt.Sprintf("%+.0f", 0.0)},
		{SignedPtsWhole(-0.001), fmt.Sprintf("%+.0f", -0.1)}, {SignedPtsWhole(nan), fmt.Sprintf("%+.0f", nan)},
		{Z(1.8749), fmt.Sprintf("%.2f", 1.8749)}, {Z(0), "0.00"},
		{Plain(0.05), fmt.Sprintf("%g", 0.05)}, {Plain(0.0001), fmt.Sprintf("%g", 0.0001)},
		{Ratio(0.931), fmt.Sprintf("%.2f", 0.931)}, {Ratio(1), "1.00"}, {Ratio(0.875), fmt.Sprintf("%.2f", 0.875)}, {Ratio(nan), "—"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

// The forms the report wrote with its own helpers (ciPct, pts, pfmt,
// msCell, the chart ticks) before they moved here; their output is locked
// by the report's goldens.
func TestTableForms(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{PctCI([2]float64{0.6910, 0.8094}), "[69.1, 80.9]"},
		{Delta(0.085), "+8.5"}, {Delta(-0.03), "−3.0"}, {Delta(0), "0.0"}, {Delta(-0.0001), "0.0"},
		{DeltaCI([2]float64{0.028, 0.142}), "[+2.8, +14.2]"},
		{PValueCell(0.00004), "<0.0001"}, {PValueCell(0.0123), fmt.Sprintf("%.4f", 0.0123)}, {PValueCell(1), "1.0000"},
		{MSCell(0), "0"}, {MSCell(0.086), "0.086"}, {MSCell(0.2), "0.20"}, {MSCell(0.0004), "<0.001"}, {MSCell(9.96), "10"}, {MSCell(2140), "2140"},
		{PlainPct(1 - 0.05), "95%"}, {PlainPct(0.995), "99.5%"},
		{PctTick(0.4), "40%"}, {PctTick(0.125), "12.5%"}, {PtsTick(20), "+20"}, {PtsTick(-0.01), "0"}, {PtsTick(-7.5), "−7.5"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
