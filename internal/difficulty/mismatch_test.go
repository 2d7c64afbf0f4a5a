package difficulty

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/stats"
)

// golden is one scenario of testdata/mismatch.json (see mismatch.py).
type golden struct {
	Name  string `json:"name"`
	Input struct {
		Bench        []float64 `json:"bench"`
		BenchWeights []float64 `json:"bench_weights"`
		Work         []float64 `json:"work"`
		WorkWeights  []float64 `json:"work_weights"`
		Edges        []float64 `json:"edges"`
		Discrete     bool      `json:"discrete"`
		Targets      []struct {
			Name   string  `json:"name"`
			Right  []int32 `json:"right"`
			Trials []int32 `json:"trials"`
		} `json:"targets"`
	} `json:"input"`
	BenchCount     []int                                   `json:"bench_count"`
	WorkCount      []int                                   `json:"work_count"`
	BenchShare     []float64                               `json:"bench_share"`
	WorkShare      []float64                               `json:"work_share"`
	Gap            []bool                                  `json:"gap"`
	UncoveredShare float64                                 `json:"uncovered_share"`
	W1             float64                                 `json:"w1"`
	KS             *float64                                `json:"ks"`
	TV             float64                                 `json:"tv"`
	Boot           map[string]struct{ Lo, Hi, SD float64 } `json:"boot"`
	Perm           map[string]float64                      `json:"perm"`
	Scores         []struct {
		Target       string                    `json:"target"`
		Raw          []float64                 `json:"raw"` // est, se, kish, n
		Reweighted   []float64                 `json:"reweighted"`
		Covered      []float64                 `json:"covered"`
		CoveredShare float64                   `json:"covered_share"`
		PerBin       []struct{ Passed, N int } `json:"per_bin"`
	} `json:"scores"`
	Comparable             bool     `json:"comparable"`
	RankingRaw             []string `json:"ranking_raw"`
	RankingCovered         []string `json:"ranking_covered"`
	RankingCoveredChanged  bool     `json:"ranking_covered_changed"`
	VerdictsChangedCovered int      `json:"verdicts_changed_covered"`
	Pairs                  []struct {
		A, B         string
		Raw          *goldenComparison `json:"raw"`
		Reweighted   *goldenComparison `json:"reweighted"`
		Covered      *goldenComparison `json:"covered"`
		CoveredShare float64           `json:"covered_share"`
		PerBin       []struct {
			N                 int
			Delta, SE, Lo, Hi float64
			P                 *float64
		} `json:"per_bin"`
	} `json:"pairs"`
}

type goldenComparison struct {
	Delta, SE, DF, Lo, Hi, P float64
	PAdj                     float64 `json:"padj"`
	Verdict                  string
	N                        int
}

func loadGolden(t *testing.T) []golden {
	t.Helper()
	b, err := os.ReadFile("testdata/mismatch.json")
	if err != nil {
		t.Fatal(err)
	}
	var g []golden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	return g
}

func (g *golden) sets() (*Set, *Set) {
	ids := func(prefix string, n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("%s%d", prefix, i)
		}
		return out
	}
	bench := &Set{Name: "bench", Kind: KindRun, Cases: ids("b", len(g.Input.Bench)), Values: g.Input.Bench, Weights: g.Input.BenchWeights}
	work := &Set{Name: "work", Kind: KindDataset, Cases: ids("w", len(g.Input.Work)), Values: g.Input.Work, Weights: g.Input.WorkWeights}
	for _, tr := range g.Input.Targets {
		bench.Targets = append(bench.Targets, TargetResults{Name: tr.Name, Right: tr.Right, Trials: tr.Trials})
	}
	return bench, work
}

func near(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if !(math.Abs(got-want) <= tol) {
		t.Errorf("%s = %.12g, want %.12g (±%g)", what, got, want, tol)
	}
}

