package gate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/runview"
	"github.com/assay-eval/assay/internal/spec"
	"github.com/assay-eval/assay/internal/stats"
)

// Verdicts of a check, a target and the gate.
const (
	Pass         = "pass"
	Fail         = "fail"
	Inconclusive = "inconclusive"
)

// bootstrapResamples is B for the paired bootstrap of rates over epochs
// (as the report's run comparison) and of p95 latency.
const (
	bootstrapResamples = 4000
	latencyResamples   = 2000
)

// Options tune an evaluation.
type Options struct {
	// Alpha is the level of the one-sided tests at the limits (default
	// DefaultAlpha): the chance that the run fails any check, when no
	// limit is truly crossed, is at most Alpha (Holm over every check).
	Alpha float64
	// Strict fails an inconclusive check: every check must then show that
	// it is within its limit (a non-inferiority test at level Alpha).
	Strict bool
	// SharedCases compares the cases both runs have when their datasets
	// differ, instead of refusing.
	SharedCases bool
	// Targets narrows the targets gated (nil: every baseline target).
	Targets []string
	// DefaultRules records that the rules are the default ones.
	DefaultRules bool
}

// Result is the gate's verdict with everything behind it.
type Result struct {
	// Verdict is pass (no check failed) or fail.
	Verdict   string  `json:"verdict"`
	Baseline  Side    `json:"baseline"`
	Candidate Side    `json:"candidate"`
	Alpha     float64 `json:"alpha"`
	Strict    bool    `json:"strict"`
	// Rules are the rules evaluated, in the --rule syntax; DefaultRules is
	// true when none was configured.
	Rules        []string `json:"rules"`
	DefaultRules bool     `json:"default_rules"`
	// RulesFrom says whose rules were applied: baseline (the default: the
	// rules of the spec the baseline was run from), candidate (--rules-from
	// candidate, or a baseline that recorded none) or flags (--rule).
	// RulesHash is GateHash of the gate section applied ("" for flags).
	RulesFrom string `json:"rules_from,omitempty"`
	RulesHash string `json:"rules_hash,omitempty"`
	// RuleChanges are what the candidate's spec changed in the baseline's
	// gate rules; with the baseline's rules applied, a relaxed one fails
	// the gate (counted in RelaxedRules).
	RuleChanges  []RuleChange `json:"rule_changes,omitempty"`
	RelaxedRules int          `json:"relaxed_rules,omitempty"`
	// Cases is the number of cases both runs have; Added and Removed count
	// the candidate's cases the baseline lacks and the reverse.
	Cases       int            `json:"cases"`
	Added       int            `json:"cases_added"`
	Removed     int            `json:"cases_removed"`
	SharedCases bool           `json:"shared_cases_only"`
	Targets     []TargetResult `json:"targets"`
	// Family is the number of checks whose fail decisions were adjusted
	// together (Holm over every rule × target of this run that could be
	// tested); FalseFailRate is the family-wise false-fail rate that
	// controls: the chance that any check fails when no limit is truly
	// crossed is at most Alpha.
	Family        int     `json:"family"`
	FalseFailRate float64 `json:"family_wise_false_fail_rate"`
	// Clusters is the number of clusters when the cases carry a cluster
	// tag (comparisons are then cluster-robust), 0 otherwise.
	Clusters int `json:"clusters,omitempty"`
	// Failed, Inconclusive and Passed count the checks (a target missing
	// from the candidate counts as one failed check).
	Failed       int      `json:"failed"`
	Inconclusive int      `json:"inconclusive"`
	Passed       int      `json:"passed"`
	Warnings     []string `json:"warnings,omitempty"`
}

// Side names one of the two runs compared.
type Side struct {
	// Source is "run ID" or a baseline file's path.
	Source string          `json:"source"`
	Run    runview.RunInfo `json:"run"`
}

// TargetResult is one target's checks.
type TargetResult struct {
	Name    string `json:"name"`
	Verdict string `json:"verdict"`
	// Missing says the target is in the baseline but not in the candidate
	// (or has no result there): the target fails.
	Missing bool   `json:"missing,omitempty"`
	Reason  string `json:"reason,omitempty"`
	// Cases is the number of cases with results in both runs.
	Cases int `json:"cases"`
	// Errors counts the failed calls (provider errors) of those cases on
	// each side: left out of every check, as they say nothing of the
	// model's behaviour.
	Errors SideCounts `json:"errors"`
	// FingerprintChanged says the model names or system fingerprints the
	// provider reported differ from the baseline's.
	FingerprintChanged    bool                  `json:"fingerprint_changed"`
	BaselineFingerprints  []runview.Fingerprint `json:"baseline_fingerprints"`
	CandidateFingerprints []runview.Fingerprint `json:"candidate_fingerprints"`
	// IdenticalOutputs of Outputs pairs (case × epoch, both present) have
	// the same raw output in both runs.
	IdenticalOutputs int     `json:"identical_outputs"`
	Outputs          int     `json:"outputs_compared"`
	Checks           []Check `json:"checks"`
}

