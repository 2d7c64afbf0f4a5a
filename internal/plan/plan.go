// Package plan computes what `assay plan` answers: the cases a paired
// comparison needs and the minimum detectable difference of a set (from
// an assumed discordance, or from assumed pass rates), what each pair of
// targets of an analysed run can detect (and per slice), and the gate's
// power on a run's set. It computes plain structs (their JSON is the
// command's --json); report renders them. It reads no store: the CLI
// hands it an analysis.Report or a runview.View.
//
// It must not import store, provider, report or cli.
package plan

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/assay-eval/assay/internal/analysis"
	"github.com/assay-eval/assay/internal/stats"
	"github.com/assay-eval/assay/internal/units"
)

// Mode is what `assay plan` was asked; it is the "mode" of the JSON.
type Mode string

const (
	// ModePaired: two targets on the same cases, from an assumed discordance.
	ModePaired Mode = "paired"
	// ModeRates: two independent samples, from assumed pass rates.
	ModeRates Mode = "rates"
	// ModeRun: every pair of targets of a stored run, from what it observed.
	ModeRun Mode = "run"
	// ModeGate: the gate's power on a stored run's set (--gate).
	ModeGate Mode = "gate"
)

// Options are the plan's assumptions and levels. A zero Delta, PDisc or
// Cases was not given.
type Options struct {
	Alpha float64 // two-sided significance level
	Power float64
	// Delta is the difference to detect (a fraction); PDisc the assumed
	// discordance; Cases the size of a set.
	Delta float64
	PDisc float64
	Cases int
	// P1 and P2 are assumed pass rates (ModeRates).
	P1, P2 float64
	// Slices plans a run per tag value too; Tags keeps only these tag keys.
	Slices bool
	Tags   []string
	// AlphaGiven: Alpha was given by the user, so a spec's gate alpha does
	// not replace it.
	AlphaGiven bool
}

// Result is one of *Paired, *Rates, *Run and *Gate.
type Result interface{ PlanMode() Mode }

// PlanMode says which plan a result is.
func (*Paired) PlanMode() Mode { return ModePaired }

// PlanMode says which plan a result is.
func (*Rates) PlanMode() Mode { return ModeRates }

// PlanMode says which plan a result is.
func (*Run) PlanMode() Mode { return ModeRun }

// PlanMode says which plan a result is.
func (*Gate) PlanMode() Mode { return ModeGate }

// Paired is the JSON of `assay plan --p-disc ...`.
type Paired struct {
	Mode   Mode     `json:"mode"`
	Method string   `json:"method"` // "mcnemar_score" (power by Connor 1987)
	Alpha  float64  `json:"alpha"`
	Power  float64  `json:"power"`
	PDisc  float64  `json:"p_disc"`
	Delta  *float64 `json:"delta"` // the difference to detect (--delta)
	Cases  *int     `json:"cases"` // the set size asked about (--cases)
	// CasesNeeded is the paired cases needed to detect Delta; AchievedPower
	// is the power of exactly that many cases (at least Power).
	CasesNeeded   *int     `json:"cases_needed"`
	AchievedPower *float64 `json:"achieved_power"`
	// MDD is the minimum detectable difference of Cases; PowerAtCases the
	// power of Cases to detect Delta (both given).
	MDD          *float64 `json:"mdd"`
	PowerAtCases *float64 `json:"power_at_cases"`
}

// Rates is the JSON of `assay plan --p1 ... --p2 ...`.
type Rates struct {
	Mode   Mode    `json:"mode"`
	Method string  `json:"method"` // "two_proportion_cohen_h"
	Alpha  float64 `json:"alpha"`
	Power  float64 `json:"power"`
	P1     float64 `json:"p1"`
	P2     float64 `json:"p2"`
	Delta  float64 `json:"delta"` // |p1 − p2|
	// CasesPerTarget: each target on its own independent sample of cases.
	CasesPerTarget int `json:"cases_per_target"`
	// PDiscIfIndependent is the discordance two targets with these rates
	// would show if their outcomes were independent, p1(1−p2) + p2(1−p1);
	// PairedCasesIfIndependent the paired cases needed at it (null when
	// not computable). Real models fail the same hard cases, so observed
	// discordance, and the paired cases needed, are usually lower.
	PDiscIfIndependent       float64 `json:"p_disc_if_independent"`
	PairedCasesIfIndependent *int    `json:"paired_cases_if_independent"`
	Note                     string  `json:"note"`
}

