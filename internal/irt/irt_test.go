package irt

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/shareddata"
)

// loadLSAT reads the LSAT-7 table (1,000 × 5, tab-separated 0/1).
func loadLSAT(t testing.TB) *Data {
	t.Helper()
	path := shareddata.Path(t, "lsat/lsat.dat")
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	var rows [][]int
	sc := bufio.NewScanner(fh)
	for line := 1; sc.Scan(); line++ {
		fields := strings.Split(strings.TrimSpace(sc.Text()), "\t")
		if len(fields) != 5 {
			t.Fatalf("%s:%d: %d fields, want 5", path, line, len(fields))
		}
		row := make([]int, 5)
		for i, s := range fields {
			v, err := strconv.Atoi(s)
			if err != nil || (v != 0 && v != 1) {
				t.Fatalf("%s:%d: %q is not 0 or 1", path, line, s)
			}
			row[i] = v
		}
		rows = append(rows, row)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1000 {
		t.Fatalf("%s: %d rows, want 1000", path, len(rows))
	}
	persons := make([]string, len(rows))
	for p := range persons {
		persons[p] = strconv.Itoa(p + 1)
	}
	d := NewData(persons, []string{"item1", "item2", "item3", "item4", "item5"})
	for p, row := range rows {
		for i, v := range row {
			d.Add(p, i, v, 1)
		}
	}
	return d
}

func estimate(t testing.TB, d *Data, o Options) *Fit {
	t.Helper()
	f, err := Estimate(d, o)
	if err != nil {
		t.Fatal(err)
	}
	if !f.Converged {
		t.Fatalf("not converged: %v", f.Warnings)
	}
	return f
}

// TestLSATMatchesLtm is the must-show: the 2PL fit of LSAT-7 against the ltm
// R package's published fit (ltm(LSAT ~ z1), 15 Gauss–Hermite points), and
// its Rasch fits (rasch(LSAT), rasch(LSAT, constraint = cbind(6, 1)), 21
// points): parameters to two decimals (within 0.005), log-likelihoods to
// three (within 0.0005).
func TestLSATMatchesLtm(t *testing.T) {
	d := loadLSAT(t)
	cases := []struct {
		name   string
		o      Options
		a, b   []float64
		loglik float64
	}{
		{"2pl", Options{Model: TwoPL, Points: 15},
			[]float64{0.8253, 0.7229, 0.8904, 0.6885, 0.6574},
			[]float64{-3.3597, -1.3696, -0.2798, -1.8659, -3.1236}, -2466.653},
		{"rasch", Options{Model: Rasch, Points: 21},
			[]float64{0.7551, 0.7551, 0.7551, 0.7551, 0.7551},
			[]float64{-3.6153, -1.3224, -0.3176, -1.7301, -2.7803}, -2466.938},
		{"rasch a=1", Options{Model: Rasch, FixedA: 1, Points: 21},
			[]float64{1, 1, 1, 1, 1},
			[]float64{-2.8720, -1.0630, -0.2576, -1.3881, -2.2188}, -2473.054},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := estimate(t, d, c.o)
			for i, it := range f.Items {
				if math.Abs(it.A-c.a[i]) > 0.005 || math.Abs(it.B-c.b[i]) > 0.005 {
					t.Errorf("%s: a %.4f b %.4f, ltm a %.4f b %.4f", it.ID, it.A, it.B, c.a[i], c.b[i])
				}
			}
			if math.Abs(f.LogLik-c.loglik) > 0.0005 {
				t.Errorf("log-likelihood %.4f, ltm %.3f", f.LogLik, c.loglik)
			}
		})
	}
}

type goldenFit struct {
	A, B, SEA, SEB []float64
	LogLik         float64
}

