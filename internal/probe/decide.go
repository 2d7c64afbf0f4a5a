package probe

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/assay-eval/assay/internal/stats"
	"github.com/assay-eval/assay/internal/units"
)

// Verdicts of the probe for one target.
const (
	// VerdictContaminated: the target does worse on the twins than on the
	// originals, by more than the minimum drop, beyond the noise. The
	// question mark is part of it: harder twins give the same signature.
	VerdictContaminated = "contaminated?"
	// VerdictInconclusive: the drop is above the minimum but the evidence
	// does not exclude no drop at all.
	VerdictInconclusive = "inconclusive"
	// VerdictClean: the observed drop is at most the minimum drop.
	VerdictClean = "clean"
)

// Test, interval and adjustment names, as the JSON report gives them.
const (
	TestName   = "mcnemar_exact_one_sided"
	CIMethod   = "newcombe"
	Adjustment = "holm"
)

// Options set the decision.
type Options struct {
	// Alpha is the false-positive rate the probe allows: the chance of
	// flagging any target when no target's rate differs between originals
	// and twins (0.05 by default).
	Alpha float64
	// MinDrop is the smallest drop worth flagging, as a fraction (0.05 by
	// default: 5 points).
	MinDrop float64
}

// DefaultOptions are the probe's defaults.
func DefaultOptions() Options { return Options{Alpha: 0.05, MinDrop: 0.05} }

// Check says what is wrong with o.
func (o Options) Check() error {
	var errs []error
	if !(o.Alpha > 0 && o.Alpha < 0.5) {
		errs = append(errs, fmt.Errorf("alpha must be in (0, 0.5), got %s", units.Plain(o.Alpha)))
	}
	if !(o.MinDrop >= 0 && o.MinDrop < 1) {
		errs = append(errs, fmt.Errorf("the minimum drop must be a fraction in [0, 1), got %s (5 points is 0.05)", units.Plain(o.MinDrop)))
	}
	return errors.Join(errs...)
}

// Rate is passed out of n with its two-sided 1 − alpha Wilson interval.
type Rate struct {
	Passed int    `json:"passed"`
	N      int    `json:"n"`
	Rate   Num    `json:"rate"`
	CI     [2]Num `json:"ci"`
}

// Finding is the probe's result for one target, on the cases whose
// original and twin both got an answer (a call that failed with an error is
// left out and counted).
type Finding struct {
	Target   string `json:"target"`
	N        int    `json:"n"`
	Original Rate   `json:"original"`
	Twin     Rate   `json:"twin"`
	// Drop is the original rate minus the twin rate (positive: worse on twins).
	Drop Num `json:"drop"`
	// CI is Newcombe's paired interval for the drop at level 1 − 2·alpha:
	// its lower end is the one-sided 1 − alpha lower bound the decision uses.
	CI [2]Num `json:"ci"`
	// OriginalOnly and TwinOnly are the discordant cases: passed on the
	// original only, and on the twin only.
	OriginalOnly int `json:"original_only"`
	TwinOnly     int `json:"twin_only"`
	// PValue is the one-sided exact McNemar p-value for a drop;
	// PAdjusted is Holm's adjustment of it across the targets probed.
	// OriginalErrors and TwinErrors count the calls that failed with an
	// error in each run; their cases are not in N.
	OriginalErrors int    `json:"original_errors"`
	TwinErrors     int    `json:"twin_errors"`
	PValue         Num    `json:"p_value"`
	PAdjusted      Num    `json:"p_adjusted"`
	Verdict        string `json:"verdict"`
}

// Flagged reports whether the verdict is contaminated?.
func (f *Finding) Flagged() bool { return f.Verdict == VerdictContaminated }

// OneSidedP is the exact one-sided McNemar p-value for "the originals pass
// more often than the twins": P(X ≥ b) for X ~ Binomial(b + c, 1/2), where
// b cases pass on the original only and c on the twin only. It is built on
// stats.McNemarExact, the two-sided 2·P(X ≤ min(b, c)): for b > c the
// one-sided tail is half of it; for b ≤ c it is 1 − P(X ≤ b − 1), and
// P(X ≤ b − 1) is half the two-sided p-value of the split (b − 1, c + 1).
func OneSidedP(b, c int) float64 {
	switch {
	case b < 0 || c < 0:
		return math.NaN()
	case b > c:
		return stats.McNemarExact(b, c) / 2
	case b == 0:
		return 1
	default:
		return 1 - stats.McNemarExact(b-1, c+1)/2
	}
}