// Check is one rule's verdict on one target, with the numbers behind it.
// Values are in the metric's unit: a fraction for rates, USD per case for
// cost, milliseconds for latency.
type Check struct {
	// Rule is the check in the --rule syntax.
	Rule   string `json:"rule"`
	Metric string `json:"metric"` // rate | cost_per_case | latency_p95 | ttft_p95 | loud_rate
	// Scorer is the rate's scorer (primary resolved to its name).
	Scorer string `json:"scorer,omitempty"`
	// Slice is "TAG=VALUE" when the rule is about a slice.
	Slice string `json:"slice,omitempty"`
	// Kind is "worsening" (versus the baseline), "floor" or "ceiling".
	Kind    string `json:"kind"`
	Verdict string `json:"verdict"`
	// N is the number of cases compared.
	N         int    `json:"n"`
	Baseline  Num    `json:"baseline"`
	Candidate Num    `json:"candidate"`
	Delta     Num    `json:"delta"` // candidate − baseline
	CI        [2]Num `json:"ci"`    // of Delta (worsening) or of Candidate (bounds), two-sided 1−alpha
	CIMethod  string `json:"ci_method,omitempty"`
	Test      string `json:"test,omitempty"`
	// PValue is the two-sided p-value of no change (worsening checks), as
	// the report's comparisons show it; the verdict does not use it.
	PValue Num `json:"p_value"`
	// Threshold is the largest worsening allowed (in the metric's unit) or
	// the floor or ceiling.
	Threshold Num `json:"threshold"`
	// Bounds are the one-sided 1−alpha confidence bounds, lower and upper,
	// of Delta (worsening checks) or of Candidate (floors and ceilings):
	// the check fails when the bound on the good side is beyond the limit
	// and passes when the bound on the bad side is within it.
	Bounds [2]Num `json:"one_sided_bounds"`
	// PFail is the one-sided p-value of "within the limit" (small when the
	// data show the limit is crossed); PFailAdjusted is it after Holm over
	// every check of the gate run: the check fails when that is below
	// alpha. PPass is the one-sided p-value of "beyond the limit": the
	// check passes when it is below alpha. Otherwise it is inconclusive.
	PFail         Num `json:"p_fail"`
	PFailAdjusted Num `json:"p_fail_adjusted"`
	PPass         Num `json:"p_pass"`
	// Clusters is the number of clusters behind a cluster-robust check.
	Clusters int `json:"clusters,omitempty"`
	// Reason says in one line why the verdict is what it is.
	Reason string `json:"reason"`

	// rule is the check as evaluated; note a reason why nothing could be
	// decided (set with the verdict before the decision step).
	rule spec.GateCheck
	note string
}

// Num is a number that is written as null in JSON when it is undefined.
type Num float64

func (n Num) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return []byte(fmt.Sprintf("%g", roundSig(f))), nil
}

// roundSig keeps 10 significant digits, enough for any reader and free of
// binary noise.
func roundSig(x float64) float64 {
	if x == 0 {
		return 0
	}
	p := math.Pow(10, 9-math.Floor(math.Log10(math.Abs(x))))
	if math.IsInf(p, 0) || p == 0 {
		return x
	}
	return math.Round(x*p) / p
}

// DatasetMismatchError is the refusal to compare runs on different
// datasets without --shared-cases.
type DatasetMismatchError struct {
	BaselineHash, CandidateHash string
	// Added are the candidate's case IDs the baseline lacks, Removed the
	// reverse (both complete; the message shows the first few).
	Added, Removed []string
	Shared         int
	// ByBytes is true when a side predates content hashes, so the files'
	// bytes were compared; Note says so.
	ByBytes bool
	Note    string
}

func (e *DatasetMismatchError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "the runs measured different datasets (baseline %s, candidate %s): ", e.BaselineHash, e.CandidateHash)
	switch {
	case len(e.Added) == 0 && len(e.Removed) == 0 && e.ByBytes && e.Note != "":
		b.WriteString("the case IDs are the same but the dataset files differ")
	case len(e.Added) == 0 && len(e.Removed) == 0:
		b.WriteString("the case IDs are the same but their contents changed")
	default:
		fmt.Fprintf(&b, "%d cases added%s, %d removed%s", len(e.Added), idList(e.Added), len(e.Removed), idList(e.Removed))
	}
	if e.Note != "" {
		b.WriteString(" (" + e.Note + ")")
	}
	fmt.Fprintf(&b, "; refusing to compare. Pass --shared-cases to compare only the %d cases both have, or gate against a baseline of the current dataset", e.Shared)
	return b.String()
}

func idList(ids []string) string {
	if len(ids) == 0 {
		return ""
	}
	const show = 5
	q := make([]string, 0, show)
	for _, id := range ids[:min(show, len(ids))] {
		q = append(q, clip(id))
	}
	s := " (" + strings.Join(q, ", ")
	if len(ids) > show {
		s += fmt.Sprintf(", … %d more", len(ids)-show)
	}
	return s + ")"
}

