package difficulty

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/scorer"
	"github.com/assay-eval/assay/internal/spec"
)

// rubricGolden is testdata/rubric_signals.json, written by
// testdata/rubric_signals.py from scipy and numpy.
type rubricGolden struct {
	KSCritical01 float64 `json:"ks_critical_01"`
	KS           []struct {
		A, B []float64
		D    float64
	}
	Median []struct {
		Xs     []float64
		Median float64
	}
	Vocab []struct {
		Bench, Work []string
		JS, Unseen  float64
	}
	TV []struct {
		A, B []string
		TV   float64
	}
	Rate map[string]struct {
		Bench, Work []string
		KS          float64 `json:"ks"`
		KSThreshold float64 `json:"ks_threshold"`
		MedianBench float64 `json:"median_bench"`
		MedianWork  float64 `json:"median_work"`
		MedianRatio float64 `json:"median_ratio"`
		JS          float64 `json:"js"`
		Unseen      float64 `json:"unseen"`
	}
}

func loadRubricGolden(t *testing.T) *rubricGolden {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "rubric_signals.json"))
	if err != nil {
		t.Fatal(err)
	}
	var g rubricGolden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.KS) == 0 || len(g.Vocab) == 0 || len(g.Rate) != 2 {
		t.Fatalf("golden file incomplete: %d KS, %d vocab, %d rate cases", len(g.KS), len(g.Vocab), len(g.Rate))
	}
	return &g
}

