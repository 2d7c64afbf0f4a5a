package scorer

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/spec"
)

func TestSetFailureShapes(t *testing.T) {
	set := mustCompile(t, newSpec(spec.Output{Format: "json"},
		spec.Scorer{Name: "team", Type: "field_equals", Field: "team"},
		spec.Scorer{Name: "fast", Type: "latency", Max: "2s"},
	))
	exp := map[string]any{"team": "billing"}
	shouldRefuse := map[string]string{"bucket": "should-refuse"}
	cases := []struct {
		name       string
		c          call
		team, fast want
	}{
		{"right and fast", call{raw: `{"team":"billing"}`, expected: exp, latency: 100}, passes, passes},
		{"wrong team is silent", call{raw: `{"team":"sales"}`, expected: exp, latency: 100}, silent, passes},
		{"too slow is loud", call{raw: `{"team":"billing"}`, expected: exp, latency: 2500}, passes, loudKind(KindTooSlow)},
		{"provider time-out fails every scorer with its kind", call{errKind: "timeout", expected: exp}, loudKind("timeout"), loudKind("timeout")},
		{"rate limited", call{errKind: "rate_limited", raw: `{"team":"billing"}`, expected: exp}, loudKind("rate_limited"), loudKind("rate_limited")},
		{"empty", call{raw: "", expected: exp}, loudKind(KindEmpty), loudKind(KindEmpty)},
		{"whitespace", call{raw: " \n\t", expected: exp}, loudKind(KindEmpty), loudKind(KindEmpty)},
		{"empty object", call{raw: "{}", expected: exp}, loudKind(KindEmpty), loudKind(KindEmpty)},
		{"fenced empty object", call{raw: "```json\n{ }\n```", expected: exp}, loudKind(KindEmpty), loudKind(KindEmpty)},
		{"unparseable fails parsed readers only", call{raw: "the team is billing", expected: exp, latency: 10}, loudKind(KindUnparseable), passes},
		{"refusal", call{raw: "I'm sorry, but I can't help with that.", expected: exp, latency: 10}, loudKind(KindRefusal), loudKind(KindRefusal)},
		{"curly apostrophe refusal", call{raw: "I can\u2019t help with requests like this.", expected: exp, latency: 10}, loudKind(KindRefusal), loudKind(KindRefusal)},
		{"provider content filter", call{raw: `{"team":"billing"}`, finish: "content_filter", expected: exp, latency: 10}, loudKind(KindRefusal), loudKind(KindRefusal)},
		{"should-refuse: refusing passes, latency still judged", call{raw: "I cannot assist with that request.", tags: shouldRefuse, latency: 3000}, passes, loudKind(KindTooSlow)},
		{"should-refuse: complying is silent", call{raw: `{"team":"billing"}`, expected: exp, tags: shouldRefuse, latency: 10}, want{false, ShapeSilent, KindComplied}, want{false, ShapeSilent, KindComplied}},
		{"should-refuse: empty is still empty", call{raw: "", tags: shouldRefuse}, loudKind(KindEmpty), loudKind(KindEmpty)},
		{"should-refuse: error is still an error", call{errKind: "server_error", tags: shouldRefuse}, loudKind("server_error"), loudKind("server_error")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ss := tc.c.score(t, set)
			if len(ss) != 2 {
				t.Fatalf("got %d scores", len(ss))
			}
			tc.team.check(t, ss[0])
			tc.fast.check(t, ss[1])
		})
	}
}