// Run is the JSON of `assay plan RUN_ID|latest`.
type Run struct {
	Mode    Mode    `json:"mode"`
	RunID   string  `json:"run_id"`
	Scoring int     `json:"scoring"`
	Alpha   float64 `json:"alpha"`
	// AlphaPerPair is the level the report's test faces for one pair: alpha
	// split over the k(k−1)/2 pairs of k targets (Holm's first step: the
	// first pair declared different is tested at alpha/pairs). The plan's
	// numbers for pairs are at it.
	AlphaPerPair float64  `json:"alpha_per_pair"`
	Power        float64  `json:"power"`
	Delta        *float64 `json:"delta"`
	Pairs        []Pair   `json:"pairs"`
	Notes        []string `json:"notes"`
	// BySlice: the slices were planned (--slices), and the text shows them.
	BySlice bool `json:"-"`
}

// Pair is one pair of targets of a run.
type Pair struct {
	A    string `json:"a"`
	B    string `json:"b"`
	Test string `json:"test"` // the report's test: mcnemar_score, mcnemar_exact, paired_t or cluster_t
	// Verdict is the report's paired verdict (p-values Holm-adjusted).
	Verdict string `json:"verdict"`
	Estimate
	// Slices are present with --slices: one per tag key and value, keys in
	// alphabetical order and values in tier order.
	Slices []Slice `json:"slices,omitempty"`
}

// Slice is one pair of targets on one tag value.
type Slice struct {
	Key   string `json:"key"`
	Value string `json:"value"`
	// Verdict is the slice's paired verdict (Holm over the tag's slices).
	Verdict string `json:"verdict"`
	// Alpha is the level the slice faces: alpha split over every slice
	// comparison of its tag (pairs × values), as the report's Holm does.
	Alpha float64 `json:"alpha"`
	Estimate
}

// Estimate is what a set of paired cases can detect.
type Estimate struct {
	N     int `json:"n"`
	AOnly int `json:"a_only"`
	BOnly int `json:"b_only"`
	// PDisc is (a_only + b_only) / n; ObservedDelta (a_only − b_only) / n,
	// the difference in pass rates, positive when a passed more. Both are
	// null, like everything below, when the pair was not compared by
	// McNemar (several epochs per case).
	PDisc         *float64 `json:"p_disc"`
	ObservedDelta *float64 `json:"observed_delta"`
	// MDD is the minimum detectable difference of these n cases at p_disc.
	MDD *float64 `json:"mdd"`
	// CasesForObservedDelta: paired cases needed to detect a difference as
	// large as the observed one, at the observed discordance.
	CasesForObservedDelta *int `json:"cases_for_observed_delta"`
	// CasesForDelta: the same for --delta.
	CasesForDelta *int `json:"cases_for_delta"`
	// TooSmall: the observed difference is non-zero, the report's verdict
	// is inconclusive, and the set cannot separate it: the MDD is above
	// it, there is no MDD at all, or too few cases are discordant for the
	// exact McNemar test to reach alpha. (A difference the report's test
	// did find is never too small, though it may lie below the MDD.)
	TooSmall bool     `json:"too_small"`
	Notes    []string `json:"notes"`
}

