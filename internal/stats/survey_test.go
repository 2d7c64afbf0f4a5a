package stats

import (
	"encoding/json"
	"math"
	"os"
	"testing"
)

// surveyGolden mirrors testdata/survey.json, produced by testdata/survey.py
// from the textbook stratified formulas (numpy, scipy's t quantile), an
// implementation independent of WeightedMean's linearised residuals.
type surveyGolden struct {
	Name   string
	Alpha  float64
	Strata []struct {
		Name string
		N    float64
		Ys   []float64
	}
	Want struct {
		Mean, SE, Kish, Effective, Lo, Hi float64
		DF, N                             int
		Population                        float64
		Method                            string
	}
}

// surveyObservations lays a golden set out as WeightedMean's input: every
// unit of a stratum weighted N_h/n_h, the strata interleaved so nothing
// depends on their order.
func surveyObservations(g surveyGolden) []Observation {
	var obs []Observation
	for i := 0; ; i++ {
		added := false
		for _, s := range g.Strata {
			if i < len(s.Ys) {
				obs = append(obs, Observation{Stratum: s.Name, Weight: s.N / float64(len(s.Ys)), Y: s.Ys[i]})
				added = true
			}
		}
		if !added {
			return obs
		}
	}
}

func TestWeightedMeanGolden(t *testing.T) {
	b, err := os.ReadFile("testdata/survey.json")
	if err != nil {
		t.Fatal(err)
	}
	var gs []surveyGolden
	if err := json.Unmarshal(b, &gs); err != nil {
		t.Fatal(err)
	}
	if len(gs) < 8 {
		t.Fatalf("only %d golden sets", len(gs))
	}
	close := func(got, want float64) bool { return math.Abs(got-want) <= 1e-9*math.Max(1, math.Abs(want)) }
	for _, g := range gs {
		t.Run(g.Name, func(t *testing.T) {
			e, err := WeightedMean(surveyObservations(g), g.Alpha)
			if err != nil {
				t.Fatal(err)
			}
			w := g.Want
			for _, c := range []struct {
				what      string
				got, want float64
			}{
				{"mean", e.Mean, w.Mean}, {"se", e.SE, w.SE}, {"kish", e.Kish, w.Kish},
				{"effective", e.Effective, w.Effective}, {"lo", e.CI.Lo, w.Lo}, {"hi", e.CI.Hi, w.Hi},
				{"population", e.Population, w.Population},
			} {
				if !close(c.got, c.want) {
					t.Errorf("%s = %.12g, want %.12g", c.what, c.got, c.want)
				}
			}
			if e.DF != w.DF || e.N != w.N || e.Method != w.Method || e.Strata != len(g.Strata) {
				t.Errorf("df %d n %d method %s strata %d, want %d %d %s %d", e.DF, e.N, e.Method, e.Strata, w.DF, w.N, w.Method, len(g.Strata))
			}
			if e.Method == SurveyWilson && !(e.CI.Lo <= e.Mean && e.Mean <= e.CI.Hi) {
				t.Errorf("interval [%g, %g] misses the estimate %g", e.CI.Lo, e.CI.Hi, e.Mean)
			}
		})
	}
}

// A stratum drawn whole is known exactly: it adds nothing to the variance,
// so a sample that is all census has a standard error of zero; drawing the
// same units from a larger stratum does not.
func TestWeightedMeanFinitePopulation(t *testing.T) {
	ys := []float64{1, 0, 1, 1, 0, 1, 0, 1}
	obs := func(weight float64) []Observation {
		var o []Observation
		for _, y := range ys {
			o = append(o, Observation{Stratum: "a", Weight: weight, Y: y})
		}
		return o
	}
	whole, err := WeightedMean(obs(1), 0.05)
	if err != nil {
		t.Fatal(err)
	}
	if whole.SE != 0 {
		t.Errorf("census SE = %g, want 0", whole.SE)
	}
	part, err := WeightedMean(obs(100), 0.05)
	if err != nil {
		t.Fatal(err)
	}
	// s² = 15/56 over 8 draws at f = 1/100.
	if want := math.Sqrt(0.99 * 15.0 / 56 / 8); math.Abs(part.SE-want) > 1e-12 {
		t.Errorf("SE = %g, want %g", part.SE, want)
	}
	if part.Mean != 0.625 || whole.Mean != 0.625 {
		t.Errorf("means %g %g, want 0.625", part.Mean, whole.Mean)
	}
}

func TestWeightedMeanBadInput(t *testing.T) {
	for _, c := range []struct {
		obs   []Observation
		alpha float64
		want  string
	}{
		{nil, 0.05, "no observations"},
		{[]Observation{{"a", 2, 1}}, 0, "alpha 0: must be strictly between 0 and 1 (0.05 for a 95% interval)"},
		{[]Observation{{"a", 2, 1}, {"b", 0, 1}}, 0.05, `observation 1 (stratum "b"): weight 0: must be positive and finite`},
		{[]Observation{{"a", math.Inf(1), 1}}, 0.05, `observation 0 (stratum "a"): weight +Inf: must be positive and finite`},
		{[]Observation{{"a", math.NaN(), 1}}, 0.05, `observation 0 (stratum "a"): weight NaN: must be positive and finite`},
		{[]Observation{{"a", 1, math.NaN()}}, 0.05, `observation 0 (stratum "a"): value NaN: must be finite`},
	} {
		_, err := WeightedMean(c.obs, c.alpha)
		if err == nil || err.Error() != c.want {
			t.Errorf("%v: error %v, want %q", c.obs, err, c.want)
		}
	}
	// One observation drawn from a stratum of one: known exactly.
	e, err := WeightedMean([]Observation{{"a", 1, 1}}, 0.05)
	if err != nil || e.Mean != 1 || e.SE != 0 || e.CI != (Interval{1, 1}) {
		t.Errorf("one census observation: %+v, %v", e, err)
	}
}
