package scorer

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/spec"
)

func TestCEL(t *testing.T) {
	json := spec.Output{Format: "json"}
	celCase := func(expr string) spec.Scorer { return spec.Scorer{Type: "cel", Expr: expr} }
	exp := map[string]any{"team": "billing", "n": 3.0}

	runCases(t, json, celCase(`output.team == expected.team`), []scoreCase{
		{"true passes", call{raw: `{"team":"billing"}`, expected: exp}, passes, ""},
		{"false is silent wrong", call{raw: `{"team":"sales"}`, expected: exp}, silent, "expression is false"},
		{"missing key is a loud scorer error", call{raw: `{"group":"billing"}`, expected: exp}, loudKind(KindScorerError), "no such key"},
		{"unparseable output", call{raw: `team=billing`, expected: exp}, loudKind(KindUnparseable), ""},
	})
	runCases(t, json, celCase(`output.n == expected.n && output.n > 2`), []scoreCase{
		{"integers and doubles compare", call{raw: `{"n": 3}`, expected: exp}, passes, ""},
	})
	runCases(t, json, celCase(`output.ok`), []scoreCase{
		{"dyn true", call{raw: `{"ok": true}`}, passes, ""},
		{"dyn not a bool", call{raw: `{"ok": "yes"}`}, loudKind(KindScorerError), "not a bool"},
	})
	runCases(t, spec.Output{}, celCase(`raw.lowerAscii().contains(case.keyword) && case.tags.bucket == "common" && case.id == "c1"`), []scoreCase{
		{"raw, case fields and tags", call{raw: "A REFUND", vars: map[string]any{"keyword": "refund"}, tags: map[string]string{"bucket": "common"}}, passes, ""},
		{"tag differs", call{raw: "a refund", vars: map[string]any{"keyword": "refund"}, tags: map[string]string{"bucket": "edge"}}, silent, ""},
	})
	runCases(t, spec.Output{}, celCase(`meta.latency_ms < 1000.0 && meta.cost_usd <= 0.01 && meta.finish_reason == "stop" && size(output) <= 10`), []scoreCase{
		{"meta", call{raw: "short", latency: 999, cost: 0.01, finish: "stop"}, passes, ""},
		{"meta over", call{raw: "short", latency: 1000, finish: "stop"}, silent, ""},
	})
	runCases(t, spec.Output{}, celCase(`math.greatest([1, 2, int(output)]) == 7 && [1,2].exists(x, x == 2) && "a,b".split(",").size() == 2`), []scoreCase{
		{"extensions", call{raw: "7"}, passes, ""},
		{"conversion error", call{raw: "seven"}, loudKind(KindScorerError), ""},
	})
}

func TestCELBounded(t *testing.T) {
	cases := []struct{ name, expr, raw, reason string }{
		{"cost limit", `lists.range(10000).all(i, lists.range(10000).all(j, i + j >= 0))`, "x", "cost limit exceeded"},
		{"range limit", `lists.range(100000000).size() > 0`, "x", "exceeds maximum allowed"},
		{"hostile output iterated", `raw.split("").all(c, raw.split("").all(d, c != "~"))`, strings.Repeat("ab", 20000), "cost limit exceeded"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			set := mustCompile(t, newSpec(spec.Output{}, spec.Scorer{Type: "cel", Expr: tc.expr}))
			start := time.Now()
			s := call{raw: tc.raw}.one(t, set)
			if took := time.Since(start); took > celTimeout+time.Second {
				t.Errorf("took %v", took)
			}
			loudKind(KindScorerError).check(t, s)
			if !strings.Contains(s.Reason, tc.reason) {
				t.Errorf("reason %q, want it to say %q", s.Reason, tc.reason)
			}
		})
	}
}

func TestCELContextCancel(t *testing.T) {
	s := &celScorer{name: "c"}
	prg, err := compileCEL(`lists.range(5000).all(i, lists.range(150).all(j, i >= 0))`)
	if err != nil {
		t.Fatal(err)
	}
	s.prg = prg
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	v := s.Score(ctx, &Input{Raw: "x", Parsed: "x"})
	if v.Pass || v.Kind != KindScorerError {
		t.Errorf("cancelled evaluation: %+v", v)
	}
}

// TestCELLargeOutput checks that the limits leave room for real outputs: a
// 1 MiB reply and a JSON output of 10,000 items evaluate normally.
func TestCELLargeOutput(t *testing.T) {
	big := strings.Repeat("lorem ipsum ", 1<<20/12) + "REFUND"
	runCases(t, spec.Output{}, spec.Scorer{Type: "cel", Expr: `raw.contains("REFUND") && size(output) > 1000000`}, []scoreCase{
		{"1 MiB reply", call{raw: big}, passes, ""},
	})
	var b strings.Builder
	b.WriteString(`{"items": [`)
	for i := range 10000 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`{"n": 1}`)
	}
	b.WriteString("]}")
	runCases(t, spec.Output{Format: "json"}, spec.Scorer{Type: "cel", Expr: `output.items.all(i, i.n == 1) && output.items.size() == 10000`}, []scoreCase{
		{"10,000 items", call{raw: b.String()}, passes, ""},
	})
}
