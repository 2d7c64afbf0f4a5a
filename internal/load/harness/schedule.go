package harness

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/assay-eval/assay/internal/load"
)

// Schedule is an open loop's arrival times over a span, from its start:
// a Poisson process of the given rate (exponential gaps, drawn from a
// generator seeded with seed) or, for ArrivalsUniform, one request every
// 1/rate (load.ArrivalsUniform). The first arrival is at 0 for uniform arrivals and after one
// gap for Poisson ones.
func Schedule(arrivals string, rate float64, span time.Duration, seed uint64) ([]time.Duration, error) {
	if !(rate > 0) {
		return nil, fmt.Errorf("rate %g: must be above 0", rate)
	}
	gap := float64(time.Second) / rate
	var out []time.Duration
	switch arrivals {
	case load.ArrivalsUniform:
		for i := 0; ; i++ {
			at := time.Duration(float64(i) * gap)
			if at >= span {
				return out, nil
			}
			out = append(out, at)
		}
	case load.ArrivalsPoisson, "":
		rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
		t := 0.0
		for {
			t += rng.ExpFloat64() * gap
			if t >= float64(span) {
				return out, nil
			}
			out = append(out, time.Duration(t))
		}
	}
	return nil, fmt.Errorf("arrivals %q: want %s or %s", arrivals, load.ArrivalsPoisson, load.ArrivalsUniform)
}