// Assess decides every target from its paired table (A = originals,
// B = twins; each case counts once). p-values are Holm-adjusted across the
// targets, and the decision uses the adjusted one: the probe's exit code is
// one decision over all of them, so the chance that any clean target is
// flagged stays at or below alpha. A target is flagged when, together:
//
//   - the drop exceeds MinDrop,
//   - the interval's lower end (the one-sided 1 − alpha bound) is above 0,
//   - the Holm-adjusted one-sided p-value is below alpha.
//
// A drop above MinDrop that fails either test is inconclusive; a drop at or
// below MinDrop (including a rise) is clean. A target with no paired case is
// inconclusive, and still counts in the Holm family.
//
// The probe keeps the exact test (and Newcombe's interval) where reports
// and compare default to the McNemar score test with Tango's interval: its
// flag is an accusation made once per probe, usually on few discordant
// cases, and the exact one-sided test never exceeds alpha at any number of
// them, where the one-sided score test at 5% rejects a true null with
// probability up to 12.5% at 3 discordant cases, 9% at 9 and still 6.6% at
// 36 (binomial sums over X ~ Bin(b + c, ½); see also
// TestFalsePositiveRateStaysNominal). The two parts of the rule can
// disagree only in the safe direction: a drop whose Newcombe bound is above
// 0 with an exact p at or above alpha is inconclusive, never flagged, and
// the report shows both numbers.
func Assess(names []string, tables []stats.PairTable, o Options) ([]Finding, error) {
	if len(names) != len(tables) {
		return nil, fmt.Errorf("probe: %d targets but %d tables", len(names), len(tables))
	}
	if err := o.Check(); err != nil {
		return nil, err
	}
	out := make([]Finding, len(names))
	ps := make([]float64, len(names))
	for i, t := range tables {
		f := &out[i]
		f.Target = names[i]
		f.N = t.N()
		ps[i] = math.NaN()
		f.PValue, f.PAdjusted, f.Drop = nan, nan, nan
		f.CI = [2]Num{nan, nan}
		f.Original = rate(t.Both+t.AOnly, f.N, o.Alpha)
		f.Twin = rate(t.Both+t.BOnly, f.N, o.Alpha)
		f.OriginalOnly, f.TwinOnly = t.AOnly, t.BOnly
		if f.N == 0 {
			continue
		}
		p, err := stats.PairedBinaryExact(t, 2*o.Alpha)
		if err != nil {
			return nil, fmt.Errorf("probe: target %s: %w", names[i], err)
		}
		f.Drop, f.CI = Num(p.Delta), [2]Num{Num(p.CI.Lo), Num(p.CI.Hi)}
		ps[i] = OneSidedP(t.AOnly, t.BOnly)
		f.PValue = Num(ps[i])
	}
	adj := stats.Holm(ps)
	for i := range out {
		f := &out[i]
		f.PAdjusted = Num(adj[i])
		f.Verdict = Decide(float64(f.Drop), float64(f.CI[0]), adj[i], o)
	}
	return out, nil
}

// Decide is the verdict from a drop, the lower end of its interval and its
// adjusted p-value (see Assess). Undefined inputs are inconclusive.
func Decide(drop, lo, pAdj float64, o Options) string {
	switch {
	case math.IsNaN(drop) || math.IsNaN(lo) || math.IsNaN(pAdj):
		return VerdictInconclusive
	case drop <= o.MinDrop:
		return VerdictClean
	case lo > 0 && pAdj < o.Alpha:
		return VerdictContaminated
	default:
		return VerdictInconclusive
	}
}

func rate(k, n int, alpha float64) Rate {
	r := Rate{Passed: k, N: n, Rate: nan, CI: [2]Num{nan, nan}}
	if n > 0 {
		r.Rate = Num(float64(k) / float64(n))
		w := stats.Wilson(k, n, alpha)
		r.CI = [2]Num{Num(w.Lo), Num(w.Hi)}
	}
	return r
}

// Num is a number that may be undefined (NaN): JSON null then.
type Num float64

var nan = Num(math.NaN())

// MarshalJSON writes NaN and infinities as null.
func (x Num) MarshalJSON() ([]byte, error) {
	f := float64(x)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return json.Marshal(f)
}

// UnmarshalJSON reads null as NaN.
func (x *Num) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*x = nan
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	*x = Num(f)
	return nil
}
