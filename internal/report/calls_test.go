package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/analysis"
	"github.com/assay-eval/assay/internal/record"
)

// withCalls adds a tool-call section to a fixture report (names from its
// targets) and makes its first failure a reply that only called a tool
// with the given arguments.
func withCalls(rep *analysis.Report, scorer, args string) *analysis.Report {
	a, b := rep.Targets[0].Name, rep.Targets[1].Name
	turns := analysis.Mean{Mean: 1.777778, N: 9, Total: 16, SE: 0.147, CI: [2]float64{1.438825, 2.116731}, CIMethod: "t"}
	rep.Calls = &analysis.CallReport{Agent: true,
		Targets: []analysis.TargetCalls{
			{Target: a, Results: 9, WithCalls: 7, CallOnly: 5,
				Selection: []analysis.SelectionRate{{Scorer: scorer, Field: "(tool)", Rate: analysis.Rate{Passed: 4, N: 9, Rate: 0.4444, CI: [2]float64{0.1889, 0.7333}}}},
				Calls:     analysis.Mean{Mean: 0.777778, N: 9, Total: 7, SE: 0.147, CI: [2]float64{0.438825, 1.116731}, CIMethod: "t"},
				Turns:     &turns,
				Cost:      analysis.Mean{Mean: 0.001778, N: 9, Total: 0.016, SE: 0.000147, CI: [2]float64{0.001439, 0.002117}, CIMethod: "t"}},
			{Target: b, Results: 9, WithCalls: 9, CallOnly: 9,
				Calls: analysis.Mean{Mean: 1.222222, N: 1, Total: 11, CI: [2]float64{1.222222, 1.222222}},
				Cost:  analysis.Mean{Mean: 0.003333, N: 9, Total: 0.03, SE: 0.000289, CI: [2]float64{0.002, 0.004666}, CIMethod: "t"}},
		},
		Selection: []analysis.Comparison{{A: a, B: b, Scorer: scorer + " (tool)", N: 9, Delta: -0.444444, CI: [2]float64{-0.733, -0.012},
			Test: "mcnemar_score", PValue: 0.0455, PAdjusted: 0.0455, Verdict: "b_better", BOnly: 4}},
		Measures: []analysis.MeasureComparison{
			{Measure: analysis.MeasureCalls, A: a, B: b, N: 9, Delta: -0.444444, CI: [2]float64{-0.85, -0.04}, Test: "paired_t", PValue: 0.0353, PAdjusted: 0.0353, Verdict: "b_higher"},
			{Measure: analysis.MeasureCost, A: a, B: b, N: 9, Delta: -0.001556, CI: [2]float64{-0.00289, -0.000218}, Test: "paired_t", PValue: 0.0278, PAdjusted: 0.0278, Verdict: "b_higher"},
		}}
	rep.Worst[0].Raw = ""
	rep.Worst[0].Calls = []record.ToolCall{{Name: "lookup_order", Arguments: args}, {Name: "refund", Arguments: `{"id": 42}`}}
	return rep
}

func render(t *testing.T, format string, rep *analysis.Report) string {
	t.Helper()
	var b bytes.Buffer
	if err := Render(&b, format, rep); err != nil {
		t.Fatalf("%s: %v", format, err)
	}
	return b.String()
}