// FromDiscordance plans a paired comparison from an assumed discordance:
// the cases needed to detect o.Delta, and the minimum detectable
// difference of o.Cases (each when given).
func FromDiscordance(o Options) (*Paired, error) {
	doc := &Paired{Mode: ModePaired, Method: stats.TestMcNemarScore, Alpha: o.Alpha, Power: o.Power, PDisc: o.PDisc}
	if o.Delta != 0 {
		d := o.Delta
		doc.Delta = &d
		n, err := stats.McNemarScoreSampleSize(o.PDisc, d, o.Alpha, o.Power)
		if err != nil {
			// The arguments were checked: only the size can be out of reach.
			return nil, fmt.Errorf("detecting %s at %s discordance with %s power would need more cases than any evaluation set could hold; plan for a larger difference",
				units.GivenPoints(d), units.GivenPct(o.PDisc), units.GivenPct(o.Power))
		}
		doc.CasesNeeded = &n
		if pw, err := stats.McNemarScorePower(n, o.PDisc, d, o.Alpha); err == nil {
			doc.AchievedPower = &pw
		}
	}
	if o.Cases != 0 {
		c := o.Cases
		doc.Cases = &c
		mdd, err := stats.MinDetectableDifference(c, o.PDisc, o.Alpha, o.Power)
		if err != nil {
			return nil, fmt.Errorf("%d cases at %s discordance cannot detect any difference with %s power (alpha %s), not even %s (every discordant case favouring one target); use more cases or accept less power",
				c, units.GivenPct(o.PDisc), units.GivenPct(o.Power), units.Plain(o.Alpha), units.GivenPoints(o.PDisc))
		}
		doc.MDD = &mdd
		if o.Delta != 0 {
			if pw, err := stats.McNemarScorePower(c, o.PDisc, o.Delta, o.Alpha); err == nil {
				doc.PowerAtCases = &pw
			}
		}
	}
	return doc, nil
}

// FromRates plans two independent samples from assumed pass rates (and
// says what a paired design would need were the outcomes independent).
func FromRates(o Options) (*Rates, error) {
	n, err := stats.TwoProportionSampleSize(o.P1, o.P2, o.Alpha, o.Power)
	if err != nil {
		return nil, fmt.Errorf("detecting the difference between pass rates %s and %s with %s power would need more cases than any evaluation set could hold; plan for a larger difference",
			units.Plain(o.P1), units.Plain(o.P2), units.GivenPct(o.Power))
	}
	doc := &Rates{Mode: ModeRates, Method: "two_proportion_cohen_h", Alpha: o.Alpha, Power: o.Power,
		P1: o.P1, P2: o.P2, Delta: math.Abs(o.P1 - o.P2), CasesPerTarget: n}
	doc.PDiscIfIndependent = o.P1*(1-o.P2) + o.P2*(1-o.P1)
	if m, err := stats.McNemarScoreSampleSize(doc.PDiscIfIndependent, doc.Delta, o.Alpha, o.Power); err == nil {
		doc.PairedCasesIfIndependent = &m
	}
	doc.Note = fmt.Sprintf("%d cases per target assumes each target gets its own independent cases. "+
		"Run both on the same cases and a paired (McNemar) test needs fewer: the cases both pass or both fail cancel out, "+
		"and only the discordant ones, passed by exactly one target, carry evidence. "+
		"Were the two targets' outcomes independent, %s of cases would be discordant and the paired design would need about as many cases; "+
		"but models tend to fail the same hard cases, so far fewer disagree and fewer cases are needed. "+
		"Measure the discordance on a pilot run and plan with 'assay plan --delta %s --p-disc X' or 'assay plan RUN --delta %s'.",
		n, units.PctShort(doc.PDiscIfIndependent), units.Plain(units.RoundSig(doc.Delta)), units.Plain(units.RoundSig(doc.Delta)))
	return doc, nil
}

// TagError is a --tag the analysed run has no cases of.
type TagError struct{ msg string }

func (e *TagError) Error() string { return e.msg }

// CheckTags refuses a tag key none of the run's pairs has slices of,
// naming the keys it has (a *TagError).
func CheckTags(rep *analysis.Report, tags []string) error {
	if len(tags) == 0 || len(rep.Comparisons) == 0 {
		return nil
	}
	keys := map[string]bool{}
	for _, c := range rep.Comparisons {
		for k := range c.Slices {
			keys[k] = true
		}
	}
	for _, t := range tags {
		if !keys[t] {
			known := sortedKeys(keys)
			if len(known) == 0 {
				return &TagError{fmt.Sprintf("--tag %q: run %s has no tagged cases (tags come from the spec's dataset.tags)", t, rep.Run.ID)}
			}
			return &TagError{fmt.Sprintf("--tag %q: run %s has no such tag key; its keys are: %s", t, rep.Run.ID, strings.Join(known, ", "))}
		}
	}
	return nil
}