func (g *goldenFit) UnmarshalJSON(b []byte) error {
	var raw struct {
		A      []float64 `json:"a"`
		B      []float64 `json:"b"`
		SEA    []float64 `json:"se_a"`
		SEB    []float64 `json:"se_b"`
		LogLik float64   `json:"loglik"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*g = goldenFit{raw.A, raw.B, raw.SEA, raw.SEB, raw.LogLik}
	return nil
}

type golden struct {
	LSAT      map[string]goldenFit `json:"lsat"`
	Abilities []struct {
		Pattern           []int
		Theta, SD, Lo, Hi float64
	} `json:"lsat_abilities_2pl"`
	Small struct {
		Epochs [][][]*int `json:"epochs"`
		TwoPL  goldenFit  `json:"2pl_prior"`
		Rasch  goldenFit  `json:"rasch"`
	} `json:"small"`
}

func loadGolden(t *testing.T) *golden {
	t.Helper()
	b, err := os.ReadFile("testdata/irt_golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var g golden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	return &g
}

// compare checks a fit against the python reference: estimates and standard
// errors within tol, the log-likelihood within 1e-3.
func compare(t *testing.T, f *Fit, g goldenFit, tol float64) {
	t.Helper()
	for i, it := range f.Items {
		for _, v := range []struct {
			name      string
			got, want float64
		}{{"a", it.A, g.A[i]}, {"b", it.B, g.B[i]}, {"SE(a)", it.SEA, g.SEA[i]}, {"SE(b)", it.SEB, g.SEB[i]}} {
			if math.Abs(v.got-v.want) > tol {
				t.Errorf("%s %s: %.5f, python %.5f", it.ID, v.name, v.got, v.want)
			}
		}
	}
	if math.Abs(f.LogLik-g.LogLik) > 1e-3 {
		t.Errorf("log-likelihood %.5f, python %.5f", f.LogLik, g.LogLik)
	}
}

// TestLSATMatchesPython checks every LSAT fit, its standard errors and a
// prior's effect against testdata/irt.py, which maximises the marginal
// likelihood directly (no EM) and takes SEs from a finite-difference Hessian.
func TestLSATMatchesPython(t *testing.T) {
	d := loadLSAT(t)
	g := loadGolden(t)
	for name, o := range map[string]Options{
		"2pl":       {Model: TwoPL},
		"rasch":     {Model: Rasch},
		"rasch_a1":  {Model: Rasch, FixedA: 1},
		"2pl_prior": {Model: TwoPL, PriorSD: 2},
	} {
		t.Run(name, func(t *testing.T) {
			compare(t, estimate(t, d, o), g.LSAT[name], 1e-3)
		})
	}
}

// TestAbilitiesMatchPython checks EAP, posterior SD and the 95% interval of
// three response patterns against scipy's adaptive integration.
func TestAbilitiesMatchPython(t *testing.T) {
	d := loadLSAT(t)
	g := loadGolden(t)
	f := estimate(t, d, Options{Model: TwoPL})
	for _, want := range g.Abilities {
		p := -1
		for q := range d.Persons {
			same := true
			for i, v := range want.Pattern {
				same = same && int(d.Right[q*5+i]) == v
			}
			if same {
				p = q
				break
			}
		}
		if p < 0 {
			t.Fatalf("no person answered %v", want.Pattern)
		}
		got := f.Persons[p]
		if got.Right != sum(want.Pattern) || got.Trials != 5 {
			t.Errorf("%v: %d right of %d", want.Pattern, got.Right, got.Trials)
		}
		for _, v := range []struct {
			name      string
			got, want float64
		}{{"theta", got.Theta, want.Theta}, {"SD", got.SE, want.SD}, {"lo", got.Lo, want.Lo}, {"hi", got.Hi, want.Hi}} {
			if math.Abs(v.got-v.want) > 5e-4 {
				t.Errorf("%v %s: %.5f, python %.5f", want.Pattern, v.name, v.got, v.want)
			}
		}
	}
}

func sum(xs []int) int {
	s := 0
	for _, x := range xs {
		s += x
	}
	return s
}

// TestCountsAndMissingMatchPython fits a table given one epoch at a time
// (each epoch a 0/1 response Add-ed to its cell; some cells with one epoch,
// some with none) and checks it against the python fit, whose counts'
// likelihood irt.py asserts equal to the expanded Bernoulli likelihood.
func TestCountsAndMissingMatchPython(t *testing.T) {
	g := loadGolden(t)
	ep := g.Small.Epochs
	persons := make([]string, len(ep))
	for p := range persons {
		persons[p] = fmt.Sprintf("p%d", p)
	}
	items := make([]string, len(ep[0]))
	for i := range items {
		items[i] = fmt.Sprintf("i%d", i)
	}
	d := NewData(persons, items)
	missing, trials := 0, 0
	for p := range ep {
		for i := range ep[p] {
			cell := 0
			for _, y := range ep[p][i] {
				if y != nil {
					d.Add(p, i, *y, 1)
					cell++
				}
			}
			if cell == 0 {
				missing++
			}
			trials += cell
		}
	}
	if missing == 0 {
		t.Fatal("the golden table has no missing cell")
	}
	for name, c := range map[string]struct {
		o Options
		g goldenFit
	}{"2pl_prior": {Options{Model: TwoPL, PriorSD: 2}, g.Small.TwoPL}, "rasch": {Options{Model: Rasch}, g.Small.Rasch}} {
		t.Run(name, func(t *testing.T) {
			f := estimate(t, d, c.o)
			compare(t, f, c.g, 2e-3)
			got := 0
			for _, p := range f.Persons {
				got += p.Trials
			}
			if got != trials {
				t.Errorf("persons' trials sum to %d, want the %d observed epochs (missing ones not counted)", got, trials)
			}
		})
	}
}

// simulate draws persons × items 0/1 responses (epochs each) from a 2PL
// with abilities from N(0,1).
func simulate(seed uint64, persons, items, epochs int, a, b []float64) (*Data, []float64) {
	rng := rand.New(rand.NewPCG(seed, 17))
	pn := make([]string, persons)
	in := make([]string, items)
	for p := range pn {
		pn[p] = fmt.Sprintf("p%d", p)
	}
	for i := range in {
		in[i] = fmt.Sprintf("i%d", i)
	}
	d := NewData(pn, in)
	theta := make([]float64, persons)
	for p := range theta {
		theta[p] = rng.NormFloat64()
		for i := range items {
			pr := Prob(a[i], b[i], theta[p])
			for range epochs {
				y := 0
				if rng.Float64() < pr {
					y = 1
				}
				d.Add(p, i, y, 1)
			}
		}
	}
	return d, theta
}

func itemParams(seed uint64, items int, rasch bool) (a, b []float64) {
	rng := rand.New(rand.NewPCG(seed, 3))
	a = make([]float64, items)
	b = make([]float64, items)
	for i := range items {
		b[i] = -2 + 4*rng.Float64()
		a[i] = 1
		if !rasch {
			a[i] = math.Exp(0.3 * rng.NormFloat64())
		}
	}
	return a, b
}

func corr(x, y []float64) float64 {
	var mx, my float64
	for i := range x {
		mx += x[i]
		my += y[i]
	}
	mx /= float64(len(x))
	my /= float64(len(y))
	var sxy, sxx, syy float64
	for i := range x {
		sxy += (x[i] - mx) * (y[i] - my)
		sxx += (x[i] - mx) * (x[i] - mx)
		syy += (y[i] - my) * (y[i] - my)
	}
	return sxy / math.Sqrt(sxx*syy)
}

// TestRecovery is the must-show: 2,000 respondents × 20 items simulated, the
// fitted difficulties correlate above 0.95 with the true ones (2PL and
// Rasch), the 2PL discriminations above 0.8, and the abilities' 95%
// intervals cover the true abilities at their level (within 3 binomial SEs).
func TestRecovery(t *testing.T) {
	for _, c := range []struct {
		model Model
		seed  uint64
	}{{TwoPL, 1}, {Rasch, 2}} {
		t.Run(string(c.model), func(t *testing.T) {
			a, b := itemParams(c.seed, 20, c.model == Rasch)
			d, theta := simulate(c.seed, 2000, 20, 1, a, b)
			f := estimate(t, d, Options{Model: c.model})
			var ga, gb []float64
			for _, it := range f.Items {
				ga = append(ga, it.A)
				gb = append(gb, it.B)
			}
			if r := corr(gb, b); r <= 0.95 {
				t.Errorf("difficulties correlate %.3f with the truth, want > 0.95", r)
			}
			if c.model == TwoPL {
				if r := corr(ga, a); r <= 0.8 {
					t.Errorf("discriminations correlate %.3f with the truth, want > 0.8", r)
				}
			} else if math.Abs(ga[0]-1) > 0.1 {
				t.Errorf("common discrimination %.3f, truth 1", ga[0])
			}
			cover := 0
			for p, per := range f.Persons {
				if per.Lo <= theta[p] && theta[p] <= per.Hi {
					cover++
				}
			}
			rate := float64(cover) / 2000
			if se := math.Sqrt(0.95 * 0.05 / 2000); math.Abs(rate-0.95) > 3*se {
				t.Errorf("95%% intervals cover %.3f of true abilities, want 0.95 ± %.3f", rate, 3*se)
			}
		})
	}
}

// TestItemSEsCoverTruth checks that the items' standard errors mean what
// they say on one simulated fit: |b̂ − b|/SE(b) and |â − a|/SE(a) are below
// 1.96 for about 95% of 30 items (at least 25: P(fewer) < 0.01 under the
// nominal rate).
func TestItemSEsCoverTruth(t *testing.T) {
	a, b := itemParams(11, 30, false)
	d, _ := simulate(11, 1000, 30, 1, a, b)
	f := estimate(t, d, Options{Model: TwoPL})
	inA, inB := 0, 0
	for i, it := range f.Items {
		if math.Abs(it.B-b[i]) <= 1.96*it.SEB {
			inB++
		}
		if math.Abs(it.A-a[i]) <= 1.96*it.SEA {
			inA++
		}
	}
	if inA < 25 || inB < 25 {
		t.Errorf("SE intervals cover %d/30 discriminations and %d/30 difficulties, want ≥ 25 each", inA, inB)
	}
}

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 99)) }
