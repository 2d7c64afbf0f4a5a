package analysis

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"github.com/assay-eval/assay/internal/stats"
)

// bootstrapResamples is B for the paired bootstrap of continuous scores.
const bootstrapResamples = 4000

// comparePairs compares every two targets on the cases both have, on the
// primary scorer: a pass/fail table (McNemar exact, Newcombe interval) when
// each case has one epoch, else the per-case means of the epochs (paired
// bootstrap interval, paired t p-value).
// Overall p-values are Holm-adjusted over all pairs; per-slice comparisons
// say where a lead comes from and are not adjusted.
func comparePairs(names []string, pass map[string]*verdicts, ci *caseIndex, scorer string, o Options) []Comparison {
	var out []Comparison
	for i := 0; i < len(names); i++ {
		for j := i + 1; j < len(names); j++ {
			c, ok := pairDense(pass[names[i]], pass[names[j]], ci, o.Alpha, o.Margin)
			if !ok {
				continue
			}
			c.A, c.B, c.Scorer = names[i], names[j], scorer
			for _, byValue := range c.Slices {
				for v, sc := range byValue {
					sc.A, sc.B, sc.Scorer = c.A, c.B, scorer
					byValue[v] = sc
				}
			}
			out = append(out, c)
		}
	}
	ps := make([]float64, len(out))
	for i := range out {
		ps[i] = out[i].PValue
	}
	adj := stats.Holm(ps)
	for i := range out {
		c := &out[i]
		// p-values are not rounded: 1e-36 is information.
		c.PAdjusted = adj[i]
		c.Verdict = stats.Verdict(c.Delta, stats.Interval{Lo: c.CI[0], Hi: c.CI[1]}, adj[i], o.Alpha, o.Margin)
	}
	return out
}

// pairDense compares a and b over the cases both have scored, overall and
// per tag value, in one pass over the cases. ok is false when they share
// fewer than two cases.
func pairDense(a, b *verdicts, ci *caseIndex, alpha, margin float64) (Comparison, bool) {
	if a == nil || b == nil {
		return Comparison{}, false
	}
	binary := a.epochs <= 1 && b.epochs <= 1
	nk := len(ci.keys)
	var total stats.PairTable
	tables := make([][]stats.PairTable, nk)
	var xa, xb []float64
	sxa, sxb := make([][][]float64, nk), make([][][]float64, nk)
	for k := range nk {
		tables[k] = make([]stats.PairTable, len(ci.vals[k]))
		sxa[k] = make([][]float64, len(ci.vals[k]))
		sxb[k] = make([][]float64, len(ci.vals[k]))
	}
	for i := range ci.len() {
		ma, na := a.mean(i)
		mb, nb := b.mean(i)
		if na == 0 || nb == 0 {
			continue
		}
		if binary {
			add := func(t *stats.PairTable) {
				switch {
				case ma == 1 && mb == 1:
					t.Both++
				case ma == 1:
					t.AOnly++
				case mb == 1:
					t.BOnly++
				default:
					t.Neither++
				}
			}
			add(&total)
			for k := range nk {
				if v := ci.tagOf[k][i]; v >= 0 {
					add(&tables[k][v])
				}
			}
			continue
		}
		xa, xb = append(xa, ma), append(xb, mb)
		for k := range nk {
			if v := ci.tagOf[k][i]; v >= 0 {
				sxa[k][v] = append(sxa[k][v], ma)
				sxb[k][v] = append(sxb[k][v], mb)
			}
		}
	}
	compare := func(t stats.PairTable, xa, xb []float64) (Comparison, bool) {
		var p stats.Paired
		var err error
		n := t.N()
		if binary {
			p, err = stats.PairedBinaryTable(t, alpha)
		} else {
			n = len(xa)
			p, err = stats.PairedMeans(xa, xb, alpha)
			if err == nil && n >= 2 {
				// Per-case means of several epochs are continuous scores: the
				// interval is the paired bootstrap's (resampling cases, so a
				// case both find hard moves both together), the p-value the
				// paired t-test's. Seeded: the same run gives the same report.
				reps, berr := stats.PairedBootstrap(rand.New(rand.NewPCG(1, uint64(n))), xa, xb, bootstrapResamples)
				if ci := stats.PercentileCI(reps, alpha); berr == nil && !anyNaN(ci.Lo, ci.Hi) {
					p.CI, p.CIMethod, p.Test = ci, "percentile_bootstrap", "paired_bootstrap"
				}
			}
		}
		// Fewer than two cases, or a degenerate comparison, says nothing: it
		// is left out rather than shown with undefined numbers.
		if err != nil || n < 2 || anyNaN(p.Delta, p.SE, p.CI.Lo, p.CI.Hi, p.PValue) {
			return Comparison{}, false
		}
		return Comparison{N: n, Test: p.Test, AOnly: p.AOnly, BOnly: p.BOnly,
			Delta: round6(p.Delta), SE: round6(p.SE), CI: [2]float64{round6(p.CI.Lo), round6(p.CI.Hi)}, PValue: p.PValue}, true
	}
	c, ok := compare(total, xa, xb)
	if !ok {
		return Comparison{}, false
	}
	for k := range nk {
		for v := range ci.vals[k] {
			sc, ok := compare(tables[k][v], sxa[k][v], sxb[k][v])
			if !ok {
				continue
			}
			sc.PAdjusted = sc.PValue
			sc.Verdict = stats.Verdict(sc.Delta, stats.Interval{Lo: sc.CI[0], Hi: sc.CI[1]}, sc.PValue, alpha, margin)
			if c.Slices == nil {
				c.Slices = map[string]map[string]Comparison{}
			}
			if c.Slices[ci.keys[k]] == nil {
				c.Slices[ci.keys[k]] = map[string]Comparison{}
			}
			c.Slices[ci.keys[k]][ci.vals[k][v]] = sc
		}
	}
	return c, true
}

