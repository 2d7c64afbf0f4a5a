package irt

import (
	"math"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/longtest"
)

// withExtremes is a simulated 300 × 8 table whose item 0 everyone got right
// and item 7 everyone got wrong.
func withExtremes(t *testing.T) *Data {
	t.Helper()
	a, b := itemParams(21, 8, false)
	d, _ := simulate(21, 300, 8, 1, a, b)
	for p := range d.Persons {
		d.Right[p*8+0] = d.Trials[p*8+0]
		d.Right[p*8+7] = 0
	}
	return d
}

// TestExtremeItemsFiniteWithPrior: with the default prior an all-right item
// gets a finite difficulty below every other item's and an all-wrong one a
// finite difficulty above, both flagged and named in a warning.
func TestExtremeItemsFiniteWithPrior(t *testing.T) {
	d := withExtremes(t)
	for _, m := range []Model{TwoPL, Rasch} {
		f := estimate(t, d, Options{Model: m, PriorSD: -1})
		if f.PriorSD != DefaultPriorSD {
			t.Errorf("%s: PriorSD %v, want the default %v", m, f.PriorSD, DefaultPriorSD)
		}
		easy, hard := f.Items[0], f.Items[7]
		for _, it := range []Item{easy, hard} {
			if !it.Extreme || math.IsInf(it.B, 0) || math.IsNaN(it.B) || !(it.SEB > 0) || math.IsInf(it.SEB, 0) {
				t.Errorf("%s %s: extreme %v, b %v ± %v: want flagged, finite, a finite SE", m, it.ID, it.Extreme, it.B, it.SEB)
			}
		}
		for _, it := range f.Items[1:7] {
			if it.Extreme || !(easy.B < it.B && it.B < hard.B) {
				t.Errorf("%s %s: b %.2f (extreme %v), want between the all-right %.2f and the all-wrong %.2f", m, it.ID, it.B, it.Extreme, easy.B, hard.B)
			}
		}
		if w := strings.Join(f.Warnings, "\n"); !strings.Contains(w, `2 item(s) all right or all wrong ("i0", "i7"): finite only through the prior`) {
			t.Errorf("%s: warnings %q do not name the extreme items", m, w)
		}
	}
}

// TestExtremeItemsWithoutPrior: without a prior an extreme item's
// difficulty is infinite (−Inf all right, +Inf all wrong), and it leaves the
// rest of the fit exactly as if it were not there (its likelihood factor is
// 1 at the limit).
func TestExtremeItemsWithoutPrior(t *testing.T) {
	d := withExtremes(t)
	f := estimate(t, d, Options{Model: TwoPL})
	if !math.IsInf(f.Items[0].B, -1) || !math.IsInf(f.Items[7].B, 1) {
		t.Errorf("b of the all-right and all-wrong items %v, %v: want −Inf, +Inf", f.Items[0].B, f.Items[7].B)
	}
	if f.ItemInfo(0, 0) != 0 || math.IsNaN(f.TestInfo(0)) {
		t.Errorf("an infinite item's information %v, test information %v: want 0 and a number", f.ItemInfo(0, 0), f.TestInfo(0))
	}
	inner := NewData(d.Persons, d.Items[1:7])
	for p := range d.Persons {
		for i := 1; i < 7; i++ {
			inner.Add(p, i-1, int(d.Right[p*8+i]), int(d.Trials[p*8+i]))
		}
	}
	g := estimate(t, inner, Options{Model: TwoPL})
	for i, it := range g.Items {
		got := f.Items[i+1]
		if math.Abs(got.A-it.A) > 1e-9 || math.Abs(got.B-it.B) > 1e-9 || math.Abs(got.SEB-it.SEB) > 1e-9 {
			t.Errorf("%s: with the extremes a %v b %v ± %v, without them a %v b %v ± %v", it.ID, got.A, got.B, got.SEB, it.A, it.B, it.SEB)
		}
	}
	if math.Abs(f.LogLik-g.LogLik) > 1e-9 {
		t.Errorf("log-likelihood %v with the extremes, %v without", f.LogLik, g.LogLik)
	}
	if w := strings.Join(f.Warnings, "\n"); !strings.Contains(w, "left out of the fit, difficulty ±Inf (no prior)") {
		t.Errorf("warnings %q do not say the extremes were left out", w)
	}
}

