package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"html"
	"io"
	"math"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/difficulty"
	"github.com/assay-eval/assay/internal/irt"
	"github.com/assay-eval/assay/internal/stats"
)

// hostileLabel is outside text as hostile as it gets: an HTML tag, a
// Markdown pipe, a terminal escape and a right-to-left override.
const hostileLabel = "<script>alert(1)</script>|x\x1b[31m\u202e"

// mismatchFixture is a comparison with a gap (the workload's hard tier
// has no benchmark case), a target named hostileLabel, a hostile bin label
// and rubric reason.
func mismatchFixture() *difficulty.Mismatch {
	ci := func(lo, hi float64) stats.Interval { return stats.Interval{Lo: lo, Hi: hi} }
	why := "not computable: the workload puts 40.0% of its mix in bin hard, where the benchmark has no scored case (not extrapolated)"
	notComputable := difficulty.Estimate{Why: why, Missing: []string{"hard"}}
	return &difficulty.Mismatch{
		Scale:     difficulty.Scale{Source: difficulty.SourceTag, Tag: "tier", Levels: []string{"easy", hostileLabel, "hard"}},
		Benchmark: difficulty.SetSummary{Name: "bench-run", Kind: difficulty.KindRun, Cases: 40, Min: 0, Max: 1, Mean: 0.5, Median: 0.5, Targets: 2},
		Workload:  difficulty.SetSummary{Name: "work.jsonl", Kind: difficulty.KindDataset, Cases: 10, Min: 0, Max: 2, Mean: 1.2, Median: 1},
		Discrete:  true,
		Bins: []difficulty.Bin{
			{Lo: 0, Hi: 0, Label: "easy", Bench: 20, Work: 2, BenchShare: 0.5, WorkShare: 0.2},
			{Lo: 1, Hi: 1, Label: hostileLabel, Bench: 20, Work: 4, BenchShare: 0.5, WorkShare: 0.4},
			{Lo: 2, Hi: 2, Label: "hard", Bench: 0, Work: 4, BenchShare: 0, WorkShare: 0.4, Gap: true},
		},
		Distances: []difficulty.Distance{
			{Name: difficulty.DistanceW1, Value: 0.7, CI: ci(0.4, 1.0), Replicates: 2000},
			{Name: difficulty.DistanceKS, Value: 0.4, CI: ci(0.2, 0.6), Replicates: 2000},
			{Name: difficulty.DistanceTV, Value: 0.4, CI: ci(0.2, 0.6), Replicates: 2000},
		},
		LargestGap:     difficulty.Gap{Lo: 1, Hi: 2, Width: 1, Work: 4, WorkShare: 0.4},
		UncoveredShare: 0.4,
		Scores: []difficulty.Score{
			{Target: hostileLabel, Raw: difficulty.Estimate{Rate: 0.75, SE: 0.07, CI: ci(0.61, 0.89), N: 40, Kish: 40, Computable: true},
				Reweighted: notComputable, Covered: difficulty.Estimate{Rate: 0.7, SE: 0.08, CI: ci(0.54, 0.86), N: 40, Kish: 36, Computable: true}, CoveredShare: 0.6,
				PerBin: []difficulty.Rate{{Target: hostileLabel, Passed: 16, N: 20, Rate: 0.8, CI: ci(0.58, 0.92)}, {Target: hostileLabel, Passed: 14, N: 20, Rate: 0.7, CI: ci(0.48, 0.85)}, {}}},
			{Target: "b", Raw: difficulty.Estimate{Rate: 0.5, SE: 0.08, CI: ci(0.34, 0.66), N: 40, Kish: 40, Computable: true},
				Reweighted: notComputable, Covered: difficulty.Estimate{Rate: 0.45, SE: 0.08, CI: ci(0.29, 0.61), N: 40, Kish: 36, Computable: true}, CoveredShare: 0.6,
				PerBin: []difficulty.Rate{{Target: "b", Passed: 10, N: 20, Rate: 0.5, CI: ci(0.3, 0.7)}, {Target: "b", Passed: 10, N: 20, Rate: 0.5, CI: ci(0.3, 0.7)}, {}}},
		},
		Pairs: []difficulty.Pair{{A: hostileLabel, B: "b",
			Raw:          difficulty.Comparison{Delta: 0.25, SE: 0.1, CI: ci(0.05, 0.45), P: 0.01, PAdjusted: 0.01, Verdict: stats.VerdictABetter, N: 40, Computable: true},
			Reweighted:   difficulty.Comparison{Why: why, Missing: []string{"hard"}},
			Covered:      difficulty.Comparison{Delta: 0.25, SE: 0.12, DF: 37.5, CI: ci(0.01, 0.49), P: 0.04, PAdjusted: 0.04, Verdict: stats.VerdictABetter, N: 40, Computable: true},
			CoveredShare: 0.6}},
		RankingRaw: []string{hostileLabel, "b"}, RankingCovered: []string{hostileLabel, "b"},
		CoveredShare: 0.6,
		Rubric: &difficulty.Rubric{Verdict: "shortlist_only", Rule: "Any axis rated high: the benchmark may shortlist but not select.",
			Axes: []difficulty.AxisRating{{Axis: "data_distribution", Rating: "high", Reasons: []string{"tag " + hostileLabel + ": total variation 0.4"}},
				{Axis: "decision_stakes", Rating: "unrated", Reasons: []string{"the stakes are not answered"}}}},
		Alpha: 0.05, Replicates: 2000, Seed: 1,
	}
}

