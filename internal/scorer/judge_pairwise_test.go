package scorer

import (
	"context"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/mock"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/spec"
)

// The scripted pairwise judge sees which output is in which slot by the
// text just before a section's closing tag: "<marker>\n</output-A-".
func slot(marker, label string) string { return marker + "\n</output-" + label + "-" }

const (
	winA    = `{"winner": "A", "reason": "A is better"}`
	winB    = `{"winner": "B", "reason": "B is better"}`
	tieBoth = `{"winner": "tie", "reason": "equally good"}`
)

func pairSpec() *spec.Spec {
	return judgeSpec(
		spec.Scorer{Name: "correct", Type: "contains", Value: "billing"},
		spec.Scorer{Name: "vs-base", Type: "judge", Target: "grader", Rubric: "Which answer helps the customer more?", Mode: "pairwise", Baseline: "base"},
	)
}

func pairResults(cand, base string) []record.Result {
	return []record.Result{
		{RunID: "run1", CaseID: "c1", Target: "base", Epoch: 1, Raw: base, CostUSD: 0.001},
		{RunID: "run1", CaseID: "c1", Target: candName, Epoch: 1, Raw: cand, CostUSD: 0.002},
	}
}

func TestPairwiseVerdicts(t *testing.T) {
	const base = "Billing, probably. [BASE]"
	js := startJudge(t, mock.Options{
		Rules: []mock.Rule{
			// The candidate is better in both orders.
			{Match: slot("[WIN]", "A"), Reply: winA},
			{Match: slot("[WIN]", "B"), Reply: winB},
			// The baseline is better in both orders.
			{Match: slot("[LOSE]", "A"), Reply: winB},
			{Match: slot("[LOSE]", "B"), Reply: winA},
			// A tie in one order, a win in the other.
			{Match: slot("[HALF]", "A"), Reply: tieBoth},
			{Match: slot("[HALF]", "B"), Reply: winB},
			// A judge that always prefers whatever comes first.
			{Match: "[BIASED]", Reply: winA},
			// An unusable reply in the second order only.
			{Match: slot("[BROKEN]", "A"), Reply: winA},
			{Match: slot("[BROKEN]", "B"), Reply: `B wins: {"winner": "B", "reason": "B"}`},
			// A refusal in the first order.
			{Match: "[REFUSED]", Reply: "I cannot help with comparing these."},
		},
		Default: tieBoth,
	})
	set := compileJudge(t, pairSpec(), js, nil)
	cases := []struct {
		name      string
		cand      string
		w         want
		value     float64
		calls     int
		replies   []string
		reasonHas string
	}{
		{"consistent win", "The billing team handles refunds. [WIN]", passes, 1, 2, []string{winA, winB}, "better than baseline base in both orders"},
		{"consistent loss", "Ask sales. [LOSE]", want{false, ShapeSilent, KindWorseThanBaseline}, 0, 2, []string{winB, winA}, "worse than baseline"},
		{"tie", "Billing. [TIE]", want{false, ShapeSilent, KindTie}, 0.5, 2, []string{tieBoth, tieBoth}, "tie with baseline"},
		{"tie in one order", "Billing. [HALF]", want{false, ShapeSilent, KindTie}, 0.5, 2, []string{tieBoth, winB}, "tie with baseline"},
		{"position bias is a tie", "Billing. [BIASED]", want{false, ShapeSilent, KindTie}, 0.5, 2, []string{winA, winA}, "position bias"},
		{"unusable reply in the second order", "Billing. [BROKEN]", loudKind(KindJudgeError), 0, 2, []string{winA, `B wins: {"winner": "B", "reason": "B"}`}, "order 2 of 2"},
		{"refusal stops at the first order", "Billing. [REFUSED]", loudKind(KindJudgeError), 0, 1, []string{"I cannot help with comparing these."}, "refused"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := len(js.requests())
			results := pairResults(tc.cand, base)
			ss := set.ScorePairs(context.Background(), judgeCase, results)
			if len(ss) != 1 {
				t.Fatalf("got %d scores, want 1 (the baseline gets none): %+v", len(ss), ss)
			}
			s := ss[0]
			if s.Scorer != "vs-base" || s.Target != candName || s.Primary {
				t.Errorf("score %+v", s)
			}
			if s.Pass != tc.w.pass || s.Shape != tc.w.shape || s.Kind != tc.w.kind || s.Value != tc.value {
				t.Errorf("score = pass %v shape %q kind %q value %v (%s); want pass %v shape %q kind %q value %v",
					s.Pass, s.Shape, s.Kind, s.Value, s.Reason, tc.w.pass, tc.w.shape, tc.w.kind, tc.value)
			}
			if !strings.Contains(s.Reason, tc.reasonHas) {
				t.Errorf("reason %q does not contain %q", s.Reason, tc.reasonHas)
			}
			if n := len(js.requests()) - before; n != tc.calls {
				t.Errorf("%d judge calls, want %d", n, tc.calls)
			}
			var want float64
			for _, r := range tc.replies {
				want += words(r)
			}
			if s.JudgeCost != want {
				t.Errorf("JudgeCost = %v, want %v (every call made)", s.JudgeCost, want)
			}
			if results[1].CostUSD != 0.002 || results[1].Parsed != "" {
				t.Errorf("ScorePairs modified the candidate's result: %+v", results[1])
			}
		})
	}
}