func rubricNear(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// The signals' statistics agree with scipy and numpy on hand-made sets.
func TestRubricStatisticsMatchReference(t *testing.T) {
	g := loadRubricGolden(t)
	// √(−ln(α/2)/2) is the first term of Kolmogorov's series; scipy's
	// quantile is the series' own: they agree to 1e-8.
	if !rubricNear(rubricKSCritical, g.KSCritical01, 1e-7) {
		t.Errorf("KS 1%% critical constant %.8f, scipy's kstwobign %.8f", rubricKSCritical, g.KSCritical01)
	}
	for _, c := range g.KS {
		if d := rubricKS(c.A, c.B); !rubricNear(d, c.D, 1e-12) {
			t.Errorf("KS(%v, %v) = %v, scipy %v", c.A, c.B, d, c.D)
		}
		if d := rubricKS(c.B, c.A); !rubricNear(d, c.D, 1e-12) {
			t.Errorf("KS is not symmetric on %v, %v: %v", c.B, c.A, d)
		}
	}
	for _, c := range g.Median {
		if m := rubricMedian(c.Xs); m != c.Median {
			t.Errorf("median(%v) = %v, numpy %v", c.Xs, m, c.Median)
		}
	}
	for _, c := range g.Vocab {
		cb, nb := rubricUnigrams(c.Bench)
		cw, nw := rubricUnigrams(c.Work)
		if js := rubricJS(cb, nb, cw, nw); !rubricNear(js, c.JS, 1e-9) {
			t.Errorf("JS(%q, %q) = %v, scipy %v", c.Bench, c.Work, js, c.JS)
		}
		unseen := 0
		for w, n := range cw {
			if cb[w] == 0 {
				unseen += n
			}
		}
		if u := float64(unseen) / float64(nw); !rubricNear(u, c.Unseen, 1e-12) {
			t.Errorf("unseen share of %q against %q = %v, python %v", c.Work, c.Bench, u, c.Unseen)
		}
	}
	for _, c := range g.TV {
		if tv := rubricTV(rubricCounts(c.A), len(c.A), rubricCounts(c.B), len(c.B)); !rubricNear(tv, c.TV, 1e-12) {
			t.Errorf("TV(%v, %v) = %v, python %v", c.A, c.B, tv, c.TV)
		}
	}
}

// By hand: the words of a text, and TV of {a,a,b,b} against {a,b,b,b} is
// |1/2−1/4| = 1/4.
func TestRubricWordsAndTVByHand(t *testing.T) {
	c, n := rubricUnigrams([]string{"Don't e-mail snake_case, Café 42!"})
	want := map[string]int{"don": 1, "t": 1, "e": 1, "mail": 1, "snake": 1, "case": 1, "café": 1, "42": 1}
	if n != 8 || len(c) != len(want) {
		t.Fatalf("words %v (%d), want %v", c, n, want)
	}
	for w, k := range want {
		if c[w] != k {
			t.Errorf("word %q counted %d, want %d", w, c[w], k)
		}
	}
	if tv := rubricTV(map[string]int{"a": 2, "b": 2}, 4, map[string]int{"a": 1, "b": 3}, 4); tv != 0.25 {
		t.Errorf("TV = %v, want 0.25", tv)
	}
	if got := rubricThin([]string{"0", "1", "2", "3", "4", "5", "6"}, 3); !slices.Equal(got, []string{"0", "2", "4"}) {
		t.Errorf("thinning 7 to 3 kept %v, want [0 2 4]", got)
	}
}

func rubricSignal(t *testing.T, a AxisRating, name string) Signal {
	t.Helper()
	for _, s := range a.Signals {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("axis %s has no signal %s (signals %v)", a.Axis, name, a.Signals)
	return Signal{}
}

func rubricAxisOf(t *testing.T, r *Rubric, axis string) AxisRating {
	t.Helper()
	for _, a := range r.Axes {
		if a.Axis == axis {
			return a
		}
	}
	t.Fatalf("no axis %s", axis)
	return AxisRating{}
}

// The rated input signals on two generated sets equal the reference values
// (scipy after the documented thinning), and their ratings follow the
// thresholds: "far" differs in length (KS 1.0 above its threshold, median
// ratio 3.3) and vocabulary (58% unseen) while its JS (0.44) stays low;
// "near" has a KS of 0.34 — above 0.30 but below the 1% critical value
// 0.415 of 40 against 25 cases, so it is low.
func TestRubricInputSignalsMatchReference(t *testing.T) {
	g := loadRubricGolden(t)
	for name, c := range g.Rate {
		r := RateRubric(&Profile{Inputs: c.Bench}, &Profile{Inputs: c.Work}, nil)
		a := rubricAxisOf(t, r, AxisData)
		ks := rubricSignal(t, a, "input_length_ks")
		if !rubricNear(ks.Value, c.KS, 1e-12) || !rubricNear(ks.Threshold, c.KSThreshold, 1e-7) || ks.High != (c.KS >= c.KSThreshold) {
			t.Errorf("%s: KS %v (threshold %v, high %v), scipy %v (threshold %v)", name, ks.Value, ks.Threshold, ks.High, c.KS, c.KSThreshold)
		}
		mr := rubricSignal(t, a, "input_length_median_ratio")
		if !rubricNear(mr.Value, c.MedianRatio, 1e-12) || mr.High != (c.MedianRatio >= 2) {
			t.Errorf("%s: median ratio %v (high %v), numpy %v", name, mr.Value, mr.High, c.MedianRatio)
		}
		js := rubricSignal(t, a, "vocabulary_js")
		if !rubricNear(js.Value, c.JS, 1e-9) || js.High != (c.JS >= VocabularyJSHigh) {
			t.Errorf("%s: JS %v (high %v), scipy %v", name, js.Value, js.High, c.JS)
		}
		un := rubricSignal(t, a, "unseen_tokens")
		if !rubricNear(un.Value, c.Unseen, 1e-12) || un.High != (c.Unseen >= UnseenTokensHigh) {
			t.Errorf("%s: unseen %v (high %v), python %v", name, un.Value, un.High, c.Unseen)
		}
		for _, s := range a.Signals {
			if !slices.Contains(a.Reasons, s.Why) {
				t.Errorf("%s: signal %s's sentence is not among the axis's reasons", name, s.Name)
			}
		}
	}
	far, nr := g.Rate["far"], g.Rate["near"]
	if r := RateRubric(&Profile{Inputs: far.Bench}, &Profile{Inputs: far.Work}, nil); rubricAxisOf(t, r, AxisData).Rating != RatingHigh {
		t.Errorf("far: data axis %s, want high", rubricAxisOf(t, r, AxisData).Rating)
	}
	r := RateRubric(&Profile{Inputs: nr.Bench}, &Profile{Inputs: nr.Work}, nil)
	a := rubricAxisOf(t, r, AxisData)
	if a.Rating != RatingLow {
		t.Errorf("near: data axis %s, want low (reasons %q)", a.Rating, a.Reasons)
	}
	if ks := rubricSignal(t, a, "input_length_ks"); ks.High || ks.Value < LengthKSHigh || !strings.Contains(ks.Why, "critical value") {
		t.Errorf("near: KS %v (high %v), want a value over %.2f rated low by the critical value: %s", ks.Value, ks.High, LengthKSHigh, ks.Why)
	}
}

func rubricTexts(n int, f func(i int) string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = f(i)
	}
	return out
}

func rubricTagValues(counts ...any) []string {
	var out []string
	for i := 0; i < len(counts); i += 2 {
		for range counts[i+1].(int) {
			out = append(out, counts[i].(string))
		}
	}
	return out
}

func TestRubricDataAxis(t *testing.T) {
	same := rubricTexts(30, func(i int) string { return fmt.Sprintf("how many apples does Tom have after %d days", i) })
	same2 := rubricTexts(30, func(i int) string { return fmt.Sprintf("how many apples does Ann have after %d days", i+3) })
	for _, tc := range []struct {
		name        string
		bench, work *Profile
		domain      *spec.RubricAnswer
		want        string
		reason      string // a reason containing this
	}{
		{"nothing known", &Profile{InputsWhy: "the baseline file b.json holds case IDs and tags"}, &Profile{}, nil, RatingUnrated, "the benchmark's inputs are unknown (the baseline file b.json holds case IDs and tags)"},
		{"workload inputs unknown", &Profile{Inputs: same}, &Profile{InputsWhy: "run r1: the dataset changed since the run"}, nil, RatingUnrated, "the workload's inputs are unknown (run r1: the dataset changed since the run)"},
		{"too few inputs", &Profile{Inputs: same[:19]}, &Profile{Inputs: same2}, nil, RatingUnrated, "19 benchmark and 30 workload inputs, fewer than 20"},
		{"alike inputs", &Profile{Inputs: same}, &Profile{Inputs: same2}, nil, RatingLow, "the domain is not answered"},
		{"domain answered high, inputs alike", &Profile{Inputs: same}, &Profile{Inputs: same2}, &spec.RubricAnswer{Rating: "high", Why: "legal contracts, not school maths"}, RatingHigh, "questionnaire difficulty.rubric.domain: high — legal contracts, not school maths"},
		{"domain answered low, nothing computed", &Profile{}, &Profile{}, &spec.RubricAnswer{Rating: "low", Why: "the same product's tickets"}, RatingLow, "difficulty.rubric.domain: low — the same product's tickets"},
		{"longer workload", &Profile{Inputs: same}, &Profile{Inputs: rubricTexts(30, func(i int) string { return strings.Repeat(same[i]+" ", 3) })}, nil, RatingHigh, "input lengths: KS statistic 1.000 ≥"},
		{"tag shifted", &Profile{Tags: map[string][]string{"tier": rubricTagValues("1", 20, "2", 10)}}, &Profile{Tags: map[string][]string{"tier": rubricTagValues("1", 5, "2", 10, "3", 15)}}, nil, RatingHigh, `tag "tier": total variation 0.500 ≥ 0.30`},
		{"tag alike", &Profile{Tags: map[string][]string{"tier": rubricTagValues("1", 20, "2", 10)}}, &Profile{Tags: map[string][]string{"tier": rubricTagValues("1", 19, "2", 11)}}, nil, RatingLow, `tag "tier": total variation 0.033 < 0.30`},
		{"tag on too few cases", &Profile{Tags: map[string][]string{"tier": rubricTagValues("1", 19)}}, &Profile{Tags: map[string][]string{"tier": rubricTagValues("2", 30)}}, nil, RatingUnrated, `tag "tier" not compared: 19 benchmark and 30 workload cases carry it, fewer than 20`},
		{"tag of identifiers", &Profile{Tags: map[string][]string{"user": rubricTexts(30, func(i int) string { return fmt.Sprint("u", i) })}}, &Profile{Tags: map[string][]string{"user": rubricTexts(30, func(i int) string { return fmt.Sprint("u", i) })}}, nil, RatingUnrated, `tag "user" not compared: 30 distinct values, more than 20`},
		{"tag on one side only", &Profile{Tags: map[string][]string{"tier": rubricTagValues("1", 30)}}, &Profile{Tags: map[string][]string{"kind": rubricTagValues("1", 30)}}, nil, RatingUnrated, "inputs are unknown"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := rubricAxisOf(t, RateRubric(tc.bench, tc.work, &spec.Rubric{Domain: tc.domain}), AxisData)
			if a.Rating != tc.want {
				t.Errorf("rating %s, want %s (reasons %q)", a.Rating, tc.want, a.Reasons)
			}
			if !slices.ContainsFunc(a.Reasons, func(r string) bool { return strings.Contains(r, tc.reason) }) {
				t.Errorf("no reason says %q: %q", tc.reason, a.Reasons)
			}
		})
	}
}

