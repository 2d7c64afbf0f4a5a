package stats

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"testing"
)

// calibrationGolden mirrors testdata/calibration.json, produced by
// testdata/calibration.py: statsmodels' cohens_kappa, the Rogan–Gladen
// estimate with a numerical-gradient delta method and a root-found Fieller
// interval, a bounded minimisation of the labels needed, and a numpy bootstrap.
type calibrationGolden struct {
	Alpha, Width float64
	B            int
	Sets         []struct {
		Name           string
		TP, FN, FP, TN int
		JudgedPass     int `json:"judged_pass"`
		Judged         int
		Kappa          *struct{ Kappa, SE, Low, High float64 }
		Pass, Fail     struct{ Precision, Recall, F1 *float64 }
		Corrected      *struct {
			Estimate, Raw, Q, TPR, TNR, J, SE float64
			CI                                [2]float64
			Unbounded                         bool
			Needed                            struct {
				Width       float64
				Unreachable bool
				Pass, Fail  float64
				Random      int
			}
		}
		Bootstrap *struct {
			Low, High    float64
			LowSD        float64 `json:"low_sd"`
			HighSD       float64 `json:"high_sd"`
			DroppedShare float64 `json:"dropped_share"`
		}
	}
}

func loadCalibrationGolden(t *testing.T) calibrationGolden {
	t.Helper()
	b, err := os.ReadFile("testdata/calibration.json")
	if err != nil {
		t.Fatal(err)
	}
	var g calibrationGolden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Sets) < 10 {
		t.Fatalf("only %d label sets in the golden file", len(g.Sets))
	}
	return g
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// nanOrNear: want nil means the value is undefined (NaN here).
func nanOrNear(got float64, want *float64, tol float64) bool {
	if want == nil {
		return math.IsNaN(got)
	}
	return near(got, *want, tol)
}

