package irt

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// Prob is P(right | θ) = 1 / (1 + exp(−a(θ − b))) for an item of
// discrimination a and difficulty b.
func Prob(a, b, theta float64) float64 {
	lp, _ := logP(a * (theta - b))
	return math.Exp(lp)
}

// ItemInfo is item i's Fisher information about θ from one response,
// a²P(1−P); 0 for an extreme item left out of the fit.
func (f *Fit) ItemInfo(i int, theta float64) float64 {
	it := f.Items[i]
	if math.IsInf(it.B, 0) || math.IsNaN(it.B) {
		return 0
	}
	p := Prob(it.A, it.B, theta)
	return it.A * it.A * p * (1 - p)
}

// TestInfo is the sum of the items' information at theta: what one response
// to every item tells about an ability there.
func (f *Fit) TestInfo(theta float64) float64 {
	s := 0.0
	for i := range f.Items {
		s += f.ItemInfo(i, theta)
	}
	return s
}

// Curve is the test information at n equally spaced abilities from lo to hi
// (n ≥ 2; n = 1 gives lo alone), with the ability's standard error there,
// 1/√info (+Inf where the information is 0).
func (f *Fit) Curve(lo, hi float64, n int) []InfoPoint {
	if n <= 0 {
		return nil
	}
	out := make([]InfoPoint, n)
	for k := range out {
		t := lo
		if n > 1 {
			t = lo + (hi-lo)*float64(k)/float64(n-1)
		}
		info := f.TestInfo(t)
		out[k] = InfoPoint{Theta: t, Info: info, SE: 1 / math.Sqrt(info)}
	}
	return out
}

// Limits on the exact information matrix's size: beyond them the standard
// errors come from each item's own block (said in Fit.Warnings). Variables
// only so that a test can take each path on a small fit.
var (
	maxFullParams = 600  // a dense matrix of the parameters
	maxLowRank    = 2500 // persons × nodes for the low-rank (Woodbury) form
)

// params indexes the fitted parameters: per item the index of its log a
// (−1 when fixed) and of its b (−1 when the item is not fitted).
func (f *fitter) params() (ia, ib []int, n int) {
	ia = make([]int, f.nI)
	ib = make([]int, f.nI)
	shared := -1
	if f.o.Model == Rasch && f.o.FixedA == 0 {
		shared = 0
		n = 1
	}
	for i := range f.nI {
		ia[i], ib[i] = -1, -1
		if !f.fitted[i] {
			continue
		}
		switch {
		case f.o.Model == TwoPL:
			ia[i] = n
			n++
		case shared >= 0:
			ia[i] = shared
		}
		ib[i] = n
		n++
	}
	return ia, ib, n
}

// standardErrors returns per item the SEs of a and b from the observed
// information of the marginal likelihood (plus the log prior's curvature when
// there is a prior), by Louis' formula: minus the expected complete-data
// Hessian, minus the posterior covariance of each person's complete-data
// score. The SE of a is a times that of log a. A note says how they were
// computed when not exactly.
func (f *fitter) standardErrors() ([][2]float64, string) {
	ia, ib, n := f.params()
	se := make([][2]float64, f.nI)
	// A: minus the expected complete-data Hessian and the prior's, at the
	// final parameters (estep has just run).
	A := mat.NewSymDense(n, nil)
	add := func(r, c int, v float64) {
		if r < 0 || c < 0 {
			return
		}
		if r == c {
			A.SetSym(r, r, A.At(r, r)+v)
			return
		}
		A.SetSym(r, c, A.At(r, c)+v)
	}
	for i := range f.nI {
		if !f.fitted[i] {
			continue
		}
		_, _, h := f.itemTerms(i, f.alphaOf(i), f.b[i], false)
		if ia[i] >= 0 {
			add(ia[i], ia[i], -h[0][0])
			add(ia[i], ib[i], -h[0][1])
		}
		add(ib[i], ib[i], -h[1][1])
		_, _, hb := f.priorB(f.b[i])
		add(ib[i], ib[i], -hb)
	}
	if f.o.Model == TwoPL {
		for i := range f.nI {
			if f.fitted[i] {
				_, _, ha := f.priorA(f.alpha[i])
				add(ia[i], ia[i], -ha)
			}
		}
	} else if f.o.FixedA == 0 {
		_, _, ha := f.priorA(f.alpha[0])
		add(0, 0, -ha)
	}

	m := len(f.persons) * f.nQ
	blockDiag := f.o.Model == TwoPL || f.o.FixedA > 0
	var cov *mat.SymDense
	note := ""
	switch {
	case n <= maxFullParams:
		cov = f.fullCovariance(A, ia, ib, n)
	case blockDiag && m <= maxLowRank:
		cov = f.lowRankCovariance(A, ia, ib, n)
	default:
		cov = f.blockCovariance(A, ia, ib)
		note = fmt.Sprintf("standard errors from each item's own block of the information (%d parameters and %d persons × %d nodes: the exact matrix is too large); they leave out how items' estimates depend on one another", n, len(f.persons), f.nQ)
	}
	if cov == nil {
		for i := range se {
			se[i] = [2]float64{math.NaN(), math.NaN()}
		}
		return se, "the information matrix is singular at the estimate: no standard errors (NaN); a prior (PriorSD > 0) makes it regular"
	}
	for i := range f.nI {
		if !f.fitted[i] {
			continue
		}
		if ia[i] >= 0 {
			se[i][0] = math.Exp(f.alphaOf(i)) * math.Sqrt(cov.At(ia[i], ia[i]))
		}
		se[i][1] = math.Sqrt(cov.At(ib[i], ib[i]))
	}
	return se, note
}

