package difficulty

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/assay-eval/assay/internal/spec"
	"github.com/assay-eval/assay/internal/stats"
)

// The divergence rubric (issue 17, deliverable 4): how far a benchmark is
// from a workload on four axes — data distribution, prompt format, scoring
// rubric and decision stakes — each rated low or high (or unrated, when
// nothing about it is known) with its reasons, and the rule that any high
// axis leaves the benchmark good for a shortlist, never for the choice.
// Signals are computed from the two sides' profiles where they can be; the
// spec's questionnaire (difficulty.rubric) answers what cannot.

// Axes of the rubric, in the order a report lists them.
const (
	AxisData    = "data_distribution"
	AxisPrompt  = "prompt_format"
	AxisScoring = "scoring_rubric"
	AxisStakes  = "decision_stakes"
)

// Ratings of an axis.
const (
	RatingLow     = "low"
	RatingHigh    = "high"
	RatingUnrated = "unrated"
)

// Verdicts of the rubric.
const (
	// RubricMaySelect: every axis rated low.
	RubricMaySelect = "may_select"
	// RubricShortlistOnly: at least one axis rated high.
	RubricShortlistOnly = "shortlist_only"
	// RubricNotEstablished: no axis high, but at least one unrated.
	RubricNotEstablished = "not_established"
)

// RubricRule is the rule every report states, word for word.
const RubricRule = "Any axis rated high: the benchmark may shortlist but not select."

// Thresholds of the computed signals. A signal at or above its threshold
// is high. The vocabulary thresholds were set on real text: GSM8K against
// itself (two halves) and against GSM1K (the same domain) gives a
// Jensen–Shannon divergence of 0.39–0.45 and an unseen share of 0.34–0.45
// with 20–26 cases a side; GSM8K against support tickets (another domain)
// 0.72–0.75 and 0.68–0.74.
const (
	// MinRubricCases is the fewest cases a side needs for a signal
	// computed on its inputs or on a tag: below it a signal measures the
	// sample more than the set, and it is not computed.
	MinRubricCases = 20
	// LengthKSHigh: the Kolmogorov–Smirnov statistic between the two
	// sides' input lengths (characters) at or above which the lengths
	// differ. The threshold used is the larger of this and the test's 1%
	// critical value, c(0.01)·√((n+m)/(n·m)) with c(0.01) = √(−ln(0.005)/2)
	// ≈ 1.628, so two samples of one distribution are not flagged by chance.
	LengthKSHigh = 0.30
	// LengthMedianRatioHigh: the ratio of the larger median input length to
	// the smaller (a median under one character counts as one).
	LengthMedianRatioHigh = 2.0
	// VocabularyJSHigh: the Jensen–Shannon divergence (base 2, in [0, 1])
	// between the two sides' unigram distributions (lower-cased runs of
	// letters and digits), computed after the larger side is thinned to the
	// smaller's number of cases (evenly spaced, in order), since the
	// divergence of two samples grows as they shrink.
	VocabularyJSHigh = 0.60
	// UnseenTokensHigh: the share of the workload's tokens (occurrences)
	// whose word never occurs in the benchmark, on the same thinned sides.
	UnseenTokensHigh = 0.55
	// TagTVHigh: the total variation distance between the two sides'
	// distributions of a tag both carry (the share of cases that would have
	// to change value).
	TagTVHigh = 0.30
	// MaxTagValues: a tag with more distinct values than this over both
	// sides is not a category (an identifier, a free text) and is not
	// compared.
	MaxTagValues = 20
	// TemplateRatioHigh and TemplateDiffHigh: the prompt templates'
	// lengths differ when the longer is at least 3 times the shorter and
	// at least 200 characters longer.
	TemplateRatioHigh = 3.0
	TemplateDiffHigh  = 200
)

// rubricKSCritical is c(0.01) = √(−ln(0.005)/2) of the two-sample KS test's
// asymptotic critical value.
var rubricKSCritical = math.Sqrt(-math.Log(0.005) / 2)