func TestBadInput(t *testing.T) {
	two := func() *Data { return NewData([]string{"p1", "p2"}, []string{"i1", "i2"}) }
	neg := two()
	neg.Right[1], neg.Trials[1] = -1, 2
	neg.Right[2], neg.Trials[2] = 3, 2
	neg.Trials[0] = 1
	holes := two()
	holes.Add(0, 0, 1, 1)
	short := two()
	short.Right = short.Right[:3]
	ok := two()
	ok.Add(0, 0, 1, 1)
	ok.Add(1, 1, 0, 1)
	ok.Add(0, 1, 1, 1)
	ok.Add(1, 0, 0, 1)
	for _, c := range []struct {
		name string
		d    *Data
		o    Options
		want string
	}{
		{"nil", nil, Options{}, "irt: no data"},
		{"empty", NewData(nil, nil), Options{}, "irt: no items\nirt: no persons"},
		{"no items", NewData([]string{"p"}, nil), Options{}, "irt: no items"},
		{"no persons", NewData(nil, []string{"i"}), Options{}, "irt: no persons"},
		{"all missing", two(), Options{}, "irt: every response is missing (0 trials everywhere)"},
		{"impossible counts", neg, Options{}, `irt: 2 cell(s) with impossible counts (need 0 ≤ right ≤ trials): person "p1" × item "i2": -1 right of 2 trials, person "p2" × item "i1": 3 right of 2 trials`},
		{"holes", holes, Options{}, `irt: 1 item(s) without a response: "i2" (leave them out)` + "\n" + `irt: 1 person(s) without a response: "p2" (leave them out)`},
		{"short", short, Options{}, "irt: 2 persons × 2 items need 4 cells; Right has 3 and Trials 4"},
		{"model", ok, Options{Model: "3pl"}, `irt: unknown model "3pl" (valid: rasch, 2pl)`},
		{"options", ok, Options{Points: 1, PriorSD: math.NaN(), MaxIter: -1, Tol: -1, Level: 1.5},
			"irt: 1 quadrature points: need 2 to 201\nirt: prior SD NaN: need a finite number (0 = no prior, negative = the default 2)\nirt: -1 iterations: need a positive number\nirt: tolerance -1: need a positive number\nirt: interval level 1.5: need a number between 0 and 1"},
		{"fixed a with 2pl", ok, Options{Model: TwoPL, FixedA: 1}, "irt: a fixed discrimination is for the Rasch model; 2PL estimates one per item"},
		{"negative fixed a", ok, Options{Model: Rasch, FixedA: -1}, "irt: fixed discrimination -1: need a positive number, or 0 to estimate it"},
		{"only extremes", ok, Options{Model: Rasch, FixedA: 1}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Estimate(c.d, c.o)
			if c.want == "" {
				if err != nil {
					t.Fatalf("error %v, want none", err)
				}
				return
			}
			if err == nil || err.Error() != c.want {
				t.Errorf("error\n%v\nwant\n%s", err, c.want)
			}
		})
	}
	allRight := two()
	allRight.Add(0, 0, 1, 1)
	allRight.Add(0, 1, 1, 1)
	allRight.Add(1, 0, 1, 1)
	allRight.Add(1, 1, 1, 1)
	if _, err := Estimate(allRight, Options{}); err == nil || !strings.Contains(err.Error(), "every item is all right or all wrong") {
		t.Errorf("all right without a prior: error %v", err)
	}
	if f, err := Estimate(allRight, Options{PriorSD: -1}); err != nil || math.IsInf(f.Items[0].B, 0) {
		t.Errorf("all right with a prior: %v, %+v", err, f)
	}
}

// TestConvergenceReport: a fit cut short says so, with its iterations and
// last change; a finished one reports a change below the tolerance.
func TestConvergenceReport(t *testing.T) {
	a, b := itemParams(4, 10, false)
	d, _ := simulate(4, 400, 10, 1, a, b)
	f, err := Estimate(d, Options{Model: TwoPL, MaxIter: 3})
	if err != nil {
		t.Fatal(err)
	}
	if f.Converged || f.Iterations != 3 || !(f.MaxChange >= 1e-6) {
		t.Errorf("cut short: converged %v after %d iterations, change %v", f.Converged, f.Iterations, f.MaxChange)
	}
	if w := strings.Join(f.Warnings, "\n"); !strings.Contains(w, "not converged: after 3 iterations the largest parameter change was") {
		t.Errorf("warnings %q do not report the failure to converge", w)
	}
	g := estimate(t, d, Options{Model: TwoPL, Tol: 1e-8})
	if !(g.MaxChange < 1e-8) || g.Iterations <= 3 || len(g.Warnings) != 0 {
		t.Errorf("finished: change %v after %d iterations, warnings %q", g.MaxChange, g.Iterations, g.Warnings)
	}
	if !(g.LogLik > f.LogLik) {
		t.Errorf("log-likelihood %v after convergence, %v after 3 iterations: EM must climb", g.LogLik, f.LogLik)
	}
}

