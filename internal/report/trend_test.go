package report

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/trend"
)

// trendFixture is a computed trend: model "stable" (80% each week) and a
// hostile model name (an HTML tag, a pipe, a terminal escape, a
// right-to-left override) whose fourth week drops from 80% to 50%, and
// whose third week has too few traces to be tested.
const hostileModel = "<script>alert(1)</script>|x\x1b[31m\u202e"

func trendFixture(t *testing.T) *trend.Report {
	t.Helper()
	monday := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	var obs []trend.Observation
	add := func(model string, week, n int, rate float64) {
		pass := int(rate*float64(n) + 0.5)
		for i := range n {
			obs = append(obs, trend.Observation{Model: model, Sample: "S", Stratum: "all", Weight: 2,
				Time: monday.AddDate(0, 0, 7*week).Add(time.Duration(i) * time.Minute), Pass: i < pass})
		}
	}
	for w := range 4 {
		add("stable", w, 60, 0.8)
	}
	add(hostileModel, 0, 60, 0.8)
	add(hostileModel, 1, 60, 0.8)
	add(hostileModel, 2, 4, 0.5)
	add(hostileModel, 3, 60, 0.5)
	rep, err := trend.Compute(obs, trend.Options{Level: 0.95}, &trend.Report{Runs: []string{"r1"}, Scorers: []string{"judge"}, Spec: "support"})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Drops != 1 {
		t.Fatalf("fixture: %d drops, want 1", rep.Drops)
	}
	return rep
}

func renderTrend(t *testing.T, format string, rep *trend.Report) string {
	t.Helper()
	return renderDoc(t, NewRegistry().Trend, format, rep)
}

// The text table marks the flagged week (and only it) with ▼, shows the
// untested week's reason, and shows a hostile model name escaped.
func TestTrendText(t *testing.T) {
	t.Parallel()
	out := renderTrend(t, "text", trendFixture(t))
	t.Log("\n" + out)
	if strings.Count(out, "▼ drop") != 1 || !strings.Contains(out, "▼ 1 drop flagged:") || !strings.Contains(out, "(5 tests Holm-adjusted, family-wise 5%)") {
		t.Errorf("want one row marked ▼ drop and the verdict naming it:\n%s", out)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "▼ drop") && (!strings.Contains(line, "2026-W48") || !strings.Contains(line, "50.0%") || !strings.Contains(line, "−30.0")) {
			t.Errorf("the marked row is not the fourth week's 30-point drop: %q", line)
		}
	}
	if !strings.Contains(out, "4 traces, fewer than the 10 a window needs to be tested") {
		t.Errorf("the untested week's reason is missing:\n%s", out)
	}
	if strings.ContainsAny(out, "\x1b\u202e") || !strings.Contains(out, `x\x1b[31m\u202e`) {
		t.Errorf("the model name's control characters are not escaped:\n%q", out)
	}
}

func TestTrendMarkdown(t *testing.T) {
	t.Parallel()
	out := renderTrend(t, "markdown", trendFixture(t))
	if strings.Contains(out, "<script>") || !strings.Contains(out, `&lt;script&gt;alert\(1\)&lt;/script&gt;\|x`) {
		t.Errorf("the model name is not escaped for Markdown:\n%s", out)
	}
	if strings.Count(out, "**▼ drop**") != 1 {
		t.Errorf("want one row marked drop:\n%s", out)
	}
	// Every table row has the header's 10 cells (an unescaped pipe in a
	// name would add one).
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "| ") {
			if n := strings.Count(strings.ReplaceAll(line, `\|`, ""), "|"); n != 11 {
				t.Errorf("row with %d pipes, want 11: %q", n, line)
			}
		}
	}
}

// The page is well-formed XML apart from its doctype, has no script and a
// chart per model, the drop drawn as a marked point, every name escaped.
func TestTrendPage(t *testing.T) {
	t.Parallel()
	out := renderTrend(t, "html", trendFixture(t))
	if strings.Contains(strings.ToLower(out), "<script") {
		t.Errorf("the page holds a script element")
	}
	if !strings.Contains(out, "&lt;script&gt;alert(1)&lt;/script&gt;|x\\x1b[31m\\u202e") {
		t.Errorf("the model name is not shown escaped")
	}
	if strings.Count(out, `class="pt drop"`) != 1 || strings.Count(out, `<tr class="drop">`) != 1 || !strings.Contains(out, `data-drop="true"`) {
		t.Errorf("the drop is not marked once in the chart and once in the table")
	}
	// One chart per model (2), each well-formed SVG (XML): bands and lines
	// are paths of numbers, names escaped.
	checkSVG(t, out, 2)
}

// JSON is the report itself: it reads back equal.
func TestTrendJSON(t *testing.T) {
	t.Parallel()
	rep := trendFixture(t)
	out := renderTrend(t, "json", rep)
	var back trend.Report
	if err := json.Unmarshal([]byte(out), &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&back, rep) {
		t.Errorf("JSON does not read back as the report:\n%s", out)
	}
	for _, key := range []string{`"p_adjusted"`, `"se0"`, `"drop": true`, `"untested"`, `"iso_weeks": true`} {
		if !strings.Contains(out, key) {
			t.Errorf("JSON lacks %s", key)
		}
	}
}
