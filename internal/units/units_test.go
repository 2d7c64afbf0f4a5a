package units

import (
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
