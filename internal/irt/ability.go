package irt

import (
	"encoding/binary"
	"math"
)

// The grids abilities are integrated on: one shared grid over [−10, 10]
// (its items' probabilities computed once), and each person's own grid around
// its mode when the shared one is too coarse for a narrow posterior.
const (
	sharedGrid  = 801 // spacing 0.025
	sharedLimit = 10.0
	abilityGrid = 161
)

// abilities returns each person's EAP ability, posterior SD and equal-tailed
// posterior interval at the fitted item parameters, under the N(0,1) ability
// distribution the fit assumes. The posterior is integrated on a fine grid
// (trapezoid rule, cumulative sums corrected by Euler–Maclaurin for the
// quantiles), not on the fit's quadrature nodes: a shared grid of spacing
// 0.025 when the posterior SD is at least ten spacings, else a grid of the
// person's own around its mode out to where the density falls by e^−30, so
// that a target that answered a thousand cases, whose posterior is far
// narrower than the nodes' spacing, still gets a sound mean, SD and interval.
func (f *fitter) abilities() []Person {
	out := make([]Person, len(f.persons))
	tail := (1 - f.o.Level) / 2
	// The shared grid pays when many persons use it; a handful of targets,
	// each with a narrow posterior, would not.
	var sh *postGrid
	if len(f.persons) >= 20 {
		sh = f.newSharedGrid()
	}
	own := &postGrid{theta: make([]float64, abilityGrid), logd: make([]float64, abilityGrid), grad: make([]float64, abilityGrid)}
	seen := map[string]Person{} // by response pattern
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
			per.Theta, per.SE, per.Lo, per.Hi = v.Theta, v.SE, v.Lo, v.Hi
			out[p] = per
			continue
		}
		var mean, sd, lo, hi float64
		ok := false
		if sh != nil {
			sh.fill(f, rs)
			mean, sd, lo, hi, ok = sh.summarise(tail)
			ok = ok && sd >= 10*(sh.theta[1]-sh.theta[0])
		}
		if !ok {
			f.ownGrid(own, rs)
			mean, sd, lo, hi, _ = own.summarise(tail)
		}
		per.Theta, per.SE, per.Lo, per.Hi = mean, sd, lo, hi
		seen[string(key)] = per
		out[p] = per
	}
	return out
}

// postGrid is a log posterior density (up to a constant) and its derivative
// on an evenly spaced grid.
type postGrid struct {
	theta, logd, grad []float64
	// per item on the shared grid: log P, log(1−P), a·P (nil for an own grid)
	lp, lq, ap [][]float64
}

func (f *fitter) newSharedGrid() *postGrid {
	g := &postGrid{theta: make([]float64, sharedGrid), logd: make([]float64, sharedGrid), grad: make([]float64, sharedGrid)}
	for k := range g.theta {
		g.theta[k] = -sharedLimit + 2*sharedLimit*float64(k)/float64(sharedGrid-1)
	}
	g.lp = make([][]float64, f.nI)
	g.lq = make([][]float64, f.nI)
	g.ap = make([][]float64, f.nI)
	for i := range f.nI {
		if !f.fitted[i] {
			continue
		}
		a := math.Exp(f.alphaOf(i))
		g.lp[i] = make([]float64, sharedGrid)
		g.lq[i] = make([]float64, sharedGrid)
		g.ap[i] = make([]float64, sharedGrid)
		for k, t := range g.theta {
			var pr float64
			g.lp[i][k], g.lq[i][k], pr = logPP(a * (t - f.b[i]))
			g.ap[i][k] = a * pr
		}
	}
	return g
}

// fill computes a person's log posterior and its derivative on the shared grid.
func (g *postGrid) fill(f *fitter, rs []response) {
	for k, t := range g.theta {
		g.logd[k], g.grad[k] = -t*t/2, -t
	}
	for _, r := range rs {
		if !f.fitted[r.item] {
			continue
		}
		a := math.Exp(f.alphaOf(r.item))
		lp, lq, ap := g.lp[r.item], g.lq[r.item], g.ap[r.item]
		wrong := r.trials - r.right
		for k := range g.theta {
			g.logd[k] += r.right*lp[k] + wrong*lq[k]
			g.grad[k] += a*r.right - r.trials*ap[k]
		}
	}
}