// renderDoc renders v as d's format, failing the test on an error.
func renderDoc[V any](t *testing.T, d *Document[V], format string, v V) string {
	t.Helper()
	var b bytes.Buffer
	if err := d.Render(&b, format, v); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func renderMismatch(t *testing.T, format string, m *difficulty.Mismatch) string {
	t.Helper()
	return renderDoc(t, NewRegistry().Mismatch, format, m)
}

// Every format says the gap bin is unmeasurable, that the re-weighted
// scores cannot be computed and why, shows the covered-only score, and
// states the rubric's rule.
func TestMismatchFormatsSayTheGap(t *testing.T) {
	t.Parallel()
	for _, format := range []string{"text", "markdown", "html"} {
		out := readable(format, renderMismatch(t, format, mismatchFixture()))
		for _, want := range []string{"UNMEASURABLE", "cannot be computed: gap at bin hard",
			"the workload puts 40.0% of its mix in bin hard, where the benchmark has no case",
			"covered (60.0% of the mix)", "70.0%", "[54.0, 86.0]",
			"re-weighted: cannot be compared on the whole mix (40.0% of it falls in bins with no benchmark case)",
			"on the covered 60.0% of the workload's mix: ",
			"the ranking does not change against raw; no pair's verdict changes",
			"Any axis rated high: the benchmark may shortlist but not select.", "shortlist only"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s lacks %q:\n%s", format, want, out)
			}
		}
		// The whole mix was not compared: nothing may claim it did not change.
		for _, bad := range []string{"the ranking does not change;", "changess", "0 pair", "a normal"} {
			if strings.Contains(out, bad) {
				t.Errorf("%s says %q:\n%s", format, bad, out)
			}
		}
		// The reason is stated once, under the table, not in every row.
		if format != "html" {
			if n := strings.Count(out, "where the benchmark has no"); n != 1 {
				t.Errorf("%s states the reason %d times:\n%s", format, n, out)
			}
		}
	}
}

// Outside text is escaped for where it lands: no tag in the page, no
// extra cell in a Markdown row, no raw escape in the terminal.
func TestMismatchEscapes(t *testing.T) {
	t.Parallel()
	m := mismatchFixture()
	page := renderMismatch(t, "html", m)
	if strings.Contains(strings.ToLower(page), "<script") {
		t.Errorf("the page holds a script element")
	}
	if !strings.Contains(page, "&lt;script&gt;alert(1)&lt;/script&gt;|x\\x1b[31m\\u202e") {
		t.Errorf("the hostile name is not shown escaped")
	}
	checkSVG(t, page, 3)
	md := renderMismatch(t, "markdown", m)
	if strings.Contains(md, "<script>") || !strings.Contains(md, `&lt;script&gt;alert\(1\)&lt;/script&gt;\|x`) {
		t.Errorf("the name is not escaped for Markdown:\n%s", md)
	}
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "| ") && strings.Contains(line, "script") {
			// The pairs table has 14 cells (raw, re-weighted, covered); the
			// scores 10; per bin 4.
			n := strings.Count(strings.ReplaceAll(line, `\|`, ""), "|") - 1
			if n != 14 && n != 10 && n != 4 && n != 6 {
				t.Errorf("a row with %d cells: %q", n, line)
			}
		}
	}
	text := renderMismatch(t, "text", m)
	if strings.ContainsAny(text, "\x1b\u202e") {
		t.Errorf("the text holds a raw escape or direction override")
	}
}