// Profile is what the rubric knows of one side.
type Profile struct {
	Name string
	// Inputs are the cases' input texts (the fields the prompt shows,
	// joined); nil when unknown, and InputsWhy says why.
	Inputs    []string
	InputsWhy string
	// Tags maps a tag to the values of the cases that have it.
	Tags map[string][]string
	// Prompt describes the prompt template; nil when unknown, and SpecWhy
	// says why (the prompt and the scorer come from the spec).
	Prompt *PromptFeatures
	// ScorerType is the primary scorer's type ("equals", "json_schema",
	// "judge", …; several primary scorers joined by commas); "" unknown.
	ScorerType string
	SpecWhy    string
}

// PromptFeatures are a prompt template's features: its length in
// characters (the templates' text, placeholders included), the worked
// examples it shows (few-shot), the tools it offers, whether it carries
// retrieved context and a system prompt.
type PromptFeatures struct {
	Chars, FewShot, Tools int
	Context, System       bool
}

// Signal is one computed comparison: its value on the two sides (as text),
// its value and threshold, and the sentence saying what it found.
type Signal struct {
	Name      string  `json:"name"`
	Bench     string  `json:"bench"`
	Work      string  `json:"work"`
	Value     float64 `json:"value"`
	Threshold float64 `json:"threshold"`
	High      bool    `json:"high"`
	Why       string  `json:"why"`
}

// AxisRating is one axis's rating with its reasons (every signal's
// sentence, the questionnaire's answer, and what could not be computed).
type AxisRating struct {
	Axis    string   `json:"axis"`
	Rating  string   `json:"rating"`
	Reasons []string `json:"reasons"`
	Signals []Signal `json:"signals"`
}

// Rubric is the rubric's result.
type Rubric struct {
	Axes    []AxisRating `json:"axes"`
	Verdict string       `json:"verdict"`
	Rule    string       `json:"rule"`
}

// AxisTitle is an axis's name in a sentence ("data distribution").
func AxisTitle(axis string) string { return strings.ReplaceAll(axis, "_", " ") }

// RateRubric rates the divergence between a benchmark and a workload. answers
// may be nil (the spec has no questionnaire), and so may either profile
// (nothing known of that side).
func RateRubric(bench, work *Profile, answers *spec.Rubric) *Rubric {
	if bench == nil {
		bench = &Profile{}
	}
	if work == nil {
		work = &Profile{}
	}
	if answers == nil {
		answers = &spec.Rubric{}
	}
	r := &Rubric{Rule: RubricRule}
	r.Axes = append(r.Axes,
		rateData(bench, work, answers.Domain),
		ratePrompt(bench, work),
		rateScoring(bench, work),
		rateStakes(answers.Stakes),
	)
	r.Verdict = RubricMaySelect
	for _, a := range r.Axes {
		switch a.Rating {
		case RatingHigh:
			r.Verdict = RubricShortlistOnly
		case RatingUnrated:
			if r.Verdict == RubricMaySelect {
				r.Verdict = RubricNotEstablished
			}
		}
	}
	return r
}

// rubricAxis collects an axis's signals and reasons.
type rubricAxis struct {
	a     AxisRating
	rated bool
	high  bool
	highs []string // the reasons that make the axis high, listed first
}

func (b *rubricAxis) signal(s Signal) {
	b.a.Signals = append(b.a.Signals, s)
	b.reason(s.Why, s.High)
	b.rated = true
}

func (b *rubricAxis) reason(why string, high bool) {
	if high {
		b.highs = append(b.highs, why)
		b.high = true
		return
	}
	b.a.Reasons = append(b.a.Reasons, why)
}

func (b *rubricAxis) answer(key string, ans *spec.RubricAnswer) {
	if ans == nil || (ans.Rating != RatingLow && ans.Rating != RatingHigh) {
		return
	}
	b.reason(fmt.Sprintf("questionnaire difficulty.rubric.%s: %s — %s", key, ans.Rating, ans.Why), ans.Rating == RatingHigh)
	b.rated = true
}

func (b *rubricAxis) note(format string, args ...any) {
	b.a.Reasons = append(b.a.Reasons, fmt.Sprintf(format, args...))
}

