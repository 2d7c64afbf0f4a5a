package probe

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/stats"
)

type goldenFamily struct {
	Alpha   float64 `json:"alpha"`
	MinDrop float64 `json:"min_drop"`
	Targets []struct {
		Table     [4]int     `json:"table"` // both, original only, twin only, neither
		Drop      float64    `json:"drop"`
		CI        [2]float64 `json:"ci"`
		PValue    float64    `json:"p_value"`
		PAdjusted float64    `json:"p_adjusted"`
		Original  [3]float64 `json:"original"` // rate, lo, hi
		Twin      [3]float64 `json:"twin"`
		Verdict   string     `json:"verdict"`
	} `json:"targets"`
}

func near(a, b, tol float64) bool {
	return math.Abs(a-b) <= tol*math.Max(1, math.Abs(b))
}

// Assess agrees with scipy's one-sided exact binomial test, statsmodels'
// Wilson intervals and Holm adjustment, and a transcription of Newcombe's
// paired interval at level 1 − 2·alpha (testdata/decide.py), and with the
// decision rule written there independently.
func TestAssessMatchesReference(t *testing.T) {
	b, err := os.ReadFile("testdata/decide.json")
	if err != nil {
		t.Fatal(err)
	}
	var golden struct {
		Families []goldenFamily `json:"families"`
	}
	if err := json.Unmarshal(b, &golden); err != nil {
		t.Fatal(err)
	}
	if len(golden.Families) < 5 {
		t.Fatalf("golden file has %d families", len(golden.Families))
	}
	verdicts := map[string]int{}
	for fi, fam := range golden.Families {
		var names []string
		var tables []stats.PairTable
		for i, g := range fam.Targets {
			names = append(names, fmt.Sprintf("t%d", i))
			tables = append(tables, stats.PairTable{Both: g.Table[0], AOnly: g.Table[1], BOnly: g.Table[2], Neither: g.Table[3]})
		}
		got, err := Assess(names, tables, Options{Alpha: fam.Alpha, MinDrop: fam.MinDrop})
		if err != nil {
			t.Fatalf("family %d: %v", fi, err)
		}
		for i, g := range fam.Targets {
			f := got[i]
			where := fmt.Sprintf("family %d target %v", fi, g.Table)
			checks := []struct {
				what      string
				got, want float64
			}{
				{"drop", float64(f.Drop), g.Drop},
				{"ci lo", float64(f.CI[0]), g.CI[0]},
				{"ci hi", float64(f.CI[1]), g.CI[1]},
				{"p", float64(f.PValue), g.PValue},
				{"p adjusted", float64(f.PAdjusted), g.PAdjusted},
				{"original rate", float64(f.Original.Rate), g.Original[0]},
				{"original lo", float64(f.Original.CI[0]), g.Original[1]},
				{"original hi", float64(f.Original.CI[1]), math.Min(1, g.Original[2])},
				{"twin rate", float64(f.Twin.Rate), g.Twin[0]},
				{"twin lo", float64(f.Twin.CI[0]), g.Twin[1]},
				{"twin hi", float64(f.Twin.CI[1]), math.Min(1, g.Twin[2])},
			}
			for _, c := range checks {
				if !near(c.got, c.want, 1e-9) {
					t.Errorf("%s: %s = %.12g, reference %.12g", where, c.what, c.got, c.want)
				}
			}
			if f.Verdict != g.Verdict {
				t.Errorf("%s: verdict %q, reference %q", where, f.Verdict, g.Verdict)
			}
			verdicts[g.Verdict]++
		}
	}
	for _, v := range []string{VerdictContaminated, VerdictClean, VerdictInconclusive} {
		if verdicts[v] == 0 {
			t.Errorf("the golden vectors never reach verdict %q", v)
		}
	}
}

// The one-sided p-value is a tail of Binomial(b+c, 1/2): checked against
// exact sums computed here with big-enough float arithmetic for small n,
// and its complement property P(X ≥ b) + P(X ≤ b−1) = 1.
func TestOneSidedPIsTheUpperTail(t *testing.T) {
	pmf := func(x, n int) float64 {
		lg := func(k int) float64 { v, _ := math.Lgamma(float64(k + 1)); return v }
		return math.Exp(lg(n) - lg(x) - lg(n-x) - float64(n)*math.Ln2)
	}
	for n := 0; n <= 40; n++ {
		for b := 0; b <= n; b++ {
			c := n - b
			want := 0.0
			for x := b; x <= n; x++ {
				want += pmf(x, n)
			}
			if n == 0 {
				want = 1
			}
			if got := OneSidedP(b, c); !near(got, want, 1e-12) {
				t.Fatalf("OneSidedP(%d, %d) = %.15g, want %.15g", b, c, got, want)
			}
		}
	}
	if !math.IsNaN(OneSidedP(-1, 3)) {
		t.Error("a negative count must give NaN")
	}
}

// A target with no paired case is inconclusive and still a member of the
// Holm family (it does not make the others' adjustment smaller), and the
// JSON of its undefined numbers is null, not an encoding error.
func TestTargetWithNoPairedCase(t *testing.T) {
	fs, err := Assess([]string{"empty", "drop"}, []stats.PairTable{{}, {Both: 120, AOnly: 30, BOnly: 8, Neither: 42}}, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if fs[0].Verdict != VerdictInconclusive || fs[0].N != 0 {
		t.Errorf("empty target: %+v, want inconclusive with n 0", fs[0])
	}
	if want := 2 * OneSidedP(30, 8); !near(float64(fs[1].PAdjusted), want, 1e-12) {
		t.Errorf("p adjusted %.6g, want %.6g: the empty target still counts in the family", float64(fs[1].PAdjusted), want)
	}
	b, err := json.Marshal(fs[0])
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"drop":null`) || !strings.Contains(string(b), `"p_value":null`) {
		t.Errorf("undefined numbers in JSON: %s", b)
	}
}

func TestOptionsAreChecked(t *testing.T) {
	for _, o := range []Options{{Alpha: 0, MinDrop: 0.05}, {Alpha: 0.5, MinDrop: 0.05}, {Alpha: 0.05, MinDrop: -0.01}, {Alpha: 0.05, MinDrop: 1}, {Alpha: math.NaN(), MinDrop: 0}} {
		if _, err := Assess([]string{"a"}, []stats.PairTable{{Both: 1}}, o); err == nil {
			t.Errorf("options %+v accepted", o)
		}
	}
}
