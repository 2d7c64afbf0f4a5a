package analysis

import (
	"encoding/json"
	"math"
	"testing"
)

// The between-run standard deviation (the SD of the K per-epoch rates),
// the variance of every verdict and the within-case share match numpy
// (ddof=1) on verdict matrices from ledger_noise.py.
func TestEpochNoiseMatchesNumpy(t *testing.T) {
	g := loadLedgerGolden(t)
	if len(g.Noise) == 0 {
		t.Fatal("no reference cases")
	}
	for _, c := range g.Noise {
		t.Run(c.Name, func(t *testing.T) {
			k := len(c.Verdicts[0])
			passes := make([][]bool, len(c.Verdicts))
			for i, row := range c.Verdicts {
				for _, x := range row {
					passes[i] = append(passes[i], x == 1)
				}
			}
			ci, vs := fixture(k, passes, nil)
			r := Rate{CIMethod: "wilson"}
			es := primaryInterval(&r, vs, ci, 0.05)
			if es == nil || es.BetweenRunSD == nil || es.WithinShare == nil {
				t.Fatalf("epoch stats %+v: want the between-run SD and the within-case share", es)
			}
			if es.Epochs != k || es.CompleteCases != len(c.Verdicts) || len(es.EpochRates) != k {
				t.Errorf("K %d over %d complete cases with %d rates; want %d, %d", es.Epochs, es.CompleteCases, len(es.EpochRates), k, len(c.Verdicts))
			}
			for e, want := range c.EpochRates {
				if e < len(es.EpochRates) && math.Abs(es.EpochRates[e]-want) > 1e-6 {
					t.Errorf("epoch %d rate %v, numpy %v", e+1, es.EpochRates[e], want)
				}
			}
			if math.Abs(*es.BetweenRunSD-c.BetweenRunSD) > 1e-6 {
				t.Errorf("between-run SD %v, numpy %v", *es.BetweenRunSD, c.BetweenRunSD)
			}
			if math.Abs(es.WithinVar-c.WithinVar) > 1e-6 || math.Abs(es.TotalVar-c.TotalVar) > 1e-6 {
				t.Errorf("within %v total %v, numpy %v %v", es.WithinVar, es.TotalVar, c.WithinVar, c.TotalVar)
			}
			if math.Abs(*es.WithinShare-c.WithinShare) > 1e-4 {
				t.Errorf("within-case share %v, numpy %v", *es.WithinShare, c.WithinShare)
			}
			// The SE across cases is still the primary rate's, beside it.
			if r.CIMethod != "wilson_deff" || r.SE <= 0 {
				t.Errorf("rate %+v: want the epoch-mean SE across cases", r)
			}
		})
	}
}

// Computed by hand: three epochs of four cases, the fourth case missing
// epoch 3 (an interrupted run). The epoch rates are over the three complete
// cases: epoch 1 passes {1,1,0} → 2/3, epoch 2 {1,0,0} → 1/3, epoch 3
// {1,1,1} → 1; mean 2/3, deviations 0, −1/3, +1/3, SD = √((0 + 1/9 + 1/9)/2)
// = 1/3.
func TestEpochNoiseUsesCompleteCases(t *testing.T) {
	ci, vs := fixture(3, [][]bool{{true, true, true}, {true, false, true}, {false, false, true}, {true, true}}, nil)
	r := Rate{}
	es := primaryInterval(&r, vs, ci, 0.05)
	if es == nil || es.BetweenRunSD == nil {
		t.Fatalf("epoch stats %+v", es)
	}
	if es.CompleteCases != 3 || es.Cases != 4 || es.Epochs != 3 {
		t.Errorf("%d complete of %d cases over %d epochs, want 3 of 4 over 3", es.CompleteCases, es.Cases, es.Epochs)
	}
	want := []float64{0.666667, 0.333333, 1}
	for e := range want {
		if math.Abs(es.EpochRates[e]-want[e]) > 1e-6 {
			t.Errorf("epoch rates %v, want %v", es.EpochRates, want)
			break
		}
	}
	if math.Abs(*es.BetweenRunSD-1.0/3) > 1e-6 {
		t.Errorf("between-run SD %v, want 1/3", *es.BetweenRunSD)
	}
}

// One epoch has no between-run spread: nothing is reported, in Go or in
// JSON, clustered cases or not.
func TestEpochNoiseAbsentWithOneEpoch(t *testing.T) {
	for _, clusters := range [][]string{nil, {"a", "a", "b", "b"}} {
		ci, vs := fixture(1, [][]bool{{true}, {false}, {true}, {true}}, clusters)
		r := Rate{}
		if es := primaryInterval(&r, vs, ci, 0.05); es != nil {
			t.Errorf("one epoch (clusters %v) gave epoch stats %+v", clusters, es)
		}
		b, err := json.Marshal(Target{Name: "t", Primary: r})
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		if _, ok := m["epochs"]; ok {
			t.Errorf("one epoch: JSON has an epochs object: %s", b)
		}
	}
	// Two epochs of which only one case has both: too few complete cases
	// for a spread, so no SD (and no share) is shown, while the epoch
	// summary itself stays.
	ci, vs := fixture(2, [][]bool{{true, false}, {true}, {false}}, nil)
	r := Rate{}
	es := primaryInterval(&r, vs, ci, 0.05)
	if es == nil {
		t.Fatal("no epoch stats")
	}
	if es.BetweenRunSD != nil || es.WithinShare != nil || es.Epochs != 0 || len(es.EpochRates) != 0 {
		t.Errorf("one complete case: %+v, want no between-run figures", es)
	}
}