// done rates the axis: high when a signal or an answer is high, low when
// something was rated, unrated otherwise. The reasons that make it high
// come first.
func (b *rubricAxis) done() AxisRating {
	b.a.Reasons = append(b.highs, b.a.Reasons...)
	switch {
	case b.high:
		b.a.Rating = RatingHigh
	case b.rated:
		b.a.Rating = RatingLow
	default:
		b.a.Rating = RatingUnrated
	}
	return b.a
}

func rateData(bench, work *Profile, domain *spec.RubricAnswer) AxisRating {
	b := &rubricAxis{a: AxisRating{Axis: AxisData}}
	switch {
	case bench.Inputs == nil:
		b.note("input lengths and vocabulary not compared: the benchmark's inputs are unknown (%s)", rubricOrUnknown(bench.InputsWhy))
	case work.Inputs == nil:
		b.note("input lengths and vocabulary not compared: the workload's inputs are unknown (%s)", rubricOrUnknown(work.InputsWhy))
	case len(bench.Inputs) < MinRubricCases || len(work.Inputs) < MinRubricCases:
		b.note("input lengths and vocabulary not compared: %d benchmark and %d workload inputs, fewer than %d on a side", len(bench.Inputs), len(work.Inputs), MinRubricCases)
	default:
		for _, s := range rubricInputSignals(bench.Inputs, work.Inputs) {
			b.signal(s)
		}
	}
	for _, s := range rubricTagSignals(bench.Tags, work.Tags, b) {
		b.signal(s)
	}
	if domain == nil {
		b.note("the domain is not answered: add difficulty.rubric.domain (rating low or high, and why) to the spec")
	}
	b.answer("domain", domain)
	return b.done()
}

// rubricInputSignals compares input lengths (KS and the median ratio) and
// vocabularies (Jensen–Shannon and the unseen share).
func rubricInputSignals(bench, work []string) []Signal {
	lb, lw := rubricLengths(bench), rubricLengths(work)
	var out []Signal

	d := rubricKS(lb, lw)
	n, m := float64(len(lb)), float64(len(lw))
	crit := rubricKSCritical * math.Sqrt((n+m)/(n*m))
	th := max(LengthKSHigh, crit)
	mb, mw := rubricMedian(lb), rubricMedian(lw)
	s := Signal{Name: "input_length_ks", Value: d, Threshold: th, High: d >= th,
		Bench: fmt.Sprintf("median %s characters (n=%d)", rubricNum(mb), len(lb)),
		Work:  fmt.Sprintf("median %s characters (n=%d)", rubricNum(mw), len(lw))}
	s.Why = fmt.Sprintf("input lengths: KS statistic %.3f %s %.3f (the larger of %.2f and the 1%% critical value %.3f)", d, rubricCmp(s.High), th, LengthKSHigh, crit)
	out = append(out, s)

	ratio := max(mb, mw, 1) / max(min(mb, mw), 1)
	s = Signal{Name: "input_length_median_ratio", Value: ratio, Threshold: LengthMedianRatioHigh, High: ratio >= LengthMedianRatioHigh,
		Bench: rubricNum(mb), Work: rubricNum(mw)}
	longer := "workload's"
	if mb > mw {
		longer = "benchmark's"
	}
	s.Why = fmt.Sprintf("median input length: the %s is %.2f× the other's (%s vs %s characters, benchmark vs workload), %s %.1f×", longer, ratio, rubricNum(mb), rubricNum(mw), rubricCmp(s.High), LengthMedianRatioHigh)
	out = append(out, s)

	tb, tw := rubricThin(bench, len(work)), rubricThin(work, len(bench))
	cb, nb := rubricUnigrams(tb)
	cw, nw := rubricUnigrams(tw)
	if nb == 0 || nw == 0 {
		return out
	}
	js := rubricJS(cb, nb, cw, nw)
	s = Signal{Name: "vocabulary_js", Value: js, Threshold: VocabularyJSHigh, High: js >= VocabularyJSHigh,
		Bench: fmt.Sprintf("%d words, %d distinct (%d cases)", nb, len(cb), len(tb)),
		Work:  fmt.Sprintf("%d words, %d distinct (%d cases)", nw, len(cw), len(tw))}
	s.Why = fmt.Sprintf("vocabulary: Jensen–Shannon divergence %.3f %s %.2f (unigrams of %d cases a side)", js, rubricCmp(s.High), VocabularyJSHigh, len(tb))
	out = append(out, s)

	unseen := 0
	for w, c := range cw {
		if cb[w] == 0 {
			unseen += c
		}
	}
	share := float64(unseen) / float64(nw)
	s = Signal{Name: "unseen_tokens", Value: share, Threshold: UnseenTokensHigh, High: share >= UnseenTokensHigh,
		Bench: fmt.Sprintf("%d distinct words", len(cb)), Work: fmt.Sprintf("%d of %d words unseen", unseen, nw)}
	s.Why = fmt.Sprintf("vocabulary: %.1f%% of the workload's words never occur in the benchmark, %s %.0f%%", 100*share, rubricCmp(s.High), 100*UnseenTokensHigh)
	out = append(out, s)
	return out
}

