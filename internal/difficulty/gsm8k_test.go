package difficulty

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/assay-eval/assay/internal/shareddata"
	"github.com/assay-eval/assay/internal/stats"
)

var gsm8kConfigs = []string{"6b_finetuning", "6b_verification", "175b_finetuning", "175b_verification"}

// gsm8kProblem is one GSM8K test problem: its tier (the number of
// calculator annotations "<<" in the reference solution: reasoning steps)
// and whether each recorded configuration solved it.
type gsm8kProblem struct {
	tier    int
	correct map[string]bool
}

func readGSM8K(t *testing.T) []gsm8kProblem {
	t.Helper()
	f, err := os.Open(shareddata.Path(t, "gsm8k/example_model_solutions.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []gsm8kProblem
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var line map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatal(err)
		}
		var truth string
		if err := json.Unmarshal(line["ground_truth"], &truth); err != nil {
			t.Fatal(err)
		}
		p := gsm8kProblem{tier: strings.Count(truth, "<<"), correct: map[string]bool{}}
		for _, c := range gsm8kConfigs {
			var sol struct {
				IsCorrect bool `json:"is_correct"`
			}
			if err := json.Unmarshal(line[c], &sol); err != nil {
				t.Fatal(err)
			}
			p.correct[c] = sol.IsCorrect
		}
		out = append(out, p)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) != 1319 {
		t.Fatalf("%d GSM8K problems, want 1319", len(out))
	}
	return out
}

// gsm8kSets builds the benchmark (all 1,319 problems, the four configs'
// results) and a workload of the problems with at least minTier steps.
func gsm8kSets(problems []gsm8kProblem, minTier int) (*Set, *Set) {
	sc := Scale{Source: SourceTag, Tag: "tier"}
	bench := &Set{Name: "gsm8k", Kind: KindRun, Scale: sc}
	work := &Set{Name: "many-step", Kind: KindDataset, Scale: sc}
	for _, c := range gsm8kConfigs {
		bench.Targets = append(bench.Targets, TargetResults{Name: c})
	}
	for i, p := range problems {
		id := fmt.Sprintf("line-%d", i+1)
		bench.Cases = append(bench.Cases, id)
		bench.Values = append(bench.Values, float64(p.tier))
		for k, c := range gsm8kConfigs {
			tr := &bench.Targets[k]
			tr.Trials = append(tr.Trials, 1)
			right := int32(0)
			if p.correct[c] {
				right = 1
			}
			tr.Right = append(tr.Right, right)
		}
		if p.tier >= minTier {
			work.Cases = append(work.Cases, id)
			work.Values = append(work.Values, float64(p.tier))
		}
	}
	return bench, work
}

