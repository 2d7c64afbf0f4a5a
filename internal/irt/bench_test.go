package irt

import (
	"fmt"
	"testing"
)

// BenchmarkEstimate times whole fits (EM, standard errors, abilities) of the
// two shapes assay meets: a benchmark's cases answered by a few targets
// (1,319 items × 4 persons, GSM8K's test set, 2PL with the default prior) and
// a classic test (2,000 persons × 20 items, 2PL and Rasch without a prior).
// Figures: bench/RESULTS.md, "IRT fit".
func BenchmarkEstimate(b *testing.B) {
	for _, c := range []struct {
		persons, items int
		o              Options
	}{
		{4, 1319, Options{Model: TwoPL, PriorSD: -1}},
		{4, 1319, Options{Model: Rasch, PriorSD: -1}},
		{2000, 20, Options{Model: TwoPL}},
		{2000, 20, Options{Model: Rasch}},
	} {
		a, bb := itemParams(5, c.items, false)
		d, _ := simulate(5, c.persons, c.items, 1, a, bb)
		b.Run(fmt.Sprintf("%dx%d/%s", c.items, c.persons, c.o.Model), func(b *testing.B) {
			var f *Fit
			for b.Loop() {
				var err error
				if f, err = Estimate(d, c.o); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(f.Iterations), "iterations")
			if !f.Converged {
				b.Errorf("not converged: %v", f.Warnings)
			}
		})
	}
}