// rubricTagSignals compares the distributions of every tag both sides carry;
// what it skips it notes on b.
func rubricTagSignals(bench, work map[string][]string, b *rubricAxis) []Signal {
	var keys []string
	for k := range bench {
		if _, ok := work[k]; ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var out []Signal
	for _, k := range keys {
		vb, vw := bench[k], work[k]
		if len(vb) < MinRubricCases || len(vw) < MinRubricCases {
			b.note("tag %q not compared: %d benchmark and %d workload cases carry it, fewer than %d on a side", k, len(vb), len(vw), MinRubricCases)
			continue
		}
		cb, cw := rubricCounts(vb), rubricCounts(vw)
		distinct := len(cb)
		for v := range cw {
			if _, ok := cb[v]; !ok {
				distinct++
			}
		}
		if distinct > MaxTagValues {
			b.note("tag %q not compared: %d distinct values, more than %d (not a category)", k, distinct, MaxTagValues)
			continue
		}
		tv := rubricTV(cb, len(vb), cw, len(vw))
		s := Signal{Name: "tag_tv:" + k, Value: tv, Threshold: TagTVHigh, High: tv >= TagTVHigh,
			Bench: rubricShares(cb, len(vb)), Work: rubricShares(cw, len(vw))}
		s.Why = fmt.Sprintf("tag %q: total variation %.3f %s %.2f between the two sides' values", k, tv, rubricCmp(s.High), TagTVHigh)
		out = append(out, s)
	}
	return out
}

func ratePrompt(bench, work *Profile) AxisRating {
	b := &rubricAxis{a: AxisRating{Axis: AxisPrompt}}
	pb, pw := bench.Prompt, work.Prompt
	switch {
	case pb == nil:
		b.note("prompt format not compared: the benchmark's prompt is unknown (%s)", rubricOrUnknown(bench.SpecWhy))
		return b.done()
	case pw == nil:
		b.note("prompt format not compared: the workload's prompt is unknown (%s)", rubricOrUnknown(work.SpecWhy))
		return b.done()
	}
	lo, hi := min(pb.Chars, pw.Chars), max(pb.Chars, pw.Chars)
	ratio := float64(hi) / float64(max(lo, 1))
	s := Signal{Name: "template_length_ratio", Value: ratio, Threshold: TemplateRatioHigh,
		High:  ratio >= TemplateRatioHigh && hi-lo >= TemplateDiffHigh,
		Bench: fmt.Sprintf("%d characters", pb.Chars), Work: fmt.Sprintf("%d characters", pw.Chars)}
	s.Why = fmt.Sprintf("prompt template length: %d vs %d characters (benchmark vs workload), ratio %.2f — high at %.0f× and %d characters apart: %s",
		pb.Chars, pw.Chars, ratio, TemplateRatioHigh, TemplateDiffHigh, rubricLevel(s.High))
	b.signal(s)

	b.signal(rubricPresence("few_shot", "worked examples (few-shot)", pb.FewShot > 0, pw.FewShot > 0,
		fmt.Sprintf("%d", pb.FewShot), fmt.Sprintf("%d", pw.FewShot)))
	b.signal(rubricPresence("tools", "tools offered", pb.Tools > 0, pw.Tools > 0,
		fmt.Sprintf("%d", pb.Tools), fmt.Sprintf("%d", pw.Tools)))
	b.signal(rubricPresence("retrieved_context", "retrieved context", pb.Context, pw.Context, rubricYesNo(pb.Context), rubricYesNo(pw.Context)))
	b.signal(rubricPresence("system_prompt", "a system prompt", pb.System, pw.System, rubricYesNo(pb.System), rubricYesNo(pw.System)))
	return b.done()
}

// rubricPresence is a signal that is high when one side has a feature and the
// other does not; bench and work say what each side has.
func rubricPresence(name, what string, inBench, inWork bool, bench, work string) Signal {
	s := Signal{Name: name, Threshold: 1, Bench: bench, Work: work}
	if inBench != inWork {
		s.Value, s.High = 1, true
		s.Why = fmt.Sprintf("%s: %s in the benchmark's prompt, %s in the workload's — on one side only: high", what, bench, work)
		return s
	}
	s.Why = fmt.Sprintf("%s: %s in the benchmark's prompt, %s in the workload's — alike: low", what, bench, work)
	return s
}

// Scorer families: how a verdict is reached.
const (
	FamilyRule   = "exact/rule" // a deterministic comparison or rule
	FamilySchema = "schema"     // the output's form against a schema
	FamilyJudge  = "judge"      // a model's judgement
)

// scorerFamilies maps every scorer type to its family.
var scorerFamilies = map[string]string{
	"equals": FamilyRule, "contains": FamilyRule, "not_contains": FamilyRule, "regex": FamilyRule,
	"field_equals": FamilyRule, "number": FamilyRule, "similarity": FamilyRule, "one_of": FamilyRule,
	"cel": FamilyRule, "tool_call": FamilyRule, "tool_calls": FamilyRule, "no_tool_call": FamilyRule,
	"max_length": FamilyRule, "latency": FamilyRule, "cost": FamilyRule,
	"json_schema": FamilySchema, "required_fields": FamilySchema, "is_json": FamilySchema,
	"judge": FamilyJudge,
}

// ScorerFamily is the family of a scorer type, or of several joined by
// commas (their families joined by "+", sorted); "" when a type has none.
func ScorerFamily(types string) string {
	var fams []string
	for t := range strings.SplitSeq(types, ",") {
		f, ok := scorerFamilies[strings.TrimSpace(t)]
		if !ok {
			return ""
		}
		if !slices.Contains(fams, f) {
			fams = append(fams, f)
		}
	}
	sort.Strings(fams)
	return strings.Join(fams, "+")
}

func rateScoring(bench, work *Profile) AxisRating {
	b := &rubricAxis{a: AxisRating{Axis: AxisScoring}}
	for _, side := range []struct {
		name string
		p    *Profile
	}{{"benchmark", bench}, {"workload", work}} {
		if side.p.ScorerType == "" {
			b.note("scorer not compared: the %s's primary scorer is unknown (%s)", side.name, rubricOrUnknown(side.p.SpecWhy))
			return b.done()
		}
		if ScorerFamily(side.p.ScorerType) == "" {
			b.note("scorer not compared: the %s's scorer type %q has no family in the rubric (exact/rule, schema, judge)", side.name, side.p.ScorerType)
			return b.done()
		}
	}
	fb, fw := ScorerFamily(bench.ScorerType), ScorerFamily(work.ScorerType)
	s := Signal{Name: "scorer_family", Threshold: 1,
		Bench: fmt.Sprintf("%s (%s)", bench.ScorerType, fb), Work: fmt.Sprintf("%s (%s)", work.ScorerType, fw)}
	if fb != fw {
		s.Value, s.High = 1, true
		s.Why = fmt.Sprintf("scorer: the benchmark is scored by %s (%s), the workload by %s (%s) — another kind of verdict: high", bench.ScorerType, fb, work.ScorerType, fw)
	} else {
		s.Why = fmt.Sprintf("scorer: both sides are scored by %s (%s vs %s): low", fb, bench.ScorerType, work.ScorerType)
	}
	b.signal(s)
	return b.done()
}

func rateStakes(stakes *spec.RubricAnswer) AxisRating {
	b := &rubricAxis{a: AxisRating{Axis: AxisStakes}}
	if stakes == nil {
		b.note("the stakes are not answered: add difficulty.rubric.stakes (rating low or high, and why) to the spec; assay cannot compute them")
	}
	b.answer("stakes", stakes)
	return b.done()
}

// rubricLengths are the texts' lengths in characters (runes).
func rubricLengths(texts []string) []float64 {
	out := make([]float64, len(texts))
	for i, t := range texts {
		out[i] = float64(utf8.RuneCountInString(t))
	}
	return out
}

// rubricKS is the two-sample Kolmogorov–Smirnov statistic: the largest
// distance between the two empirical distribution functions (the mismatch's
// cdfDistances, every case weighing 1).
func rubricKS(a, b []float64) float64 {
	a, b = slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b))
	_, d := cdfDistances(a, unitWeights(len(a)), b, unitWeights(len(b)))
	return d
}