// Evaluate gates the candidate against the baseline: every rule on every
// target, paired by case ID (and epoch). With no rules, DefaultRules apply.
func Evaluate(base, cand *runview.View, rules []Rule, o Options) (*Result, error) {
	if o.Alpha == 0 {
		o.Alpha = DefaultAlpha
	}
	if len(rules) == 0 {
		rules, o.DefaultRules = DefaultRules(), true
	}
	res := &Result{
		Baseline:  Side{Source: base.Source, Run: base.Run},
		Candidate: Side{Source: cand.Source, Run: cand.Run},
		Alpha:     o.Alpha, Strict: o.Strict, DefaultRules: o.DefaultRules, SharedCases: o.SharedCases,
	}
	for _, r := range rules {
		res.Rules = append(res.Rules, r.String())
	}

	// Cases, paired by ID.
	baseIdx := make(map[string]int, len(base.Cases))
	for i, c := range base.Cases {
		baseIdx[c.ID] = i
	}
	var pairs [][2]int // baseline case, candidate case
	var added, removed []string
	inCand := make(map[string]bool, len(cand.Cases))
	for i, c := range cand.Cases {
		inCand[c.ID] = true
		if j, ok := baseIdx[c.ID]; ok {
			pairs = append(pairs, [2]int{j, i})
		} else {
			added = append(added, c.ID)
		}
	}
	for _, c := range base.Cases {
		if !inCand[c.ID] {
			removed = append(removed, c.ID)
		}
	}
	res.Cases, res.Added, res.Removed = len(pairs), len(added), len(removed)
	// By content hash; by the file's bytes when a side predates content
	// hashes, with a note (as when the same cases come in other bytes).
	dv := dataset.CompareVersions("baseline", base.Run.Dataset(), "candidate", cand.Run.Dataset())
	sameData := dv.Same
	if dv.Note != "" {
		res.Warnings = append(res.Warnings, dv.Note)
	}
	switch {
	case !sameData && !o.SharedCases:
		return nil, &DatasetMismatchError{BaselineHash: dv.Before, CandidateHash: dv.After,
			Added: added, Removed: removed, Shared: len(pairs), ByBytes: dv.ByBytes, Note: dv.Note}
	case !sameData:
		res.Warnings = append(res.Warnings, fmt.Sprintf("the runs measured different datasets (%s → %s): compared only the %d cases both have (%d added, %d removed; cases with the same ID may have changed)",
			ShortHash(base.Run.DatasetHash), ShortHash(cand.Run.DatasetHash), len(pairs), len(added), len(removed)))
	case len(added) > 0 || len(removed) > 0:
		res.Warnings = append(res.Warnings, fmt.Sprintf("the runs measured different cases of the same dataset (baseline %d, candidate %d, e.g. a --limit): compared the %d both have",
			len(base.Cases), len(cand.Cases), len(pairs)))
	}
	if len(pairs) == 0 {
		return nil, fmt.Errorf("the baseline (%s) and the candidate (%s) have no case ID in common: nothing to compare", base.Source, cand.Source)
	}
	if base.Run.ScorersHash != "" && cand.Run.ScorersHash != "" && base.Run.ScorersHash != cand.Run.ScorersHash {
		res.Warnings = append(res.Warnings, fmt.Sprintf("the scorer configuration changed (%s → %s): the runs use two definitions of correct, so a change in rates may be the grader's, not the model's",
			ShortHash(base.Run.ScorersHash), ShortHash(cand.Run.ScorersHash)))
	}
	if base.Primary != cand.Primary {
		res.Warnings = append(res.Warnings, fmt.Sprintf("the primary scorer differs (%s in the baseline, %s in the candidate): rules on primary compare the two", clip(base.Primary), clip(cand.Primary)))
	}

	clusterWarning(res, base, cand, pairs)

	// Targets: the baseline's (or --targets), in order.
	names := o.Targets
	if names == nil {
		for _, t := range base.Targets {
			names = append(names, t.Name)
		}
		for _, t := range cand.Targets {
			if base.Target(t.Name) == nil {
				res.Warnings = append(res.Warnings, fmt.Sprintf("target %s is not in the baseline: not gated", clip(t.Name)))
			}
		}
	}
	for _, name := range names {
		bt, ct := base.Target(name), cand.Target(name)
		switch {
		case bt == nil && ct == nil:
			return nil, fmt.Errorf("target %s is in neither run (baseline targets: %s; candidate targets: %s)", clip(name), targetNames(base), targetNames(cand))
		case bt == nil:
			res.Warnings = append(res.Warnings, fmt.Sprintf("target %s is not in the baseline: not gated", clip(name)))
			continue
		}
		res.Targets = append(res.Targets, evalTarget(base, cand, bt, ct, pairs, rules, o, res))
	}
	if len(res.Targets) == 0 {
		return nil, fmt.Errorf("no target to gate: the baseline's targets are %s", targetNames(base))
	}
	decide(res, o)
	res.Verdict = Pass
	for _, t := range res.Targets {
		if t.Verdict == Fail {
			res.Verdict = Fail
		}
		if t.Missing {
			res.Failed++ // the target's one check: it was measured
		}
		for _, c := range t.Checks {
			switch c.Verdict {
			case Fail:
				res.Failed++
			case Inconclusive:
				res.Inconclusive++
			default:
				res.Passed++
			}
		}
	}
	return res, nil
}

