package trend

import (
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// readObservations reads testdata/observations.csv (written by
// testdata/golden.py).
func readObservations(t *testing.T) []Observation {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "observations.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var obs []Observation
	for _, r := range recs[1:] {
		tm, err := time.Parse(time.RFC3339, r[2])
		if err != nil {
			t.Fatal(err)
		}
		w, err := strconv.ParseFloat(r[4], 64)
		if err != nil {
			t.Fatal(err)
		}
		obs = append(obs, Observation{TraceID: r[0], Model: r[1], Time: tm, Sample: "S1", Stratum: r[3], Weight: w, Pass: r[5] == "1"})
	}
	return obs
}

type goldenChange struct {
	Against                                 string
	Delta, SE, Lo, Hi, SE0, Z, P, PAdjusted float64
	Drop                                    bool
}

type goldenPoint struct {
	Window               string
	N, Passed            int
	Population, Rate, SE float64
	Change               *goldenChange
}

// Every rate, standard error, change interval, z, one-sided p-value and Holm-
// adjusted p-value equals the independent computation of
// testdata/golden.py (numpy's textbook stratified variance, scipy's normal
// and t, statsmodels' Holm), and the drop planted in alpha's fourth week
// is the one flagged.
func TestComputeMatchesReference(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("testdata", "golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	var golden struct {
		Level  float64
		Weeks  []string
		Models map[string][]goldenPoint
		Drops  int
	}
	if err := json.Unmarshal(b, &golden); err != nil {
		t.Fatal(err)
	}
	// Python's json writes p_adjusted; map it by hand.
	var raw struct {
		Models map[string][]struct {
			Change *struct {
				PAdjusted float64 `json:"p_adjusted"`
			} `json:"change"`
		} `json:"models"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	for m, pts := range raw.Models {
		for i, p := range pts {
			if p.Change != nil {
				golden.Models[m][i].Change.PAdjusted = p.Change.PAdjusted
			}
		}
	}

	rep, err := Compute(readObservations(t), Options{Level: golden.Level}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Windows) != len(golden.Weeks) {
		t.Fatalf("windows %v, want %v", rep.Windows, golden.Weeks)
	}
	for i, w := range rep.Windows {
		if w.Label != golden.Weeks[i] || w.Start.Weekday() != time.Monday || w.End.Sub(w.Start) != 7*24*time.Hour {
			t.Errorf("window %d: %+v, want ISO week %s from a Monday", i, w, golden.Weeks[i])
		}
	}
	if len(rep.Models) != len(golden.Models) {
		t.Fatalf("%d models, want %d", len(rep.Models), len(golden.Models))
	}
	near := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
			t.Errorf("%s = %.12g, want %.12g", what, got, want)
		}
	}
	for _, s := range rep.Models {
		want := golden.Models[s.Model]
		if len(want) != len(s.Points) {
			t.Fatalf("%s: %d points, want %d", s.Model, len(s.Points), len(want))
		}
		for i, p := range s.Points {
			g := want[i]
			at := s.Model + " " + g.Window
			if p.Window != g.Window || p.N != g.N || p.Passed != g.Passed {
				t.Errorf("%s: window %s n %d passed %d, want %s %d %d", at, p.Window, p.N, p.Passed, g.Window, g.N, g.Passed)
			}
			near(at+" population", p.Population, g.Population)
			near(at+" rate", p.Rate, g.Rate)
			near(at+" se", p.SE, g.SE)
			if !(p.Lo < p.Rate && p.Rate < p.Hi) {
				t.Errorf("%s: interval [%g, %g] does not hold the rate %g", at, p.Lo, p.Hi, p.Rate)
			}
			if (p.Change == nil) != (g.Change == nil) {
				t.Errorf("%s: change %+v, want %+v", at, p.Change, g.Change)
				continue
			}
			if p.Change == nil {
				continue
			}
			c, gc := p.Change, g.Change
			if c.Against != gc.Against || c.Drop != gc.Drop {
				t.Errorf("%s: against %s drop %v, want %s %v", at, c.Against, c.Drop, gc.Against, gc.Drop)
			}
			near(at+" delta", c.Delta, gc.Delta)
			near(at+" change se", c.SE, gc.SE)
			near(at+" change lo", c.Lo, gc.Lo)
			near(at+" change hi", c.Hi, gc.Hi)
			near(at+" se0", c.SE0, gc.SE0)
			near(at+" z", c.Z, gc.Z)
			near(at+" p", c.P, gc.P)
			near(at+" p adjusted", c.PAdj, gc.PAdjusted)
		}
	}
	if rep.Drops != golden.Drops || rep.Tests != 8 {
		t.Errorf("drops %d of %d tests, want %d of 8", rep.Drops, rep.Tests, golden.Drops)
	}
	if rep.Drops != 1 || rep.Models[0].Points[3].Change == nil || !rep.Models[0].Points[3].Change.Drop {
		t.Errorf("the planted drop (alpha, 2026-W48) is not the one drop flagged: %+v", rep.Models[0].Points[3])
	}
}