// readable is a rendered document as a reader sees it: HTML's entities
// and Markdown's backslash escapes undone.
func readable(format, out string) string {
	switch format {
	case "html":
		return html.UnescapeString(out)
	case "markdown":
		return strings.ReplaceAll(out, `\`, "")
	}
	return out
}

// checkSVG asserts the page has n charts, each well-formed XML.
func checkSVG(t *testing.T, page string, n int) {
	t.Helper()
	if got := strings.Count(page, "<svg "); got != n {
		t.Errorf("%d charts, want %d", got, n)
	}
	for rest := page; strings.Contains(rest, "<svg "); {
		start := strings.Index(rest, "<svg ")
		end := strings.Index(rest, "</svg>") + len("</svg>")
		d := xml.NewDecoder(strings.NewReader(rest[start:end]))
		d.Strict = true
		d.Entity = xml.HTMLEntity
		for {
			_, err := d.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("a chart is not well-formed: %v\n%s", err, rest[start:end])
			}
		}
		rest = rest[end:]
	}
}

// The mix chart shades exactly the gap bin, and draws no benchmark bar
// there.
func TestMismatchChartShadesGap(t *testing.T) {
	t.Parallel()
	c := mixChart(mismatchFixture())
	shades, benchBars := 0, 0
	for _, mk := range c.Marks {
		if mk.Class == "gap-shade" {
			shades++
			if !strings.HasPrefix(mk.Tip, "hard: UNMEASURABLE") {
				t.Errorf("the shade's tip is %q", mk.Tip)
			}
		}
		if mk.Class == "hist bench" && mk.Tip != "" {
			benchBars++
		}
	}
	if shades != 1 || benchBars != 2 {
		t.Errorf("%d shaded bins and %d benchmark bars, want 1 and 2", shades, benchBars)
	}
}

func fittedFixture() *difficulty.Fitted {
	ci := func(lo, hi float64) stats.Interval { return stats.Interval{Lo: lo, Hi: hi} }
	f := &difficulty.Fitted{
		Scale:   difficulty.Scale{Source: difficulty.SourceTag, Tag: "tier", Model: "rasch"},
		Sources: []string{"run-1"},
		Fit:     &irt.Fit{Model: irt.Rasch, LogLik: -123.4567, Iterations: 12, Converged: true, MaxChange: 1e-7, Points: 21, PriorSD: 2},
		Cases: []difficulty.CaseDifficulty{{ID: hostileLabel, B: 1.5, SE: 0.9, A: 1, Right: 0, Trials: 2, Extreme: true, Tag: "2"},
			{ID: "c2", B: 0.2, SE: 0.5, A: 1, Right: 1, Trials: 2, Tag: "1"}, {ID: "c3", B: -1.1, SE: 0.6, A: 1, Right: 2, Trials: 2, Tag: "0"}},
		Targets: []difficulty.Ability{{Target: hostileLabel, Theta: 0.5, SE: 0.3, Lo: -0.1, Hi: 1.1, Right: 2, Trials: 3},
			{Target: "b", Theta: -0.5, SE: 0.3, Lo: -1.1, Hi: 0.1, Right: 1, Trials: 3}},
		SeparateSE: 0.36, Separates: [2]float64{-1.5, 1.2}, SeparatesFound: true,
		Tiers: []difficulty.Tier{
			{Label: "0", Value: 0, Cases: 2, MeanB: -1.1, Rates: []difficulty.Rate{{Target: hostileLabel, Passed: 2, N: 2, Rate: 1, CI: ci(0.34, 1)}, {Target: "b", Passed: 1, N: 2, Rate: 0.5, CI: ci(0.09, 0.91)}}},
			{Label: "1", Value: 1, Cases: 2, MeanB: 0.2, Rates: []difficulty.Rate{{Target: hostileLabel, Passed: 0, N: 2, Rate: 0, CI: ci(0, 0.66)}, {Target: "b", Passed: 0, N: 2, Rate: 0, CI: ci(0, 0.66)}}},
		},
	}
	for i := -8; i <= 8; i++ {
		th := float64(i) / 2
		info := 4 * math.Exp(-th*th/2)
		f.Curve = append(f.Curve, irt.InfoPoint{Theta: th, Info: info, SE: 1 / math.Sqrt(info)})
	}
	return f
}

func renderFitted(t *testing.T, format string, f *difficulty.Fitted) string {
	t.Helper()
	return renderDoc(t, NewRegistry().Difficulty, format, f)
}

// The difficulty report in every format: abilities with intervals, where
// the set separates targets, the convergence report, the tiers and the
// leads (each tier's difference and contribution, adding up to the
// overall difference), hostile names escaped.
func TestDifficultyFormats(t *testing.T) {
	t.Parallel()
	f := fittedFixture()
	for _, format := range []string{"text", "markdown", "html"} {
		raw := renderFitted(t, format, f)
		out := readable(format, raw)
		plus := "+"
		for _, want := range []string{"converged after 12 EM iterations", "−123.457", "[−0.10, 1.10]", "between θ = −1.50 and 1.20",
			"Where the leads come from", plus + "50.0 (" + plus + "25.0)", "0.0 (0.0)", plus + "25.0", "1.50*"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s lacks %q:\n%s", format, want, out)
			}
		}
		if format != "text" && strings.Contains(strings.ToLower(raw), "<script") {
			t.Errorf("%s holds the hostile name unescaped", format)
		}
	}
	checkSVG(t, renderFitted(t, "html", f), 3)
	// JSON is the result itself.
	var back difficulty.Fitted
	if err := json.Unmarshal([]byte(renderFitted(t, "json", f)), &back); err != nil || back.Targets[0].Target != hostileLabel || back.Fit.LogLik != f.Fit.LogLik {
		t.Errorf("json: %v %+v", err, back.Targets)
	}
}

// Tiers alone (one target, no fit) render without a fit's sections.
func TestDifficultyTiersAlone(t *testing.T) {
	t.Parallel()
	f := fittedFixture()
	f.Fit, f.Cases, f.Targets, f.Curve, f.SeparatesFound = nil, nil, nil, nil, false
	f.Tiers[0].Rates, f.Tiers[1].Rates = f.Tiers[0].Rates[1:], f.Tiers[1].Rates[1:]
	for _, format := range []string{"text", "markdown", "html"} {
		out := readable(format, renderFitted(t, format, f))
		if !strings.Contains(out, `the tiers of "tier" (no fit)`) || strings.Contains(out, "Targets on the ability axis") || strings.Contains(out, "Where the leads") {
			t.Errorf("%s:\n%s", format, out)
		}
	}
	checkSVG(t, renderFitted(t, "html", f), 1)
}

// FuzzMismatchAndDifficultyPages renders both documents with arbitrary
// outside text in every place it reaches (target names, bin and tier
// labels, case IDs, the rubric's reasons, a side's name): every format
// renders, the pages hold no element the text did not come from (no
// script), and every chart stays well-formed SVG.
func FuzzMismatchAndDifficultyPages(f *testing.F) {
	f.Add(hostileLabel, "hard", "why <b>", "run-1")
	f.Add("", "", "", "")
	f.Add("]]><svg onload=x>", "\x00\u2028", "&amp;", "</title><script>")
	f.Fuzz(func(t *testing.T, name, label, reason, side string) {
		m := mismatchFixture()
		m.Scores[1].Target, m.Pairs[0].B, m.Bins[2].Label = name, name, label
		m.Rubric.Axes[0].Reasons = []string{reason}
		m.Workload.Name = side
		fx := fittedFixture()
		fx.Targets[1].Target, fx.Tiers[0].Rates[1].Target, fx.Tiers[1].Label, fx.Cases[1].ID = name, name, label, reason
		fx.Sources = []string{side}
		for _, format := range []string{"text", "markdown", "json", "html"} {
			for _, out := range []string{renderMismatch(t, format, m), renderFitted(t, format, fx)} {
				if format != "html" {
					continue
				}
				if strings.Contains(strings.ToLower(out), "<script") || strings.Contains(out, "<b>") {
					t.Fatalf("outside text reached the page as markup")
				}
				for rest := out; strings.Contains(rest, "<svg "); {
					start := strings.Index(rest, "<svg ")
					end := strings.Index(rest, "</svg>") + len("</svg>")
					d := xml.NewDecoder(strings.NewReader(rest[start:end]))
					d.Strict = true
					d.Entity = xml.HTMLEntity
					for {
						_, err := d.Token()
						if err == io.EOF {
							break
						}
						if err != nil {
							t.Fatalf("a chart is not well-formed: %v", err)
						}
					}
					rest = rest[end:]
				}
			}
		}
	})
}

// The note on extreme cases (difficulty finite only through the prior)
// appears in every format when a case shown is extreme, and in none when
// no case is.
func TestDifficultyExtremeNoteOnlyWhenExtreme(t *testing.T) {
	t.Parallel()
	for _, extreme := range []bool{true, false} {
		f := fittedFixture()
		f.Cases[0].Extreme = extreme
		for _, format := range []string{"text", "markdown", "html"} {
			out := readable(format, renderFitted(t, format, f))
			if got := strings.Contains(out, "finite only through the prior"); got != extreme {
				t.Errorf("%s with an extreme case %v: the note shown %v", format, extreme, got)
			}
		}
	}
}

// The intervals are labelled at the level they were computed at
// (assay difficulty --level 0.9), not a fixed 95%.
func TestDifficultyLevelLabelled(t *testing.T) {
	f := &difficulty.Fitted{Scale: difficulty.Scale{Source: difficulty.SourceTag, Tag: "tier"}, Level: 0.9,
		Tiers: []difficulty.Tier{{Label: "easy", Value: 0, Cases: 2, Rates: []difficulty.Rate{{Target: "a", Passed: 1, N: 2, Rate: 0.5, CI: stats.Wilson(1, 2, 0.1)}}}}}
	if v := newDifficultyView(f); v.Level != "90%" {
		t.Errorf("level %q, want 90%%", v.Level)
	}
	f.Level = 0
	if v := newDifficultyView(f); v.Level != "95%" {
		t.Errorf("level %q without one, want the default 95%%", v.Level)
	}
}