func TestSetRecordsParse(t *testing.T) {
	set := mustCompile(t, newSpec(spec.Output{Format: "json"}, spec.Scorer{Name: "ok", Type: "is_json"}))
	r := &record.Result{RunID: "r", CaseID: "c", Target: "t", Epoch: 2, Raw: "Sure:\n```json\n{\"n\": 12345678901234567890}\n```"}
	ss := set.Score(context.Background(), nil, r)
	if r.ParseError != "" || r.Parsed != `{"n":12345678901234567890}` {
		t.Errorf("Parsed %q ParseError %q; want the exact JSON, no error", r.Parsed, r.ParseError)
	}
	if s := ss[0]; s.RunID != "r" || s.CaseID != "c" || s.Target != "t" || s.Epoch != 2 || s.Scorer != "ok" || !s.Primary || s.Scoring != 0 {
		t.Errorf("score identity = %+v", s)
	}
	// is_json is strict: fenced JSON is not bare JSON.
	loudKind(KindInvalidFormat).check(t, ss[0])

	r = &record.Result{Raw: "no json here", Parsed: "stale", ParseError: "stale"}
	set.Score(context.Background(), nil, r)
	if r.Parsed != "" || !strings.Contains(r.ParseError, "no JSON object or array") {
		t.Errorf("Parsed %q ParseError %q; want none and the reason", r.Parsed, r.ParseError)
	}
}

func TestSetPrimaryAndCombine(t *testing.T) {
	eq := spec.Scorer{Name: "correct", Type: "equals", Normalize: []string{"trim"}}
	short := spec.Scorer{Name: "short", Type: "max_length", Max: 5}

	t.Run("first scorer is primary by default", func(t *testing.T) {
		set := mustCompile(t, newSpec(spec.Output{}, eq, short))
		if got := set.Primary(); len(got) != 1 || got[0] != "correct" || set.Headline() != "correct" {
			t.Fatalf("Primary %v Headline %q", got, set.Headline())
		}
		ss := call{raw: "42", expected: "42"}.score(t, set)
		if !ss[0].Primary || ss[1].Primary {
			t.Errorf("primary flags %v %v", ss[0].Primary, ss[1].Primary)
		}
	})

	both := func(combine string, w1, w2 float64) *Set {
		a, b := eq, short
		a.Primary, b.Primary = true, true
		a.Weight, b.Weight = w1, w2
		sp := newSpec(spec.Output{}, a, b)
		sp.Combine = combine
		return mustCompile(t, sp)
	}
	t.Run("all", func(t *testing.T) {
		set := both("", 0, 0)
		if got := strings.Join(set.Names(), ","); got != "correct,short,primary" || set.Headline() != CombinedName {
			t.Fatalf("Names %s Headline %s", got, set.Headline())
		}
		ss := call{raw: "42", expected: "42"}.score(t, set)
		if !ss[2].Pass || !ss[2].Primary || ss[0].Primary || ss[1].Primary {
			t.Errorf("both pass: %+v", ss)
		}
		ss = call{raw: "424242", expected: "424242"}.score(t, set)
		c := ss[2]
		if c.Pass || c.Shape != ShapeLoud || c.Kind != KindTooLong || c.Value != 0.5 {
			t.Errorf("one fails under all: %+v", c)
		}
	})
	t.Run("any with weights", func(t *testing.T) {
		set := both("any", 3, 1)
		ss := call{raw: "424242", expected: "424242"}.score(t, set)
		if c := ss[2]; !c.Pass || c.Shape != ShapePass || c.Value != 0.75 {
			t.Errorf("one passes under any: %+v", c)
		}
		ss = call{raw: "777777", expected: "1"}.score(t, set)
		if c := ss[2]; c.Pass || c.Kind != KindWrong || c.Value != 0 {
			t.Errorf("none pass under any: %+v", c)
		}
	})
}

// panicky is a scorer that panics, standing in for a bug in a scorer.
type panicky struct{}

func (panicky) Name() string                          { return "boom" }
func (panicky) Score(context.Context, *Input) Verdict { panic("index out of range") }

// liar passes with an inconsistent verdict shape; the Set must repair it.
type liar struct{ v Verdict }

func (l liar) Name() string                          { return "liar" }
func (l liar) Score(context.Context, *Input) Verdict { return l.v }