// TestCompareGolden holds Compare to testdata/mismatch.py: scipy's
// wasserstein_distance and ks_2samp, numpy post-stratification, the
// paired comparisons with statsmodels' Holm, and a numpy bootstrap of the
// distances (within Monte Carlo error).
func TestCompareGolden(t *testing.T) {
	for _, g := range loadGolden(t) {
		t.Run(g.Name, func(t *testing.T) {
			bench, work := g.sets()
			m, err := Compare(bench, work, MismatchOptions{Edges: g.Input.Edges, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			if m.Discrete != g.Input.Discrete || len(m.Bins) != len(g.BenchCount) {
				t.Fatalf("discrete %v with %d bins, want %v with %d", m.Discrete, len(m.Bins), g.Input.Discrete, len(g.BenchCount))
			}
			for h, b := range m.Bins {
				if b.Bench != g.BenchCount[h] || b.Work != g.WorkCount[h] || b.Gap != g.Gap[h] {
					t.Errorf("bin %s: bench %d work %d gap %v, want %d %d %v", b.Label, b.Bench, b.Work, b.Gap, g.BenchCount[h], g.WorkCount[h], g.Gap[h])
				}
				near(t, "bench share "+b.Label, b.BenchShare, g.BenchShare[h], 1e-12)
				near(t, "work share "+b.Label, b.WorkShare, g.WorkShare[h], 1e-12)
			}
			near(t, "uncovered share", m.UncoveredShare, g.UncoveredShare, 1e-12)
			want := map[string]float64{DistanceW1: g.W1, DistanceTV: g.TV}
			if g.KS != nil {
				want[DistanceKS] = *g.KS
			}
			for _, d := range m.Distances {
				w, ok := want[d.Name]
				if !ok {
					continue
				}
				near(t, d.Name, d.Value, w, 1e-9)
				boot := g.Boot[map[string]string{DistanceW1: "w1", DistanceKS: "ks", DistanceTV: "tv"}[d.Name]]
				if d.Replicates != DefaultReplicates {
					t.Errorf("%s: %d replicates, want %d", d.Name, d.Replicates, DefaultReplicates)
				}
				// Monte Carlo error of a 2.5% quantile with 2,000 and 4,000
				// replicates is about 0.07 bootstrap SDs; allow 0.35.
				if pp, ok := g.Perm[map[string]string{DistanceW1: "w1", DistanceKS: "ks", DistanceTV: "tv"}[d.Name]]; ok {
					// Monte Carlo error of both p-values (2,000 and 4,000
					// relabellings), four SDs, plus the +1 of each.
					tol := 4*math.Sqrt(pp*(1-pp)*(1.0/2000+1.0/4000)) + 1.0/2000 + 1.0/4000
					near(t, d.Name+" permutation p", d.P, pp, tol)
				}
				near(t, d.Name+" CI lo", d.CI.Lo, boot.Lo, 0.35*boot.SD)
				near(t, d.Name+" CI hi", d.CI.Hi, boot.Hi, 0.35*boot.SD)
			}
			if len(m.Scores) != len(g.Scores) {
				t.Fatalf("%d scores, want %d", len(m.Scores), len(g.Scores))
			}
			for k, s := range m.Scores {
				gs := g.Scores[k]
				checkEstimate(t, s.Target+" raw", s.Raw, gs.Raw)
				checkEstimate(t, s.Target+" reweighted", s.Reweighted, gs.Reweighted)
				checkEstimate(t, s.Target+" covered", s.Covered, gs.Covered)
				near(t, s.Target+" covered share", s.CoveredShare, gs.CoveredShare, 1e-12)
				for h, r := range s.PerBin {
					if r.Passed != gs.PerBin[h].Passed || r.N != gs.PerBin[h].N {
						t.Errorf("%s bin %d: %d/%d, want %d/%d", s.Target, h, r.Passed, r.N, gs.PerBin[h].Passed, gs.PerBin[h].N)
					}
					if r.CI != stats.Wilson(r.Passed, r.N, 0.05) {
						t.Errorf("%s bin %d: interval %v is not Wilson's", s.Target, h, r.CI)
					}
				}
			}
			changed := 0
			for k, p := range m.Pairs {
				gp := g.Pairs[k]
				if p.A != gp.A || p.B != gp.B {
					t.Fatalf("pair %d is %s–%s, want %s–%s", k, p.A, p.B, gp.A, gp.B)
				}
				checkComparison(t, p.A+"–"+p.B+" raw", p.Raw, gp.Raw)
				checkComparison(t, p.A+"–"+p.B+" reweighted", p.Reweighted, gp.Reweighted)
				checkComparison(t, p.A+"–"+p.B+" covered", p.Covered, gp.Covered)
				near(t, p.A+"–"+p.B+" covered share", p.CoveredShare, gp.CoveredShare, 1e-12)
				if want := gp.Raw != nil && gp.Covered != nil && gp.Raw.Verdict != gp.Covered.Verdict; p.CoveredChanged != want {
					t.Errorf("%s–%s: covered verdict changed %v, want %v", p.A, p.B, p.CoveredChanged, want)
				}
				if len(p.PerBin) != len(gp.PerBin) {
					t.Fatalf("%d per-bin differences, want %d", len(p.PerBin), len(gp.PerBin))
				}
				for h, c := range p.PerBin {
					w := gp.PerBin[h]
					what := fmt.Sprintf("%s–%s bin %d", p.A, p.B, h)
					if c.N != w.N || c.Computable != (w.N >= 2) {
						t.Errorf("%s: n %d computable %v, want n %d", what, c.N, c.Computable, w.N)
						continue
					}
					if !c.Computable {
						continue
					}
					near(t, what+" delta", c.Delta, w.Delta, 1e-12)
					near(t, what+" SE", c.SE, w.SE, 1e-12)
					near(t, what+" CI lo", c.CI.Lo, w.Lo, 1e-9)
					near(t, what+" CI hi", c.CI.Hi, w.Hi, 1e-9)
					if w.P != nil {
						near(t, what+" p", c.P, *w.P, 1e-9)
					}
				}
				if gp.Raw != nil && gp.Reweighted != nil && gp.Raw.Verdict != gp.Reweighted.Verdict {
					changed++
				}
			}
			if m.VerdictsChanged != changed {
				t.Errorf("%d verdicts changed, want %d", m.VerdictsChanged, changed)
			}
			if m.Comparable != g.Comparable || (!m.Comparable && (m.RankingChanged || m.VerdictsChanged != 0)) {
				t.Errorf("comparable %v (ranking changed %v, %d verdicts changed), want %v: an incomparable mix claims no change",
					m.Comparable, m.RankingChanged, m.VerdictsChanged, g.Comparable)
			}
			if len(g.RankingRaw) > 0 {
				if !slices.Equal(m.RankingRaw, g.RankingRaw) || !slices.Equal(m.RankingCovered, g.RankingCovered) {
					t.Errorf("rankings raw %v covered %v, want %v and %v", m.RankingRaw, m.RankingCovered, g.RankingRaw, g.RankingCovered)
				}
				if m.RankingCoveredChanged != g.RankingCoveredChanged || m.VerdictsChangedCovered != g.VerdictsChangedCovered {
					t.Errorf("covered: ranking changed %v, %d verdicts changed; want %v, %d",
						m.RankingCoveredChanged, m.VerdictsChangedCovered, g.RankingCoveredChanged, g.VerdictsChangedCovered)
				}
			}
		})
	}
}

func checkEstimate(t *testing.T, what string, e Estimate, want []float64) {
	t.Helper()
	if want == nil {
		if e.Computable || e.Rate != 0 || e.SE != 0 || !strings.Contains(e.Why, "not computable") {
			t.Errorf("%s: %+v, want not computable with a reason", what, e)
		}
		return
	}
	if !e.Computable {
		t.Fatalf("%s: not computable (%s)", what, e.Why)
	}
	near(t, what+" rate", e.Rate, want[0], 1e-12)
	near(t, what+" SE", e.SE, want[1], 1e-12)
	near(t, what+" Kish n", e.Kish, want[2], 1e-9)
	if e.N != int(want[3]) {
		t.Errorf("%s: n %d, want %v", what, e.N, want[3])
	}
	near(t, what+" df", e.DF, want[4], 1e-9*want[4])
	near(t, what+" CI lo", e.CI.Lo, want[5], 1e-9)
	near(t, what+" CI hi", e.CI.Hi, want[6], 1e-9)
}

func checkComparison(t *testing.T, what string, c Comparison, want *goldenComparison) {
	t.Helper()
	if want == nil {
		if c.Computable || c.Verdict != "" || !strings.Contains(c.Why, "not computable") {
			t.Errorf("%s: %+v, want not computable with a reason", what, c)
		}
		return
	}
	if !c.Computable {
		t.Fatalf("%s: not computable (%s)", what, c.Why)
	}
	near(t, what+" delta", c.Delta, want.Delta, 1e-12)
	near(t, what+" SE", c.SE, want.SE, 1e-12)
	near(t, what+" df", c.DF, want.DF, 1e-9*want.DF)
	near(t, what+" CI lo", c.CI.Lo, want.Lo, 1e-9)
	near(t, what+" CI hi", c.CI.Hi, want.Hi, 1e-9)
	near(t, what+" p", c.P, want.P, 1e-9)
	near(t, what+" p adjusted", c.PAdjusted, want.PAdj, 1e-9)
	if c.N != want.N || c.Verdict != want.Verdict {
		t.Errorf("%s: n %d verdict %s, want %d %s", what, c.N, c.Verdict, want.N, want.Verdict)
	}
}
