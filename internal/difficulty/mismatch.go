package difficulty

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/assay-eval/assay/internal/stats"
)

// Mismatch is `assay mismatch`'s result. Every number in it is finite: a
// quantity that cannot be computed is zero with Computable false and a
// Why, so the JSON report never holds a NaN.
type Mismatch struct {
	Scale             Scale      `json:"scale"`
	Benchmark         SetSummary `json:"benchmark"`
	Workload          SetSummary `json:"workload"`
	Bins              []Bin      `json:"bins"`
	Distances         []Distance `json:"distances"`       // "wasserstein1", "ks", "tv"
	LargestGap        Gap        `json:"largest_gap"`     // the largest interval of the axis, within the workload's range, holding no benchmark item
	UncoveredShare    float64    `json:"uncovered_share"` // workload mass in bins with no benchmark item
	Scores            []Score    `json:"scores"`          // one per target with results on the benchmark
	Pairs             []Pair     `json:"pairs"`           // every two targets, paired on the benchmark's shared cases
	RankingRaw        []string   `json:"ranking_raw"`
	RankingReweighted []string   `json:"ranking_reweighted"`
	RankingChanged    bool       `json:"ranking_changed"`
	VerdictsChanged   int        `json:"verdicts_changed"`
	// Comparable is true when the whole workload mix could be compared:
	// every target's re-weighted score and every pair's re-weighted
	// comparison is computable. When false (a gap), RankingChanged and
	// VerdictsChanged say nothing (they are false and 0): the comparison
	// was not made; the covered-only fields below say what changes over
	// the measurable part of the mix.
	Comparable bool `json:"comparable"`
	// CoveredShare is the workload's mix in bins where the benchmark has
	// scored cases (1 − UncoveredShare when every target has results).
	CoveredShare float64 `json:"covered_share"`
	// RankingCovered orders the targets by their covered-only score (the
	// workload's mix restricted to the measurable bins, renormalised);
	// RankingCoveredChanged and VerdictsChangedCovered compare it and
	// the pairs' covered-only verdicts with the raw ones.
	RankingCovered         []string `json:"ranking_covered"`
	RankingCoveredChanged  bool     `json:"ranking_covered_changed"`
	VerdictsChangedCovered int      `json:"verdicts_changed_covered"`
	Rubric                 *Rubric  `json:"rubric"` // the divergence rubric (assay mismatch sets it; nil when not rated)
	Warnings               []string `json:"warnings"`
	// Discrete is true when the bins are the tag's values (one bin each).
	Discrete bool `json:"discrete"`
	// Alpha, Margin, Replicates and Seed are the settings the result was
	// computed with (defaults filled in).
	Alpha      float64 `json:"alpha"`
	Margin     float64 `json:"margin"`
	Replicates int     `json:"replicates"`
	Seed       uint64  `json:"seed"`
}

// SetSummary describes one side's difficulties, over its cases with a known
// difficulty (unweighted).
type SetSummary struct {
	Name    string  `json:"name"`
	Kind    string  `json:"kind"`
	Cases   int     `json:"cases"`
	Unknown int     `json:"unknown"`
	Min     float64 `json:"min"`
	Max     float64 `json:"max"`
	Mean    float64 `json:"mean"`
	Median  float64 `json:"median"`
	// Targets counts the targets with results on the set.
	Targets int `json:"targets"`
}

// Bin is one interval of the axis: [Lo, Hi) (the last one closed), or one
// value of a discrete tag (Lo == Hi). Bench and Work count cases; the
// shares are of each side's mix (the workload's weights when it has them).
// Gap: the workload has cases in the bin and the benchmark none.
type Bin struct {
	Lo         float64 `json:"lo"`
	Hi         float64 `json:"hi"`
	Label      string  `json:"label"`
	Bench      int     `json:"bench"`
	Work       int     `json:"work"`
	BenchShare float64 `json:"bench_share"`
	WorkShare  float64 `json:"work_share"`
	Gap        bool    `json:"gap"`
}

// Distance is a distance between the two sets' difficulties with a
// percentile bootstrap interval (each side resampled independently, the
// workload's weights carried along). A distance is never negative and
// resampling noise alone makes it positive, so for sets alike the interval
// lies above the value: read it as how far noise moves the distance, and
// P as whether the two sets differ at all.
type Distance struct {
	Name       string         `json:"name"`
	Value      float64        `json:"value"`
	CI         stats.Interval `json:"ci"`
	Replicates int            `json:"replicates"`
	// P is the permutation p-value of "both sets are drawn from one
	// distribution": the share of relabellings of the pooled cases (as
	// many as Replicates) at least as far apart as the two sets.
	P float64 `json:"p"`
}

// Names of the distances.
const (
	DistanceW1 = "wasserstein1"
	DistanceKS = "ks"
	DistanceTV = "tv"
)

// Gap is an interval of the axis. LargestGap is the widest interval
// between benchmark items (or the workload's range ends) that holds
// workload cases and no benchmark item; Work and WorkShare are the
// workload's cases in it. Zero when there is none (Work 0).
type Gap struct {
	Lo        float64 `json:"lo"`
	Hi        float64 `json:"hi"`
	Width     float64 `json:"width"`
	Work      int     `json:"work"`
	WorkShare float64 `json:"work_share"`
}

// Score is one target's benchmark score, raw and under the workload's mix.
type Score struct {
	Target       string   `json:"target"`
	Raw          Estimate `json:"raw"`        // the benchmark's own mix
	Reweighted   Estimate `json:"reweighted"` // the workload's mix; Computable false when a needed bin has no benchmark item
	Covered      Estimate `json:"covered"`    // the workload's mix restricted to measurable bins (renormalised), with CoveredShare
	CoveredShare float64  `json:"covered_share"`
	PerBin       []Rate   `json:"per_bin"` // per bin (Label = bin label)
}