func targetNames(s *runview.View) string {
	if len(s.Targets) == 0 {
		return "none"
	}
	var q []string
	for _, t := range s.Targets {
		q = append(q, clip(t.Name))
	}
	return strings.Join(q, ", ")
}

// ShortHash shortens a content hash as the gate's messages show it: without
// "sha256:", at most 12 hex digits, "(none)" when there is none.
func ShortHash(h string) string {
	h = strings.TrimPrefix(h, "sha256:")
	if len(h) > 12 {
		h = h[:12]
	}
	if h == "" {
		return "(none)"
	}
	return h
}

// evalTarget runs every rule on one target.
func evalTarget(base, cand *runview.View, bt, ct *runview.Target, pairs [][2]int, rules []Rule, o Options, res *Result) TargetResult {
	tr := TargetResult{Name: bt.Name, BaselineFingerprints: bt.Fingerprints}
	if tr.BaselineFingerprints == nil {
		tr.BaselineFingerprints = []runview.Fingerprint{}
	}
	if ct == nil {
		tr.Verdict, tr.Missing = Fail, true
		tr.Reason = fmt.Sprintf("target %s is in the baseline but not in the candidate run: it was not measured (narrow the gate with --targets if that is intended)", bt.Name)
		tr.CandidateFingerprints = []runview.Fingerprint{}
		return tr
	}
	tr.CandidateFingerprints = ct.Fingerprints
	if tr.CandidateFingerprints == nil {
		tr.CandidateFingerprints = []runview.Fingerprint{}
	}
	// Cases with a result in both runs.
	var both [][2]int
	for _, p := range pairs {
		if anyResult(bt, p[0], base.Epochs) && anyResult(ct, p[1], cand.Epochs) {
			both = append(both, p)
		}
		if base.Epochs == cand.Epochs {
			for e := range base.Epochs {
				jb, jc := p[0]*base.Epochs+e, p[1]*cand.Epochs+e
				// A failed call has no output to compare: two failures
				// are not two identical answers.
				if bt.Has(jb) && ct.Has(jc) && !bt.Failed(jb) && !ct.Failed(jc) {
					tr.Outputs++
					if bt.OutputHash[jb] == ct.OutputHash[jc] {
						tr.IdenticalOutputs++
					}
				}
			}
		}
	}
	tr.Cases = len(both)
	// Errors are not behaviour: a failed call has no output to judge, so
	// the checks leave it out, and it is counted apart.
	for _, p := range both {
		for e := range base.Epochs {
			if j := p[0]*base.Epochs + e; bt.Has(j) && bt.Failed(j) {
				tr.Errors.Baseline++
			}
		}
		for e := range cand.Epochs {
			if j := p[1]*cand.Epochs + e; ct.Has(j) && ct.Failed(j) {
				tr.Errors.Candidate++
			}
		}
	}
	if tr.Errors.Baseline+tr.Errors.Candidate > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("target %s: %d failed calls in the baseline and %d in the candidate (provider errors) are left out of the checks: errors are not behaviour",
			clip(bt.Name), tr.Errors.Baseline, tr.Errors.Candidate))
	}
	if timed := slices.ContainsFunc(rules, func(r Rule) bool {
		return r.Written.Metric == spec.GateLatencyP95 || r.Written.Metric == spec.GateTTFTP95
	}); timed {
		// A reply the response cache served keeps the latency of the call
		// that first made it: a latency rule over it compares old timings,
		// as drift says of cached outputs.
		cb, cc := countCached(both, bt, base.Epochs, 0), countCached(both, ct, cand.Epochs, 1)
		if cb+cc > 0 {
			res.Warnings = append(res.Warnings, fmt.Sprintf("target %s: %d results of the baseline and %d of the candidate came from the response cache: their latency is that of the call that first made them, not measured by this run; for latency rules re-run with `assay run --no-cache`",
				clip(bt.Name), cb, cc))
		}
	}
	if runview.FingerprintsChanged(bt.Fingerprints, ct.Fingerprints) {
		tr.FingerprintChanged = true
		res.Warnings = append(res.Warnings, fmt.Sprintf("target %s: the model fingerprint changed since the baseline (%s → %s): the provider may serve a different model under the same name",
			clip(bt.Name), runview.FingerprintList(bt.Fingerprints), runview.FingerprintList(ct.Fingerprints)))
	}
	if len(both) == 0 {
		tr.Verdict, tr.Missing = Fail, true
		tr.Reason = fmt.Sprintf("target %s has no case with results in both runs: nothing was measured", bt.Name)
		return tr
	}
	if withBase := countWith(pairs, bt, base.Epochs, 0); len(both) < withBase {
		res.Warnings = append(res.Warnings, fmt.Sprintf("target %s: the candidate has results for %d of the %d shared cases the baseline measured: the rest are not compared",
			clip(bt.Name), len(both), withBase))
	}
	e := &evaluator{base: base, cand: cand, bt: bt, ct: ct, pairs: both, o: o, clusters: clusterOf(base, cand)}
	for _, r := range rules {
		for _, part := range r.checks() {
			tr.Checks = append(tr.Checks, e.check(part))
		}
	}
	// The verdicts come once every target's checks are in (decide): the
	// fail decisions are adjusted over all of them.
	return tr
}