// logPost is a person's log posterior density at t (up to a constant) with
// its first two derivatives.
func (f *fitter) logPost(rs []response, t float64) (v, g, h float64) {
	v, g, h = -t*t/2, -t, -1
	for _, r := range rs {
		if !f.fitted[r.item] {
			continue
		}
		a := math.Exp(f.alphaOf(r.item))
		lp, lq, pr := logPP(a * (t - f.b[r.item]))
		v += r.right*lp + (r.trials-r.right)*lq
		g += a * (r.right - r.trials*pr)
		h -= a * a * r.trials * pr * (1 - pr)
	}
	return v, g, h
}

// ownGrid fills g with a person's log posterior on a grid around its mode.
func (f *fitter) ownGrid(g *postGrid, rs []response) {
	// The mode: Newton inside a bracket of the gradient's root, bisecting
	// when a step leaves it (the log posterior is concave, but steep items
	// make it nearly a step function).
	lo, hi := -1.0, 1.0
	for _, g0, _ := f.logPost(rs, lo); g0 < 0 && lo > -60; _, g0, _ = f.logPost(rs, lo) {
		lo *= 2
	}
	for _, g1, _ := f.logPost(rs, hi); g1 > 0 && hi < 60; _, g1, _ = f.logPost(rs, hi) {
		hi *= 2
	}
	mode := (lo + hi) / 2
	for range 200 {
		_, gr, h := f.logPost(rs, mode)
		if gr > 0 {
			lo = mode
		} else {
			hi = mode
		}
		next := mode - gr/h
		if !(next > lo && next < hi) {
			next = (lo + hi) / 2
		}
		if math.Abs(next-mode) < 1e-12 || hi-lo < 1e-12 {
			break
		}
		mode = next
	}
	top, _, h := f.logPost(rs, mode)
	// The grid reaches where the density has fallen by e^−30 on each side
	// (the mass beyond, below 1e−13 of the whole): from 1/√(−h) outwards,
	// doubling, then bisecting.
	edge := func(dir float64) float64 {
		in, out := 0.0, 1/math.Sqrt(-h)
		for range 60 {
			if v, _, _ := f.logPost(rs, mode+dir*out); v < top-30 || out > 40 {
				break
			}
			in, out = out, out*2
		}
		for range 10 { // to 1/1024 of the last doubling: enough for a grid's end
			mid := (in + out) / 2
			if v, _, _ := f.logPost(rs, mode+dir*mid); v < top-30 {
				out = mid
			} else {
				in = mid
			}
		}
		return mode + dir*out
	}
	left, right := edge(-1), edge(1)
	for k := range g.theta {
		g.theta[k] = left + (right-left)*float64(k)/float64(len(g.theta)-1)
		g.logd[k], g.grad[k], _ = f.logPost(rs, g.theta[k])
	}
}

// summarise returns the posterior's mean, SD and equal-tailed interval
// leaving tail on each side; ok is false when the density at the grid's ends
// is not negligible (e^−30 of its top).
func (g *postGrid) summarise(tail float64) (mean, sd, lo, hi float64, ok bool) {
	n := len(g.theta)
	mx := math.Inf(-1)
	for _, v := range g.logd {
		mx = math.Max(mx, v)
	}
	ok = g.logd[0] < mx-30 && g.logd[n-1] < mx-30
	step := g.theta[1] - g.theta[0]
	dens := make([]float64, n)
	cum := make([]float64, n)
	var total, m2 float64
	for k := range dens {
		dens[k] = math.Exp(g.logd[k] - mx)
		w := step
		if k == 0 || k == n-1 {
			w /= 2
		}
		total += w * dens[k]
		mean += w * dens[k] * g.theta[k]
		m2 += w * dens[k] * g.theta[k] * g.theta[k]
		if k > 0 {
			cum[k] = cum[k-1] + (dens[k]+dens[k-1])/2*step
		}
	}
	mean /= total
	m2 /= total
	// Euler–Maclaurin's end correction makes the cumulative trapezoid sums
	// accurate to O(step⁴): − step²/12 (f′(t) − f′(t₀)), f′ = f·(log f)′.
	// (The sums of t·f and t²·f need none: the density vanishes at both ends.)
	for k := 1; k < n; k++ {
		cum[k] -= step * step / 12 * (dens[k]*g.grad[k] - dens[0]*g.grad[0])
	}
	total = cum[n-1]
	sd = math.Sqrt(math.Max(m2-mean*mean, 0))
	lo = quantile(g.theta, dens, cum, tail*total)
	hi = quantile(g.theta, dens, cum, (1-tail)*total)
	return mean, sd, lo, hi, ok
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
