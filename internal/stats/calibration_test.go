package stats

import (
	"errors"
	"math"
	"testing"
)

// width is the delta-method interval width at n₊, n₋ labels with the
// rates of c held.
func widthAt(r RoganGladen, judged int, c Confusion, pos, neg float64) float64 {
	vq, vt, vs := rgVariances(judged, r.Q, c)
	a := vt * float64(c.Positives())
	b := vs * float64(c.Negatives())
	p := r.Estimate
	return 2 * 1.959963984540054 * math.Sqrt(vq+p*p*a/pos+(1-p)*(1-p)*b/neg) / r.J
}

// The labels needed reach the width, and one label fewer in a class that
// needs more does not; when the passes are already plenty only fails are
// asked for.
func TestNeededLabelsReachTheWidth(t *testing.T) {
	for _, c := range []Confusion{
		{TP: 33, FN: 3, FP: 3, TN: 11},
		{TP: 2000, FN: 100, FP: 10, TN: 10}, // passes plenty, fails few
		{TP: 10, FN: 2, FP: 40, TN: 400},    // fails plenty
	} {
		rg, err := RoganGladenCI(70000, 100000, c, 0.05)
		if err != nil {
			t.Fatal(err)
		}
		need, err := NeededLabels(rg, 100000, c, 0.05, 0.05)
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		P, F := float64(c.Positives()), float64(c.Negatives())
		if w := widthAt(rg, 100000, c, P+float64(need.Pass), F+float64(need.Fail)); w > 0.05+1e-12 {
			t.Errorf("%+v: %d passes and %d fails more give width %v, not 0.05", c, need.Pass, need.Fail, w)
		}
		if need.Pass > 0 && widthAt(rg, 100000, c, P+float64(need.Pass)-1, F+float64(need.Fail)) <= 0.05 && need.Fail == 0 {
			t.Errorf("%+v: one pass fewer would do", c)
		}
		if need.Fail > 0 && widthAt(rg, 100000, c, P+float64(need.Pass), F+float64(need.Fail)-1) <= 0.05 && need.Pass == 0 {
			t.Errorf("%+v: one fail fewer would do", c)
		}
		h := P / (P + F)
		m := float64(need.Random)
		if widthAt(rg, 100000, c, P+h*m, F+(1-h)*m) > 0.05 || widthAt(rg, 100000, c, P+h*(m-1), F+(1-h)*(m-1)) <= 0.05 {
			t.Errorf("%+v: %d random labels is not the fewest that reach the width", c, need.Random)
		}
		t.Logf("%+v: width %.3f; %d passes, %d fails, or %d at random", c, need.Width, need.Pass, need.Fail, need.Random)
	}
	// Passes plenty: only fails are asked for.
	c := Confusion{TP: 2000, FN: 100, FP: 10, TN: 10}
	rg, _ := RoganGladenCI(70000, 100000, c, 0.05)
	if need, _ := NeededLabels(rg, 100000, c, 0.05, 0.05); need.Pass != 0 || need.Fail == 0 {
		t.Errorf("with 2,100 passes labeled and 20 fails, asked for %d passes and %d fails", need.Pass, need.Fail)
	}
}

// A judge that passes everything, or fails everything, has J = 0: the
// correction is undefined, never a number, whatever the judged rate.
func TestOneVerdictJudgeIsNotCorrected(t *testing.T) {
	for _, c := range []Confusion{{TP: 45, FP: 5}, {FN: 45, TN: 5}, {TP: 10, FN: 30, FP: 10, TN: 30}} {
		if _, err := RoganGladenCI(500, 1000, c, 0.05); !errors.Is(err, ErrNotIdentifiable) {
			t.Errorf("%+v: %v, want not identifiable", c, err)
		}
	}
	// No fail labeled: TNR unknown.
	if _, err := RoganGladenCI(500, 1000, Confusion{TP: 40, FN: 10}, 0.05); !errors.Is(err, ErrNotIdentifiable) {
		t.Errorf("no fails labeled: %v", err)
	}
}

func TestKappaRejectsBadTables(t *testing.T) {
	for _, tab := range [][][]int{nil, {{1, 2}}, {{1, -1}, {0, 2}}} {
		if _, err := CohensKappa(tab, 0.05); err == nil {
			t.Errorf("%v: no error", tab)
		}
	}
	if _, err := CohensKappa([][]int{{0, 0}, {0, 0}}, 0.05); !errors.Is(err, ErrKappaUndefined) {
		t.Errorf("empty table: %v", err)
	}
}