// TestInformation: an item's information is the Fisher information of one
// 0/1 response, E[(d/dθ log f(y|θ))²], computed here by differentiating the
// log-probabilities numerically; the test information adds them; the curve's
// SE is 1/√info and peaks of a 2PL item sit at its difficulty.
func TestInformation(t *testing.T) {
	f := &Fit{Items: []Item{{ID: "x", A: 1.7, B: 0.4}, {ID: "y", A: 0.6, B: -1.2}}}
	for _, theta := range []float64{-3, -1.2, 0, 0.4, 2.5} {
		sum := 0.0
		for i, it := range f.Items {
			h := 1e-5
			p := Prob(it.A, it.B, theta)
			dlp := (math.Log(Prob(it.A, it.B, theta+h)) - math.Log(Prob(it.A, it.B, theta-h))) / (2 * h)
			dlq := (math.Log(1-Prob(it.A, it.B, theta+h)) - math.Log(1-Prob(it.A, it.B, theta-h))) / (2 * h)
			want := p*dlp*dlp + (1-p)*dlq*dlq
			if got := f.ItemInfo(i, theta); math.Abs(got-want) > 1e-6 {
				t.Errorf("%s at %v: information %v, want %v", it.ID, theta, got, want)
			}
			sum += want
		}
		if got := f.TestInfo(theta); math.Abs(got-sum) > 1e-6 {
			t.Errorf("test information at %v: %v, want %v", theta, got, sum)
		}
	}
	c := f.Curve(-4, 4, 81)
	if len(c) != 81 || c[0].Theta != -4 || c[80].Theta != 4 || math.Abs(c[40].Theta) > 1e-12 {
		t.Fatalf("curve over %d points from %v to %v", len(c), c[0].Theta, c[80].Theta)
	}
	one := &Fit{Items: f.Items[:1]}
	best := 0
	for k, pt := range one.Curve(-4, 4, 81) {
		if math.Abs(pt.SE-1/math.Sqrt(pt.Info)) > 1e-12 {
			t.Errorf("SE %v at info %v", pt.SE, pt.Info)
		}
		if pt.Info > one.Curve(-4, 4, 81)[best].Info {
			best = k
		}
	}
	if th := c[best].Theta; th != 0.4 && math.Abs(th-0.4) > 0.05 {
		t.Errorf("a 2PL item's information peaks at %v, want its difficulty 0.4", th)
	}
	if got := Prob(1.7, 0.4, 0.4); got != 0.5 {
		t.Errorf("P at θ = b is %v, want 0.5", got)
	}
	if got := Prob(1, 0, 800); got != 1 || Prob(1, 0, -800) != 0 {
		t.Errorf("P far out %v, %v: want 1 and 0, never NaN", got, Prob(1, 0, -800))
	}
}

// TestAbilitySEMatchesInformation: a respondent who answered many items has
// a posterior SD close to 1/√(1 + test information at the ability): the
// abilities and the information curve tell one story.
func TestAbilitySEMatchesInformation(t *testing.T) {
	a, b := itemParams(8, 400, false)
	d, _ := simulate(8, 40, 400, 1, a, b)
	f := estimate(t, d, Options{Model: TwoPL, PriorSD: -1})
	for _, p := range f.Persons[:10] {
		want := 1 / math.Sqrt(1+f.TestInfo(p.Theta))
		if math.Abs(p.SE-want)/want > 0.05 {
			t.Errorf("%s at %.2f: posterior SD %.4f, 1/√(1+I) %.4f", p.ID, p.Theta, p.SE, want)
		}
		if !(p.Lo < p.Theta && p.Theta < p.Hi) || math.Abs((p.Hi-p.Lo)/(2*1.96*p.SE)-1) > 0.05 {
			t.Errorf("%s: interval [%.3f, %.3f] around %.3f ± %.3f", p.ID, p.Lo, p.Hi, p.Theta, p.SE)
		}
	}
}

// TestLowRankSEsEqualFull: the Woodbury form used for many items and few
// persons gives the same standard errors as the dense inverse.
func TestLowRankSEsEqualFull(t *testing.T) {
	a, b := itemParams(9, 30, false)
	d, _ := simulate(9, 6, 30, 3, a, b)
	for _, o := range []Options{{Model: TwoPL, PriorSD: -1}, {Model: Rasch, FixedA: 1, PriorSD: -1}, {Model: Rasch, PriorSD: -1}, {Model: Rasch}} {
		full := estimate(t, d, o)
		saved := maxFullParams
		maxFullParams = 0
		low := estimate(t, d, o)
		maxFullParams = saved
		for i := range full.Items {
			if math.Abs(full.Items[i].SEA-low.Items[i].SEA) > 1e-8 || math.Abs(full.Items[i].SEB-low.Items[i].SEB) > 1e-8 {
				t.Errorf("%s %s: SEs %v, %v dense; %v, %v low-rank", o.Model, full.Items[i].ID, full.Items[i].SEA, full.Items[i].SEB, low.Items[i].SEA, low.Items[i].SEB)
			}
		}
		if len(low.Warnings) != len(full.Warnings) {
			t.Errorf("warnings %q dense, %q low-rank", full.Warnings, low.Warnings)
		}
		// Beyond both limits: each item's own block, said in a warning.
		savedLow := maxLowRank
		maxFullParams, maxLowRank = 0, 0
		block := estimate(t, d, o)
		maxFullParams, maxLowRank = saved, savedLow
		if w := strings.Join(block.Warnings, "\n"); !strings.Contains(w, "standard errors from each item's own block of the information") {
			t.Errorf("%s: block SEs without a warning: %q", o.Model, w)
		}
		for i := range full.Items {
			if r := block.Items[i].SEB / full.Items[i].SEB; !(r > 0.3 && r < 3) {
				t.Errorf("%s %s: block SE(b) %v against %v", o.Model, full.Items[i].ID, block.Items[i].SEB, full.Items[i].SEB)
			}
		}
	}
}