func TestCalibrationGolden(t *testing.T) {
	g := loadCalibrationGolden(t)
	for _, s := range g.Sets {
		t.Run(s.Name, func(t *testing.T) {
			c := Confusion{TP: s.TP, FN: s.FN, FP: s.FP, TN: s.TN}
			k, err := CohensKappa(c.Table(), g.Alpha)
			switch {
			case s.Kappa == nil:
				if !errors.Is(err, ErrKappaUndefined) {
					t.Errorf("κ = %+v, %v; want undefined", k, err)
				}
			case err != nil:
				t.Errorf("κ: %v", err)
			default:
				if !near(k.Kappa, s.Kappa.Kappa, 1e-12) || !near(k.SE, s.Kappa.SE, 1e-9) ||
					!near(k.CI.Lo, s.Kappa.Low, 1e-9) || !near(k.CI.Hi, s.Kappa.High, 1e-9) {
					t.Errorf("κ = %v SE %v [%v, %v], statsmodels %+v", k.Kappa, k.SE, k.CI.Lo, k.CI.Hi, *s.Kappa)
				}
			}
			pass, fail := c.Classes()
			for _, m := range []struct {
				name string
				got  ClassMeasures
				want struct{ Precision, Recall, F1 *float64 }
			}{{"pass", pass, s.Pass}, {"fail", fail, s.Fail}} {
				if !nanOrNear(m.got.Precision, m.want.Precision, 1e-12) || !nanOrNear(m.got.Recall, m.want.Recall, 1e-12) || !nanOrNear(m.got.F1, m.want.F1, 1e-12) {
					t.Errorf("%s class = %+v, want %v %v %v", m.name, m.got, deref(m.want.Precision), deref(m.want.Recall), deref(m.want.F1))
				}
			}

			rg, err := RoganGladenCI(s.JudgedPass, s.Judged, c, g.Alpha)
			want := s.Corrected
			if want == nil {
				if !errors.Is(err, ErrNotIdentifiable) {
					t.Errorf("corrected = %+v, %v; want not identifiable", rg, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("corrected: %v", err)
			}
			if !near(rg.Q, want.Q, 1e-15) || !near(rg.TPR, want.TPR, 1e-15) || !near(rg.TNR, want.TNR, 1e-15) {
				t.Errorf("q %v TPR %v TNR %v, want %v %v %v", rg.Q, rg.TPR, rg.TNR, want.Q, want.TPR, want.TNR)
			}
			if !near(rg.Estimate, want.Estimate, 1e-12) || !near(rg.Raw, want.Raw, 1e-12) || !near(rg.J, want.J, 1e-12) {
				t.Errorf("estimate %v (raw %v, J %v), want %v (%v, %v)", rg.Estimate, rg.Raw, rg.J, want.Estimate, want.Raw, want.J)
			}
			// The reference's gradient is numerical (central differences).
			if !near(rg.SE, want.SE, 1e-7) {
				t.Errorf("delta-method SE %v, want %v", rg.SE, want.SE)
			}
			if rg.Unbounded != want.Unbounded || !near(rg.CI.Lo, want.CI[0], 1e-9) || !near(rg.CI.Hi, want.CI[1], 1e-9) {
				t.Errorf("Fieller interval %v (unbounded %v), want %v (%v)", rg.CI, rg.Unbounded, want.CI, want.Unbounded)
			}

			need, err := NeededLabels(rg, s.Judged, c, g.Width, g.Alpha)
			if !near(need.Width, want.Needed.Width, 1e-7) {
				t.Errorf("width now %v, want %v", need.Width, want.Needed.Width)
			}
			switch {
			case want.Needed.Unreachable:
				if !errors.Is(err, ErrWidthUnreachable) {
					t.Errorf("labels needed = %+v, %v; want unreachable", need, err)
				}
			case err != nil:
				t.Errorf("labels needed: %v", err)
			default:
				// The reference is a continuous optimum; ours is its
				// ceiling in whole labels.
				for _, x := range []struct {
					name string
					got  int
					want float64
				}{{"pass", need.Pass, want.Needed.Pass}, {"fail", need.Fail, want.Needed.Fail}} {
					if float64(x.got) < x.want-1e-3*math.Max(1, x.want) || float64(x.got) > x.want+1+1e-3*x.want {
						t.Errorf("%s labels needed %d, want ⌈%v⌉", x.name, x.got, x.want)
					}
				}
				if need.Random != want.Needed.Random {
					t.Errorf("labels needed at random %d, want %d", need.Random, want.Needed.Random)
				}
			}

			if b := s.Bootstrap; b != nil {
				rng := rand.New(rand.NewPCG(11, 12))
				ci, dropped, err := RoganGladenBootstrap(rng, s.JudgedPass, s.Judged, c, g.B, g.Alpha)
				if err != nil {
					t.Fatalf("bootstrap: %v", err)
				}
				// Our one run against the mean of the reference's runs: 5
				// standard deviations of an endpoint across seeds, and a
				// floor for endpoints the reference never moved.
				if !near(ci.Lo, b.Low, 5*b.LowSD+2e-3) || !near(ci.Hi, b.High, 5*b.HighSD+2e-3) {
					t.Errorf("bootstrap %v, reference [%v ± %v, %v ± %v]", ci, b.Low, b.LowSD, b.High, b.HighSD)
				}
				if share := float64(dropped) / float64(g.B); !near(share, b.DroppedShare, 0.01+3*b.DroppedShare) {
					t.Errorf("dropped %d replicates, reference share %v", dropped, b.DroppedShare)
				}
			}
		})
	}
}

// The judge that passes everything and the one that fails everything
// are named in the golden file: Youden's J is 0, the correction is
// undefined (never a number), and κ is 0 however high the raw agreement.
func TestCalibrationGoldenHasTheDegenerateJudges(t *testing.T) {
	g := loadCalibrationGolden(t)
	found := map[string]bool{}
	for _, s := range g.Sets {
		c := Confusion{TP: s.TP, FN: s.FN, FP: s.FP, TN: s.TN}
		if c.FN+c.TN == 0 || c.TP+c.FP == 0 {
			found[s.Name] = true
			if s.Corrected != nil {
				t.Errorf("%s: a judge with one verdict has a corrected rate in the golden file", s.Name)
			}
			if _, err := RoganGladenCI(s.JudgedPass, s.Judged, c, 0.05); !errors.Is(err, ErrNotIdentifiable) {
				t.Errorf("%s: corrected rate %v, want not identifiable", s.Name, err)
			}
		}
	}
	if !found["passes everything"] || !found["fails everything"] {
		t.Errorf("the golden sets lack a judge that passes or fails everything: %v", found)
	}
}

func deref(p *float64) any {
	if p == nil {
		return "undefined"
	}
	return *p
}