// Estimate is a rate (the mean of case means over epochs, post-stratified)
// with its standard error, a t interval on Satterthwaite's degrees of
// freedom clipped to [0, 1], the cases it rests on and Kish's effective
// sample size of their weights. When Computable is
// false every number is zero and Why says what is missing.
type Estimate struct {
	Rate       float64        `json:"rate"`
	SE         float64        `json:"se"`
	DF         float64        `json:"df"` // Satterthwaite degrees of freedom of the t interval (0: no variance, the normal's)
	CI         stats.Interval `json:"ci"`
	N          int            `json:"n"`
	Kish       float64        `json:"kish"`
	Computable bool           `json:"computable"`
	Why        string         `json:"why"`
	// Missing names the bins the workload needs where the estimate has no
	// scored case (why it is not computable); nil otherwise.
	Missing []string `json:"missing,omitempty"`
}

// Pair is the paired comparison of two targets.
type Pair struct {
	A          string     `json:"a"`
	B          string     `json:"b"`
	Raw        Comparison `json:"raw"`
	Reweighted Comparison `json:"reweighted"`
	Changed    bool       `json:"changed"` // the verdict differs
	// Covered is the paired comparison under the workload's weights
	// restricted to the bins where both have paired cases, renormalised
	// (the same machinery; Holm over the pairs' covered comparisons);
	// CoveredShare is the workload's mix those bins hold, and
	// CoveredChanged says its verdict differs from the raw one. With no
	// gap it equals Reweighted.
	Covered        Comparison `json:"covered"`
	CoveredShare   float64    `json:"covered_share"`
	CoveredChanged bool       `json:"covered_changed"`
	// PerBin is the paired difference A − B within each bin (in the bins'
	// order): where a lead is made. Each is the plain mean of the per-case
	// differences with a t interval on n − 1 degrees of freedom, P
	// unadjusted and no verdict (a description, not a family of tests);
	// not computable with fewer than two paired cases.
	PerBin []Comparison `json:"per_bin"`
}

// Comparison is a paired difference A − B of case means on the cases both
// targets have, post-stratified: Σ W_h d̄_h with the stratified variance,
// a t test and interval on Satterthwaite's degrees of freedom (the
// stratified Welch form: with few cases in a needed bin the normal would
// declare false winners); P two-sided, PAdjusted by Holm over the
// pairs; Verdict by stats.Verdict. When Computable is false every number
// is zero, Verdict is "" and Why says what is missing.
type Comparison struct {
	Delta      float64        `json:"delta"`
	SE         float64        `json:"se"`
	DF         float64        `json:"df"` // Satterthwaite degrees of freedom of the t test and interval (0: no variance)
	CI         stats.Interval `json:"ci"`
	P          float64        `json:"p"`
	PAdjusted  float64        `json:"p_adjusted"`
	Verdict    string         `json:"verdict"`
	N          int            `json:"n"`
	Computable bool           `json:"computable"`
	Why        string         `json:"why"`
	// Missing names the bins the workload needs where the two have no
	// paired case (why it is not computable); nil otherwise.
	Missing []string `json:"missing,omitempty"`
}

// MismatchOptions configures Compare. Zero values take the defaults:
// Bins 8 (when the tag is not discrete and Edges are not given), Alpha
// 0.05, Replicates 2000, Margin stats.DefaultEquivalenceMargin (negative:
// no equivalence verdict). Seed seeds the bootstrap.
type MismatchOptions struct {
	Bins       int
	Edges      []float64
	Alpha      float64
	Replicates int
	Seed       uint64
	Margin     float64
}

// Defaults of MismatchOptions.
const (
	DefaultBins       = 8
	DefaultReplicates = 2000
	// MaxDiscrete is the most distinct values a tag may have to get one
	// bin per value.
	MaxDiscrete = 12
	// ThinBin: a bin the workload needs with fewer benchmark cases than
	// this is warned of.
	ThinBin = 5
)