func TestRubricPromptAxis(t *testing.T) {
	base := PromptFeatures{Chars: 120, FewShot: 0, Tools: 0}
	with := func(f func(p *PromptFeatures)) *PromptFeatures { p := base; f(&p); return &p }
	for _, tc := range []struct {
		name        string
		bench, work *PromptFeatures
		want        string
		high        string // the signal that is high
	}{
		{"benchmark's prompt unknown", nil, &base, RatingUnrated, ""},
		{"workload's prompt unknown", &base, nil, RatingUnrated, ""},
		{"alike", &base, with(func(p *PromptFeatures) { p.Chars = 300 }), RatingLow, ""},
		{"3× longer but only 199 characters apart", with(func(p *PromptFeatures) { p.Chars = 99 }), with(func(p *PromptFeatures) { p.Chars = 298 }), RatingLow, ""},
		{"3× longer and 200 apart", with(func(p *PromptFeatures) { p.Chars = 100 }), with(func(p *PromptFeatures) { p.Chars = 300 }), RatingHigh, "template_length_ratio"},
		{"few-shot against zero-shot", with(func(p *PromptFeatures) { p.FewShot = 8 }), &base, RatingHigh, "few_shot"},
		{"few-shot on both sides", with(func(p *PromptFeatures) { p.FewShot = 8 }), with(func(p *PromptFeatures) { p.FewShot = 2 }), RatingLow, ""},
		{"tools on the workload only", &base, with(func(p *PromptFeatures) { p.Tools = 3 }), RatingHigh, "tools"},
		{"retrieved context", &base, with(func(p *PromptFeatures) { p.Context = true }), RatingHigh, "retrieved_context"},
		{"system prompt", with(func(p *PromptFeatures) { p.System = true }), &base, RatingHigh, "system_prompt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := rubricAxisOf(t, RateRubric(&Profile{Prompt: tc.bench, SpecWhy: "bench why"}, &Profile{Prompt: tc.work, SpecWhy: "work why"}, nil), AxisPrompt)
			if a.Rating != tc.want {
				t.Fatalf("rating %s, want %s (reasons %q)", a.Rating, tc.want, a.Reasons)
			}
			for _, s := range a.Signals {
				if s.High != (s.Name == tc.high) {
					t.Errorf("signal %s high %v: %s", s.Name, s.High, s.Why)
				}
				if s.High && a.Reasons[0] != s.Why {
					t.Errorf("the high signal's reason %q is not listed first: %q", s.Why, a.Reasons)
				}
			}
			if tc.want == RatingUnrated {
				side := "bench why"
				if tc.bench != nil {
					side = "work why"
				}
				if len(a.Signals) != 0 || len(a.Reasons) != 1 || !strings.Contains(a.Reasons[0], side) {
					t.Errorf("unrated prompt axis: signals %v, reasons %q (want the unknown side's why, %q)", a.Signals, a.Reasons, side)
				}
			} else if len(a.Signals) != 5 {
				t.Errorf("%d prompt signals, want 5", len(a.Signals))
			}
		})
	}
}

