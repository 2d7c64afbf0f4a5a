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
	maxFullParams = 2000 // a dense matrix of the parameters (32 MB)
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

// infoParts is A, minus the expected complete-data Hessian and the prior's,
// kept by its structure: one block per item (log a and b under 2PL, b alone
// under Rasch) and, under an estimated shared discrimination, its diagonal
// entry c and its cross entries with every b (ab).
type infoParts struct {
	n          int
	ia, ib     []int
	shared     bool
	aa, ab, bb []float64
	c          float64
}

func (f *fitter) infoParts() *infoParts {
	ia, ib, n := f.params()
	A := &infoParts{n: n, ia: ia, ib: ib, shared: f.o.Model == Rasch && f.o.FixedA == 0,
		aa: make([]float64, f.nI), ab: make([]float64, f.nI), bb: make([]float64, f.nI)}
	for i := range f.nI {
		if !f.fitted[i] {
			continue
		}
		_, _, h, _ := f.itemTerms(i, f.alphaOf(i), f.b[i])
		_, _, hb := f.priorB(f.b[i])
		A.bb[i] = -h[1][1] - hb
		switch {
		case f.o.Model == TwoPL:
			_, _, ha := f.priorA(f.alpha[i])
			A.aa[i] = -h[0][0] - ha
			A.ab[i] = -h[0][1]
		case A.shared:
			A.c -= h[0][0]
			A.ab[i] = -h[0][1]
		}
	}
	if A.shared {
		_, _, ha := f.priorA(f.alpha[0])
		A.c -= ha
	}
	return A
}

// dense returns A as a dense matrix.
func (A *infoParts) dense() *mat.SymDense {
	m := mat.NewSymDense(A.n, nil)
	if A.shared {
		m.SetSym(0, 0, A.c)
	}
	for i, b := range A.ib {
		if b < 0 {
			continue
		}
		m.SetSym(b, b, A.bb[i])
		if a := A.ia[i]; a >= 0 {
			m.SetSym(a, b, A.ab[i])
			if !A.shared {
				m.SetSym(a, a, A.aa[i])
			}
		}
	}
	return m
}

// inverse returns A⁻¹ as an operator (z = A⁻¹x) and its diagonal, or false
// when A is not positive definite. Under a shared discrimination A is an
// arrow matrix, inverted through the Schur complement of its b block.
func (A *infoParts) inverse() (apply func(z, x []float64), diag []float64, ok bool) {
	diag = make([]float64, A.n)
	for i, b := range A.ib {
		if b < 0 {
			continue
		}
		if A.bb[i] <= 0 || (!A.shared && A.ia[i] >= 0 && (A.aa[i] <= 0 || A.aa[i]*A.bb[i]-A.ab[i]*A.ab[i] <= 0)) {
			return nil, nil, false
		}
	}
	switch {
	case A.shared:
		s := A.c
		for i, b := range A.ib {
			if b >= 0 {
				s -= A.ab[i] * A.ab[i] / A.bb[i]
			}
		}
		if s <= 0 {
			return nil, nil, false
		}
		diag[0] = 1 / s
		for i, b := range A.ib {
			if b >= 0 {
				r := A.ab[i] / A.bb[i]
				diag[b] = 1/A.bb[i] + r*r/s
			}
		}
		apply = func(z, x []float64) {
			za := x[0]
			for i, b := range A.ib {
				if b >= 0 {
					za -= A.ab[i] * x[b] / A.bb[i]
				}
			}
			za /= s
			z[0] = za
			for i, b := range A.ib {
				if b >= 0 {
					z[b] = (x[b] - A.ab[i]*za) / A.bb[i]
				}
			}
		}
	default:
		for i, b := range A.ib {
			if b < 0 {
				continue
			}
			if a := A.ia[i]; a >= 0 {
				det := A.aa[i]*A.bb[i] - A.ab[i]*A.ab[i]
				diag[a], diag[b] = A.bb[i]/det, A.aa[i]/det
			} else {
				diag[b] = 1 / A.bb[i]
			}
		}
		apply = func(z, x []float64) {
			for i, b := range A.ib {
				if b < 0 {
					continue
				}
				if a := A.ia[i]; a >= 0 {
					det := A.aa[i]*A.bb[i] - A.ab[i]*A.ab[i]
					z[a] = (A.bb[i]*x[a] - A.ab[i]*x[b]) / det
					z[b] = (-A.ab[i]*x[a] + A.aa[i]*x[b]) / det
				} else {
					z[b] = x[b] / A.bb[i]
				}
			}
		}
	}
	return apply, diag, true
}

