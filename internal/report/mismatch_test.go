package report

import (
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/difficulty"
	"github.com/assay-eval/assay/internal/stats"
)

func TestVerdictChangesReads(t *testing.T) {
	t.Parallel()
	for n, want := range map[int]string{0: "no pair's verdict changes", 1: "1 pair's verdict changes", 2: "2 pairs' verdicts change", 1200: "1,200 pairs' verdicts change"} {
		if got := verdictChanges(n); got != want {
			t.Errorf("verdictChanges(%d) = %q, want %q", n, got, want)
		}
	}
}

// comparableFixture is mismatchFixture without the gap: the whole mix is
// compared, the ranking and one verdict change.
func comparableFixture() *difficulty.Mismatch {
	m := mismatchFixture()
	m.Bins[2].Gap, m.Bins[2].Bench = false, 5
	m.UncoveredShare, m.CoveredShare, m.Comparable = 0, 1, true
	for i := range m.Scores {
		m.Scores[i].Reweighted = m.Scores[i].Covered
		m.Scores[i].Reweighted.DF = 41.26
		m.Scores[i].CoveredShare = 1
	}
	m.Scores[1].Reweighted.Rate = 0.9
	m.Pairs[0].Reweighted = difficulty.Comparison{Delta: -0.02, SE: 0.1, DF: 38.2, CI: stats.Interval{Lo: -0.22, Hi: 0.18}, P: 0.8, PAdjusted: 0.8,
		Verdict: stats.VerdictInconclusive, N: 40, Computable: true}
	m.Pairs[0].Covered, m.Pairs[0].Changed = m.Pairs[0].Reweighted, true
	m.RankingReweighted, m.RankingCovered = []string{"b", hostileLabel}, []string{"b", hostileLabel}
	m.RankingChanged, m.VerdictsChanged = true, 1
	return m
}

// When the whole mix is compared: the change said in plain words, the
// Satterthwaite df shown, no covered-only columns (they equal the
// re-weighted ones).
func TestMismatchComparableSaysWhatChanges(t *testing.T) {
	t.Parallel()
	for _, format := range []string{"text", "markdown", "html"} {
		out := readable(format, renderMismatch(t, format, comparableFixture()))
		for _, want := range []string{"THE RANKING CHANGES under the workload's mix; 1 pair's verdict changes", "41.3", "t interval on Satterthwaite"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s lacks %q:\n%s", format, want, out)
			}
		}
		for _, bad := range []string{"covered (", "cannot be compared", "a normal"} {
			if strings.Contains(out, bad) {
				t.Errorf("%s says %q:\n%s", format, bad, out)
			}
		}
	}
}

// Text tables leave no spaces at the ends of lines.
func TestDifficultyMismatchTextNoTrailingSpaces(t *testing.T) {
	t.Parallel()
	for name, out := range map[string]string{
		"mismatch with a gap": renderMismatch(t, "text", mismatchFixture()),
		"mismatch":            renderMismatch(t, "text", comparableFixture()),
		"difficulty":          renderFitted(t, "text", fittedFixture()),
	} {
		for i, line := range strings.Split(out, "\n") {
			if strings.HasSuffix(line, " ") || strings.HasSuffix(line, "\t") {
				t.Errorf("%s: line %d ends with a space: %q", name, i+1, line)
			}
		}
	}
}

// The scores chart of a mix with a gap draws each covered score, labelled
// "covered", and no long reason that would run over the names.
func TestMismatchScoresChartDrawsCovered(t *testing.T) {
	t.Parallel()
	page := renderMismatch(t, "html", mismatchFixture())
	i := strings.Index(page, "chart-scores")
	if i < 0 {
		t.Fatal("no scores chart")
	}
	svg := page[i:]
	svg = svg[:strings.Index(svg, "</svg>")]
	if n := strings.Count(svg, ">covered</text>"); n != 2 {
		t.Errorf("%d covered labels, want one per target (2):\n%s", n, svg)
	}
	if strings.Contains(svg, ">re-weighted: cannot be computed") || strings.Contains(svg, "where the benchmark has no scored case (not extrapolated)</text>") {
		t.Errorf("the chart writes the reason as a label:\n%s", svg)
	}
	if !strings.Contains(svg, "beside covered (filled: the workload&#39;s mix over the 60.0%") {
		t.Errorf("the chart's title does not say the filled marks are covered scores:\n%s", svg)
	}
}

// In the page, a pair's comparison that cannot be computed is one short
// cell across its four columns (not a long reason in each row).
func TestMismatchPagePairsSpanGap(t *testing.T) {
	t.Parallel()
	page := renderMismatch(t, "html", mismatchFixture())
	if !strings.Contains(page, `<td colspan="4">cannot be computed: gap at bin hard</td>`) {
		t.Errorf("no spanning cell for the re-weighted comparison:\n%s", page)
	}
}