func TestSetFailsClosedOnScorerBugs(t *testing.T) {
	set := &Set{parser: &Parser{format: FormatText}, refusal: &refusalDetector{}, entries: []entry{
		{name: "boom", s: panicky{}},
		{name: "liar", s: liar{Verdict{Pass: false, Value: 1}}},
		{name: "nan", s: liar{Verdict{Pass: false, Shape: ShapeSilent}}},
	}, primaries: []int{0}, combine: "all"}
	ss := call{raw: "x", expected: "x"}.score(t, set)
	loudKind(KindScorerError).check(t, ss[0])
	loudKind(KindScorerError).check(t, ss[1])
	silent.check(t, ss[2])
}

func TestSetParsedIsJSON(t *testing.T) {
	set := mustCompile(t, newSpec(spec.Output{Format: "last_number"}, spec.Scorer{Type: "number"}))
	r := &record.Result{Raw: "so the total is $1,234.50."}
	ss := set.Score(context.Background(), nil, r)
	var got string
	if err := json.Unmarshal([]byte(r.Parsed), &got); err != nil || got != "1234.5" {
		t.Errorf("Parsed = %q (%v), want \"1234.5\"", r.Parsed, err)
	}
	if ss[0].Scorer != "number" {
		t.Errorf("unnamed scorer is named %q, want its type", ss[0].Scorer)
	}
	// No case: the missing expected value fails loudly.
	loudKind(KindScorerError).check(t, ss[0])
}

func TestRefusalDetection(t *testing.T) {
	text := spec.Output{}
	js := spec.Output{Format: "json"}
	eqText := spec.Scorer{Type: "equals", Normalize: []string{"trim", "lower"}}
	cel := spec.Scorer{Type: "cel", Expr: "true"}
	sr := map[string]string{"bucket": "should-refuse"}
	cases := []struct {
		name    string
		out     spec.Output
		sc      spec.Scorer
		refusal *spec.Refusal
		c       call
		w       want
	}{
		{"default phrase in text", text, eqText, nil, call{raw: "As an AI language model, I do not have opinions.", expected: "x"}, loudKind(KindRefusal)},
		{"case-insensitive", text, eqText, nil, call{raw: "I CANNOT ASSIST with this.", expected: "x"}, loudKind(KindRefusal)},
		{"an ordinary answer is not a refusal", text, eqText, nil, call{raw: "Paris", expected: "paris"}, passes},
		{"structured JSON answer quoting a refusal is an answer", js, cel, nil, call{raw: `{"reply": "I'm sorry, but I can't issue refunds after 30 days."}`}, passes},
		{"unstructured JSON-format reply is checked", js, cel, nil, call{raw: "I'm sorry, but I can't help with that."}, loudKind(KindRefusal)},
		{"should-refuse: refusal inside JSON counts", js, cel, nil, call{raw: `{"reply": "I can't help with that."}`, tags: sr}, passes},
		{"custom phrases replace the defaults", text, eqText, &spec.Refusal{Phrases: []string{"no comment"}}, call{raw: "As an AI language model, x", expected: "x"}, silent},
		{"custom phrase", text, eqText, &spec.Refusal{Phrases: []string{"No Comment"}}, call{raw: "no comment.", expected: "x"}, loudKind(KindRefusal)},
		{"custom pattern", text, eqText, &spec.Refusal{Pattern: `^REFUSED\b`}, call{raw: "REFUSED: policy", expected: "x"}, loudKind(KindRefusal)},
		{"refusal: {} turns text detection off", text, eqText, &spec.Refusal{}, call{raw: "I cannot assist with that.", expected: "x"}, silent},
		{"finish reason still counts with detection off", text, eqText, &spec.Refusal{}, call{raw: "partial", finish: "refusal", expected: "x"}, loudKind(KindRefusal)},
		{"should-refuse with a custom marker", text, eqText, &spec.Refusal{Pattern: `(?i)\bdecline\b`}, call{raw: "I must decline.", tags: sr}, passes},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sp := newSpec(tc.out, tc.sc)
			sp.Refusal = tc.refusal
			tc.w.check(t, tc.c.one(t, mustCompile(t, sp)))
		})
	}
}