func TestRubricScoringAxis(t *testing.T) {
	for _, tc := range []struct {
		bench, work string
		want        string
		reason      string
	}{
		{"equals", "number", RatingLow, "both sides are scored by exact/rule (equals vs number)"},
		{"equals", "judge", RatingHigh, "the benchmark is scored by equals (exact/rule), the workload by judge (judge)"},
		{"json_schema", "equals", RatingHigh, "the benchmark is scored by json_schema (schema)"},
		{"equals,json_schema", "json_schema,field_equals", RatingLow, "exact/rule+schema"},
		{"equals,judge", "judge", RatingHigh, "(exact/rule+judge)"},
		{"", "judge", RatingUnrated, "the benchmark's primary scorer is unknown (spec why)"},
		{"equals", "my_scorer", RatingUnrated, `the workload's scorer type "my_scorer" has no family`},
	} {
		a := rubricAxisOf(t, RateRubric(&Profile{ScorerType: tc.bench, SpecWhy: "spec why"}, &Profile{ScorerType: tc.work}, nil), AxisScoring)
		if a.Rating != tc.want || !slices.ContainsFunc(a.Reasons, func(r string) bool { return strings.Contains(r, tc.reason) }) {
			t.Errorf("%q vs %q: %s %q, want %s with a reason saying %q", tc.bench, tc.work, a.Rating, a.Reasons, tc.want, tc.reason)
		}
	}
}

