package stats

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"testing"
)

// weightedGolden mirrors testdata/calibration_weighted.json, produced by
// testdata/calibration_weighted.py: numpy sums of the labels' weights,
// Kish's effective sizes, statsmodels' cohens_kappa of the weighted shares
// at the effective n, the corrected rate's delta method with a numerical
// gradient and its Fieller interval by root finding, and a numpy
// bootstrap within strata.
type weightedGolden struct {
	Alpha float64
	B     int
	Sets  []struct {
		Name       string
		JudgedPass int `json:"judged_pass"`
		Judged     int
		Strata     []struct {
			Design     string
			Judge      bool
			Weight     float64
			Pass, Fail int
		}
		Cells      [4]float64
		Kish       struct{ All, Pass, Fail float64 }
		Kappa      struct{ Kappa, SE, Low, High float64 }
		Agreement  float64
		Pass, Fail struct{ Precision, Recall, F1 *float64 }
		Corrected  *struct {
			Estimate, Raw, TPR, TNR, J, SE float64
			VarTPR                         float64 `json:"var_tpr"`
			VarTNR                         float64 `json:"var_tnr"`
			Cov                            float64
			CI                             [2]float64
			Unbounded                      bool
		}
		Bootstrap struct {
			Low, High float64
			LowSD     float64 `json:"low_sd"`
			HighSD    float64 `json:"high_sd"`
		}
	}
}

func TestWeightedCalibrationGolden(t *testing.T) {
	b, err := os.ReadFile("testdata/calibration_weighted.json")
	if err != nil {
		t.Fatal(err)
	}
	var g weightedGolden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Sets) < 5 {
		t.Fatalf("only %d weighted label sets", len(g.Sets))
	}
	rel := func(got, want, tol float64) bool { return near(got, want, tol*max(1, abs(want))) }
	for _, s := range g.Sets {
		t.Run(s.Name, func(t *testing.T) {
			var ls []WeightedLabel
			for _, st := range s.Strata {
				for i := range st.Pass + st.Fail {
					ls = append(ls, WeightedLabel{Human: i < st.Pass, Judge: st.Judge, Weight: st.Weight, Design: st.Design})
				}
			}
			w, err := Weigh(ls)
			if err != nil {
				t.Fatal(err)
			}
			if w.EqualWeights() {
				t.Fatal("a golden weighted set has equal weights")
			}
			if got := [4]float64{w.TP, w.FN, w.FP, w.TN}; got != s.Cells {
				t.Errorf("cells %v, want %v", got, s.Cells)
			}
			if !rel(w.Effective(), s.Kish.All, 1e-12) || !rel(w.EffectivePositives(), s.Kish.Pass, 1e-12) || !rel(w.EffectiveNegatives(), s.Kish.Fail, 1e-12) {
				t.Errorf("Kish %v %v %v, want %+v", w.Effective(), w.EffectivePositives(), w.EffectiveNegatives(), s.Kish)
			}
			k, err := WeightedKappa(w, g.Alpha)
			if err != nil {
				t.Fatal(err)
			}
			if !near(k.Kappa, s.Kappa.Kappa, 1e-12) || !near(k.SE, s.Kappa.SE, 1e-9) || !near(k.CI.Lo, s.Kappa.Low, 1e-9) || !near(k.CI.Hi, s.Kappa.High, 1e-9) {
				t.Errorf("κ %v SE %v %v, statsmodels %+v", k.Kappa, k.SE, k.CI, s.Kappa)
			}
			if !near(w.Agreement(), s.Agreement, 1e-12) {
				t.Errorf("agreement %v, want %v", w.Agreement(), s.Agreement)
			}
			pass, fail := w.Classes()
			for _, m := range []struct {
				name string
				got  ClassMeasures
				want struct{ Precision, Recall, F1 *float64 }
			}{{"pass", pass, s.Pass}, {"fail", fail, s.Fail}} {
				if !nanOrNear(m.got.Precision, m.want.Precision, 1e-12) || !nanOrNear(m.got.Recall, m.want.Recall, 1e-12) || !nanOrNear(m.got.F1, m.want.F1, 1e-12) {
					t.Errorf("%s class %+v, want %v %v %v", m.name, m.got, deref(m.want.Precision), deref(m.want.Recall), deref(m.want.F1))
				}
			}
			rg, v, err := RoganGladenWeightedCI(s.JudgedPass, s.Judged, w, g.Alpha)
			want := s.Corrected
			if want == nil {
				if err == nil {
					t.Errorf("corrected %+v; want not identifiable", rg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !near(rg.TPR, want.TPR, 1e-12) || !near(rg.TNR, want.TNR, 1e-12) || !near(rg.J, want.J, 1e-12) ||
				!near(rg.Estimate, want.Estimate, 1e-12) || !near(rg.Raw, want.Raw, 1e-12) {
				t.Errorf("TPR %v TNR %v J %v estimate %v (raw %v), want %+v", rg.TPR, rg.TNR, rg.J, rg.Estimate, rg.Raw, *want)
			}
			if !rel(v.TPR, want.VarTPR, 1e-9) || !rel(v.TNR, want.VarTNR, 1e-9) || !near(v.Cov, want.Cov, 1e-9*abs(want.VarTPR+want.VarTNR)) {
				t.Errorf("variances %+v, want TPR %v TNR %v cov %v", v, want.VarTPR, want.VarTNR, want.Cov)
			}
			if !near(rg.SE, want.SE, 1e-7) {
				t.Errorf("SE %v, want %v", rg.SE, want.SE)
			}
			if rg.Unbounded != want.Unbounded || !near(rg.CI.Lo, want.CI[0], 1e-9) || !near(rg.CI.Hi, want.CI[1], 1e-9) {
				t.Errorf("Fieller %v (unbounded %v), want %v (%v)", rg.CI, rg.Unbounded, want.CI, want.Unbounded)
			}
			ci, _, err := RoganGladenWeightedBootstrap(rand.New(rand.NewPCG(11, 12)), s.JudgedPass, s.Judged, w, g.B, g.Alpha)
			if err != nil {
				t.Fatal(err)
			}
			bs := s.Bootstrap
			if !near(ci.Lo, bs.Low, 5*bs.LowSD+2e-3) || !near(ci.Hi, bs.High, 5*bs.HighSD+2e-3) {
				t.Errorf("bootstrap %v, reference [%v ± %v, %v ± %v]", ci, bs.Low, bs.LowSD, bs.High, bs.HighSD)
			}
		})
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
