package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/analysis"
)

// withLedger adds a hand-built selection ledger to rep: 10 variants of
// experiment exp, the last chosen, the first the reference. Its numbers
// are inputs to the renderers, not expectations of the analysis.
func withLedger(rep *analysis.Report, exp, name string) *analysis.Report {
	l := &analysis.Ledger{Experiment: exp, Scorer: "correct", Alpha: 0.05, Variants: 10, Runs: 10, Family: 9,
		ReferenceFrom: "first_variant", UncorrectedVerdict: "a_better", Verdict: "inconclusive",
		Sigma: 0.034, ExpectedMaxZ: 1.538753, Inflation: 0.052318, DeflatedRate: 0.567682,
		Summary: "The lead of " + name + "@r10 over the reference " + name + "@r1 (+8.0 points [+1.2, +14.8]) does not survive the correction for 10 variants tried: p = 0.0210 on its own, 0.1890 after Holm over 9 comparisons.",
		Notes:   []string{"1 variant measured another dataset: not compared and not counted in N. " + name}}
	for i := range 10 {
		v := analysis.LedgerVariant{Run: fmt.Sprintf("r%d", i+1), Target: name, Started: fmt.Sprintf("2026-01-01T00:%02d:00Z", i),
			Rate: 0.54 + 0.008*float64(i), Cases: 200, SE: 0.034}
		if i == 0 {
			v.Reference = true
		} else {
			p := 0.9 - 0.1*float64(i)
			if i == 9 {
				p = 0.021
			}
			v.VsReference = &analysis.Comparison{A: v.Name(), B: name + "@r1", N: 200, Delta: v.Rate - 0.54,
				CI: [2]float64{v.Rate - 0.54 - 0.068, v.Rate - 0.54 + 0.068}, Test: "mcnemar_exact", PValue: p, PAdjusted: min(1, 9*p), Verdict: "inconclusive"}
		}
		if i == 9 {
			v.Rate, v.Chosen = 0.62, true
			v.VsReference.Delta, v.VsReference.CI = 0.08, [2]float64{0.012, 0.148}
		}
		l.Tried = append(l.Tried, v)
	}
	l.Chosen, l.Reference = l.Tried[9], l.Tried[0]
	rep.Run.Experiment = exp
	rep.Ledger = l
	return rep
}

// withEpochs gives the first two targets five epochs' noise figures.
func withEpochs(rep *analysis.Report) *analysis.Report {
	rep.Run.Epochs = 5
	sd, share := 0.013, 0.6412
	for i := range rep.Targets[:2] {
		t := &rep.Targets[i]
		t.Primary.SE, t.Primary.CIMethod = 0.021, "epoch_mean_se"
		t.Epochs = &analysis.EpochStats{Cases: 400, WithinVar: 0.1503, Epochs: 5, CompleteCases: 400,
			EpochRates: []float64{0.70, 0.715, 0.725, 0.735, 0.745}, BetweenRunSD: &sd, TotalVar: 0.2344, WithinShare: &share}
	}
	return rep
}

func renderAll(t *testing.T, rep *analysis.Report) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, f := range []string{"text", "markdown", "json"} {
		var b bytes.Buffer
		if err := Render(&b, f, rep); err != nil {
			t.Fatal(err)
		}
		out[f] = b.String()
	}
	out["html"] = renderPage(t, rep, htmlOptions{csp: true})
	return out
}