// TestFewPersonsManyItems is assay's own shape: 4 targets × 300 cases with 3
// epochs. The fit finishes with every difficulty finite under the default
// prior, warns that there are few respondents, orders the targets by their
// true abilities and correlates with the true difficulties.
func TestFewPersonsManyItems(t *testing.T) {
	a, b := itemParams(10, 300, false)
	d := NewData([]string{"weak", "fair", "good", "best"}, nil)
	d.Items = make([]string, 300)
	for i := range d.Items {
		d.Items[i] = string(rune('A'+i%26)) + string(rune('a'+i/26))
	}
	d.Right = make([]int32, 4*300)
	d.Trials = make([]int32, 4*300)
	truth := []float64{-1, -0.2, 0.5, 1.4}
	rng := newRand(10)
	for p, th := range truth {
		for i := range 300 {
			for range 3 {
				y := 0
				if rng.Float64() < Prob(a[i], b[i], th) {
					y = 1
				}
				d.Add(p, i, y, 1)
			}
		}
	}
	f := estimate(t, d, Options{Model: TwoPL, PriorSD: -1})
	for p := 1; p < 4; p++ {
		if !(f.Persons[p].Theta > f.Persons[p-1].Theta) {
			t.Errorf("abilities %v, %v out of the true order", f.Persons[p-1].Theta, f.Persons[p].Theta)
		}
	}
	var gb []float64
	for _, it := range f.Items {
		if math.IsInf(it.B, 0) || math.IsNaN(it.SEB) {
			t.Fatalf("%s: b %v ± %v", it.ID, it.B, it.SEB)
		}
		gb = append(gb, it.B)
	}
	if r := corr(gb, b); r < 0.6 {
		t.Errorf("difficulties correlate %.2f with the truth from 4 respondents, want ≥ 0.6", r)
	}
	if w := strings.Join(f.Warnings, "\n"); !strings.Contains(w, "only 4 respondents") {
		t.Errorf("warnings %q do not say there are few respondents", w)
	}
}

// TestCoverageLong repeats the coverage check over many seeded simulations
// at two levels: the abilities' intervals cover at their level within 0.01.
func TestCoverageLong(t *testing.T) {
	longtest.Skip(t)
	for _, level := range []float64{0.8, 0.95} {
		cover, n := 0, 0
		for seed := range uint64(20) {
			a, b := itemParams(100+seed, 20, false)
			d, theta := simulate(100+seed, 1000, 20, 1, a, b)
			f := estimate(t, d, Options{Model: TwoPL, Level: level})
			for p, per := range f.Persons {
				n++
				if per.Lo <= theta[p] && theta[p] <= per.Hi {
					cover++
				}
			}
		}
		if rate := float64(cover) / float64(n); math.Abs(rate-level) > 0.01 {
			t.Errorf("%v intervals cover %.4f of %d true abilities", level, rate, n)
		}
	}
}

// TestReversedItemNamed: an item that stronger respondents get wrong more
// often (a mislabeled expected answer, say) is named in a warning under 2PL.
func TestReversedItemNamed(t *testing.T) {
	a, b := itemParams(12, 12, false)
	a[5], b[5] = 1.2, 0 // simulated with a = 1.2, then its answers flipped
	d, _ := simulate(12, 800, 12, 1, a, b)
	for p := range d.Persons {
		k := p*12 + 5
		d.Right[k] = d.Trials[k] - d.Right[k]
	}
	f := estimate(t, d, Options{Model: TwoPL, PriorSD: -1})
	w := strings.Join(f.Warnings, "\n")
	if !strings.Contains(w, `1 item(s) barely discriminate: "i5" (a = `) {
		t.Errorf("warnings %q do not name the reversed item (its a %.3f)", w, f.Items[5].A)
	}
}