// Compare places a benchmark and a workload on one difficulty axis: bins,
// distances with bootstrap intervals and permutation p-values, coverage
// gaps, each benchmark
// target's score post-stratified to the workload's mix, and every pair's
// paired comparison raw and re-weighted. A bin the workload needs and the
// benchmark lacks makes the re-weighted estimates not computable (never
// extrapolated); Covered gives the estimate over the bins that can be
// measured. Cases with an unknown difficulty are left out (counted and
// warned of).
//
// Bins: explicit Edges, else Bins equal-width bins over the pooled range,
// else one bin per value when a tag's values (not fitted ones) number at
// most MaxDiscrete (an ordered tag's levels no case holds are bins too),
// else DefaultBins. The workload's Weights set its mix (its shares, W1 and
// KS); the benchmark's weigh its distribution, while its scores weigh its
// cases equally within a bin.
func Compare(bench, work *Set, o MismatchOptions) (*Mismatch, error) {
	if bench == nil || work == nil {
		return nil, errors.New("mismatch needs a benchmark and a workload")
	}
	if err := o.check(); err != nil {
		return nil, err
	}
	o = o.withDefaults()
	m := &Mismatch{Scale: bench.Scale, Alpha: o.Alpha, Margin: o.Margin, Replicates: o.Replicates, Seed: o.Seed}
	if m.Scale.Source == "" {
		m.Scale = work.Scale
	}
	var problems []error
	for _, side := range []struct {
		what string
		s    *Set
	}{{"benchmark", bench}, {"workload", work}} {
		if err := side.s.check(side.what); err != nil {
			problems = append(problems, err)
		}
	}
	if err := errors.Join(problems...); err != nil {
		return nil, err
	}
	if bench.Scale.Source == SourceTag && work.Scale.Source == SourceTag {
		if bench.Scale.Levels != nil && work.Scale.Levels != nil && !slices.Equal(bench.Scale.Levels, work.Scale.Levels) {
			return nil, fmt.Errorf("the benchmark's levels %s and the workload's %s differ: one axis needs one order",
				strings.Join(bench.Scale.Levels, ","), strings.Join(work.Scale.Levels, ","))
		}
		if bench.Scale.Tag != work.Scale.Tag {
			m.Warnings = append(m.Warnings, fmt.Sprintf("the benchmark's difficulty is the tag %q and the workload's %q: they are compared as one scale",
				bench.Scale.Tag, work.Scale.Tag))
		}
	}
	m.Benchmark, m.Workload = summarize(bench), summarize(work)
	for _, side := range []struct {
		what string
		sum  SetSummary
	}{{"benchmark", m.Benchmark}, {"workload", m.Workload}} {
		if side.sum.Unknown > 0 {
			m.Warnings = append(m.Warnings, fmt.Sprintf("%d of the %s's %d cases have no difficulty and are left out",
				side.sum.Unknown, side.what, side.sum.Cases))
		}
	}

	ax := newAxis(bench, work, o, m)
	bv, bw, bb := ax.side(bench)
	wv, ww, wb := ax.side(work)
	bs, ws := binShares(bb, bw, len(ax.bins)), binShares(wb, ww, len(ax.bins))
	for _, k := range bb {
		ax.bins[k].Bench++
	}
	for _, k := range wb {
		ax.bins[k].Work++
	}
	for i := range ax.bins {
		b := &ax.bins[i]
		b.BenchShare, b.WorkShare = bs[i], ws[i]
		b.Gap = b.Work > 0 && b.WorkShare > 0 && b.Bench == 0
		if b.Gap {
			m.UncoveredShare += b.WorkShare
		}
	}
	m.Bins = ax.bins
	if out := (m.Benchmark.Cases - m.Benchmark.Unknown - len(bv)) + (m.Workload.Cases - m.Workload.Unknown - len(wv)); out > 0 {
		m.Warnings = append(m.Warnings, fmt.Sprintf("%d cases (benchmark %d, workload %d) fall outside the edges and are left out",
			out, m.Benchmark.Cases-m.Benchmark.Unknown-len(bv), m.Workload.Cases-m.Workload.Unknown-len(wv)))
	}
	if len(bv) == 0 || len(wv) == 0 {
		return nil, errors.New("no case of the benchmark or of the workload falls inside the edges")
	}
	m.Distances = distances(bv, bw, bb, wv, ww, wb, len(m.Bins), o)
	m.LargestGap = largestGap(bv, wv, ww)
	var gaps []string
	for _, b := range m.Bins {
		if b.Gap {
			gaps = append(gaps, b.Label)
		}
	}
	if len(gaps) > 0 {
		m.Warnings = append(m.Warnings, fmt.Sprintf("the workload puts %.1f%% of its mix in bins where the benchmark has no item (%s): "+
			"scores re-weighted to the workload cannot be computed there; the covered-only scores leave those bins out",
			100*m.UncoveredShare, strings.Join(gaps, ", ")))
	}
	var thin []string
	for _, b := range m.Bins {
		if b.WorkShare > 0 && b.Bench > 0 && b.Bench < ThinBin {
			thin = append(thin, fmt.Sprintf("%s (%.1f%% of the workload on %d benchmark %s)", b.Label, 100*b.WorkShare, b.Bench, plural(b.Bench, "case", "cases")))
		}
	}
	if len(thin) > 0 {
		m.Warnings = append(m.Warnings, fmt.Sprintf("bins the workload needs that rest on fewer than %d benchmark cases: %s; "+
			"their rates are noisy and weigh heavily in the re-weighted scores (see the effective sample size)", ThinBin, strings.Join(thin, ", ")))
	}
	if len(bench.Targets) == 0 {
		m.Warnings = append(m.Warnings, "the benchmark side has no results: distances and gaps only, no re-weighted scores")
		return m, nil
	}
	scoreTargets(m, bench, ax, o)
	return m, nil
}

func (o MismatchOptions) check() error {
	var problems []error
	if o.Bins < 0 {
		problems = append(problems, fmt.Errorf("bins %d: must be at least 1", o.Bins))
	}
	if o.Alpha != 0 && !(o.Alpha > 0 && o.Alpha < 1) {
		problems = append(problems, fmt.Errorf("alpha %g: must be strictly between 0 and 1 (0.05 for 95%% intervals)", o.Alpha))
	}
	if o.Replicates < 0 {
		problems = append(problems, fmt.Errorf("replicates %d: must be positive", o.Replicates))
	}
	if o.Edges != nil {
		if len(o.Edges) < 2 {
			problems = append(problems, fmt.Errorf("edges: %d given, need at least 2 (the bins lie between them)", len(o.Edges)))
		}
		for i, e := range o.Edges {
			if math.IsNaN(e) || math.IsInf(e, 0) {
				problems = append(problems, fmt.Errorf("edge %d is %g: edges are finite numbers", i+1, e))
			} else if i > 0 && !(e > o.Edges[i-1]) {
				problems = append(problems, fmt.Errorf("edges must increase: %g follows %g", e, o.Edges[i-1]))
			}
		}
	}
	return errors.Join(problems...)
}

func (o MismatchOptions) withDefaults() MismatchOptions {
	if o.Alpha == 0 {
		o.Alpha = 0.05
	}
	if o.Replicates == 0 {
		o.Replicates = DefaultReplicates
	}
	if o.Margin == 0 {
		o.Margin = stats.DefaultEquivalenceMargin
	}
	return o
}

// checkTargets refuses results that do not fit the set's cases: a target
// with results for another number of cases, or more right than trials (or
// a negative count) on a case; name starts the message.
func (s *Set) checkTargets(name string) error {
	for _, t := range s.Targets {
		if len(t.Right) != len(s.Cases) || len(t.Trials) != len(s.Cases) {
			return fmt.Errorf("%s: target %q has results for %d cases of %d", name, t.Name, len(t.Trials), len(s.Cases))
		}
		for i := range t.Right {
			if t.Right[i] < 0 || t.Trials[i] < 0 || t.Right[i] > t.Trials[i] {
				return fmt.Errorf("%s: target %q has %d right of %d trials on case %q", name, t.Name, t.Right[i], t.Trials[i], s.Cases[i])
			}
		}
	}
	return nil
}