// A run in an experiment shows its selection ledger in every format: N,
// the chosen and reference variants, the lead with its Holm-adjusted p,
// whether it survives, the expected inflation and the deflated rate.
func TestLedgerInEveryFormat(t *testing.T) {
	rep := withLedger(cleanReport(), "prompt-search", "gpt-4o-mini")
	out := renderAll(t, rep)
	want := map[string][]string{
		"text": {"selection ledger: experiment prompt-search, 10 variants tried in 10 runs (primary scorer correct)",
			"chosen     gpt-4o-mini@r10  62.0%  deflated 56.8% (expected best-of-10 inflation 5.2 points = 1.54 σ, σ = 3.4 points)",
			"reference  gpt-4o-mini@r1  54.0%  (the experiment's first variant)",
			"lead       +8.0 [+1.2, +14.8] points, p 0.021, Holm-adjusted over 9 comparisons 0.19: the lead does not survive the correction",
			"does not survive the correction for 10 variants tried", "inconclusive (chosen)", "reference", "note: 1 variant measured another dataset"},
		"markdown": {"### Selection ledger", "Experiment prompt-search: **10 variants tried** in 10 runs, primary scorer correct.",
			"| lead | +8.0 [+1.2, +14.8] points; p 0.021 alone, 0.19 after Holm over 9 comparisons: **the lead does not survive the correction** |",
			"| expected best-of-10 inflation | 5.2 points = 1.54 σ, σ = 3.4 points (standard error of a variant's rate) |",
			"| deflated rate | 56.8% (observed 62.0%) |", "<summary>Variants tried (10 of 10)</summary>"},
		"html": {`<section id="ledger">`, "10 variants tried", "does not survive the correction for 10 variants tried",
			"<dt>deflated rate</dt><dd><b>56.8%</b> (observed 62.0%)</dd>", `<table id="ledger-variants">`},
		"json": {`"ledger": {`, `"variants": 10`, `"deflated_rate": 0.567682`, `"expected_max_z": 1.538753`, `"survives": false`},
	}
	for f, ws := range want {
		for _, w := range ws {
			if !strings.Contains(out[f], w) {
				t.Errorf("%s report lacks %q", f, w)
			}
		}
	}
	var m struct {
		Ledger analysis.Ledger `json:"ledger"`
	}
	if err := json.Unmarshal([]byte(out["json"]), &m); err != nil || m.Ledger.Variants != 10 || len(m.Ledger.Tried) != 10 ||
		m.Ledger.Chosen.VsReference == nil || m.Ledger.Chosen.VsReference.PAdjusted != 0.189 {
		t.Errorf("JSON ledger %+v, %v", m.Ledger, err)
	}
	if _, _, err := scanHTML(out["html"]); err != nil {
		t.Errorf("HTML: %v", err)
	}
}

// A run with no experiment has no ledger section in any format.
func TestNoLedgerWithoutExperiment(t *testing.T) {
	out := renderAll(t, cleanReport())
	for f, doc := range out {
		if strings.Contains(strings.ToLower(doc), "ledger") {
			t.Errorf("%s report of a run without experiment mentions a ledger", f)
		}
	}
}

// With several epochs, each format shows the between-run SD beside the SE
// across cases, with K and the within-case share; with one epoch (the
// clean fixture) nothing of it appears.
func TestNoiseInEveryFormat(t *testing.T) {
	out := renderAll(t, withEpochs(cleanReport()))
	want := map[string][]string{
		"text":     {"noise across epochs", "gpt-4o-mini              2.1             1.3  5  70.0, 71.5, 72.5, 73.5, 74.5                64%", "Within-case share"},
		"markdown": {"### Noise across epochs", "| gpt-4o-mini | 2.1 | 1.3 | 5 | 70.0, 71.5, 72.5, 73.5, 74.5 | 64% |"},
		"html":     {`<section id="noise">`, `<td class="name">claude-3-5-haiku</td><td class="num">2.1</td><td class="num"><b>1.3</b></td><td class="num">5</td>`},
		"json":     {`"between_run_sd": 0.013`, `"within_case_share": 0.6412`, `"epoch_rates": [`},
	}
	for f, ws := range want {
		for _, w := range ws {
			if !strings.Contains(out[f], w) {
				t.Errorf("%s report lacks %q", f, w)
			}
		}
	}
	// The third target has no epoch figures: no row for it.
	sec := out["markdown"][strings.Index(out["markdown"], "### Noise across epochs"):]
	start := strings.Index(sec, "|")
	sec = sec[:start+strings.Index(sec[start:], "\n\n")]
	if rows := strings.Count(sec, "\n| ") - 1; rows != 2 || strings.Contains(sec, "llama") {
		t.Errorf("the noise table has %d rows, want 2 (targets with epochs only):\n%s", rows, sec)
	}
	for f, doc := range renderAll(t, cleanReport()) {
		for _, w := range []string{"noise across epochs", "between-run", "between_run_sd", "within_case_share", "within-case share"} {
			if strings.Contains(strings.ToLower(doc), w) {
				t.Errorf("%s report of a one-epoch run shows %q", f, w)
			}
		}
	}
}