func anyResult(t *runview.Target, ci, epochs int) bool {
	for e := range epochs {
		if t.Has(ci*epochs + e) {
			return true
		}
	}
	return false
}

func countWith(pairs [][2]int, t *runview.Target, epochs, side int) int {
	n := 0
	for _, p := range pairs {
		if anyResult(t, p[side], epochs) {
			n++
		}
	}
	return n
}

// evaluator computes checks on one target's paired cases.
type evaluator struct {
	base, cand *runview.View
	bt, ct     *runview.Target
	pairs      [][2]int
	o          Options
	// clusters gives a pair's cluster (its candidate case's cluster tag,
	// else the baseline's); nil when no case carries one.
	clusters func(p [2]int) string
}

// sliced returns the pairs in the check's slice (tags from the candidate,
// or the baseline where the candidate's case has none).
func (e *evaluator) sliced(c spec.GateCheck) [][2]int {
	if c.SliceKey == "" {
		return e.pairs
	}
	var out [][2]int
	for _, p := range e.pairs {
		v, ok := e.cand.Tag(p[1], c.SliceKey)
		if !ok {
			v, ok = e.base.Tag(p[0], c.SliceKey)
		}
		if ok && v == c.SliceValue {
			out = append(out, p)
		}
	}
	return out
}

// perCase returns, for each pair, each side's mean over its epochs of
// val (skipping results val has no value for); pairs where either side
// has none are left out (kept are the pairs left in).
func (e *evaluator) perCase(pairs [][2]int, bval, cval func(j int) (float64, bool)) (b, c []float64, kept [][2]int) {
	mean := func(ci, epochs int, val func(int) (float64, bool)) (float64, bool) {
		sum, n := 0.0, 0
		for k := range epochs {
			if x, ok := val(ci*epochs + k); ok {
				sum += x
				n++
			}
		}
		if n == 0 {
			return 0, false
		}
		return sum / float64(n), true
	}
	for _, p := range pairs {
		mb, okb := mean(p[0], e.base.Epochs, bval)
		mc, okc := mean(p[1], e.cand.Epochs, cval)
		if okb && okc {
			b, c = append(b, mb), append(c, mc)
			kept = append(kept, p)
		}
	}
	return b, c, kept
}

func passVal(t *runview.Target, scorer string) func(int) (float64, bool) {
	p := t.Pass[scorer]
	return func(j int) (float64, bool) {
		if p == nil || !t.Behaved(j) || p[j] < 0 {
			return 0, false
		}
		return float64(p[j]), true
	}
}

func loudVal(t *runview.Target) func(int) (float64, bool) {
	return func(j int) (float64, bool) {
		if t.Shape[j] == runview.ShapeNone || t.Failed(j) {
			return 0, false
		}
		return b2f(t.Shape[j] == runview.ShapeLoud), true
	}
}