// rank puts each target at 1 + the number of targets that beat it (by the
// paired verdicts), so targets the comparisons cannot separate share a rank.
func rank(names []string, cs []Comparison) []RankGroup {
	beaten := map[string]int{}
	for _, c := range cs {
		switch c.Verdict {
		case stats.VerdictABetter:
			beaten[c.B]++
		case stats.VerdictBBetter:
			beaten[c.A]++
		}
	}
	byRank := map[int][]string{}
	for _, n := range names {
		r := 1 + beaten[n]
		byRank[r] = append(byRank[r], n)
	}
	ranks := make([]int, 0, len(byRank))
	for r := range byRank {
		ranks = append(ranks, r)
	}
	sort.Ints(ranks)
	out := make([]RankGroup, len(ranks))
	for i, r := range ranks {
		out[i] = RankGroup{Rank: r, Targets: byRank[r]}
	}
	return out
}

// maxSliceWarnings bounds the slice-size warnings so a report stays readable.
const maxSliceWarnings = 8

// sliceWarnings names the slices where two targets differ by a visible gap
// that the slice has too few cases to confirm: the minimum detectable
// difference at 80% power, given the slice's discordance, exceeds the gap.
func sliceWarnings(cs []Comparison, alpha, margin float64) []string {
	var ws []string
	more := 0
	for _, c := range cs {
		keys := make([]string, 0, len(c.Slices))
		for k := range c.Slices {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			vals := make([]string, 0, len(c.Slices[k]))
			for v := range c.Slices[k] {
				vals = append(vals, v)
			}
			SortValues(vals)
			for _, v := range vals {
				s := c.Slices[k][v]
				gap := math.Abs(s.Delta)
				if s.Verdict != stats.VerdictInconclusive || gap < margin || math.IsNaN(gap) {
					continue
				}
				pDisc := float64(s.AOnly+s.BOnly) / float64(s.N)
				if pDisc == 0 {
					continue
				}
				mdd, err := stats.MinDetectableDifference(s.N, pDisc, alpha, 0.8)
				if err == nil && mdd <= gap {
					continue
				}
				if len(ws) >= maxSliceWarnings {
					more++
					continue
				}
				ws = append(ws, fmt.Sprintf("%s %s has %d cases: too few to separate %s and %s at the observed gap of %.0f points", k, v, s.N, c.A, c.B, 100*gap))
			}
		}
	}
	if more > 0 {
		ws = append(ws, fmt.Sprintf("… and %d more slices too small to separate their targets", more))
	}
	return ws
}

func anyNaN(xs ...float64) bool {
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return true
		}
	}
	return false
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func round6(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	return math.Round(x*1e6) / 1e6
}