// Names from outside (target names, the experiment's name) reach the
// ledger as text in every format: no markup, no table-cell breaks, no
// terminal escapes.
func TestLedgerHostile(t *testing.T) {
	name := hostScript + "|x\x1b[2J"
	rep := withEpochs(withLedger(hostileReport(), hostImg, name))
	rep.Targets[0].Name = name
	out := renderAll(t, rep)
	_, text, err := scanHTML(out["html"])
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{visible(hostImg, false), visible(name+"@r10", false)} {
		if !strings.Contains(text, h) {
			t.Errorf("the HTML page does not show %q as text", h)
		}
	}
	if strings.ContainsFunc(out["text"], func(r rune) bool { return r == 0x1b }) {
		t.Errorf("the text report passes a terminal escape through")
	}
	outside, _ := mdSplit(t, out["markdown"])
	cols := 0
	for n, l := range outside {
		if strings.Contains(l, "<script") || strings.Contains(l, "<img") {
			t.Errorf("markdown line %d: raw HTML in %q", n+1, l)
		}
		if strings.HasPrefix(l, "|") {
			if c := len(cells(l)); cols == 0 {
				cols = c
			} else if c != cols {
				t.Errorf("markdown line %d: %d cells, the table has %d: %q", n+1, c, cols, l)
			}
		} else {
			cols = 0
		}
	}
	if !strings.Contains(out["markdown"], mdText(name+"@r10")) {
		t.Errorf("markdown does not show the chosen variant's name escaped")
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out["json"]), &m); err != nil {
		t.Fatal(err)
	}
	if l, _ := m["ledger"].(map[string]any); l == nil || l["experiment"] != hostImg {
		t.Errorf("JSON ledger experiment %v, want the name as given", l["experiment"])
	}
}

// Whatever the names in a ledger (targets, runs, the experiment, notes),
// the HTML page gains no markup and shows them as text, and the Markdown
// ledger tables keep their columns.
func FuzzLedgerRender(f *testing.F) {
	f.Add(hostScript, hostImg, hostMarkdown)
	f.Add("a|b", "x\x00y", "</details>")
	f.Fuzz(func(t *testing.T, name, exp, note string) {
		rep := withLedger(&analysis.Report{Run: analysis.RunInfo{ID: "r", Spec: "s", Status: "complete"}}, exp, name)
		rep.Ledger.Notes = append(rep.Ledger.Notes, note)
		rep.Ledger.Tried[3].Run = note
		var b bytes.Buffer
		if err := renderHTML(&b, rep, htmlOptions{csp: true}); err != nil {
			t.Fatal(err)
		}
		_, text, err := scanHTML(b.String())
		if err != nil {
			t.Fatalf("name %q experiment %q note %q: %v", name, exp, note, err)
		}
		if !strings.Contains(text, visible(note, false)) {
			t.Fatalf("the note %q is not shown as text", note)
		}
		var m strings.Builder
		if err := Markdown(&m, rep); err != nil {
			t.Fatal(err)
		}
		outside, _ := mdSplit(t, m.String())
		cols := 0
		for _, l := range outside {
			if !strings.HasPrefix(l, "|") {
				cols = 0
				continue
			}
			if c := len(cells(l)); cols == 0 {
				cols = c
			} else if c != cols {
				t.Fatalf("%d cells in a table of %d: %q", c, cols, l)
			}
		}
	})
}