func unitWeights(n int) []float64 {
	w := make([]float64, n)
	for i := range w {
		w[i] = 1
	}
	return w
}

// rubricMedian is the sample median (the mean of the middle two for an even
// count; stats.Quantile's, on a copy); NaN for none.
func rubricMedian(xs []float64) float64 { return stats.Quantile(slices.Clone(xs), 0.5) }

// rubricThin keeps k of texts, evenly spaced (the i-th kept is texts[i·n/k]),
// or all of them when there are no more than k.
func rubricThin(texts []string, k int) []string {
	n := len(texts)
	if k <= 0 || n <= k {
		return texts
	}
	out := make([]string, k)
	for i := range k {
		out[i] = texts[i*n/k]
	}
	return out
}

// rubricUnigrams counts the words of texts: lower-cased runs of letters and
// digits.
func rubricUnigrams(texts []string) (map[string]int, int) {
	c := map[string]int{}
	n := 0
	for _, t := range texts {
		for w := range strings.FieldsFuncSeq(strings.ToLower(t), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			c[w]++
			n++
		}
	}
	return c, n
}

// rubricJS is the Jensen–Shannon divergence, base 2, between two
// count distributions.
func rubricJS(a map[string]int, na int, b map[string]int, nb int) float64 {
	var s float64
	term := func(p, m float64) float64 {
		if p == 0 {
			return 0
		}
		return p * math.Log2(p/m)
	}
	for w, ca := range a {
		p, q := float64(ca)/float64(na), float64(b[w])/float64(nb)
		m := (p + q) / 2
		s += term(p, m) + term(q, m)
	}
	for w, cb := range b {
		if a[w] == 0 {
			q := float64(cb) / float64(nb)
			s += term(q, q/2)
		}
	}
	return max(0, min(1, s/2))
}