// check refuses a set that cannot be placed on the axis.
func (s *Set) check(what string) error {
	if len(s.Cases) == 0 {
		return fmt.Errorf("the %s %s has no cases", what, s.Name)
	}
	if len(s.Values) != len(s.Cases) {
		return fmt.Errorf("the %s %s: %d cases but %d difficulties", what, s.Name, len(s.Cases), len(s.Values))
	}
	if s.Weights != nil {
		if len(s.Weights) != len(s.Cases) {
			return fmt.Errorf("the %s %s: %d cases but %d weights", what, s.Name, len(s.Cases), len(s.Weights))
		}
		for i, w := range s.Weights {
			if !(w >= 0) || math.IsInf(w, 0) {
				return fmt.Errorf("the %s %s: case %q has weight %g; weights are finite and not negative", what, s.Name, s.Cases[i], w)
			}
		}
	}
	if err := s.checkTargets("the " + what + " " + s.Name); err != nil {
		return err
	}
	total := 0.0
	for i, v := range s.Values {
		if !math.IsNaN(v) {
			if math.IsInf(v, 0) {
				return fmt.Errorf("the %s %s: case %q has an infinite difficulty", what, s.Name, s.Cases[i])
			}
			total += s.weight(i)
		}
	}
	if allNaN(s.Values) {
		tag := ""
		if s.Scale.Tag != "" {
			tag = fmt.Sprintf(" (tag %q)", s.Scale.Tag)
		}
		return fmt.Errorf("the %s %s: none of its %d cases has a difficulty%s", what, s.Name, len(s.Cases), tag)
	}
	if !(total > 0) {
		return fmt.Errorf("the %s %s: the weights of its cases with a difficulty sum to 0", what, s.Name)
	}
	return nil
}

func summarize(s *Set) SetSummary {
	out := SetSummary{Name: s.Name, Kind: s.Kind, Cases: len(s.Cases), Unknown: s.Unknown(), Targets: len(s.Targets)}
	var xs []float64
	for _, v := range s.Values {
		if !math.IsNaN(v) {
			xs = append(xs, v)
		}
	}
	if len(xs) == 0 {
		return out
	}
	out.Min, out.Max = slices.Min(xs), slices.Max(xs)
	out.Mean = sum(xs) / float64(len(xs))
	out.Median = stats.Quantile(xs, 0.5)
	return out
}

// axis is the bins both sides are counted in.
type axis struct {
	bins     []Bin
	discrete bool
	values   []float64 // the discrete values, ascending
	edges    []float64 // otherwise the bins' edges
}