// TestCallsSectionEveryFormat: a report with tool calls shows the section
// in every format with the analysis' numbers, and a failure whose reply
// only called tools shows the calls, escaped like any model output, not an
// empty output.
func TestCallsSectionEveryFormat(t *testing.T) {
	rep := withCalls(cleanReport(), "call", `{"id": 42}`)
	text := render(t, "text", rep)
	for _, want := range []string{
		"tool calls (per case: mean [95% t CI])",
		"tool choice: call", "4/9 44.4% [18.9, 73.3]", "0.78 [0.44, 1.12]", "1.78 [1.44, 2.12]", "$0.00178 [$0.00144, $0.00212]",
		"1.22  ", // one case: a mean without an interval
		"paired comparisons of tool calls",
		"tool choice: call (tool)", "-44.4", "calls/case", "-0.44", "[-0.85, -0.04]", "cost/trajectory", "−$0.00156",
		rep.Targets[1].Name + " higher", rep.Targets[1].Name + " better",
		`calls: lookup_order({"id": 42}) · refund({"id": 42})`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("text report lacks %q:\n%s", want, text)
		}
	}
	// The failure's lines: its header, reason and expected value, then its
	// calls in place of an output.
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "    calls: lookup_order") && (i == 0 || strings.Contains(lines[i-1], "output:")) {
			t.Errorf("the call-only failure reads as an output: %q then %q", lines[max(i-1, 0)], l)
		}
	}
	md := render(t, "markdown", rep)
	for _, want := range []string{"### Tool calls", "| **" + mdText(rep.Targets[0].Name) + "** | 7/9 | 5 | 4/9 44.4% [18.9, 73.3] | 0.78 [0.44, 1.12] | 1.78 [1.44, 2.12] |",
		"#### Tool calls compared", "Calls:\n\n```text\nlookup_order({\"id\": 42})\nrefund({\"id\": 42})\n```"} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown report lacks %q:\n%s", want, md)
		}
	}
	html := render(t, "html", rep)
	for _, want := range []string{`<section id="calls">`, `<table id="calls-compared">`, `0.78<span class="sub">[0.44, 1.12]</span>`,
		`<div class="label">calls</div><pre class="output calls">lookup_order({&#34;id&#34;: 42})` + "\nrefund("} {
		if !strings.Contains(html, want) {
			t.Errorf("HTML report lacks %q", want)
		}
	}
	var back struct {
		Calls struct {
			Targets []struct {
				Calls struct{ Mean float64 } `json:"calls_per_case"`
			} `json:"targets"`
		} `json:"calls"`
		Worst []struct {
			Calls []record.ToolCall `json:"calls"`
		} `json:"worst"`
	}
	if err := json.Unmarshal([]byte(render(t, "json", rep)), &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Calls.Targets) != 2 || back.Calls.Targets[0].Calls.Mean != 0.777778 || len(back.Worst[0].Calls) != 2 {
		t.Errorf("JSON report: %+v", back)
	}
}

// TestCallsSectionEscapes: target, scorer and tool names and arguments come
// from outside; no format runs or restructures on them.
func TestCallsSectionEscapes(t *testing.T) {
	rep := withCalls(hostileReport(), "call"+hostScript, `{"q": "`+hostImg+"\x1b[2J\u202e"+`"}`)
	for _, f := range []string{"text", "markdown"} {
		out := render(t, f, rep)
		if strings.Contains(out, "\x1b") || strings.Contains(out, "\u202e") {
			t.Errorf("%s: a terminal control or bidi character reaches the output", f)
		}
	}
	md := render(t, "markdown", rep)
	if strings.Contains(md, hostScript) {
		t.Error("Markdown: a script tag reaches the output unescaped")
	}
	html := render(t, "html", rep)
	for _, h := range hostile {
		if strings.Contains(html, h) {
			t.Errorf("HTML: %q reaches the page unescaped", h)
		}
	}
	if !strings.Contains(html, `<section id="calls">`) {
		t.Error("HTML: no calls section")
	}
}

// TestNoCallsNoSection: a report without calls has no trace of the
// section in any format (the goldens hold the bytes).
func TestNoCallsNoSection(t *testing.T) {
	rep := cleanReport()
	for _, f := range []string{"text", "markdown", "html", "json"} {
		out := render(t, f, rep)
		for _, s := range []string{"tool calls", "Tool calls", `id="calls"`, `"calls"`, "tool choice"} {
			if strings.Contains(out, s) {
				t.Errorf("%s: a report without calls shows %q", f, s)
			}
		}
	}
}