// personScores calls fn for each person with the touched parameter indices
// and, per node, the complete-data score vector on them minus its posterior
// mean, scaled by √posterior: the columns whose outer products sum to the
// person's posterior score covariance.
func (f *fitter) personScores(ia, ib []int, fn func(idx []int, cols [][]float64)) {
	f.itemProbs()
	pos := map[int]int{}
	var idx []int
	for p := range f.persons {
		f.posterior(p)
		clear(pos)
		idx = idx[:0]
		for _, r := range f.persons[p] {
			if !f.fitted[r.item] {
				continue
			}
			for _, j := range []int{ia[r.item], ib[r.item]} {
				if j >= 0 {
					if _, ok := pos[j]; !ok {
						pos[j] = len(idx)
						idx = append(idx, j)
					}
				}
			}
		}
		cols := make([][]float64, f.nQ)
		mean := make([]float64, len(idx))
		for q, t := range f.theta {
			u := make([]float64, len(idx))
			for _, r := range f.persons[p] {
				i := r.item
				if !f.fitted[i] {
					continue
				}
				a := math.Exp(f.alphaOf(i))
				eta := a * (t - f.b[i])
				g := r.right - r.trials*math.Exp(f.lp[i*f.nQ+q])
				if ia[i] >= 0 {
					u[pos[ia[i]]] += g * eta
				}
				u[pos[ib[i]]] -= g * a
			}
			cols[q] = u
			for k := range u {
				mean[k] += f.post[q] * u[k]
			}
		}
		for q := range cols {
			s := math.Sqrt(f.post[q])
			for k := range cols[q] {
				cols[q][k] = s * (cols[q][k] - mean[k])
			}
		}
		fn(idx, cols)
	}
}

// fullCovariance inverts the whole observed information.
func (f *fitter) fullCovariance(A *mat.SymDense, ia, ib []int, n int) *mat.SymDense {
	info := mat.NewSymDense(n, nil)
	info.CopySym(A)
	f.personScores(ia, ib, func(idx []int, cols [][]float64) {
		for _, u := range cols {
			for x, jx := range idx {
				for y := x; y < len(idx); y++ {
					jy := idx[y]
					r, c := jx, jy
					if r > c {
						r, c = c, r
					}
					info.SetSym(r, c, info.At(r, c)-u[x]*u[y])
				}
			}
		}
	})
	var ch mat.Cholesky
	if !ch.Factorize(info) {
		return nil
	}
	cov := mat.NewSymDense(n, nil)
	if err := ch.InverseTo(cov); err != nil {
		return nil
	}
	return cov
}

