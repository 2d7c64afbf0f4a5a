package stats

import (
	"encoding/json"
	"math"
	"os"
	"testing"
)

// pairedGolden mirrors testdata/paired.json, produced by testdata/paired.py
// from statsmodels, SciPy and exact rational arithmetic.
type pairedGolden struct {
	McNemar []struct {
		B, C        int
		Exact       float64
		MidP        float64 `json:"midp"`
		Statsmodels float64
	}
	Holm, BH []struct {
		P, Adj []float64
	}
	Binary []binaryGolden
	Means  []struct {
		A, B             []float64
		Alpha, Delta, SE float64
		TCI              [2]float64 `json:"t_ci"`
		P                float64
	}
	GSM8K struct {
		Configs []string
		N       int
		Passed  map[string]int
		Alpha   float64
		Pairs   []struct {
			A, B string
			binaryGolden
			Holm, BH float64
		}
	} `json:"gsm8k"`
	McNemarN []struct {
		PDisc               float64 `json:"p_disc"`
		Delta, Alpha, Power float64
		NReal               float64 `json:"n_real"`
		N                   int
	} `json:"mcnemar_n"`
	MDD []struct {
		N                 int
		PDisc             float64 `json:"p_disc"`
		Alpha, Power, MDD float64
	}
	TwoProp []struct {
		P1, P2, Alpha, Power float64
		NReal                float64 `json:"n_real"`
		N                    int
	} `json:"two_prop"`
}

type binaryGolden struct {
	A, B             string
	Alpha, Delta, SE float64
	Wald, Newcombe   [2]float64
	AOnly            int `json:"a_only"`
	BOnly            int `json:"b_only"`
	Both, Neither    int
	PExact           float64 `json:"p_exact"`
	PMidP            float64 `json:"p_midp"`
}

func loadPairedGolden(t *testing.T) pairedGolden {
	t.Helper()
	b, err := os.ReadFile("testdata/paired.json")
	if err != nil {
		t.Fatal(err)
	}
	var g pairedGolden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.McNemar) < 10 || len(g.Holm) < 5 || len(g.Binary) < 5 || len(g.Means) < 3 ||
		len(g.GSM8K.Pairs) != 6 || len(g.McNemarN) < 5 || len(g.MDD) < 3 || len(g.TwoProp) < 5 {
		t.Fatalf("golden file is missing blocks: regenerate with testdata/paired.py")
	}
	return g
}

// goldenAbs reports whether got matches want to within tol, relative to |want|
// when |want| > 1 and absolute otherwise.
func goldenAbs(got, want, tol float64) bool {
	if math.IsNaN(want) {
		return math.IsNaN(got)
	}
	return math.Abs(got-want) <= tol*math.Max(1, math.Abs(want))
}

// goldenRel reports whether got matches want to within a relative tol (for
// p-values that span hundreds of orders of magnitude).
func goldenRel(got, want, tol float64) bool {
	if want == 0 {
		return got == 0
	}
	return math.Abs(got-want) <= tol*math.Abs(want)
}

func boolsFromBits(s string) []bool {
	out := make([]bool, len(s))
	for i, c := range s {
		out[i] = c == '1'
	}
	return out
}
