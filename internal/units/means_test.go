package units

import (
	"fmt"
	"math"
	"testing"
)

// The tool-call section's forms, against the fmt verbs they stand for.
func TestMeanForms(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{PerCase(1.845), fmt.Sprintf("%.2f", 1.845)}, {PerCase(0), "0.00"}, {PerCase(12), "12.00"}, {PerCase(math.NaN()), Missing},
		{SignedPerCase(0.25), fmt.Sprintf("%+.2f", 0.25)}, {SignedPerCase(-1.1), fmt.Sprintf("%+.2f", -1.1)}, {SignedPerCase(0), "+0.00"},
		{SignedPerCase(math.Inf(1)), Missing},
		{SignedUSD(0.0012), "+$0.0012"}, {SignedUSD(-0.5), "−$0.50"}, {SignedUSD(0), "$0"}, {SignedUSD(1e-15), "$0"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