// TestPairwiseSwapsTheOrder: the two calls put the candidate first, then
// second, each in full inside its own section.
func TestPairwiseSwapsTheOrder(t *testing.T) {
	js := startJudge(t, mock.Options{Default: tieBoth})
	set := compileJudge(t, pairSpec(), js, nil)
	set.ScorePairs(context.Background(), judgeCase, pairResults("CANDIDATE TEXT", "BASELINE TEXT"))
	for i, first := range []string{"CANDIDATE TEXT", "BASELINE TEXT"} {
		u := js.userMessage(t, i)
		a, b := strings.Index(u, first), strings.Index(u, "\n</output-A-")
		if a < 0 || b < 0 || a > b {
			t.Errorf("call %d: %q is not output A:\n%s", i+1, first, u)
		}
		if strings.Contains(u, candName) || strings.Contains(u, candModel) {
			t.Errorf("call %d reveals the candidate", i+1)
		}
	}
}

func TestPairwiseBaselineAndGates(t *testing.T) {
	js := startJudge(t, mock.Options{Default: winA})
	set := compileJudge(t, pairSpec(), js, nil)
	ctx := context.Background()
	cases := []struct {
		name    string
		results []record.Result
		w       []want // one per candidate result
	}{
		{"no baseline result", []record.Result{{Target: candName, Epoch: 1, Raw: "billing"}}, []want{loudKind(KindNoBaseline)}},
		{"baseline of another epoch only", []record.Result{{Target: "base", Epoch: 2, Raw: "x"}, {Target: candName, Epoch: 1, Raw: "billing"}}, []want{loudKind(KindNoBaseline)}},
		{"baseline failed", []record.Result{{Target: "base", Epoch: 1, ErrorKind: "timeout"}, {Target: candName, Epoch: 1, Raw: "billing"}}, []want{loudKind(KindNoBaseline)}},
		{"baseline empty", []record.Result{{Target: "base", Epoch: 1, Raw: " "}, {Target: candName, Epoch: 1, Raw: "billing"}}, []want{loudKind(KindNoBaseline)}},
		{"candidate failed", []record.Result{{Target: "base", Epoch: 1, Raw: "x"}, {Target: candName, Epoch: 1, ErrorKind: "rate_limited"}}, []want{loudKind("rate_limited")}},
		{"candidate empty", []record.Result{{Target: "base", Epoch: 1, Raw: "x"}, {Target: candName, Epoch: 1, Raw: "{}"}}, []want{loudKind(KindEmpty)}},
		{"candidate refused", []record.Result{{Target: "base", Epoch: 1, Raw: "x"}, {Target: candName, Epoch: 1, Raw: "I must decline."}}, []want{loudKind(KindRefusal)}},
		{"only the baseline", []record.Result{{Target: "base", Epoch: 1, Raw: "x"}}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ss := set.ScorePairs(ctx, judgeCase, tc.results)
			if len(ss) != len(tc.w) {
				t.Fatalf("%d scores, want %d: %+v", len(ss), len(tc.w), ss)
			}
			for i, w := range tc.w {
				w.check(t, ss[i])
			}
		})
	}
	if n := len(js.requests()); n != 0 {
		t.Errorf("the judge was called %d times, want none", n)
	}

	// Epochs pair with the baseline's result of the same epoch, and every
	// other target is compared.
	results := []record.Result{
		{Target: "base", Epoch: 1, Raw: "base one"}, {Target: "base", Epoch: 2, Raw: "base two"},
		{Target: candName, Epoch: 1, Raw: "cand one"}, {Target: candName, Epoch: 2, Raw: "cand two"},
		{Target: "grader", Epoch: 1, Raw: "grader one"},
	}
	ss := set.ScorePairs(ctx, judgeCase, results)
	if len(ss) != 3 {
		t.Fatalf("%d scores, want 3", len(ss))
	}
	pairs := map[string]string{"cand two": "base two", "cand one": "base one", "grader one": "base one"}
	for i := range 3 {
		u := js.userMessage(t, 2*i)
		var cand string
		for c := range pairs {
			if strings.Contains(u, c) {
				cand = c
			}
		}
		if cand == "" || !strings.Contains(u, pairs[cand]) {
			t.Errorf("call %d does not pair a candidate with its epoch's baseline:\n%s", 2*i+1, u)
		}
	}
}

func TestPairwiseScoredOnlyByScorePairs(t *testing.T) {
	js := startJudge(t, mock.Options{Default: winA})
	set := compileJudge(t, pairSpec(), js, nil)
	ss := set.Score(context.Background(), judgeCase, candResult("billing"))
	if len(ss) != 1 || ss[0].Scorer != "correct" || !ss[0].Primary {
		t.Errorf("Score returned %+v; want only the primary scorer of single results", ss)
	}
	// Called directly on one result, a pairwise judge fails loudly.
	for _, e := range set.entries {
		if e.pair != nil {
			loudKind(KindJudgeError).check(t, newScoreForTest(e.s.Score(context.Background(), &Input{Raw: "billing", Parsed: "billing"})))
		}
	}
	if n := len(js.requests()); n != 0 {
		t.Errorf("the judge was called %d times", n)
	}
}

func newScoreForTest(v Verdict) record.Score {
	v = sanitize(v)
	return record.Score{Pass: v.Pass, Value: v.Value, Shape: v.Shape, Kind: v.Kind, Reason: v.Reason}
}
