package scorer

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/celbound"
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

// TestCELAmplificationIsRefused: functions whose result can be far longer
// than their inputs (replace, join, format) measure it first. On 100 KB of
// hostile output, raw.replace("a", raw) asks for 10 GB; it must be a loud
// scorer_error that allocates almost nothing, and the same expressions on
// small outputs still work.
func TestCELAmplificationIsRefused(t *testing.T) {
	raw := strings.Repeat("a", 100_000)
	cases := []struct{ name, expr string }{
		{"replace", `raw.replace("a", raw) == ""`},
		{"replace n", `raw.replace("a", raw, 100000) == ""`},
		{"replace empty", `raw.replace("", raw) == ""`},
		{"join", `lists.range(10000).map(i, raw).join("") == ""`},
		{"join separator", `lists.range(10000).map(i, "").join(raw) == ""`},
		{"format", `"%s".format([lists.range(10000).map(i, raw)]) == ""`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			set := mustCompile(t, newSpec(spec.Output{}, spec.Scorer{Type: "cel", Expr: tc.expr}))
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			s := call{raw: raw}.one(t, set)
			runtime.ReadMemStats(&after)
			loudKind(KindScorerError).check(t, s)
			if !strings.Contains(s.Reason, "at most 16777216 are allowed") {
				t.Errorf("reason %q does not name the bound", s.Reason)
			}
			t.Logf("allocated %d KiB", (after.TotalAlloc-before.TotalAlloc)>>10)
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
				t.Errorf("evaluation allocated %d MiB", alloc>>20)
			}
			small := call{raw: "ab"}.one(t, set)
			if small.Kind == KindScorerError {
				t.Errorf("on a small output the expression should evaluate, got %+v", small)
			}
		})
	}
}

// TestCELSplitIsBounded: split holds a string header per piece, so
// splitting 1.1 MB into characters would build 17 MB; it is refused first.
func TestCELSplitIsBounded(t *testing.T) {
	set := mustCompile(t, newSpec(spec.Output{}, spec.Scorer{Type: "cel", Expr: `raw.split("").size() > 0`}))
	s := call{raw: strings.Repeat("a", 1_100_000)}.one(t, set)
	loudKind(KindScorerError).check(t, s)
	if !strings.Contains(s.Reason, "split would build at least 17600032 bytes; at most 16777216 are allowed") {
		t.Errorf("reason %q", s.Reason)
	}
	if s := (call{raw: strings.Repeat("a", 100_000)}).one(t, set); !s.Pass {
		t.Errorf("splitting 100 KB: %+v", s)
	}
}

// TestCELOutputTooLargeIsLoud: an output over celbound.MaxString is
// refused before evaluation, loudly.
func TestCELOutputTooLargeIsLoud(t *testing.T) {
	set := mustCompile(t, newSpec(spec.Output{}, spec.Scorer{Type: "cel", Expr: `size(raw) > 0`}))
	s := call{raw: strings.Repeat("x", celbound.MaxString+1)}.one(t, set)
	loudKind(KindScorerError).check(t, s)
	if !strings.Contains(s.Reason, "a CEL scorer reads at most 16777216") {
		t.Errorf("reason %q", s.Reason)
	}
}
