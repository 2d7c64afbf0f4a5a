package analysis

import (
	"fmt"
	"math"
	"sort"

	"github.com/assay-eval/assay/internal/stats"
)

// pairing says how two targets are compared.
type pairing struct {
	alpha, margin float64
	// test is the paired pass/fail test of unclustered cases with one
	// epoch: stats.TestMcNemarScore (the default) or stats.TestMcNemarExact.
	test string
}

func (o Options) pairing() pairing {
	return pairing{alpha: o.Alpha, margin: o.Margin, test: o.pairedTest()}
}

// pairedTest is the pass/fail test the options ask for.
func (o Options) pairedTest() string {
	if o.Test == "" {
		return stats.TestMcNemarScore
	}
	return o.Test
}

// comparePairs compares every two targets on the cases both have, on the
// primary scorer (see pairDense for the test each design gets). Overall
// p-values are Holm-adjusted over all pairs; per-slice p-values over every
// slice comparison of the same tag (adjustSlices).
func comparePairs(names []string, pass map[string]*verdicts, ci *caseIndex, scorer string, o Options) []Comparison {
	var out []Comparison
	for i := 0; i < len(names); i++ {
		for j := i + 1; j < len(names); j++ {
			c, ok := pairDense(pass[names[i]], pass[names[j]], ci, o.pairing())
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
	adjustOverall(out, o.Alpha, o.Margin)
	adjustSlices(out, o.Alpha, o.Margin)
	return out
}

// adjustOverall Holm-adjusts the comparisons' p-values as one family and
// sets their verdicts from the adjusted p-values.
func adjustOverall(cs []Comparison, alpha, margin float64) {
	ps := make([]float64, len(cs))
	for i := range cs {
		ps[i] = cs[i].PValue
	}
	adj := stats.Holm(ps)
	for i := range cs {
		c := &cs[i]
		// p-values are not rounded: 1e-36 is information.
		c.PAdjusted = adj[i]
		c.Verdict = stats.Verdict(c.Delta, stats.Interval{Lo: c.CI[0], Hi: c.CI[1]}, adj[i], alpha, margin)
	}
}

// adjustSlices Holm-adjusts the slice comparisons of each tag as one
// family: every value of the tag in every comparison (a report of three
// targets and a tag of four values is a family of 3 × 4). Looking through
// many slices for one where a target leads is how a lead is found by
// chance; the adjustment keeps the chance that any slice of a tag shows a
// false lead at alpha. Slice verdicts use the adjusted p-value.
func adjustSlices(cs []Comparison, alpha, margin float64) {
	type ref struct {
		c     int
		value string
	}
	families := map[string][]ref{}
	for i := range cs {
		for k, byValue := range cs[i].Slices {
			for v := range byValue {
				families[k] = append(families[k], ref{i, v})
			}
		}
	}
	for k, fam := range families {
		ps := make([]float64, len(fam))
		for j, r := range fam {
			ps[j] = cs[r.c].Slices[k][r.value].PValue
		}
		adj := stats.Holm(ps)
		for j, r := range fam {
			sc := cs[r.c].Slices[k][r.value]
			sc.PAdjusted = adj[j]
			sc.Verdict = stats.Verdict(sc.Delta, stats.Interval{Lo: sc.CI[0], Hi: sc.CI[1]}, adj[j], alpha, margin)
			cs[r.c].Slices[k][r.value] = sc
		}
	}
}

// clusterLabels returns each case's cluster (the cluster tag's value; a
// case without one is a cluster of its own), or nil when no case carries
// the tag.
func clusterLabels(ci *caseIndex) []string {
	k, ok := ci.keyOf[clusterTag]
	if !ok {
		return nil
	}
	out := make([]string, ci.len())
	for i := range out {
		if v := ci.tag(k, i); v >= 0 {
			out[i] = "c:" + ci.vals[k][v]
		} else {
			out[i] = "case:" + ci.id(i)
		}
	}
	return out
}

// pairDense compares a and b over the cases both have scored, overall and
// per tag value, in one pass over the cases. ok is false when they share
// fewer than two cases. The test depends on the design:
//
//   - cases with a cluster tag: the per-case differences (epochs averaged
//     per case) with a CR1 cluster-robust standard error and a t interval
//     and test on G−1 degrees of freedom (cluster_t);
//   - several epochs per case: the paired t-test and interval on the
//     per-case means of the epochs (paired_t);
//   - else one pass/fail per case: the McNemar score test with Tango's
//     score interval, which excludes 0 exactly when p < alpha
//     (mcnemar_score), or with o.test exact McNemar and Newcombe's
//     interval (mcnemar_exact).
//
// Slice comparisons get raw p-values: the caller adjusts them
// (adjustSlices).
func pairDense(a, b *verdicts, ci *caseIndex, o pairing) (Comparison, bool) {
	if a == nil || b == nil {
		return Comparison{}, false
	}
	clusters := clusterLabels(ci)
	binary := a.epochs <= 1 && b.epochs <= 1 && clusters == nil
	nk := len(ci.keys)
	var total stats.PairTable
	tables := make([][]stats.PairTable, nk)
	var xa, xb []float64
	var xc []string
	sxa, sxb := make([][][]float64, nk), make([][][]float64, nk)
	sxc := make([][][]string, nk)
	for k := range nk {
		tables[k] = make([]stats.PairTable, len(ci.vals[k]))
		sxa[k] = make([][]float64, len(ci.vals[k]))
		sxb[k] = make([][]float64, len(ci.vals[k]))
		sxc[k] = make([][]string, len(ci.vals[k]))
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
				if v := ci.tag(k, i); v >= 0 {
					add(&tables[k][v])
				}
			}
			continue
		}
		xa, xb = append(xa, ma), append(xb, mb)
		if clusters != nil {
			xc = append(xc, clusters[i])
		}
		for k := range nk {
			if v := ci.tag(k, i); v >= 0 {
				sxa[k][v] = append(sxa[k][v], ma)
				sxb[k][v] = append(sxb[k][v], mb)
				if clusters != nil {
					sxc[k][v] = append(sxc[k][v], clusters[i])
				}
			}
		}
	}
	compare := func(t stats.PairTable, xa, xb []float64, xc []string) (Comparison, bool) {
		var p stats.Paired
		var err error
		n := t.N()
		switch {
		case binary:
			p, err = stats.PairedBinaryWith(t, o.alpha, o.test)
		case clusters != nil:
			n = len(xa)
			p, err = stats.ClusteredPaired(xa, xb, xc, o.alpha)
		default:
			n = len(xa)
			p, err = stats.PairedMeans(xa, xb, o.alpha)
		}
		// Fewer than two cases (or clusters), or a degenerate comparison,
		// says nothing: it is left out rather than shown with undefined
		// numbers.
		if err != nil || n < 2 || anyNaN(p.Delta, p.SE, p.CI.Lo, p.CI.Hi, p.PValue) {
			return Comparison{}, false
		}
		if !binary && p.SE == 0 {
			// Every case differs by the same amount (two targets that agree
			// on every case): the t interval has zero width, a certainty no
			// finite set of cases gives, and would call them equivalent.
			// The score interval of the same cases counted as discordant
			// says what they can show.
			if q, err := stats.ConstantDifference(xa, xb, o.alpha); err == nil {
				p = q // named mcnemar_score / tango, as it is decided
			}
		}
		// A difference of rates lies in [−1, 1]; a t interval on few
		// clusters can reach past it (whether it excludes 0 is unchanged).
		lo, hi := math.Max(-1, p.CI.Lo), math.Min(1, p.CI.Hi)
		c := Comparison{N: n, Test: p.Test, CIMethod: p.CIMethod, DF: round6(p.DF), Clusters: p.Clusters,
			AOnly: p.AOnly, BOnly: p.BOnly,
			Delta: round6(p.Delta), SE: round6(p.SE), CI: [2]float64{round6(lo), round6(hi)}, PValue: p.PValue}
		if !math.IsNaN(p.MidP) {
			c.MidP = &p.MidP
		}
		return c, true
	}
	c, ok := compare(total, xa, xb, xc)
	if !ok {
		return Comparison{}, false
	}
	for k := range nk {
		if ci.keys[k] == clusterTag {
			// One cluster per slice: nothing to compare within it.
			continue
		}
		for v := range ci.vals[k] {
			sc, ok := compare(tables[k][v], sxa[k][v], sxb[k][v], sxc[k][v])
			if !ok {
				continue
			}
			sc.PAdjusted = sc.PValue
			sc.Verdict = stats.Verdict(sc.Delta, stats.Interval{Lo: sc.CI[0], Hi: sc.CI[1]}, sc.PValue, o.alpha, o.margin)
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

// minClusters is the number of clusters below which a cluster-robust
// interval is known to be too narrow (Cameron and Miller 2015): the t on
// G−1 degrees of freedom helps, and the report says so.
const minClusters = stats.FewClusters

// clusterWarnings says when comparisons rest on few clusters.
func clusterWarnings(cs []Comparison) []string {
	least := 0
	for _, c := range cs {
		if c.Test == stats.TestClusterT && (least == 0 || c.Clusters < least) {
			least = c.Clusters
		}
	}
	if least == 0 || least >= minClusters {
		return nil
	}
	return []string{fmt.Sprintf("the comparisons are clustered by the cluster tag on only %d clusters: below %d a cluster-robust interval (CR1, t on G−1 = %d degrees of freedom) can be too narrow, so a verdict near the line is less sure than its p-value says",
		least, minClusters, least-1)}
}

// rank puts each target at 1 + the number of targets that beat it (by the
// paired verdicts), so targets the comparisons cannot separate share a rank.
// unpairedComparisons counts the comparisons of two targets with no case
// in common (comparePairs leaves such a pair out, or compares it on none).
func unpairedComparisons(cs []Comparison) int {
	n := 0
	for _, c := range cs {
		if c.N == 0 {
			n++
		}
	}
	return n
}

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

// TestLabel names a comparison's test (Comparison.Test, DriftFlips.Test)
// for people.
func TestLabel(test string) string {
	switch test {
	case stats.TestMcNemarScore:
		return "McNemar score test"
	case stats.TestMcNemarExact:
		return "exact McNemar test"
	case stats.TestPairedT:
		return "paired t-test"
	case stats.TestClusterT:
		return "cluster-robust t-test"
	}
	return test
}

// IntervalLabel names a comparison's interval (Comparison.CIMethod) for
// people.
func IntervalLabel(method string) string {
	switch method {
	case "tango":
		return "Tango's score interval"
	case "newcombe":
		return "Newcombe's interval"
	case "t":
		return "t interval"
	case "cr1_t":
		return "CR1 cluster-robust t interval"
	}
	return method
}

// MethodLabel is the phrase that says how comparisons were made: the test
// and its interval ("" when cs is empty). Every comparison of one report
// shares its design, so the first one's names serve.
func MethodLabel(cs []Comparison) string {
	if len(cs) == 0 {
		return ""
	}
	c := cs[0]
	switch c.Test {
	case stats.TestClusterT:
		return fmt.Sprintf("cluster-robust (CR1) t-test and t interval on %d clusters, %g degrees of freedom", c.Clusters, c.DF)
	case stats.TestPairedT:
		return "paired t-test and t interval on the per-case means of the epochs"
	}
	s := TestLabel(c.Test)
	if c.CIMethod != "" {
		s += " with " + IntervalLabel(c.CIMethod)
	}
	return s
}