func costVal(t *runview.Target) func(int) (float64, bool) {
	return func(j int) (float64, bool) {
		if !t.Behaved(j) {
			return 0, false
		}
		return t.CostUSD[j], true
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// check evaluates one part of a rule (a worsening or a bound): its numbers
// and the one-sided tests at its limit. decide gives the verdict, once
// every check of the run is in.
func (e *evaluator) check(r Rule) Check {
	c := r.Check
	out := Check{Rule: r.String(), Metric: c.Kind, Kind: "worsening", rule: c}
	if c.Bound != nil {
		out.Kind = "floor"
		if !c.HigherIsBetter() {
			out.Kind = "ceiling"
		}
	}
	if c.SliceKey != "" {
		out.Slice = c.SliceKey + "=" + c.SliceValue
	}
	nan := Num(math.NaN())
	out.Baseline, out.Candidate, out.Delta, out.PValue, out.Threshold = nan, nan, nan, nan, nan
	out.CI, out.Bounds = [2]Num{nan, nan}, [2]Num{nan, nan}
	out.PFail, out.PFailAdjusted, out.PPass = nan, nan, nan
	pairs := e.sliced(c)
	switch c.Kind {
	case "rate", spec.GateLoudRate:
		var bval, cval func(int) (float64, bool)
		if c.Kind == "rate" {
			bs, cs := c.Scorer, c.Scorer
			if c.Scorer == spec.GatePrimary {
				bs, cs = e.base.Primary, e.cand.Primary
			}
			out.Scorer = cs
			if _, ok := e.ct.Pass[cs]; !ok {
				out.Verdict = Fail
				out.note = fmt.Sprintf("the candidate has no scores of %s", cs)
				return out
			}
			if _, ok := e.bt.Pass[bs]; !ok && c.Worse != nil {
				out.Verdict = Inconclusive
				out.note = fmt.Sprintf("the baseline has no scores of %s: no drop can be measured", bs)
				return out
			}
			bval, cval = passVal(e.bt, bs), passVal(e.ct, cs)
		} else {
			bval, cval = loudVal(e.bt), loudVal(e.ct)
		}
		e.rateCheck(&out, c, pairs, bval, cval)
	case spec.GateCostPerCase:
		e.costCheck(&out, c, pairs)
	case spec.GateLatencyP95, spec.GateTTFTP95:
		e.latencyCheck(&out, c, pairs)
	}
	return out
}

// binary reports whether each case has one pass/fail per side: the paired
// table applies, rather than per-case means.
func (e *evaluator) binary() bool { return e.base.Epochs == 1 && e.cand.Epochs == 1 }

// sideMeans returns one side's per-case means of val over the pairs, for
// the cases where that side has a value, and the pairs kept.
func (e *evaluator) sideMeans(pairs [][2]int, side int, val func(int) (float64, bool)) ([]float64, [][2]int) {
	s := e.base
	if side == 1 {
		s = e.cand
	}
	var out []float64
	var kept [][2]int
	for _, p := range pairs {
		sum, n := 0.0, 0
		for k := range s.Epochs {
			if x, ok := val(p[side]*s.Epochs + k); ok {
				sum += x
				n++
			}
		}
		if n > 0 {
			out = append(out, sum/float64(n))
			kept = append(kept, p)
		}
	}
	return out, kept
}

// clusterLabels are the kept pairs' clusters (nil when unclustered).
func (e *evaluator) clusterLabels(kept [][2]int) []string {
	if e.clusters == nil {
		return nil
	}
	out := make([]string, len(kept))
	for i, p := range kept {
		out[i] = e.clusters(p)
	}
	return out
}

// boundsAlpha is the two-sided level whose interval's ends are the
// one-sided 1−alpha bounds (NaN bounds when that is not a level).
func boundsAlpha(alpha float64) (float64, bool) { return 2 * alpha, 2*alpha < 1 }

func (e *evaluator) rateCheck(out *Check, c spec.GateCheck, pairs [][2]int, bval, cval func(int) (float64, bool)) {
	if c.Bound != nil {
		// A floor or ceiling is about the candidate alone.
		x, kept := e.sideMeans(pairs, 1, cval)
		out.N = len(x)
		if out.N == 0 {
			return
		}
		bm, _ := e.sideMeans(pairs, 0, bval)
		out.Baseline = Num(mean(bm))
		out.Threshold = Num(*c.Bound)
		e.valueCheck(out, c, x, kept, e.cand.Epochs == 1)
		out.Delta = out.Candidate - out.Baseline
		return
	}
	b, x, kept := e.perCase(pairs, bval, cval)
	out.N = len(b)
	if out.N == 0 {
		return
	}
	e.compare(out, c, x, b, kept, e.binary())
}

// compare fills a worsening check from the paired comparison of the
// candidate's per-case values x (A) with the baseline's b (B): the
// cluster-robust t on the per-case differences when the cases carry a
// cluster tag; else the McNemar score test with Tango's interval for one
// pass/fail per case, the paired t-test for means.
func (e *evaluator) compare(out *Check, c spec.GateCheck, x, b []float64, kept [][2]int, binary bool) {
	alpha := e.o.Alpha
	a2, ok2 := boundsAlpha(alpha)
	var p stats.Paired
	var err error
	bounds := stats.Interval{Lo: math.NaN(), Hi: math.NaN()}
	switch cl := e.clusterLabels(kept); {
	case cl != nil:
		p, err = stats.ClusteredPaired(x, b, cl, alpha)
		if ok2 && err == nil {
			if q, err := stats.ClusteredPaired(x, b, cl, a2); err == nil {
				bounds = q.CI
			}
		}
	case binary:
		t := pairTable(x, b)
		p, err = stats.PairedBinaryTable(t, alpha)
		if ok2 {
			bounds = stats.TangoInterval(t, a2)
		}
	default:
		p, err = stats.PairedMeans(x, b, alpha)
		if ok2 && err == nil {
			if q, err := stats.PairedMeans(x, b, a2); err == nil {
				bounds = q.CI
			}
		}
	}
	if err != nil {
		return
	}
	if !binary && p.SE == 0 && (c.Kind == "rate" || c.Kind == spec.GateLoudRate) {
		// Every case's rate moved by the same amount (identical outputs
		// over several epochs): the t bounds have zero width, a certainty
		// no finite set of cases gives. Decide as n pass/fail cases would.
		if q, err := stats.ConstantDifference(x, b, alpha); err == nil {
			p = q
			if ok2 {
				if q2, err := stats.ConstantDifference(x, b, a2); err == nil {
					bounds = q2.CI
				}
			}
		}
	}
	out.Baseline, out.Candidate, out.Delta = Num(p.MeanB), Num(p.MeanA), Num(p.Delta)
	out.CI, out.CIMethod, out.Test, out.PValue = [2]Num{Num(p.CI.Lo), Num(p.CI.Hi)}, p.CIMethod, p.Test, Num(p.PValue)
	out.Clusters = p.Clusters
	out.Threshold = Num(threshold(c, p.MeanB))
	setLimit(out, c, pairedTests(p), bounds)
}

func pairTable(x, b []float64) stats.PairTable {
	var t stats.PairTable
	for i := range b {
		switch {
		case x[i] == 1 && b[i] == 1:
			t.Both++
		case x[i] == 1:
			t.AOnly++
		case b[i] == 1:
			t.BOnly++
		default:
			t.Neither++
		}
	}
	return t
}

// valueCheck fills a floor or ceiling check from the candidate's per-case
// values x (rates: pass fractions; cost: USD): Wilson's score interval and
// test for one pass/fail per case; the cluster-robust t with a cluster
// tag; else Student's t on the per-case values (a rate whose cases all
// scored alike, where t has no spread, falls back to the score test on
// the cases).
func (e *evaluator) valueCheck(out *Check, c spec.GateCheck, x []float64, kept [][2]int, binary bool) {
	alpha := e.o.Alpha
	a2, ok2 := boundsAlpha(alpha)
	isRate := c.Kind == "rate" || c.Kind == spec.GateLoudRate
	nan := stats.Interval{Lo: math.NaN(), Hi: math.NaN()}
	zeros := make([]float64, len(x))
	var p stats.Paired
	var err error
	bounds := nan
	if cl := e.clusterLabels(kept); cl != nil {
		p, err = stats.ClusteredPaired(x, zeros, cl, alpha)
		if ok2 && err == nil {
			if q, err := stats.ClusteredPaired(x, zeros, cl, a2); err == nil {
				bounds = q.CI
			}
		}
	} else if !binary || !isRate {
		p, err = stats.PairedMeans(x, zeros, alpha)
		if ok2 && err == nil {
			if q, err := stats.PairedMeans(x, zeros, a2); err == nil {
				bounds = q.CI
			}
		}
	}
	switch {
	case isRate && (binary && p.Test == "" || p.Test != "" && p.SE == 0):
		// One pass/fail per case, or per-case rates with no spread (all
		// alike): the score test of the rate over the cases. (A single
		// cluster, whose SE is undefined, decides nothing.)
		m := mean(x)
		out.Candidate = Num(m)
		out.Test, out.CIMethod = "score", "wilson"
		ci := scoreInterval(m, len(x), alpha)
		out.CI = [2]Num{Num(ci.Lo), Num(ci.Hi)}
		if ok2 {
			bounds = scoreInterval(m, len(x), a2)
		}
		setLimit(out, c, proportionScore{p: m, n: len(x)}, bounds)
	case err != nil:
		return
	default:
		out.Candidate = Num(p.MeanA)
		ci := p.CI
		if isRate {
			ci = stats.Interval{Lo: max(0, ci.Lo), Hi: min(1, ci.Hi)}
			bounds = stats.Interval{Lo: max(0, bounds.Lo), Hi: min(1, bounds.Hi)}
		}
		out.CI, out.CIMethod, out.Test = [2]Num{Num(ci.Lo), Num(ci.Hi)}, p.CIMethod, p.Test
		out.Clusters = p.Clusters
		setLimit(out, c, pairedTests(p), bounds)
	}
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// threshold is the largest worsening allowed, in the metric's unit.
func threshold(c spec.GateCheck, baseline float64) float64 {
	if c.Worse.Relative {
		return c.Worse.Amount * math.Abs(baseline)
	}
	return c.Worse.Amount
}

func (e *evaluator) costCheck(out *Check, c spec.GateCheck, pairs [][2]int) {
	if c.Bound != nil {
		x, kept := e.sideMeans(pairs, 1, costVal(e.ct))
		out.N = len(x)
		if out.N == 0 {
			return
		}
		bm, _ := e.sideMeans(pairs, 0, costVal(e.bt))
		out.Baseline = Num(mean(bm))
		out.Threshold = Num(*c.Bound)
		e.valueCheck(out, c, x, kept, false)
		out.Delta = out.Candidate - out.Baseline
		return
	}
	b, x, kept := e.perCase(pairs, costVal(e.bt), costVal(e.ct))
	out.N = len(b)
	if out.N == 0 {
		return
	}
	e.compare(out, c, x, b, kept, false)
}

// MinLatencyCases is the fewest paired cases on which a p95 rule (latency
// or time to first token) decides: below it the bootstrap of a 95th percentile (the largest few
// values) does not hold its level, and the check is inconclusive.
const MinLatencyCases = 30

// latencyCheck compares p95 latencies over every result of the paired
// cases, with a paired bootstrap over cases (a case's epochs move
// together; with a cluster tag, over clusters).
//
// ttft_p95 is the same test on the time to first token, over the calls
// that streamed: a case counts as paired when both sides have a streamed
// call of it, so the ≥ MinLatencyCases rule is on those cases.
func (e *evaluator) latencyCheck(out *Check, c spec.GateCheck, pairs [][2]int) {
	type caseLat struct{ b, c []float64 }
	var cases []caseLat
	var kept [][2]int
	name := "p95 latency"
	column := func(t *runview.Target) []float64 { return t.LatencyMS }
	if c.Kind == spec.GateTTFTP95 {
		name = "p95 time to first token"
		column = func(t *runview.Target) []float64 { return t.FirstTokenMS }
		for _, side := range []struct {
			what string
			t    *runview.Target
		}{{"baseline", e.bt}, {"candidate", e.ct}} {
			if side.t.FirstTokenMS == nil {
				out.note = fmt.Sprintf("the %s does not record time to first token (a baseline file written before assay kept it): no %s can be measured; nothing decided", side.what, name)
				return
			}
		}
	}
	collect := func(t *runview.Target, ci, epochs int) []float64 {
		col := column(t)
		var xs []float64
		for k := range epochs {
			if j := ci*epochs + k; t.Behaved(j) && !math.IsNaN(col[j]) {
				xs = append(xs, col[j])
			}
		}
		return xs
	}
	for _, p := range pairs {
		lb, lc := collect(e.bt, p[0], e.base.Epochs), collect(e.ct, p[1], e.cand.Epochs)
		if len(lb) > 0 && len(lc) > 0 {
			cases = append(cases, caseLat{lb, lc})
			kept = append(kept, p)
		}
	}
	n := len(cases)
	out.N = n
	if n == 0 {
		if c.Kind == spec.GateTTFTP95 {
			out.note = fmt.Sprintf("%s: no case where both sides streamed (only a streamed call reports a first token); nothing decided", name)
		}
		return
	}
	// Each resample's p95 comes from counting its values by rank (the
	// values are sorted once), not from copying and selecting them: the
	// bootstrap then costs O(cases) per resample with no gathering.
	bs, cs := make([][]float64, n), make([][]float64, n)
	for i, c := range cases {
		bs[i], cs[i] = c.b, c.c
	}
	rq := [2]*stats.RankQuantile{stats.NewRankQuantile(bs), stats.NewRankQuantile(cs)}
	p95Of := func(idx []int, side int) float64 { return rq[side].Of(idx, 0.95) }
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	pb, pc := p95Of(all, 0), p95Of(all, 1)
	out.Baseline, out.Candidate, out.Delta = Num(pb), Num(pc), Num(pc-pb)
	if c.Bound != nil {
		out.Threshold = Num(*c.Bound)
	} else {
		out.Threshold = Num(threshold(c, pb))
	}
	if n < MinLatencyCases {
		out.note = fmt.Sprintf("%s %s → %s on %d paired cases: the p95 rule needs at least %d paired cases to decide (a 95th percentile rests on the few slowest calls); nothing decided",
			name, FormatValue(c.Kind, pb), FormatValue(c.Kind, pc), n, MinLatencyCases)
		if c.Bound != nil {
			out.note = fmt.Sprintf("%s %s on %d paired cases: the p95 rule needs at least %d paired cases to decide (a 95th percentile rests on the few slowest calls); nothing decided",
				name, FormatValue(c.Kind, pc), n, MinLatencyCases)
		}
		return
	}
	// Resampling units: the cases, or the clusters of cases (a resample
	// of clusters is expanded into their cases).
	members := func(idx []int) []int { return idx }
	if cl := e.clusterLabels(kept); cl != nil {
		var units [][]int
		at := map[string]int{}
		for i, l := range cl {
			k, ok := at[l]
			if !ok {
				k = len(units)
				at[l] = k
				units = append(units, nil)
			}
			units[k] = append(units[k], i)
		}
		out.Clusters = len(units)
		expand := make([]int, 0, n)
		members = func(idx []int) []int {
			expand = expand[:0]
			for _, u := range idx {
				expand = append(expand, units[u]...)
			}
			return expand
		}
	}
	rng := rand.New(rand.NewPCG(2, uint64(n)))
	alpha := e.o.Alpha
	a2, ok2 := boundsAlpha(alpha)
	stat := func(idx []int) float64 { m := members(idx); return p95Of(m, 1) - p95Of(m, 0) }
	if c.Bound != nil {
		stat = func(idx []int) float64 { return p95Of(members(idx), 1) }
	}
	resampled := n
	if out.Clusters > 0 {
		resampled = out.Clusters
	}
	reps := stats.Bootstrap(rng, resampled, latencyResamples, stat)
	ci := stats.PercentileCI(reps, alpha)
	bounds := stats.Interval{Lo: math.NaN(), Hi: math.NaN()}
	if ok2 {
		bounds = stats.PercentileCI(reps, a2)
	}
	out.CI, out.CIMethod = [2]Num{Num(ci.Lo), Num(ci.Hi)}, "percentile_bootstrap"
	bt := newBootstrapTest(reps)
	if c.Bound == nil {
		out.Test = "paired_bootstrap"
		// The p-value that inverts the percentile interval: the share of
		// resamples on the far side of no change, doubled.
		out.PValue = Num(min(1, 2*min(bt.PValueBelow(0), bt.PValueAbove(0))))
	}
	setLimit(out, c, bt, bounds)
}

// SideCounts is a count on each side of the gate.
type SideCounts struct {
	Baseline  int `json:"baseline"`
	Candidate int `json:"candidate"`
}

// countCached counts the results of t on the paired cases (side 0: the
// baseline's index, 1: the candidate's) that the response cache served
// (none when the view does not know: a baseline file).
func countCached(pairs [][2]int, t *runview.Target, epochs, side int) int {
	if t.Cached == nil {
		return 0
	}
	n := 0
	for _, p := range pairs {
		for e := range epochs {
			if j := p[side]*epochs + e; j < len(t.Cached) && t.Has(j) && t.Cached[j] {
				n++
			}
		}
	}
	return n
}
