package difficulty

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// tierSet builds a set with n cases per tier (tiers given), and when
// rates is not nil one target per rate map (tier → solved per 10 cases).
func tierSet(name string, perTier map[int]int, targets map[string]map[int]int) *Set {
	s := &Set{Name: name, Kind: KindRun, Scale: Scale{Source: SourceTag, Tag: "tier"}}
	for tier := 1; tier <= 10; tier++ {
		for k := range perTier[tier] {
			s.Cases = append(s.Cases, fmt.Sprintf("%s-%d-%d", name, tier, k))
			s.Values = append(s.Values, float64(tier))
		}
	}
	for _, tn := range []string{"x", "y"} {
		rates, ok := targets[tn]
		if !ok {
			continue
		}
		tr := TargetResults{Name: tn, Right: make([]int32, len(s.Cases)), Trials: make([]int32, len(s.Cases))}
		for i, v := range s.Values {
			tr.Trials[i] = 1
			if i%10 < rates[int(v)] {
				tr.Right[i] = 1
			}
		}
		s.Targets = append(s.Targets, tr)
	}
	return s
}

// TestGapIsNotExtrapolated is the must-show: a benchmark with no
// items in a bin the workload needs reports the bin as a gap, and its
// re-weighted score says it cannot be computed there, while the
// covered-only score says what share it stands for.
func TestGapIsNotExtrapolated(t *testing.T) {
	bench := tierSet("bench", map[int]int{1: 40, 2: 40, 3: 20},
		map[string]map[int]int{"x": {1: 9, 2: 8, 3: 7}, "y": {1: 6, 2: 6, 3: 6}})
	work := tierSet("work", map[int]int{1: 10, 2: 10, 3: 10, 4: 10, 5: 10}, nil)
	work.Kind = KindDataset
	m, err := Compare(bench, work, MismatchOptions{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Bins) != 5 {
		t.Fatalf("%d bins, want one per tier 1-5", len(m.Bins))
	}
	for _, b := range m.Bins {
		wantGap := b.Lo >= 4
		if b.Gap != wantGap {
			t.Errorf("tier %s: gap %v, want %v", b.Label, b.Gap, wantGap)
		}
	}
	near(t, "uncovered share", m.UncoveredShare, 0.4, 1e-12)
	if g := m.LargestGap; g.Lo != 3 || g.Hi != 5 || g.Width != 2 || g.Work != 20 || math.Abs(g.WorkShare-0.4) > 1e-12 {
		t.Errorf("largest gap %+v, want (3, 5] holding 20 workload cases (40%%)", g)
	}
	for _, s := range m.Scores {
		if s.Reweighted.Computable || s.Reweighted.Rate != 0 ||
			!strings.Contains(s.Reweighted.Why, "40.0% of its mix in bins 4, 5") || !strings.Contains(s.Reweighted.Why, "not extrapolated") {
			t.Errorf("%s: reweighted %+v, want not computable naming bins 4, 5", s.Target, s.Reweighted)
		}
		near(t, s.Target+" covered share", s.CoveredShare, 0.6, 1e-12)
		if !s.Covered.Computable {
			t.Errorf("%s: covered-only score not computable: %s", s.Target, s.Covered.Why)
		}
		for _, r := range s.PerBin[3:] {
			if r.N != 0 || r.Rate != 0 || r.CI.Lo != 0 || r.CI.Hi != 1 {
				t.Errorf("%s: an empty bin's rate %+v, want 0 of 0 with the interval [0, 1]", s.Target, r)
			}
		}
	}
	// x: 0.9, 0.8, 0.7 on tiers 1-3, equal thirds of the covered mix.
	near(t, "x covered", m.Scores[0].Covered.Rate, (0.9+0.8+0.7)/3, 1e-12)
	near(t, "x raw", m.Scores[0].Raw.Rate, (40*0.9+40*0.8+20*0.7)/100, 1e-12)
	if p := m.Pairs[0]; p.Reweighted.Computable || p.Reweighted.Verdict != "" || p.Changed || !p.Raw.Computable {
		t.Errorf("pair %+v: want raw computed, reweighted not computable, not counted as changed", p)
	}
	if m.RankingReweighted == nil && m.RankingChanged {
		t.Error("ranking changed with no re-weighted ranking")
	}
	if len(m.RankingReweighted) != 0 {
		t.Errorf("re-weighted ranking %v: nothing computable to rank", m.RankingReweighted)
	}
	found := false
	for _, w := range m.Warnings {
		found = found || strings.Contains(w, "40.0% of its mix in bins where the benchmark has no item (4, 5)")
	}
	if !found {
		t.Errorf("warnings %q: want the gap named", m.Warnings)
	}
}

// TestGapContinuous: on a continuous axis the gap is an interval between
// benchmark items, and an edge bin the workload fills alone is a gap.
func TestGapContinuous(t *testing.T) {
	bench := &Set{Name: "b", Cases: []string{"a", "b", "c", "d"}, Values: []float64{0, 1, 2, 6}}
	work := &Set{Name: "w", Cases: []string{"p", "q", "r", "s", "u"}, Values: []float64{0.5, 3, 4, 5, 9}}
	m, err := Compare(bench, work, MismatchOptions{Edges: []float64{0, 3, 6, 9}, Replicates: 50})
	if err != nil {
		t.Fatal(err)
	}
	// Between 2 and 6 no benchmark item; 3, 4, 5 of the workload inside.
	if g := m.LargestGap; g.Lo != 2 || g.Hi != 6 || g.Work != 3 {
		t.Errorf("largest gap %+v, want (2, 6) with 3 workload cases", g)
	}
	// Bins [0,3) [3,6) [6,9]: the benchmark has 3, 0, 1; the workload 1, 3, 1.
	wantBench, wantWork := []int{3, 0, 1}, []int{1, 3, 1}
	for h, b := range m.Bins {
		if b.Bench != wantBench[h] || b.Work != wantWork[h] || b.Gap != (h == 1) {
			t.Errorf("bin %s: %d/%d gap %v", b.Label, b.Bench, b.Work, b.Gap)
		}
	}
	if m.Bins[2].Label != "[6, 9]" || m.Bins[0].Label != "[0, 3)" {
		t.Errorf("labels %q %q", m.Bins[0].Label, m.Bins[2].Label)
	}
	if len(m.Scores) != 0 || !strings.Contains(strings.Join(m.Warnings, "\n"), "no results: distances and gaps only") {
		t.Errorf("a benchmark without results: scores %v, warnings %q", m.Scores, m.Warnings)
	}
}

// TestFittedValuesAreBinned: a fitted scale's few distinct difficulties
// are not tiers — they get equal-width bins, a tag's get one bin each.
func TestFittedValuesAreBinned(t *testing.T) {
	mk := func(src string) *Set {
		return &Set{Name: src, Cases: []string{"a", "b", "c"}, Values: []float64{-1, 0.5, 2}, Scale: Scale{Source: src}}
	}
	m, err := Compare(mk(SourceFitted), mk(SourceFitted), MismatchOptions{Replicates: 10})
	if err != nil {
		t.Fatal(err)
	}
	if m.Discrete || len(m.Bins) != DefaultBins || m.Bins[0].Lo != -1 || m.Bins[DefaultBins-1].Hi != 2 {
		t.Errorf("fitted: discrete %v, %d bins from %g to %g", m.Discrete, len(m.Bins), m.Bins[0].Lo, m.Bins[len(m.Bins)-1].Hi)
	}
	m, err = Compare(mk(SourceTag), mk(SourceTag), MismatchOptions{Replicates: 10})
	if err != nil {
		t.Fatal(err)
	}
	if !m.Discrete || len(m.Bins) != 3 || m.Bins[1].Label != "0.5" {
		t.Errorf("tag: discrete %v, %d bins", m.Discrete, len(m.Bins))
	}
	// Identical sets are at distance 0. (A distance's bootstrap
	// distribution lies above its value when the sets are alike: the
	// percentile interval says how far resampling noise alone moves it.)
	for _, d := range m.Distances {
		if d.Value != 0 || d.CI.Lo < 0 || d.CI.Hi < d.CI.Lo {
			t.Errorf("identical sets: %s = %g, CI %v", d.Name, d.Value, d.CI)
		}
	}
}

// TestThinBinWarned: a bin the workload needs that rests on a few
// benchmark cases is measurable but warned of, and its weight shows in
// the effective sample size.
func TestThinBinWarned(t *testing.T) {
	bench := tierSet("bench", map[int]int{1: 20, 2: 3}, map[string]map[int]int{"x": {1: 5, 2: 5}})
	work := tierSet("work", map[int]int{1: 10, 2: 10}, nil)
	m, err := Compare(bench, work, MismatchOptions{Replicates: 20})
	if err != nil {
		t.Fatal(err)
	}
	want := "bins the workload needs that rest on fewer than 5 benchmark cases: 2 (50.0% of the workload on 3 benchmark cases)"
	if !strings.Contains(strings.Join(m.Warnings, "\n"), want) {
		t.Errorf("warnings %q, want %q", m.Warnings, want)
	}
	// Kish n = 1 / (0.5²/20 + 0.5²/3).
	near(t, "Kish n", m.Scores[0].Reweighted.Kish, 1/(0.25/20+0.25/3), 1e-9)
	near(t, "raw Kish n", m.Scores[0].Raw.Kish, 23, 1e-9)
}
