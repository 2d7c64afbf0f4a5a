package irt

import (
	"encoding/binary"
	"math"
)

// abilityGrid is the number of points of each person's own grid.
const abilityGrid = 161

// abilities returns each person's EAP ability, posterior SD and equal-tailed
// posterior interval at the fitted item parameters, under the N(0,1)
// ability distribution the fit assumes. The posterior is integrated on a grid
// of its own around its mode (±10 Laplace SDs), not on the fit's quadrature
// nodes, so that a person who answered many items, whose posterior is far
// narrower than the nodes' spacing, still gets a sound mean, SD and interval.
func (f *fitter) abilities() []Person {
	out := make([]Person, len(f.persons))
	tail := (1 - f.o.Level) / 2
	grid := make([]float64, abilityGrid)
	logd := make([]float64, abilityGrid)
	grad := make([]float64, abilityGrid)
	type posterior struct{ theta, se, lo, hi float64 }
	seen := map[string]posterior{} // by response pattern
	var key []byte
	for p, rs := range f.persons {
		per := Person{ID: f.d.Persons[p]}
		key = key[:0]
		for _, r := range rs {
			per.Right += int(r.right)
			per.Trials += int(r.trials)
			if f.fitted[r.item] {
				key = binary.AppendUvarint(key, uint64(r.item))
				key = binary.AppendUvarint(key, uint64(r.right))
				key = binary.AppendUvarint(key, uint64(r.trials))
			}
		}
		if v, ok := seen[string(key)]; ok {
			per.Theta, per.SE, per.Lo, per.Hi = v.theta, v.se, v.lo, v.hi
			out[p] = per
			continue
		}
		logPost := func(t float64) (v, g, h float64) {
			v, g, h = -t*t/2, -t, -1
			for _, r := range rs {
				if !f.fitted[r.item] {
					continue
				}
				a := math.Exp(f.alphaOf(r.item))
				eta := a * (t - f.b[r.item])
				lp, lq, pr := logPP(eta)
				v += r.right*lp + (r.trials-r.right)*lq
				g += a * (r.right - r.trials*pr)
				h -= a * a * r.trials * pr * (1 - pr)
			}
			return v, g, h
		}
		// The mode by damped Newton (the log posterior is concave).
		mode := 0.0
		for range 100 {
			_, g, h := logPost(mode)
			step := clamp(-g/h, -1, 1)
			mode += step
			if math.Abs(step) < 1e-10 {
				break
			}
		}
		_, _, h := logPost(mode)
		width := 10 / math.Sqrt(-h)
		mx := math.Inf(-1)
		for k := range grid {
			grid[k] = mode - width + 2*width*float64(k)/float64(abilityGrid-1)
			logd[k], grad[k], _ = logPost(grid[k])
			mx = math.Max(mx, logd[k])
		}
		// The trapezoid rule on the grid (the density is negligible at its ends,
		// so the sums of t·f and t²·f are as good as Euler–Maclaurin makes them).
		dens := make([]float64, abilityGrid)
		for k := range dens {
			dens[k] = math.Exp(logd[k] - mx)
		}
		step := grid[1] - grid[0]
		cum := make([]float64, abilityGrid)
		var total, mean, m2 float64
		for k := range dens {
			w := step
			if k == 0 || k == abilityGrid-1 {
				w /= 2
			}
			total += w * dens[k]
			mean += w * dens[k] * grid[k]
			m2 += w * dens[k] * grid[k] * grid[k]
			if k > 0 {
				cum[k] = cum[k-1] + (dens[k]+dens[k-1])/2*step
			}
		}
		// Euler–Maclaurin's end correction makes the cumulative trapezoid
		// sums accurate to O(step⁴): − step²/12 (f′(t) − f′(t₀)), f′ = f·(log f)′.
		for k := 1; k < abilityGrid; k++ {
			cum[k] -= step * step / 12 * (dens[k]*grad[k] - dens[0]*grad[0])
		}
		mean /= total
		m2 /= total
		total = cum[abilityGrid-1]
		per.Theta = mean
		per.SE = math.Sqrt(math.Max(m2-mean*mean, 0))
		per.Lo = quantile(grid, dens, cum, tail*total)
		per.Hi = quantile(grid, dens, cum, (1-tail)*total)
		seen[string(key)] = posterior{per.Theta, per.SE, per.Lo, per.Hi}
		out[p] = per
	}
	return out
}

// quantile finds where the cumulative trapezoid integral reaches target,
// solving within the segment for a linearly varying density.
func quantile(grid, dens, cum []float64, target float64) float64 {
	for k := 1; k < len(grid); k++ {
		if cum[k] < target {
			continue
		}
		h := grid[k] - grid[k-1]
		d0, d1 := dens[k-1], dens[k]
		need := target - cum[k-1] // area still needed in this segment
		// area(x) = d0·x + (d1−d0)x²/(2h), x in [0,h]
		s := (d1 - d0) / h
		var x float64
		if math.Abs(s) < 1e-300 || math.Abs(s*h) < 1e-12*math.Max(d0, d1) {
			x = need / d0
		} else {
			x = (-d0 + math.Sqrt(math.Max(d0*d0+2*s*need, 0))) / s
		}
		return grid[k-1] + clamp(x, 0, h)
	}
	return grid[len(grid)-1]
}