func newAxis(bench, work *Set, o MismatchOptions, m *Mismatch) *axis {
	ax := &axis{}
	distinct := map[float64]bool{}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range []*Set{bench, work} {
		for _, v := range s.Values {
			if !math.IsNaN(v) {
				distinct[v] = true
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	levels := bench.Scale.Levels
	if levels == nil {
		levels = work.Scale.Levels
	}
	switch {
	case o.Edges != nil:
		ax.edges = o.Edges
	case o.Bins == 0 && len(distinct) <= MaxDiscrete && bench.Scale.Source != SourceFitted && work.Scale.Source != SourceFitted:
		ax.discrete = true
		for v := range distinct {
			ax.values = append(ax.values, v)
		}
		slices.Sort(ax.values)
		// Levels the tag orders but no case holds are bins too: an empty
		// level of the axis is a gap as much as a missing value range.
		if levels != nil {
			for k := range levels {
				if !distinct[float64(k)] {
					ax.values = append(ax.values, float64(k))
				}
			}
			slices.Sort(ax.values)
		}
	default:
		k := o.Bins
		if k == 0 {
			k = DefaultBins
		}
		if hi == lo {
			k = 1
		}
		ax.edges = make([]float64, k+1)
		for i := range ax.edges {
			ax.edges[i] = lo + (hi-lo)*float64(i)/float64(k)
		}
		ax.edges[k] = hi
	}
	m.Discrete = ax.discrete
	if ax.discrete {
		for _, v := range ax.values {
			ax.bins = append(ax.bins, Bin{Lo: v, Hi: v, Label: valueLabel(v, levels)})
		}
		return ax
	}
	for i := 0; i+1 < len(ax.edges); i++ {
		closing := ")"
		if i+2 == len(ax.edges) {
			closing = "]"
		}
		ax.bins = append(ax.bins, Bin{Lo: ax.edges[i], Hi: ax.edges[i+1],
			Label: "[" + fmtNum(ax.edges[i]) + ", " + fmtNum(ax.edges[i+1]) + closing})
	}
	return ax
}

func valueLabel(v float64, levels []string) string {
	if k := int(v); float64(k) == v && k >= 0 && k < len(levels) {
		return levels[k]
	}
	return fmtNum(v)
}

func fmtNum(x float64) string { return strconv.FormatFloat(x, 'g', 6, 64) }

// bin returns the bin of difficulty v, -1 for none (unknown, or outside
// the edges).
func (ax *axis) bin(v float64) int {
	if math.IsNaN(v) {
		return -1
	}
	if ax.discrete {
		k, ok := slices.BinarySearch(ax.values, v)
		if !ok {
			return -1
		}
		return k
	}
	n := len(ax.edges) - 1
	if v < ax.edges[0] || v > ax.edges[n] {
		return -1
	}
	k, _ := slices.BinarySearch(ax.edges, v)
	// v == edges[k] belongs to bin k (left-closed), except the last edge.
	if k < len(ax.edges) && ax.edges[k] == v {
		return min(k, n-1)
	}
	return k - 1
}

// side returns a set's known difficulties sorted ascending, with their
// weights and bins, leaving out cases outside the bins.
func (ax *axis) side(s *Set) (values, weights []float64, bins []int) {
	order := make([]int, 0, len(s.Values))
	for i, v := range s.Values {
		if ax.bin(v) >= 0 {
			order = append(order, i)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(s.Values[a], s.Values[b]) })
	for _, i := range order {
		values = append(values, s.Values[i])
		weights = append(weights, s.weight(i))
		bins = append(bins, ax.bin(s.Values[i]))
	}
	return values, weights, bins
}

// binShares is each of nbins bins' share of the weights of cases in bins
// (0 everywhere when they sum to 0).
func binShares(bins []int, weights []float64, nbins int) []float64 {
	s := make([]float64, nbins)
	for i, k := range bins {
		s[k] += weights[i]
	}
	if total := sum(weights); total > 0 {
		for k := range s {
			s[k] /= total
		}
	}
	return s
}

// cdfDistances returns the Wasserstein-1 distance and the Kolmogorov–
// Smirnov statistic between two weighted samples, each sorted ascending:
// the integral and the supremum of |F_u − F_v| over the merged points
// (scipy's wasserstein_distance and ks_2samp's statistic).
func cdfDistances(u, uw, v, vw []float64) (w1, ks float64) {
	ut, vt := sum(uw), sum(vw)
	i, j := 0, 0
	cu, cv := 0.0, 0.0
	for i < len(u) || j < len(v) {
		var x float64
		switch {
		case j >= len(v) || (i < len(u) && u[i] <= v[j]):
			x = u[i]
		default:
			x = v[j]
		}
		for i < len(u) && u[i] == x {
			cu += uw[i]
			i++
		}
		for j < len(v) && v[j] == x {
			cv += vw[j]
			j++
		}
		d := math.Abs(cu/ut - cv/vt)
		ks = max(ks, d)
		var next float64
		switch {
		case i >= len(u) && j >= len(v):
			return w1, ks
		case i >= len(u):
			next = v[j]
		case j >= len(v):
			next = u[i]
		default:
			next = min(u[i], v[j])
		}
		w1 += d * (next - x)
	}
	return w1, ks
}

func sum(xs []float64) float64 {
	t := 0.0
	for _, x := range xs {
		t += x
	}
	return t
}

// tv is the total variation distance between the two sides' bin shares.
func tv(bb []int, bw []float64, wb []int, ww []float64, nbins int) float64 {
	bs, ws := binShares(bb, bw, nbins), binShares(wb, ww, nbins)
	d := 0.0
	for k := range bs {
		d += math.Abs(bs[k] - ws[k])
	}
	return d / 2
}

// distances computes W1, KS and TV with percentile bootstrap intervals,
// each side resampled independently (cases drawn with replacement, their
// weights carried along), seeded by o.Seed. A resample is held as how
// many times each case was drawn, so the sorted values never need sorting
// again: a replicate costs one pass over both sides.
func distances(bv, bw []float64, bb []int, wv, ww []float64, wb []int, nbins int, o MismatchOptions) []Distance {
	w1, ks := cdfDistances(bv, bw, wv, ww)
	t := tv(bb, bw, wb, ww, nbins)
	rng := rand.New(rand.NewPCG(o.Seed, 0xd1ff1c))
	reps := [3][]float64{make([]float64, 0, o.Replicates), make([]float64, 0, o.Replicates), make([]float64, 0, o.Replicates)}
	rb, rw := newResample(bw), newResample(ww)
	for range o.Replicates {
		rb.draw(rng)
		rw.draw(rng)
		if sum(rb.w) == 0 || sum(rw.w) == 0 {
			continue // a resample of zero-weight cases only: no distribution
		}
		a, k := cdfDistances(bv, rb.w, wv, rw.w)
		reps[0] = append(reps[0], a)
		reps[1] = append(reps[1], k)
		reps[2] = append(reps[2], tv(bb, rb.w, wb, rw.w, nbins))
	}
	out := []Distance{{Name: DistanceW1, Value: w1}, {Name: DistanceKS, Value: ks}, {Name: DistanceTV, Value: t}}
	ps := permutationP([3]float64{w1, ks, t}, bv, bw, bb, wv, ww, wb, nbins, o)
	for i := range out {
		out[i].P = ps[i]
		out[i].Replicates = len(reps[i])
		out[i].CI = stats.PercentileCI(reps[i], o.Alpha)
		if len(reps[i]) == 0 {
			out[i].CI = stats.Interval{Lo: out[i].Value, Hi: out[i].Value}
		}
	}
	return out
}

// permutationP returns each distance's permutation p-value: the share of
// o.Replicates relabellings of the pooled cases (each side keeping its
// size, every case its weight) whose distance is at least the observed
// one, counting the observed labelling, (1 + k)/(1 + B). The pooled values
// stay sorted, so a relabelling costs one pass.
func permutationP(obs [3]float64, bv, bw []float64, bb []int, wv, ww []float64, wb []int, nbins int, o MismatchOptions) [3]float64 {
	n := len(bv) + len(wv)
	type item struct {
		v, w float64
		b    int
	}
	pool := make([]item, 0, n)
	for i := range bv {
		pool = append(pool, item{bv[i], bw[i], bb[i]})
	}
	for i := range wv {
		pool = append(pool, item{wv[i], ww[i], wb[i]})
	}
	slices.SortStableFunc(pool, func(a, b item) int { return cmp.Compare(a.v, b.v) })
	// A relabelling draws the smaller side's positions (a partial
	// Fisher–Yates shuffle); the rest are the other side's.
	small, benchSmall := len(bv), true
	if len(wv) < small {
		small, benchSmall = len(wv), false
	}
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	labels := make([]bool, n) // true: the benchmark's
	rng := rand.New(rand.NewPCG(o.Seed, 0x9e4d))
	u, uw, v, vw := make([]float64, 0, len(bv)), make([]float64, 0, len(bv)), make([]float64, 0, len(wv)), make([]float64, 0, len(wv))
	ub, vb := make([]int, 0, len(bv)), make([]int, 0, len(wv))
	var k [3]int
	done := 0
	for range o.Replicates {
		for i := range labels {
			labels[i] = !benchSmall
		}
		for i := range small {
			j := i + rng.IntN(n-i)
			perm[i], perm[j] = perm[j], perm[i]
			labels[perm[i]] = benchSmall
		}
		u, uw, v, vw, ub, vb = u[:0], uw[:0], v[:0], vw[:0], ub[:0], vb[:0]
		for i, it := range pool {
			if labels[i] {
				u, uw, ub = append(u, it.v), append(uw, it.w), append(ub, it.b)
			} else {
				v, vw, vb = append(v, it.v), append(vw, it.w), append(vb, it.b)
			}
		}
		if sum(uw) == 0 || sum(vw) == 0 {
			continue
		}
		done++
		a, b := cdfDistances(u, uw, v, vw)
		c := tv(ub, uw, vb, vw, nbins)
		// A relabelling at the observed distance counts, rounding aside.
		for d, x := range [3]float64{a, b, c} {
			if x >= obs[d]-1e-12*(1+obs[d]) {
				k[d]++
			}
		}
	}
	var out [3]float64
	for d := range out {
		out[d] = float64(1+k[d]) / float64(1+done)
	}
	return out
}

// resample is one side's bootstrap resample: w[i] is case i's weight times
// the number of times it was drawn.
type resample struct {
	base, w []float64
}

func newResample(w []float64) *resample {
	return &resample{base: w, w: make([]float64, len(w))}
}

// draw resamples len(base) cases with replacement.
func (r *resample) draw(rng *rand.Rand) {
	clear(r.w)
	n := len(r.base)
	for range n {
		k := rng.IntN(n)
		r.w[k] += r.base[k]
	}
}

// largestGap finds the widest interval between benchmark items (or the
// workload's range ends) holding workload cases and no benchmark item.
// bv and wv are sorted ascending.
func largestGap(bv, wv, ww []float64) Gap {
	wlo, whi := wv[0], wv[len(wv)-1]
	total := sum(ww)
	var pts []float64
	for _, x := range bv {
		if x >= wlo && x <= whi && (len(pts) == 0 || pts[len(pts)-1] != x) {
			pts = append(pts, x)
		}
	}
	var best Gap
	consider := func(lo, hi float64, inside func(float64) bool) {
		g := Gap{Lo: lo, Hi: hi, Width: hi - lo}
		w := 0.0
		for i, x := range wv {
			if inside(x) && ww[i] > 0 {
				g.Work++
				w += ww[i]
			}
		}
		if g.Work == 0 {
			return
		}
		g.WorkShare = w / total
		if g.Width > best.Width || (g.Width == best.Width && g.Work > best.Work) {
			best = g
		}
	}
	if len(pts) == 0 {
		consider(wlo, whi, func(float64) bool { return true })
		return best
	}
	if wlo < pts[0] {
		consider(wlo, pts[0], func(x float64) bool { return x < pts[0] })
	}
	for k := 0; k+1 < len(pts); k++ {
		lo, hi := pts[k], pts[k+1]
		consider(lo, hi, func(x float64) bool { return x > lo && x < hi })
	}
	if last := pts[len(pts)-1]; whi > last {
		consider(last, whi, func(x float64) bool { return x > last })
	}
	return best
}

// stratum is one bin's values (case means, or paired differences).
type strata [][]float64

// estimate is Σ W_h x̄_h over the strata with W_h > 0, with the stratified
// variance Σ W_h² s_h²/n_h (s_h² with n_h − 1; a stratum of one case takes
// the variance of every stratum's values pooled), its Satterthwaite
// degrees of freedom (Σ a_h s_h²)² / Σ (a_h s_h²)²/(n_h − 1) with a_h =
// W_h²/n_h (a pooled stratum counts N − 1; +Inf when the variance is 0),
// and Kish's effective n of the per-case weights W_h/n_h. W must sum to 1
// over the strata used, and every stratum with W_h > 0 must hold values.
func (st strata) estimate(W []float64) (est, se, df, kish float64, n int) {
	var all []float64
	for _, xs := range st {
		all = append(all, xs...)
	}
	_, pooled := meanVar(all)
	v, ksum, dden := 0.0, 0.0, 0.0
	for h, xs := range st {
		if W[h] == 0 || len(xs) == 0 {
			continue
		}
		mh, s2 := meanVar(xs)
		dfh := float64(len(xs) - 1)
		if len(xs) == 1 {
			s2, dfh = pooled, float64(len(all)-1)
		}
		nh := float64(len(xs))
		term := W[h] * W[h] * s2 / nh
		est += W[h] * mh
		v += term
		if term > 0 {
			dden += term * term / dfh
		}
		ksum += W[h] * W[h] / nh
		n += len(xs)
	}
	df = math.Inf(1)
	if v > 0 && dden > 0 {
		df = v * v / dden
	}
	return est, math.Sqrt(v), df, 1 / ksum, n
}

// tQuantile is the 1 − alpha/2 quantile of Student's t on df degrees of
// freedom (the normal's for infinite df).
func tQuantile(alpha, df float64) float64 {
	if math.IsInf(df, 1) {
		return distuv.UnitNormal.Quantile(1 - alpha/2)
	}
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(1 - alpha/2)
}

// tTwoSided is the two-sided p-value of t on df degrees of freedom.
func tTwoSided(t, df float64) float64 {
	if math.IsInf(df, 1) {
		return 2 * distuv.UnitNormal.Survival(math.Abs(t))
	}
	return 2 * distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Survival(math.Abs(t))
}

// meanVar returns the mean and the sample variance (n − 1; 0 for one value).
func meanVar(xs []float64) (mean, variance float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	mean = sum(xs) / float64(len(xs))
	if len(xs) < 2 {
		return mean, 0
	}
	for _, x := range xs {
		variance += (x - mean) * (x - mean)
	}
	return mean, variance / float64(len(xs)-1)
}

// empty says whether no stratum holds a value.
func (st strata) empty() bool {
	return !slices.ContainsFunc(st, func(xs []float64) bool { return len(xs) > 0 })
}

// ownShares are the strata's shares of their own values: the raw
// (benchmark's own) mix.
func (st strata) ownShares() []float64 {
	W := make([]float64, len(st))
	n := 0
	for h, xs := range st {
		W[h] = float64(len(xs))
		n += len(xs)
	}
	for h := range W {
		W[h] /= float64(n)
	}
	return W
}

// missing lists the labels of the bins the workload needs where the
// strata hold no value.
func (st strata) missing(bins []Bin) []string {
	var out []string
	for h, b := range bins {
		if b.WorkShare > 0 && len(st[h]) == 0 {
			out = append(out, b.Label)
		}
	}
	return out
}

// covered returns the workload's shares restricted to the bins where the
// strata hold values, renormalised, and the share they cover.
func (st strata) covered(bins []Bin) ([]float64, float64) {
	W := make([]float64, len(bins))
	total := 0.0
	for h, b := range bins {
		if b.WorkShare > 0 && len(st[h]) > 0 {
			W[h] = b.WorkShare
			total += b.WorkShare
		}
	}
	if total > 0 {
		for h := range W {
			W[h] /= total
		}
	}
	return W, total
}

func workShares(bins []Bin) []float64 {
	W := make([]float64, len(bins))
	for h, b := range bins {
		W[h] = b.WorkShare
	}
	return W
}

func scoreTargets(m *Mismatch, bench *Set, ax *axis, o MismatchOptions) {
	binOf := make([]int, len(bench.Cases))
	for i, v := range bench.Values {
		binOf[i] = ax.bin(v)
	}
	nb := len(m.Bins)
	// means[t][i]: target t's case mean on case i, NaN without trials.
	means := make([][]float64, len(bench.Targets))
	singles := map[string]bool{}
	for ti, t := range bench.Targets {
		means[ti] = make([]float64, len(bench.Cases))
		st := make(strata, nb)
		sc := Score{Target: t.Name, PerBin: make([]Rate, nb)}
		passed, trials := make([]int, nb), make([]int, nb)
		for i := range bench.Cases {
			means[ti][i] = math.NaN()
			h := binOf[i]
			if h < 0 || t.Trials[i] == 0 {
				continue
			}
			means[ti][i] = float64(t.Right[i]) / float64(t.Trials[i])
			st[h] = append(st[h], means[ti][i])
			passed[h] += int(t.Right[i])
			trials[h] += int(t.Trials[i])
		}
		for h := range sc.PerBin {
			sc.PerBin[h] = Rate{Target: t.Name, Passed: passed[h], N: trials[h], CI: stats.Wilson(passed[h], trials[h], o.Alpha)}
			if trials[h] > 0 {
				sc.PerBin[h].Rate = float64(passed[h]) / float64(trials[h])
			}
		}
		if st.empty() {
			why := "no scored result on a case with a difficulty"
			sc.Raw = Estimate{Why: why}
			sc.Reweighted, sc.Covered = sc.Raw, sc.Raw
			m.Scores = append(m.Scores, sc)
			continue
		}
		sc.Raw = rateEstimate(st, st.ownShares(), o.Alpha, singles, m.Bins)
		if miss := st.missing(m.Bins); len(miss) > 0 {
			sc.Reweighted = Estimate{Why: notComputable(t.Name, miss, m.Bins), Missing: miss}
		} else {
			sc.Reweighted = rateEstimate(st, workShares(m.Bins), o.Alpha, singles, m.Bins)
		}
		W, share := st.covered(m.Bins)
		sc.CoveredShare = share
		if share > 0 {
			sc.Covered = rateEstimate(st, W, o.Alpha, singles, m.Bins)
		} else {
			sc.Covered = Estimate{Why: "the benchmark has no scored case in any bin the workload needs"}
		}
		m.Scores = append(m.Scores, sc)
	}
	for ti := range bench.Targets {
		for tj := ti + 1; tj < len(bench.Targets); tj++ {
			st := make(strata, nb)
			for i := range bench.Cases {
				a, b := means[ti][i], means[tj][i]
				if binOf[i] < 0 || math.IsNaN(a) || math.IsNaN(b) {
					continue
				}
				st[binOf[i]] = append(st[binOf[i]], a-b)
			}
			p := Pair{A: bench.Targets[ti].Name, B: bench.Targets[tj].Name}
			if st.empty() {
				p.Raw = Comparison{Why: "the two targets have no scored case in common"}
				p.Reweighted, p.Covered = p.Raw, p.Raw
			} else {
				p.PerBin = perBinDeltas(st, o.Alpha)
				p.Raw = compare(st, st.ownShares(), o.Alpha, singles, m.Bins)
				if miss := st.missing(m.Bins); len(miss) > 0 {
					p.Reweighted = Comparison{Why: notComputable(p.A+" and "+p.B, miss, m.Bins), Missing: miss}
				} else {
					p.Reweighted = compare(st, workShares(m.Bins), o.Alpha, singles, m.Bins)
				}
				W, share := st.covered(m.Bins)
				p.CoveredShare = share
				if share > 0 {
					p.Covered = compare(st, W, o.Alpha, singles, m.Bins)
				} else {
					p.Covered = Comparison{Why: "the two targets have no paired case in any bin the workload needs"}
				}
			}
			m.Pairs = append(m.Pairs, p)
		}
	}
	verdicts(m.Pairs, func(p *Pair) *Comparison { return &p.Raw }, o)
	verdicts(m.Pairs, func(p *Pair) *Comparison { return &p.Reweighted }, o)
	verdicts(m.Pairs, func(p *Pair) *Comparison { return &p.Covered }, o)
	m.Comparable = true
	for _, s := range m.Scores {
		if !s.Reweighted.Computable {
			m.Comparable = false
		}
		m.CoveredShare = max(m.CoveredShare, s.CoveredShare)
	}
	for i := range m.Pairs {
		p := &m.Pairs[i]
		if !p.Reweighted.Computable && p.Raw.Computable {
			m.Comparable = false
		}
		p.Changed = p.Raw.Computable && p.Reweighted.Computable && p.Raw.Verdict != p.Reweighted.Verdict
		if p.Changed {
			m.VerdictsChanged++
		}
		p.CoveredChanged = p.Raw.Computable && p.Covered.Computable && p.Raw.Verdict != p.Covered.Verdict
		if p.CoveredChanged {
			m.VerdictsChangedCovered++
		}
	}
	m.RankingRaw = ranking(m.Scores, func(s Score) Estimate { return s.Raw })
	m.RankingReweighted = ranking(m.Scores, func(s Score) Estimate { return s.Reweighted })
	m.RankingCovered = ranking(m.Scores, func(s Score) Estimate { return s.Covered })
	m.RankingChanged = m.Comparable && rankingChanged(m.RankingRaw, m.RankingReweighted)
	m.RankingCoveredChanged = rankingChanged(m.RankingRaw, m.RankingCovered)
	if !m.Comparable {
		m.VerdictsChanged = 0
	}
	if len(singles) > 0 {
		labels := make([]string, 0, len(singles))
		for l := range singles {
			labels = append(labels, l)
		}
		slices.Sort(labels)
		m.Warnings = append(m.Warnings, fmt.Sprintf("bins with one benchmark case (%s): their variance is taken from all bins pooled",
			strings.Join(labels, ", ")))
	}
}

func notComputable(who string, miss []string, bins []Bin) string {
	share := 0.0
	for _, b := range bins {
		if slices.Contains(miss, b.Label) {
			share += b.WorkShare
		}
	}
	return fmt.Sprintf("not computable: the workload puts %.1f%% of its mix in %s, where the benchmark has no scored case for %s (not extrapolated)",
		100*share, plural(len(miss), "bin", "bins")+" "+strings.Join(miss, ", "), who)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func noteSingles(st strata, W []float64, bins []Bin, singles map[string]bool) {
	for h, xs := range st {
		if W[h] > 0 && len(xs) == 1 {
			singles[bins[h].Label] = true
		}
	}
}

func rateEstimate(st strata, W []float64, alpha float64, singles map[string]bool, bins []Bin) Estimate {
	est, se, df, kish, n := st.estimate(W)
	noteSingles(st, W, bins, singles)
	q := tQuantile(alpha, df)
	return Estimate{Rate: est, SE: se, DF: finiteDF(df), N: n, Kish: kish, Computable: true,
		CI: stats.Interval{Lo: math.Max(0, est-q*se), Hi: math.Min(1, est+q*se)}}
}

// finiteDF is df as a result holds it: 0 for infinite (no variance).
func finiteDF(df float64) float64 {
	if math.IsInf(df, 0) || math.IsNaN(df) {
		return 0
	}
	return df
}

func compare(st strata, W []float64, alpha float64, singles map[string]bool, bins []Bin) Comparison {
	d, se, df, _, n := st.estimate(W)
	noteSingles(st, W, bins, singles)
	q := tQuantile(alpha, df)
	return Comparison{Delta: d, SE: se, DF: finiteDF(df), N: n, Computable: true, P: deltaP(d, se, df),
		CI: stats.Interval{Lo: math.Max(-1, d-q*se), Hi: math.Min(1, d+q*se)}}
}

// deltaP is the two-sided p-value of a difference d with standard error se
// on df degrees of freedom: 1 for no difference at all, 0 when every case
// differs by the same amount (se 0).
func deltaP(d, se, df float64) float64 {
	switch {
	case se > 0:
		return tTwoSided(d/se, df)
	case d == 0:
		return 1
	}
	return 0
}

// perBinDeltas describes the paired differences bin by bin.
func perBinDeltas(st strata, alpha float64) []Comparison {
	out := make([]Comparison, len(st))
	for h, xs := range st {
		if len(xs) < 2 {
			out[h] = Comparison{N: len(xs), Why: fmt.Sprintf("%d paired %s in the bin: no interval", len(xs), plural(len(xs), "case", "cases"))}
			continue
		}
		mean, v := meanVar(xs)
		se := math.Sqrt(v / float64(len(xs)))
		df := float64(len(xs) - 1)
		q := tQuantile(alpha, df)
		p := deltaP(mean, se, df)
		out[h] = Comparison{Delta: mean, SE: se, DF: df, N: len(xs), Computable: true, P: p, PAdjusted: p,
			CI: stats.Interval{Lo: math.Max(-1, mean-q*se), Hi: math.Min(1, mean+q*se)}}
	}
	return out
}

// verdicts Holm-adjusts one family of comparisons (the not computable ones
// count as p = 1) and classifies each with stats.Verdict.
func verdicts(pairs []Pair, get func(*Pair) *Comparison, o MismatchOptions) {
	ps := make([]float64, len(pairs))
	for i := range pairs {
		c := get(&pairs[i])
		ps[i] = math.NaN()
		if c.Computable {
			ps[i] = c.P
		}
	}
	adj := stats.Holm(ps)
	for i := range pairs {
		c := get(&pairs[i])
		if !c.Computable {
			continue
		}
		c.PAdjusted = adj[i]
		c.Verdict = stats.Verdict(c.Delta, c.CI, c.PAdjusted, o.Alpha, o.Margin)
	}
}

// rankingChanged says whether the targets of after, in the order raw
// gives them, are in another order.
func rankingChanged(raw, after []string) bool {
	return len(after) > 1 && !slices.Equal(
		slices.DeleteFunc(slices.Clone(raw), func(n string) bool { return !slices.Contains(after, n) }), after)
}

// ranking orders the targets with a computable estimate by rate, highest
// first (ties by name).
func ranking(scores []Score, get func(Score) Estimate) []string {
	var s []Score
	for _, x := range scores {
		if get(x).Computable {
			s = append(s, x)
		}
	}
	slices.SortStableFunc(s, func(a, b Score) int {
		return cmp.Or(cmp.Compare(get(b).Rate, get(a).Rate), strings.Compare(a.Target, b.Target))
	})
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = x.Target
	}
	return out
}