// TestGSM8KManyStepWorkload is the must-show: with reasoning steps
// as difficulty, the per-tier view shows where each configuration's lead
// comes from, and re-weighting to a workload of many-step problems changes
// the comparison of at least one pair — every figure checked against
// counts this test makes itself from the data file.
func TestGSM8KManyStepWorkload(t *testing.T) {
	problems := readGSM8K(t)
	const minTier = 4
	bench, work := gsm8kSets(problems, minTier)
	m, err := Compare(bench, work, MismatchOptions{Seed: 17})
	if err != nil {
		t.Fatal(err)
	}

	// Independent counts: per tier, cases, and per config solved.
	type tierCount struct {
		cases, work int
		solved      map[string]int
	}
	counts := map[int]*tierCount{}
	workTotal := 0
	for _, p := range problems {
		c := counts[p.tier]
		if c == nil {
			c = &tierCount{solved: map[string]int{}}
			counts[p.tier] = c
		}
		c.cases++
		if p.tier >= minTier {
			c.work++
			workTotal++
		}
		for cfg, ok := range p.correct {
			if ok {
				c.solved[cfg]++
			}
		}
	}
	var tiers []int
	for k := range counts {
		tiers = append(tiers, k)
	}
	slices.Sort(tiers)
	if !m.Discrete || len(m.Bins) != len(tiers) {
		t.Fatalf("want one bin per tier (%v), got %d bins (discrete %v)", tiers, len(m.Bins), m.Discrete)
	}
	for h, b := range m.Bins {
		c := counts[tiers[h]]
		if b.Label != fmt.Sprint(tiers[h]) || b.Bench != c.cases || b.Work != c.work {
			t.Errorf("bin %d: %s bench %d work %d, want %d %d %d", h, b.Label, b.Bench, b.Work, tiers[h], c.cases, c.work)
		}
		if b.Gap {
			t.Errorf("tier %s reported as a gap: the benchmark has %d cases there", b.Label, b.Bench)
		}
	}
	score := map[string]Score{}
	for _, s := range m.Scores {
		score[s.Target] = s
		for h, r := range s.PerBin {
			c := counts[tiers[h]]
			if r.Passed != c.solved[s.Target] || r.N != c.cases {
				t.Errorf("%s tier %d: %d/%d, want %d/%d", s.Target, tiers[h], r.Passed, r.N, c.solved[s.Target], c.cases)
			}
		}
	}

	// Where the leads come from. 175b_verification leads 6b_verification
	// in every tier with at least 50 problems; 6b_verification's lead over
	// 175b_finetuning is made on the two- and three-step problems and is
	// gone from four steps on.
	rate := func(cfg string, keep func(int) bool) float64 {
		solved, n := 0, 0
		for _, k := range tiers {
			if keep(k) {
				solved += counts[k].solved[cfg]
				n += counts[k].cases
			}
		}
		return float64(solved) / float64(n)
	}
	for h, k := range tiers {
		if counts[k].cases < 50 {
			continue
		}
		big, small := score["175b_verification"].PerBin[h], score["6b_verification"].PerBin[h]
		if !(big.Rate > small.Rate) {
			t.Errorf("tier %d: 175b_verification %.3f does not lead 6b_verification %.3f", k, big.Rate, small.Rate)
		}
	}
	few := func(k int) bool { return k == 2 || k == 3 }
	many := func(k int) bool { return k >= minTier }
	if lead := rate("6b_verification", few) - rate("175b_finetuning", few); lead < 0.05 {
		t.Errorf("6b_verification's lead over 175b_finetuning on 2-3 steps is %.3f, want a lead", lead)
	}
	if lead := rate("6b_verification", many) - rate("175b_finetuning", many); lead > 0.01 {
		t.Errorf("6b_verification's lead over 175b_finetuning from %d steps is %.3f, want none", minTier, lead)
	}

	// The pair's comparison, raw and under the workload's mix, from the
	// counts: per tier the mean and variance of the paired differences
	// (each in {-1, 0, 1}), post-stratified.
	var pair *Pair
	for i := range m.Pairs {
		if m.Pairs[i].A == "6b_verification" && m.Pairs[i].B == "175b_finetuning" {
			pair = &m.Pairs[i]
		}
	}
	if pair == nil {
		t.Fatal("no pair 6b_verification–175b_finetuning")
	}
	type disc struct{ aOnly, bOnly, n int }
	byTier := map[int]*disc{}
	for _, p := range problems {
		d := byTier[p.tier]
		if d == nil {
			d = &disc{}
			byTier[p.tier] = d
		}
		d.n++
		a, b := p.correct["6b_verification"], p.correct["175b_finetuning"]
		if a && !b {
			d.aOnly++
		}
		if b && !a {
			d.bOnly++
		}
	}
	// Where the lead is made, per tier, from the counts.
	for h, k := range tiers {
		d := byTier[k]
		c := pair.PerBin[h]
		if c.N != d.n {
			t.Errorf("tier %d: %d paired cases, want %d", k, c.N, d.n)
		}
		near(t, fmt.Sprintf("tier %d lead", k), c.Delta, float64(d.aOnly-d.bOnly)/float64(d.n), 1e-12)
	}
	if pair.PerBin[2].CI.Lo <= 0 {
		t.Errorf("the two-step lead %+v: want an interval above 0", pair.PerBin[2])
	}
	post := func(share func(k int) float64) (delta, se float64) {
		v := 0.0
		for k, d := range byTier {
			w := share(k)
			if w == 0 {
				continue
			}
			n := float64(d.n)
			mean := float64(d.aOnly-d.bOnly) / n
			s2 := (float64(d.aOnly+d.bOnly) - n*mean*mean) / (n - 1)
			delta += w * mean
			v += w * w * s2 / n
		}
		return delta, math.Sqrt(v)
	}
	rawDelta, rawSE := post(func(k int) float64 { return float64(byTier[k].n) / float64(len(problems)) })
	rwDelta, rwSE := post(func(k int) float64 {
		if k < minTier {
			return 0
		}
		return float64(byTier[k].n) / float64(workTotal)
	})
	near(t, "raw delta", pair.Raw.Delta, rawDelta, 1e-12)
	near(t, "raw SE", pair.Raw.SE, rawSE, 1e-12)
	near(t, "reweighted delta", pair.Reweighted.Delta, rwDelta, 1e-12)
	near(t, "reweighted SE", pair.Reweighted.SE, rwSE, 1e-12)
	z := distuv.UnitNormal.Quantile(0.975)
	rawP := 2 * distuv.UnitNormal.Survival(math.Abs(rawDelta)/rawSE)
	// Six pairs: Holm multiplies the smallest p by at most 6.
	if !(rawDelta-z*rawSE > 0 && rawP*6 < 0.05) {
		t.Errorf("raw: delta %.4f SE %.4f p %.2g: want a clear win for 6b_verification", rawDelta, rawSE, rawP)
	}
	if pair.Raw.Verdict != stats.VerdictABetter {
		t.Errorf("raw verdict %s, want %s", pair.Raw.Verdict, stats.VerdictABetter)
	}
	if rwDelta-z*rwSE > 0 {
		t.Errorf("reweighted: delta %.4f SE %.4f: the interval should include 0", rwDelta, rwSE)
	}
	if pair.Reweighted.Verdict == stats.VerdictABetter || !pair.Changed || m.VerdictsChanged < 1 {
		t.Errorf("reweighted verdict %s, changed %v (%d verdicts changed): want the win gone", pair.Reweighted.Verdict, pair.Changed, m.VerdictsChanged)
	}
	// The ranking: 6b_verification above 175b_finetuning raw, not under
	// the workload's mix.
	rank := func(r []string, name string) int { return slices.Index(r, name) }
	if rank(m.RankingRaw, "6b_verification") > rank(m.RankingRaw, "175b_finetuning") {
		t.Errorf("raw ranking %v", m.RankingRaw)
	}
	if rank(m.RankingReweighted, "6b_verification") < rank(m.RankingReweighted, "175b_finetuning") || !m.RankingChanged {
		t.Errorf("reweighted ranking %v (changed %v): want 175b_finetuning above 6b_verification", m.RankingReweighted, m.RankingChanged)
	}
	for _, s := range m.Scores {
		if !s.Reweighted.Computable || math.Abs(s.CoveredShare-1) > 1e-12 {
			t.Errorf("%s: reweighted %+v, covered share %g: every tier the workload needs has benchmark items", s.Target, s.Reweighted, s.CoveredShare)
		}
		want := rate(s.Target, many)
		near(t, s.Target+" reweighted rate", s.Reweighted.Rate, want, 1e-12)
	}
}