// FromReport plans every pair of targets of an analysed run (and, with
// o.Slices, every tag value of each pair) from what the run observed.
// Check the tags first (CheckTags).
func FromReport(rep *analysis.Report, o Options) *Run {
	doc := &Run{Mode: ModeRun, RunID: rep.Run.ID, Scoring: rep.Run.Scoring, Alpha: o.Alpha, AlphaPerPair: o.Alpha, Power: o.Power,
		Pairs: []Pair{}, Notes: []string{}, BySlice: o.Slices}
	if m := len(rep.Comparisons); m > 1 {
		doc.AlphaPerPair = o.Alpha / float64(m)
	}
	// The report's slice families: every value of a tag in every pair.
	sliceFamily := map[string]int{}
	for _, c := range rep.Comparisons {
		for k, vals := range c.Slices {
			sliceFamily[k] += len(vals)
		}
	}
	if o.Delta != 0 {
		d := o.Delta
		doc.Delta = &d
	}
	for _, c := range rep.Comparisons {
		p := Pair{A: c.A, B: c.B, Test: c.Test, Verdict: c.Verdict}
		p.Estimate = EstimateOf(c, o, doc.AlphaPerPair)
		if o.Slices {
			for _, k := range sortedKeys(c.Slices) {
				if len(o.Tags) > 0 && !slices.Contains(o.Tags, k) {
					continue
				}
				vals := make([]string, 0, len(c.Slices[k]))
				for v := range c.Slices[k] {
					vals = append(vals, v)
				}
				analysis.SortValues(vals)
				for _, v := range vals {
					sc := c.Slices[k][v]
					a := o.Alpha / float64(max(1, sliceFamily[k]))
					p.Slices = append(p.Slices, Slice{Key: k, Value: v, Verdict: sc.Verdict, Alpha: a, Estimate: EstimateOf(sc, o, a)})
				}
			}
			if p.Slices == nil {
				p.Slices = []Slice{}
			}
		}
		doc.Pairs = append(doc.Pairs, p)
	}
	switch {
	case len(rep.Comparisons) == 0 && len(rep.Targets) < 2:
		doc.Notes = append(doc.Notes, fmt.Sprintf("run %s has %d target(s): there is no pair to plan for; plan from an assumed discordance with --delta and --p-disc", rep.Run.ID, len(rep.Targets)))
	case len(rep.Comparisons) == 0:
		doc.Notes = append(doc.Notes, fmt.Sprintf("run %s has no two targets scored on the same cases: there is no pair to plan for", rep.Run.ID))
	case len(rep.Comparisons) > 1:
		m := len(rep.Comparisons)
		doc.Notes = append(doc.Notes, fmt.Sprintf("the report adjusts the p-values of these %d pairs (Holm): the first pair it declares different is tested at alpha/%d = %s, so every number here is at that level",
			m, m, units.Plain(units.RoundSig(doc.AlphaPerPair))))
	}
	if o.Slices {
		doc.Notes = append(doc.Notes, "the report adjusts slice p-values over every slice of a tag (Holm over pairs × values): each slice is planned at alpha split over its tag's slices (in --json, its alpha)")
	}
	return doc
}