// standardErrors returns per item the SEs of a and b from the observed
// information of the marginal likelihood (plus the log prior's curvature when
// there is a prior), by Louis' formula: A, minus the expected complete-data
// Hessian, less the posterior covariance of each person's complete-data
// score, Σₚ Covₚ = W Wᵀ (one column of W per person × node). The SE of a is
// a times that of log a. Three ways to the inverse's diagonal: dense (few
// parameters), Woodbury's identity (few persons × nodes, as when a handful of
// targets answer many cases), or, beyond both, each item's own block (a note
// says so).
func (f *fitter) standardErrors() ([][2]float64, string) {
	A := f.infoParts()
	se := make([][2]float64, f.nI)
	m := len(f.persons) * f.nQ
	// Take the cheaper exact path: the dense inverse costs about n³ plus
	// persons × nodes × (a person's parameters)², Woodbury m³ + n·m².
	touched := 0
	for _, rs := range f.persons {
		touched += len(rs)
	}
	perPerson := 2 * float64(touched) / float64(len(f.persons))
	n := float64(A.n)
	denseCost := n*n*n + float64(m)*perPerson*perPerson
	lowCost := float64(m)*float64(m)*float64(m) + n*float64(m)*float64(m)
	denseOK := A.n <= maxFullParams
	lowOK := m <= maxLowRank && A.n*m <= maxLowRankCells
	var variance []float64
	note := ""
	switch {
	case denseOK && (!lowOK || denseCost <= lowCost):
		variance = f.fullVariance(A)
	case lowOK:
		variance = f.lowRankVariance(A, m)
	default:
		variance = f.blockVariance(A)
		note = fmt.Sprintf("standard errors from each item's own block of the information (%d parameters and %d persons × %d nodes: the exact matrix is too large); they leave out how items' estimates depend on one another", A.n, len(f.persons), f.nQ)
	}
	if variance == nil {
		for i := range se {
			if f.fitted[i] {
				se[i] = [2]float64{math.NaN(), math.NaN()}
			}
		}
		return se, "the information matrix is singular at the estimate: no standard errors (NaN); a prior (PriorSD > 0) makes it regular"
	}
	for i := range f.nI {
		if !f.fitted[i] {
			continue
		}
		if A.ia[i] >= 0 {
			se[i][0] = math.Exp(f.alphaOf(i)) * math.Sqrt(variance[A.ia[i]])
		}
		se[i][1] = math.Sqrt(variance[A.ib[i]])
	}
	return se, note
}

// maxLowRankCells bounds W's cells (parameters × persons × nodes) for the
// Woodbury path.
var maxLowRankCells = 4_000_000 // three n × m matrices of 32 MB

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

// fullVariance inverts the whole observed information.
func (f *fitter) fullVariance(A *infoParts) []float64 {
	n := A.n
	info := A.dense()
	raw := info.RawSymmetric()
	f.personScores(A.ia, A.ib, func(idx []int, cols [][]float64) {
		for _, u := range cols {
			for x, jx := range idx {
				for y := x; y < len(idx); y++ {
					r, c := min(jx, idx[y]), max(jx, idx[y])
					raw.Data[r*raw.Stride+c] -= u[x] * u[y]
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
	v := make([]float64, n)
	for r := range v {
		v[r] = cov.At(r, r)
	}
	return v
}

// lowRankVariance inverts A − W Wᵀ by Woodbury's identity,
// (A − WWᵀ)⁻¹ = A⁻¹ + Z (I − WᵀZ)⁻¹ Zᵀ with Z = A⁻¹W, A⁻¹ from A's
// structure: the cost grows with persons × nodes, not with the items.
func (f *fitter) lowRankVariance(A *infoParts, m int) []float64 {
	apply, diag, ok := A.inverse()
	if !ok {
		return nil
	}
	n := A.n
	W := mat.NewDense(n, m, nil)
	c := 0
	f.personScores(A.ia, A.ib, func(idx []int, cols [][]float64) {
		for _, u := range cols {
			for k, j := range idx {
				W.Set(j, c, u[k])
			}
			c++
		}
	})
	Z := mat.NewDense(n, m, nil)
	x, z := make([]float64, n), make([]float64, n)
	for k := range m {
		mat.Col(x, k, W)
		clear(z)
		apply(z, x)
		Z.SetCol(k, z)
	}
	var C mat.Dense
	C.Mul(W.T(), Z)
	S := mat.NewSymDense(m, nil)
	for r := range m {
		for k := r; k < m; k++ {
			v := -(C.At(r, k) + C.At(k, r)) / 2
			if r == k {
				v++
			}
			S.SetSym(r, k, v)
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(S) {
		return nil
	}
	var Y mat.Dense // S⁻¹ Zᵀ (m × n)
	if err := ch.SolveTo(&Y, Z.T()); err != nil {
		return nil
	}
	v := make([]float64, n)
	for r := range n {
		s := diag[r]
		for k := range m {
			s += Z.At(r, k) * Y.At(k, r)
		}
		v[r] = s
	}
	return v
}

// blockVariance inverts each item's own block of the observed information
// (the shared discrimination, under Rasch, a block of its own).
func (f *fitter) blockVariance(A *infoParts) []float64 {
	aa := append([]float64(nil), A.aa...)
	ab := append([]float64(nil), A.ab...)
	bb := append([]float64(nil), A.bb...)
	c := A.c
	owner := make([]int, A.n) // parameter → item (−1: the shared one)
	for i, b := range A.ib {
		if b >= 0 {
			owner[b] = i
			if a := A.ia[i]; a >= 0 && !A.shared {
				owner[a] = i
			}
		}
	}
	if A.shared {
		owner[0] = -1
	}
	f.personScores(A.ia, A.ib, func(idx []int, cols [][]float64) {
		for _, u := range cols {
			for x, jx := range idx {
				for y := x; y < len(idx); y++ {
					jy := idx[y]
					i := owner[jx]
					switch {
					case jx == jy && i < 0:
						c -= u[x] * u[y]
					case jx == jy && jx == A.ib[i]:
						bb[i] -= u[x] * u[y]
					case jx == jy:
						aa[i] -= u[x] * u[y]
					case i >= 0 && i == owner[jy] && !A.shared:
						ab[i] -= u[x] * u[y]
					}
				}
			}
		}
	})
	v := make([]float64, A.n)
	if A.shared {
		if c <= 0 {
			return nil
		}
		v[0] = 1 / c
	}
	for i, b := range A.ib {
		if b < 0 {
			continue
		}
		if a := A.ia[i]; a >= 0 && !A.shared {
			det := aa[i]*bb[i] - ab[i]*ab[i]
			if aa[i] <= 0 || det <= 0 {
				return nil
			}
			v[a], v[b] = bb[i]/det, aa[i]/det
			continue
		}
		if bb[i] <= 0 {
			return nil
		}
		v[b] = 1 / bb[i]
	}
	return v
}
