package stats

import (
	"encoding/json"
	"math"
	"os"
	"testing"
)

// TestWilsonMatchesStatsmodels checks against golden vectors produced by
// statsmodels' proportion_confint(method="wilson"); see testdata/wilson.py.
func TestWilsonMatchesStatsmodels(t *testing.T) {
	b, err := os.ReadFile("testdata/wilson.json")
	if err != nil {
		t.Fatal(err)
	}
	var golden []struct {
		K, N          int
		Alpha, Lo, Hi float64
	}
	if err := json.Unmarshal(b, &golden); err != nil {
		t.Fatal(err)
	}
	if len(golden) < 10 {
		t.Fatalf("only %d golden vectors", len(golden))
	}
	for _, g := range golden {
		got := Wilson(g.K, g.N, g.Alpha)
		if math.Abs(got.Lo-g.Lo) > 1e-9 || math.Abs(got.Hi-g.Hi) > 1e-9 {
			t.Errorf("Wilson(%d, %d, %g) = [%.10f, %.10f], statsmodels [%.10f, %.10f]", g.K, g.N, g.Alpha, got.Lo, got.Hi, g.Lo, g.Hi)
		}
	}
}

func TestWilsonNoData(t *testing.T) {
	if got := Wilson(0, 0, 0.05); got != (Interval{0, 1}) {
		t.Errorf("Wilson(0,0) = %v, want [0,1]", got)
	}
}