// Every scorer type assay knows has a family: a type added later
// without one would leave the scoring axis unrated.
func TestScorerFamiliesCoverKnownTypes(t *testing.T) {
	types := scorer.Types()
	if len(types) < 19 {
		t.Fatalf("scorer.Types() lists %d types: %v", len(types), types)
	}
	for _, typ := range types {
		if ScorerFamily(typ) == "" {
			t.Errorf("scorer type %s has no family", typ)
		}
	}
}

func TestRubricStakesAxis(t *testing.T) {
	for _, tc := range []struct {
		ans    *spec.RubricAnswer
		want   string
		reason string
	}{
		{nil, RatingUnrated, "the stakes are not answered: add difficulty.rubric.stakes"},
		{&spec.RubricAnswer{Rating: "low", Why: "an internal FAQ bot"}, RatingLow, "questionnaire difficulty.rubric.stakes: low — an internal FAQ bot"},
		{&spec.RubricAnswer{Rating: "high", Why: "it approves refunds"}, RatingHigh, "questionnaire difficulty.rubric.stakes: high — it approves refunds"},
	} {
		a := rubricAxisOf(t, RateRubric(nil, nil, &spec.Rubric{Stakes: tc.ans}), AxisStakes)
		if a.Rating != tc.want || len(a.Reasons) != 1 || !strings.HasPrefix(a.Reasons[0], tc.reason) {
			t.Errorf("stakes %v: %s %q, want %s %q", tc.ans, a.Rating, a.Reasons, tc.want, tc.reason)
		}
	}
}