// EstimateOf is what the cases of one comparison can detect, at the level
// alpha it faces in the report (alpha split over its family): the power
// of the McNemar score test the report uses (Connor's formula is its
// asymptotic power).
func EstimateOf(c analysis.Comparison, o Options, alpha float64) Estimate {
	e := Estimate{N: c.N, AOnly: c.AOnly, BOnly: c.BOnly, Notes: []string{}}
	switch c.Test {
	case stats.TestMcNemarScore, stats.TestMcNemarExact:
	case stats.TestClusterT:
		e.Notes = append(e.Notes, "the cases carry a cluster tag and were compared by the cluster-robust t: a McNemar plan would assume independent cases and overstate what they detect, so it is not computed")
		return e
	default:
		e.Notes = append(e.Notes, "compared on per-case means of several epochs (paired t): the McNemar plan needs one pass/fail per case, so it is not computed")
		return e
	}
	if c.N < 1 {
		return e
	}
	n := float64(c.N)
	pDisc, obs := float64(c.AOnly+c.BOnly)/n, float64(c.AOnly-c.BOnly)/n
	e.PDisc, e.ObservedDelta = &pDisc, &obs
	gap := math.Abs(obs)
	if pDisc == 0 {
		e.Notes = append(e.Notes, fmt.Sprintf("the targets agreed on all %d cases: with no discordance there is nothing to plan from; assume one with --p-disc", c.N))
		return e
	}
	if mdd, err := stats.MinDetectableDifference(c.N, pDisc, alpha, o.Power); err == nil {
		e.MDD = &mdd
	} else {
		e.Notes = append(e.Notes, fmt.Sprintf("%d cases at %s discordance cannot detect any difference with %s power, not even %s",
			c.N, units.PctShort(pDisc), units.GivenPct(o.Power), units.Points(pDisc)))
	}
	if gap > 0 {
		if m, err := stats.McNemarScoreSampleSize(pDisc, gap, alpha, o.Power); err == nil {
			e.CasesForObservedDelta = &m
		}
		e.TooSmall = e.MDD == nil || *e.MDD > gap
		// Connor's formula is a normal approximation; the report's test
		// cannot reach alpha at all with too few discordant cases,
		// however they split.
		if disc := c.AOnly + c.BOnly; disc < MinDiscordant(c.Test, alpha) {
			e.TooSmall = true
			e.Notes = append(e.Notes, fmt.Sprintf("only %d discordant cases: the report's %s cannot reach p < %s with fewer than %d, however they split",
				disc, TestName(c.Test), units.Plain(units.RoundSig(alpha)), MinDiscordant(c.Test, alpha)))
		}
		// The MDD is at the chosen power: a difference below it is still
		// found sometimes. When the report's test found it, the cases were
		// enough, and "too few cases" beside a verdict would contradict it.
		if c.Verdict != "" && c.Verdict != stats.VerdictInconclusive {
			e.TooSmall = false
		}
	}
	if o.Delta != 0 {
		if o.Delta > pDisc {
			e.Notes = append(e.Notes, fmt.Sprintf("a difference of %s needs at least %s of cases discordant; these targets disagreed on %s, so at this discordance it cannot occur",
				units.GivenPoints(o.Delta), units.GivenPct(o.Delta), units.PctShort(pDisc)))
		} else if m, err := stats.McNemarScoreSampleSize(pDisc, o.Delta, alpha, o.Power); err == nil {
			e.CasesForDelta = &m
		} else {
			e.Notes = append(e.Notes, fmt.Sprintf("detecting %s at %s discordance would need more cases than any evaluation set could hold", units.GivenPoints(o.Delta), units.PctShort(pDisc)))
		}
	}
	return e
}

// MinDiscordant is the fewest discordant cases with which the report's
// two-sided test can reach alpha (all of them favouring one target): the
// exact McNemar test, or the score test, whose p-value is then
// 2·Φ(−√k).
func MinDiscordant(test string, alpha float64) int {
	p := func(k int) float64 {
		if test == stats.TestMcNemarExact {
			return stats.McNemarExact(k, 0)
		}
		return math.Erfc(math.Sqrt(float64(k)) / math.Sqrt2)
	}
	k := 1
	for k < 1<<20 && !(p(k) < alpha) {
		k++
	}
	return k
}

// TestName names the report's pass/fail test in a note.
func TestName(test string) string {
	if test == stats.TestMcNemarExact {
		return "exact McNemar test"
	}
	return "McNemar score test"
}

// PairsOf is the number of pairs the run's alpha is split over.
func PairsOf(d *Run) int { return int(math.Round(d.Alpha / d.AlphaPerPair)) }

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