// lowRankCovariance inverts A − W Wᵀ by Woodbury's identity where A is block
// diagonal (one 2×2 or 1×1 block per item) and W has one column per person ×
// node: (A − WWᵀ)⁻¹ = A⁻¹ + A⁻¹W (I − WᵀA⁻¹W)⁻¹ WᵀA⁻¹. Only the diagonal
// blocks of the result are filled.
func (f *fitter) lowRankCovariance(A *mat.SymDense, ia, ib []int, n int) *mat.SymDense {
	Ainv := blockInverse(A, ia, ib)
	if Ainv == nil {
		return nil
	}
	var W [][]float64 // columns, dense length n
	f.personScores(ia, ib, func(idx []int, cols [][]float64) {
		for _, u := range cols {
			col := make([]float64, n)
			for k, j := range idx {
				col[j] = u[k]
			}
			W = append(W, col)
		}
	})
	m := len(W)
	// Z = A⁻¹W (n × m), through the blocks.
	Z := mat.NewDense(n, m, nil)
	for c, col := range W {
		for i := range f.nI {
			if ib[i] < 0 {
				continue
			}
			for _, r := range []int{ia[i], ib[i]} {
				if r < 0 {
					continue
				}
				v := 0.0
				for _, s := range []int{ia[i], ib[i]} {
					if s >= 0 {
						v += Ainv.At(r, s) * col[s]
					}
				}
				Z.Set(r, c, v)
			}
		}
	}
	Wm := mat.NewDense(n, m, nil)
	for c, col := range W {
		Wm.SetCol(c, col)
	}
	C := mat.NewDense(m, m, nil)
	C.Mul(Wm.T(), Z)
	S := mat.NewSymDense(m, nil)
	for r := range m {
		for c := r; c < m; c++ {
			v := -C.At(r, c)
			if r == c {
				v++
			}
			S.SetSym(r, c, v)
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(S) {
		return nil
	}
	// diag blocks of Z S⁻¹ Zᵀ
	var Y mat.Dense // S⁻¹ Zᵀ (m × n)
	if err := ch.SolveTo(&Y, Z.T()); err != nil {
		return nil
	}
	cov := mat.NewSymDense(n, nil)
	cov.CopySym(Ainv)
	for i := range f.nI {
		if ib[i] < 0 {
			continue
		}
		js := []int{ib[i]}
		if ia[i] >= 0 {
			js = append(js, ia[i])
		}
		for _, r := range js {
			for _, c := range js {
				if r > c {
					continue
				}
				v := 0.0
				for k := range m {
					v += Z.At(r, k) * Y.At(k, c)
				}
				cov.SetSym(r, c, cov.At(r, c)+v)
			}
		}
	}
	return cov
}

// blockInverse inverts a block-diagonal A item by item.
func blockInverse(A *mat.SymDense, ia, ib []int) *mat.SymDense {
	n := A.SymmetricDim()
	inv := mat.NewSymDense(n, nil)
	for i := range ia {
		if ib[i] < 0 {
			continue
		}
		if ia[i] < 0 {
			v := A.At(ib[i], ib[i])
			if !(v > 0) {
				return nil
			}
			inv.SetSym(ib[i], ib[i], 1/v)
			continue
		}
		x, y, z := A.At(ia[i], ia[i]), A.At(ia[i], ib[i]), A.At(ib[i], ib[i])
		det := x*z - y*y
		if !(x > 0 && det > 0) {
			return nil
		}
		inv.SetSym(ia[i], ia[i], z/det)
		inv.SetSym(ia[i], ib[i], -y/det)
		inv.SetSym(ib[i], ib[i], x/det)
	}
	return inv
}

// blockCovariance inverts each item's own block of the observed information
// (and, under a shared discrimination, its 1×1 block alone).
func (f *fitter) blockCovariance(A *mat.SymDense, ia, ib []int) *mat.SymDense {
	n := A.SymmetricDim()
	info := mat.NewSymDense(n, nil)
	info.CopySym(A)
	f.personScores(ia, ib, func(idx []int, cols [][]float64) {
		for _, u := range cols {
			for x, jx := range idx {
				for y := x; y < len(idx); y++ {
					jy := idx[y]
					if !sameBlock(jx, jy, ia, ib, f) {
						continue
					}
					r, c := min(jx, jy), max(jx, jy)
					info.SetSym(r, c, info.At(r, c)-u[x]*u[y])
				}
			}
		}
	})
	cov := mat.NewSymDense(n, nil)
	shared := f.o.Model == Rasch && f.o.FixedA == 0
	if shared {
		v := info.At(0, 0)
		if !(v > 0) {
			return nil
		}
		cov.SetSym(0, 0, 1/v)
		ia = make([]int, len(ia))
		for i := range ia {
			ia[i] = -1
		}
	}
	blk := blockInverse(info, ia, ib)
	if blk == nil {
		return nil
	}
	for r := range n {
		for c := r; c < n; c++ {
			if shared && r == 0 {
				continue
			}
			if v := blk.At(r, c); v != 0 {
				cov.SetSym(r, c, v)
			}
		}
	}
	return cov
}

// sameBlock reports whether parameters j and k belong to one item's block
// (the shared discrimination is a block of its own).
func sameBlock(j, k int, ia, ib []int, f *fitter) bool {
	if j == k {
		return true
	}
	if f.o.Model != TwoPL {
		return false
	}
	// Under 2PL an item's log a is ib−1.
	lo, hi := min(j, k), max(j, k)
	return hi == lo+1 && lo%2 == 0 && ia != nil && ib != nil
}
