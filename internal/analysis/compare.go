package analysis

import (
	"fmt"
	"math"
	"sort"

	"github.com/assay-eval/assay/internal/stats"
)

// comparePairs compares every two targets on the cases both have, on the
// primary scorer: a pass/fail table (McNemar exact, Newcombe interval) when
// each case has one epoch, else the per-case means of the epochs (paired t).
// Overall p-values are Holm-adjusted over all pairs; per-slice comparisons
// say where a lead comes from and are not adjusted.
func comparePairs(names []string, pass map[string]map[CaseKey]bool, tags map[string]map[string]string, scorer string, o Options) []Comparison {
	var out []Comparison
	for i := 0; i < len(names); i++ {
		for j := i + 1; j < len(names); j++ {
			a, b := pass[names[i]], pass[names[j]]
			c, ok := pairOf(a, b, nil, o.Alpha)
			if !ok {
				continue
			}
			c.A, c.B, c.Scorer = names[i], names[j], scorer
			c.Slices = sliceComparisons(a, b, tags, o.Alpha, o.Margin)
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

// pairOf compares a and b over the cases both have (restricted to keep when
// non-nil). ok is false when they share no case.
func pairOf(a, b map[CaseKey]bool, keep func(caseID string) bool, alpha float64) (Comparison, bool) {
	// Group epochs by case.
	type agg struct{ a, b, n float64 }
	byCase := map[string]*agg{}
	epochs := 0
	for k, pa := range a {
		pb, ok := b[k]
		if !ok || (keep != nil && !keep(k.CaseID)) {
			continue
		}
		g := byCase[k.CaseID]
		if g == nil {
			g = &agg{}
			byCase[k.CaseID] = g
		}
		g.a += b2f(pa)
		g.b += b2f(pb)
		g.n++
		epochs = max(epochs, k.Epoch)
	}
	if len(byCase) == 0 {
		return Comparison{}, false
	}
	var p stats.Paired
	var err error
	if epochs <= 1 {
		var t stats.PairTable
		for _, g := range byCase {
			switch {
			case g.a == 1 && g.b == 1:
				t.Both++
			case g.a == 1:
				t.AOnly++
			case g.b == 1:
				t.BOnly++
			default:
				t.Neither++
			}
		}
		p, err = stats.PairedBinaryTable(t, alpha)
	} else {
		ids := make([]string, 0, len(byCase))
		for id := range byCase {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		xa, xb := make([]float64, len(ids)), make([]float64, len(ids))
		for i, id := range ids {
			g := byCase[id]
			xa[i], xb[i] = g.a/g.n, g.b/g.n
		}
		p, err = stats.PairedMeans(xa, xb, alpha)
	}
	// Fewer than two cases, or a degenerate comparison, says nothing: it is
	// left out rather than shown with undefined numbers.
	if err != nil || anyNaN(p.Delta, p.SE, p.CI.Lo, p.CI.Hi, p.PValue) {
		return Comparison{}, false
	}
	c := Comparison{N: len(byCase), Test: p.Test, AOnly: p.AOnly, BOnly: p.BOnly}
	c.Delta, c.SE = round6(p.Delta), round6(p.SE)
	c.CI = [2]float64{round6(p.CI.Lo), round6(p.CI.Hi)}
	c.PValue = p.PValue
	return c, true
}

func sliceComparisons(a, b map[CaseKey]bool, tags map[string]map[string]string, alpha, margin float64) map[string]map[string]Comparison {
	values := map[string]map[string]bool{}
	for _, t := range tags {
		for k, v := range t {
			if values[k] == nil {
				values[k] = map[string]bool{}
			}
			values[k][v] = true
		}
	}
	out := map[string]map[string]Comparison{}
	for k, vs := range values {
		for v := range vs {
			c, ok := pairOf(a, b, func(id string) bool { return tags[id][k] == v }, alpha)
			if !ok {
				continue
			}
			c.Verdict = stats.Verdict(c.Delta, stats.Interval{Lo: c.CI[0], Hi: c.CI[1]}, c.PValue, alpha, margin)
			c.PAdjusted = c.PValue
			if out[k] == nil {
				out[k] = map[string]Comparison{}
			}
			out[k][v] = c
		}
	}
	return out
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