func rubricCounts(vs []string) map[string]int {
	c := map[string]int{}
	for _, v := range vs {
		c[v]++
	}
	return c
}

// rubricTV is half the sum of the absolute differences of the two
// distributions' shares.
func rubricTV(a map[string]int, na int, b map[string]int, nb int) float64 {
	var s float64
	for v, ca := range a {
		s += math.Abs(float64(ca)/float64(na) - float64(b[v])/float64(nb))
	}
	for v, cb := range b {
		if a[v] == 0 {
			s += float64(cb) / float64(nb)
		}
	}
	return s / 2
}

// rubricShares lists a tag's values with their shares, most common first.
func rubricShares(c map[string]int, n int) string {
	vals := make([]string, 0, len(c))
	for v := range c {
		vals = append(vals, v)
	}
	sort.Slice(vals, func(i, j int) bool {
		if c[vals[i]] != c[vals[j]] {
			return c[vals[i]] > c[vals[j]]
		}
		return vals[i] < vals[j]
	})
	parts := make([]string, len(vals))
	for i, v := range vals {
		parts[i] = fmt.Sprintf("%s %.0f%%", v, 100*float64(c[v])/float64(n))
	}
	return strings.Join(parts, ", ")
}

func rubricCmp(high bool) string {
	if high {
		return "≥"
	}
	return "<"
}

func rubricLevel(high bool) string {
	if high {
		return RatingHigh
	}
	return RatingLow
}

func rubricYesNo(b bool) string {
	if b {
		return "present"
	}
	return "absent"
}

func rubricNum(x float64) string { return fmt.Sprintf("%g", x) }

func rubricOrUnknown(why string) string {
	if why == "" {
		return "not given"
	}
	return why
}
