package difficulty

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/irt"
	"github.com/assay-eval/assay/internal/stats"
)

// TestFitGSM8K fits Rasch to the four recorded GSM8K configurations: with
// every configuration answering every problem, the abilities follow the
// solved counts and the difficulties the problems' solved counts (Rasch's
// sufficient statistics); the per-tier view holds the counts this test
// makes itself, and many-step problems come out harder.
func TestFitGSM8K(t *testing.T) {
	problems := readGSM8K(t)
	bench, _ := gsm8kSets(problems, 0)
	bench.Scale = Scale{Source: SourceFitted, Tag: "tier"}
	for _, v := range bench.Values {
		bench.Tags = append(bench.Tags, strconv.Itoa(int(v)))
	}
	f, err := Fit([]*Set{bench}, FitOptions{Model: "rasch", Tag: "tier"})
	if err != nil {
		t.Fatal(err)
	}
	if f.Scale.Source != SourceFitted || f.Scale.Model != "rasch" || len(f.Cases) != 1319 || len(f.Targets) != 4 {
		t.Fatalf("scale %+v, %d cases, %d targets", f.Scale, len(f.Cases), len(f.Targets))
	}
	solved := map[string]int{}
	for _, p := range problems {
		for c, ok := range p.correct {
			if ok {
				solved[c]++
			}
		}
	}
	abilities := slices.Clone(f.Targets)
	slices.SortFunc(abilities, func(a, b Ability) int { return cmp.Compare(b.Theta, a.Theta) })
	for k := 1; k < len(abilities); k++ {
		if solved[abilities[k-1].Target] <= solved[abilities[k].Target] {
			t.Errorf("ability order %v does not follow the solved counts %v", abilities, solved)
		}
	}
	for _, a := range f.Targets {
		if a.Right != solved[a.Target] || a.Trials != 1319 || !(a.Lo < a.Theta && a.Theta < a.Hi) {
			t.Errorf("%s: %d/%d, interval %g < %g < %g", a.Target, a.Right, a.Trials, a.Lo, a.Theta, a.Hi)
		}
	}
	for k := 1; k < len(f.Cases); k++ {
		a, b := f.Cases[k-1], f.Cases[k]
		if a.B < b.B || a.Right > b.Right {
			t.Fatalf("cases not hardest first with fewer solved first: %+v then %+v", a, b)
		}
	}
	for _, c := range f.Cases {
		if math.IsInf(c.B, 0) || math.IsNaN(c.B) {
			t.Fatalf("case %s: difficulty %g: the default prior keeps it finite", c.ID, c.B)
		}
	}
	// The tiers, from the test's own counts.
	type tierCount struct {
		cases  int
		solved map[string]int
		bsum   float64
	}
	byID := map[string]CaseDifficulty{}
	for _, c := range f.Cases {
		byID[c.ID] = c
	}
	counts := map[int]*tierCount{}
	for i, p := range problems {
		c := counts[p.tier]
		if c == nil {
			c = &tierCount{solved: map[string]int{}}
			counts[p.tier] = c
		}
		c.cases++
		c.bsum += byID[bench.Cases[i]].B
		for cfg, ok := range p.correct {
			if ok {
				c.solved[cfg]++
			}
		}
		if byID[bench.Cases[i]].Tag != strconv.Itoa(p.tier) {
			t.Fatalf("case %s tag %q, want %d", bench.Cases[i], byID[bench.Cases[i]].Tag, p.tier)
		}
	}
	if len(f.Tiers) != len(counts) {
		t.Fatalf("%d tiers, want %d", len(f.Tiers), len(counts))
	}
	for k, tier := range f.Tiers {
		c := counts[int(tier.Value)]
		if tier.Value != float64(k) || tier.Label != strconv.Itoa(k) || tier.Cases != c.cases {
			t.Errorf("tier %d: %+v, want value %d with %d cases", k, tier, k, c.cases)
		}
		near(t, "tier "+tier.Label+" mean difficulty", tier.MeanB, c.bsum/float64(c.cases), 1e-9)
		for _, r := range tier.Rates {
			if r.Passed != c.solved[r.Target] || r.N != c.cases || r.CI != stats.Wilson(r.Passed, r.N, 0.05) {
				t.Errorf("tier %s %s: %+v, want %d/%d", tier.Label, r.Target, r, c.solved[r.Target], c.cases)
			}
		}
	}
	// Many-step problems are harder: tiers 2 < 3 < 4 < 5 in mean difficulty.
	for k := 3; k <= 5; k++ {
		if !(f.Tiers[k].MeanB > f.Tiers[k-1].MeanB) {
			t.Errorf("tier %d mean difficulty %.3f not above tier %d's %.3f", k, f.Tiers[k].MeanB, k-1, f.Tiers[k-1].MeanB)
		}
	}
	checkSeparates(t, f)
	if !f.SeparatesFound {
		t.Error("1,319 problems separate targets nowhere")
	}
	t.Logf("abilities %+v; separates [%.2f, %.2f] at SE < %.3f", f.Targets, f.Separates[0], f.Separates[1], f.SeparateSE)
}