// The verdict: any high axis, shortlist only; otherwise any unrated, not
// established; all low, may select. The rule is always the contract's
// sentence.
func TestRubricVerdict(t *testing.T) {
	same := rubricTexts(30, func(i int) string { return fmt.Sprintf("how many apples does Tom have after %d days", i) })
	low := func() *Profile {
		return &Profile{Inputs: same, Prompt: &PromptFeatures{Chars: 40}, ScorerType: "equals"}
	}
	lowAnswers := &spec.Rubric{Stakes: &spec.RubricAnswer{Rating: "low", Why: "w"}, Domain: &spec.RubricAnswer{Rating: "low", Why: "w"}}
	for _, tc := range []struct {
		name        string
		bench, work *Profile
		answers     *spec.Rubric
		want        string
	}{
		{"all low", low(), low(), lowAnswers, RubricMaySelect},
		{"stakes unanswered", low(), low(), &spec.Rubric{Domain: lowAnswers.Domain}, RubricNotEstablished},
		{"no questionnaire", low(), low(), nil, RubricNotEstablished},
		{"nothing known", nil, nil, nil, RubricNotEstablished},
		{"judge against equals", low(), &Profile{Inputs: same, Prompt: &PromptFeatures{Chars: 40}, ScorerType: "judge"}, lowAnswers, RubricShortlistOnly},
		{"high stakes, the rest unrated", nil, nil, &spec.Rubric{Stakes: &spec.RubricAnswer{Rating: "high", Why: "w"}}, RubricShortlistOnly},
	} {
		r := RateRubric(tc.bench, tc.work, tc.answers)
		if r.Verdict != tc.want {
			t.Errorf("%s: verdict %s, want %s (axes %+v)", tc.name, r.Verdict, tc.want, r.Axes)
		}
		if r.Rule != "Any axis rated high: the benchmark may shortlist but not select." {
			t.Errorf("%s: rule %q", tc.name, r.Rule)
		}
		var axes []string
		for _, a := range r.Axes {
			axes = append(axes, a.Axis)
		}
		if !slices.Equal(axes, []string{AxisData, AxisPrompt, AxisScoring, AxisStakes}) {
			t.Errorf("%s: axes %v", tc.name, axes)
		}
	}
}

// A rubric encodes as JSON (no NaN or infinity in any signal), even for
// empty inputs and zero-length templates.
func TestRubricEncodesAsJSON(t *testing.T) {
	empty := rubricTexts(25, func(int) string { return "" })
	r := RateRubric(&Profile{Inputs: empty, Prompt: &PromptFeatures{}}, &Profile{Inputs: empty, Prompt: &PromptFeatures{Chars: 500}}, nil)
	if _, err := json.Marshal(r); err != nil {
		t.Fatalf("encoding the rubric: %v", err)
	}
	if s := rubricSignal(t, rubricAxisOf(t, r, AxisPrompt), "template_length_ratio"); s.Value != 500 || !s.High {
		t.Errorf("0 against 500 characters: ratio %v (high %v), want 500 (a length under 1 counts as 1), high", s.Value, s.High)
	}
}

// Whatever the inputs' text, the rubric rates without panicking, its
// divergences stay in [0, 1], and it encodes as JSON.
func FuzzRubricInputs(f *testing.F) {
	f.Add("The cat sat.", "Don't e-mail snake_case 42", 3)
	f.Add("", "\xff\xfe", 1)
	f.Add("Café Zürich", "ǅ ﬁ İ ß", 7)
	f.Fuzz(func(t *testing.T, a, b string, k int) {
		k = 20 + rubricAbs(k)%10
		bench := rubricTexts(k, func(i int) string { return strings.Repeat(a, 1+i%3) })
		work := rubricTexts(k+3, func(i int) string { return b + a[:len(a)*(i%2)] })
		r := RateRubric(&Profile{Inputs: bench, Tags: map[string][]string{"t": bench}}, &Profile{Inputs: work, Tags: map[string][]string{"t": work}}, nil)
		for _, ax := range r.Axes {
			for _, s := range ax.Signals {
				if math.IsNaN(s.Value) || math.IsInf(s.Value, 0) || s.Value < 0 {
					t.Fatalf("signal %s = %v", s.Name, s.Value)
				}
				if s.Name != "input_length_median_ratio" && s.Value > 1 {
					t.Fatalf("signal %s = %v, above 1", s.Name, s.Value)
				}
			}
		}
		if _, err := json.Marshal(r); err != nil {
			t.Fatal(err)
		}
	})
}

func rubricAbs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