// checkSeparates: the separated range is a run of the curve where the
// test SE is below the threshold, bounded by points above it (or the
// curve's ends), and it holds the curve's peak.
func checkSeparates(t *testing.T, f *Fitted) {
	t.Helper()
	if len(f.Curve) < 50 {
		t.Fatalf("curve of %d points", len(f.Curve))
	}
	peak := 0
	for k, p := range f.Curve {
		near(t, "curve SE", p.SE, 1/math.Sqrt(f.Fit.TestInfo(p.Theta)), 1e-9)
		if p.Info > f.Curve[peak].Info {
			peak = k
		}
	}
	if !f.SeparatesFound {
		if f.Curve[peak].SE < f.SeparateSE {
			t.Errorf("no separated range, but the SE at the peak is %g", f.Curve[peak].SE)
		}
		return
	}
	lo, hi := f.Separates[0], f.Separates[1]
	if !(lo <= f.Curve[peak].Theta && f.Curve[peak].Theta <= hi) {
		t.Errorf("separated range [%g, %g] misses the peak at %g", lo, hi, f.Curve[peak].Theta)
	}
	for k, p := range f.Curve {
		inside := p.Theta >= lo && p.Theta <= hi
		if inside && p.SE >= f.SeparateSE {
			t.Errorf("θ %g inside [%g, %g] has SE %g", p.Theta, lo, hi, p.SE)
		}
		edge := (k > 0 && f.Curve[k-1].Theta == hi) || (k+1 < len(f.Curve) && f.Curve[k+1].Theta == lo)
		if edge && !inside && p.SE < f.SeparateSE {
			t.Errorf("θ %g just outside [%g, %g] has SE %g below %g", p.Theta, lo, hi, p.SE, f.SeparateSE)
		}
	}
}

// simulate returns a set of the given targets on cases prefix1..prefixN,
// answering by Rasch with the given abilities; difficulties from the
// case index.
func simulate(rng *rand.Rand, name, prefix string, from, to int, targets map[string]float64, epochs int) *Set {
	s := &Set{Name: name, Kind: KindRun}
	for k := from; k <= to; k++ {
		s.Cases = append(s.Cases, fmt.Sprintf("%s%d", prefix, k))
		s.Values = append(s.Values, math.NaN())
	}
	names := make([]string, 0, len(targets))
	for n := range targets {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		tr := TargetResults{Name: n, Right: make([]int32, len(s.Cases)), Trials: make([]int32, len(s.Cases))}
		for i := range s.Cases {
			b := float64(from+i)/10 - 2
			for range epochs {
				tr.Trials[i]++
				if rng.Float64() < irt.Prob(1, b, targets[n]) {
					tr.Right[i]++
				}
			}
		}
		s.Targets = append(s.Targets, tr)
	}
	return s
}

// TestFitLinksRuns: two runs sharing cases and a target are one design —
// the same fit as irt.Estimate on a table this test joins itself by case
// ID and target name.
func TestFitLinksRuns(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	a := simulate(rng, "run-a", "c", 1, 30, map[string]float64{"x": 0.5, "y": -0.5, "z": 1.5}, 2)
	b := simulate(rng, "run-b", "c", 21, 50, map[string]float64{"x": 0.5, "w": -1}, 3)
	f, err := Fit([]*Set{a, b}, FitOptions{Model: "2pl"})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Cases) != 50 || len(f.Targets) != 4 || !slices.Equal(f.Sources, []string{"run-a", "run-b"}) {
		t.Fatalf("%d cases, %d targets, sources %v", len(f.Cases), len(f.Targets), f.Sources)
	}
	persons := []string{"w", "x", "y", "z"}
	items := make([]string, 50)
	for k := range items {
		items[k] = fmt.Sprintf("c%d", k+1)
	}
	d := irt.NewData(persons, items)
	for _, s := range []*Set{a, b} {
		for _, tr := range s.Targets {
			for i, id := range s.Cases {
				d.Add(slices.Index(persons, tr.Name), slices.Index(items, id), int(tr.Right[i]), int(tr.Trials[i]))
			}
		}
	}
	ref, err := irt.Estimate(d, irt.Options{Model: irt.TwoPL, PriorSD: -1})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range ref.Items {
		var got *CaseDifficulty
		for k := range f.Cases {
			if f.Cases[k].ID == it.ID {
				got = &f.Cases[k]
			}
		}
		if got == nil {
			t.Fatalf("case %s missing", it.ID)
		}
		near(t, it.ID+" B", got.B, it.B, 1e-6)
		near(t, it.ID+" A", got.A, it.A, 1e-6)
		if got.Trials != it.Trials || got.Right != it.Right {
			t.Errorf("%s: %d/%d, want %d/%d", it.ID, got.Right, got.Trials, it.Right, it.Trials)
		}
	}
	for _, p := range ref.Persons {
		for _, a := range f.Targets {
			if a.Target == p.ID {
				near(t, p.ID+" θ", a.Theta, p.Theta, 1e-6)
			}
		}
	}
	// x answered cases 21-30 in both runs: 2 + 3 epochs.
	for _, c := range f.Cases {
		if c.ID == "c25" && c.Trials != 2*3+3*2 {
			t.Errorf("c25: %d trials, want 12 (x 5, y 2, z 2, w 3)", c.Trials)
		}
	}
}

func TestFitRefusals(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	a := simulate(rng, "run-a", "c", 1, 10, map[string]float64{"x": 0, "y": 1}, 1)
	b := simulate(rng, "run-b", "d", 1, 10, map[string]float64{"z": 0, "v": 1}, 1)
	one := simulate(rng, "run-c", "c", 1, 10, map[string]float64{"x": 0}, 1)
	unscored := simulate(rng, "run-d", "c", 1, 10, map[string]float64{"x": 0, "y": 1}, 0)
	allRight := simulate(rng, "run-e", "c", 1, 3, map[string]float64{"x": 0, "y": 1}, 1)
	for _, tr := range allRight.Targets {
		for i := range tr.Right {
			tr.Right[i] = tr.Trials[i]
		}
	}
	for _, c := range []struct {
		name string
		sets []*Set
		o    FitOptions
		want string
	}{
		{"no sets", nil, FitOptions{}, "no runs to fit difficulty from"},
		{"disconnected", []*Set{a, b}, FitOptions{},
			"the results fall into 2 groups that share no target and no case, so one difficulty scale cannot link them: " +
				"targets x, y with 10 cases (c1, c2, c3, …); targets v, z with 10 cases (d1, d2, d3, …); " +
				"add results of a target on cases of both groups, or fit each group apart"},
		{"one target", []*Set{one}, FitOptions{},
			"fitting difficulty needs scored results of at least 2 targets; the runs have 1 (x): add runs of other targets on the same cases, or give the difficulty as a tag"},
		{"nothing scored", []*Set{unscored}, FitOptions{},
			"the runs have no scored result: fitting difficulty needs scored results of at least 2 targets"},
		{"no cases", []*Set{{Name: "e"}}, FitOptions{}, "the runs have no cases"},
		{"model", []*Set{a}, FitOptions{Model: "3pl"}, `model "3pl": valid models are rasch, 2pl`},
		{"level", []*Set{a}, FitOptions{Level: 95}, "level 95: must be strictly between 0 and 1 (0.95 for 95% intervals)"},
		{"tag without values", []*Set{a}, FitOptions{Tag: "tier"}, `no fitted case has the tag "tier"`},
		{"2pl without a prior", []*Set{a}, FitOptions{Model: "2pl", PriorSD: -1},
			"2PL without a prior needs the results of at least 50 targets (these runs have 2): each case's discrimination rests on the targets' answers to it alone, " +
				"and with so few the fit does not converge; keep the default weak prior, or fit rasch"},
		{"all extreme without a prior", []*Set{allRight}, FitOptions{PriorSD: -1},
			"no case is left to fit: every case is all right or all wrong, or has no scored result"},
		{"results short", []*Set{{Name: "r", Cases: []string{"a", "b"}, Targets: []TargetResults{{Name: "x", Right: []int32{1}, Trials: []int32{1}}}}},
			FitOptions{}, `r: target "x" has results for 1 cases of 2`},
		{"right above trials", []*Set{{Name: "r", Cases: []string{"a"}, Targets: []TargetResults{{Name: "x", Right: []int32{2}, Trials: []int32{1}}}}},
			FitOptions{}, `r: target "x" has 2 right of 1 trials on case "a"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := Fit(c.sets, c.o); err == nil || err.Error() != c.want {
				t.Fatalf("got %v, want %q", err, c.want)
			}
		})
	}
}

// TestFitWithoutPrior: plain marginal ML leaves out the cases every target
// got right or wrong (their difficulty would be infinite) and says so.
func TestFitWithoutPrior(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	s := simulate(rng, "run", "c", 1, 40, map[string]float64{"a": -1, "b": 0, "c": 1, "d": 2}, 3)
	extreme := 0
	for i := range s.Cases {
		right, trials := int32(0), int32(0)
		for _, tr := range s.Targets {
			right += tr.Right[i]
			trials += tr.Trials[i]
		}
		if right == 0 || right == trials {
			extreme++
		}
	}
	if extreme == 0 {
		t.Fatal("the simulation has no extreme case to leave out")
	}
	f, err := Fit([]*Set{s}, FitOptions{PriorSD: -1})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Cases) != 40-extreme || f.Dropped != extreme {
		t.Errorf("%d cases fitted, %d dropped; want %d and %d", len(f.Cases), f.Dropped, 40-extreme, extreme)
	}
	want := fmt.Sprintf("%d cases every target got right or every target got wrong are left out of the fit", extreme)
	found := false
	for _, w := range f.Warnings {
		found = found || strings.HasPrefix(w, want)
	}
	if !found {
		t.Errorf("warnings %q, want %q", f.Warnings, want)
	}
	for _, c := range f.Cases {
		if math.IsInf(c.B, 0) || math.IsNaN(c.B) || c.Extreme {
			t.Errorf("case %s: B %g extreme %v", c.ID, c.B, c.Extreme)
		}
	}
}
