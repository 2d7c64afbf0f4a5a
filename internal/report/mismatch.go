package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/assay-eval/assay/internal/difficulty"
	"github.com/assay-eval/assay/internal/stats"
	"github.com/assay-eval/assay/internal/units"
)

// MismatchFormats are `assay mismatch`'s formats.
func MismatchFormats() []Format[*difficulty.Mismatch] {
	return []Format[*difficulty.Mismatch]{
		{Name: "text", Aliases: []string{""}, Render: MismatchText},
		{Name: "markdown", Aliases: []string{"md"}, Render: MismatchMarkdown},
		JSONFormat[*difficulty.Mismatch](),
		{Name: "html", Render: MismatchPage},
	}
}

// unmeasurable marks a bin the workload needs and the benchmark lacks, in
// every format.
const unmeasurable = "UNMEASURABLE"

// mismatchView is the comparison with every number formatted and every
// outside text (run IDs, paths, target names, tag values, the rubric's
// reasons) as given: each format escapes it where it lands.
type mismatchView struct {
	Title      string
	Scale      string
	Sides      [][]string // header row then one per side
	Bins       [][]string // bin, bench n, bench share, work n, work share, mark
	BinGap     []bool
	Distances  [][]string // name, value, CI
	Level      string
	Coverage   []string
	ScoresHead []string
	Scores     [][]string // target, raw, raw CI, reweighted, CI, SE, df, Kish n[, covered, covered CI]
	ScoresNote string
	// WhyNot states once why scores or pairs cannot be computed.
	WhyNot     []string
	PairsHead  []string
	PerBinHead []string
	PerBin     [][]string // per target: rates per bin
	Pairs      [][]string
	PairCells  [][]spanCell // Pairs for HTML (MismatchPage sets it): a comparison that cannot be computed is one cell over its four columns
	PairChange []bool
	Ranking    []string
	Rubric     *rubricView
	Warnings   []string
	Method     string
	Charts     []chart
}

// spanCell is a table cell spanning Span columns.
type spanCell struct {
	Text string
	Span int
}

// spanCells joins each "cannot be computed" cell with the empty cells
// that follow it.
func spanCells(row []string) []spanCell {
	var out []spanCell
	for i := 0; i < len(row); i++ {
		c := spanCell{Text: row[i], Span: 1}
		if strings.HasPrefix(row[i], "cannot be computed") {
			for i+1 < len(row)-1 && row[i+1] == "" {
				c.Span++
				i++
			}
		}
		out = append(out, c)
	}
	return out
}

type rubricView struct {
	Axes    []rubricAxisView
	Verdict string
	Kind    string
	Rule    string
}

type rubricAxisView struct {
	Axis, Rating string
	Reasons      []string
}

func sideKind(kind string) string {
	switch kind {
	case difficulty.KindRun:
		return "run"
	case difficulty.KindBaseline:
		return "baseline file"
	case difficulty.KindDataset:
		return "dataset file"
	}
	return kind
}

// binLabel is a bin's name. // A value's bin (Lo == Hi) is named by its label, else its value; an
// interval's by its ends, two decimals.
func binLabel(b difficulty.Bin) string {
	if b.Lo == b.Hi {
		if b.Label != "" {
			return b.Label
		}
		return units.Plain(b.Lo)
	}
	end := ")"
	if strings.HasSuffix(b.Label, "]") {
		end = "]"
	}
	return "[" + axisNum(b.Lo) + ", " + axisNum(b.Hi) + end
}

func estimateCells(e difficulty.Estimate, gaps map[string]bool) (rate, ci string) {
	if !e.Computable {
		return notComputableCell(e.Missing, gaps), units.Missing
	}
	return units.Pct(e.Rate), units.PctCI([2]float64{e.CI.Lo, e.CI.Hi})
}

// notComputableCell is a short table cell for an estimate that cannot be
// computed: the bins it lacks (gaps of the benchmark, or bins where the
// target has no scored case); the reason in full is stated once under the
// table.
func notComputableCell(missing []string, gaps map[string]bool) string {
	if len(missing) == 0 {
		return "cannot be computed"
	}
	what := "no scored case in"
	if allGaps(missing, gaps) {
		what = "gap at"
	}
	return "cannot be computed: " + what + " " + pluralWord(len(missing), "bin") + " " + strings.Join(missing, ", ")
}

// allGaps reports whether every one of the missing bins is a gap of the
// benchmark (false when none is missing).
func allGaps(missing []string, gaps map[string]bool) bool {
	for _, l := range missing {
		if !gaps[l] {
			return false
		}
	}
	return len(missing) > 0
}

func pluralWord(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// verdictChanges says how many pairs' verdicts change.
func verdictChanges(n int) string {
	switch n {
	case 0:
		return "no pair's verdict changes"
	case 1:
		return "1 pair's verdict changes"
	}
	return units.Count(n) + " pairs' verdicts change"
}

// dist3 formats a distance with three decimals.
func dist3(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return units.Missing
	}
	return strconv.FormatFloat(x, 'f', 3, 64)
}

func verdictWord(v string) string {
	switch v {
	case stats.VerdictABetter:
		return "A better"
	case stats.VerdictBBetter:
		return "B better"
	case "":
		return units.Missing
	}
	return v
}

func comparisonCells(c difficulty.Comparison, gaps map[string]bool) []string {
	if !c.Computable {
		return []string{notComputableCell(c.Missing, gaps), "", "", ""}
	}
	return []string{units.Delta(c.Delta), units.DeltaCI([2]float64{c.CI.Lo, c.CI.Hi}), units.PValueCell(c.PAdjusted), verdictWord(c.Verdict)}
}

// dfCell is a Satterthwaite df (0: no variance, the normal's).
func dfCell(df float64) string {
	if df == 0 {
		return "∞"
	}
	return units.Num(math.Round(df*10) / 10)
}

func newMismatchView(m *difficulty.Mismatch) mismatchView {
	v := mismatchView{Warnings: m.Warnings}
	level := 0.95
	if m.Alpha > 0 && m.Alpha < 1 {
		level = 1 - m.Alpha
	}
	v.Level = units.Plain(units.RoundSig(100*level)) + "%"
	v.Title = fmt.Sprintf("assay mismatch: %s against %s", m.Benchmark.Name, m.Workload.Name)
	switch {
	case m.Scale.Source == difficulty.SourceTag && len(m.Scale.Levels) > 0:
		v.Scale = fmt.Sprintf("difficulty from the tag %s, levels %s (easiest first)", strconv.Quote(m.Scale.Tag), strings.Join(m.Scale.Levels, ", "))
	case m.Scale.Source == difficulty.SourceTag:
		v.Scale = fmt.Sprintf("difficulty from the tag %s", strconv.Quote(m.Scale.Tag))
	default:
		v.Scale = fmt.Sprintf("difficulty fitted from the targets' results (%s), each case by its ID", m.Scale.Model)
	}
	v.Sides = [][]string{{"", "kind", "cases", "unknown", "targets", "min", "median", "mean", "max"}}
	for _, s := range []struct {
		role string
		s    difficulty.SetSummary
	}{{"benchmark", m.Benchmark}, {"workload", m.Workload}} {
		v.Sides = append(v.Sides, []string{s.role + " " + s.s.Name, sideKind(s.s.Kind), units.Count(s.s.Cases), units.Count(s.s.Unknown), units.Count(s.s.Targets),
			axisNum(s.s.Min), axisNum(s.s.Median), axisNum(s.s.Mean), axisNum(s.s.Max)})
	}
	for _, b := range m.Bins {
		mark := ""
		if b.Gap {
			mark = unmeasurable + ": the workload has cases here, the benchmark none"
		}
		v.Bins = append(v.Bins, []string{binLabel(b), units.Count(b.Bench), units.Pct(b.BenchShare), units.Count(b.Work), units.Pct(b.WorkShare), mark})
		v.BinGap = append(v.BinGap, b.Gap)
	}
	for _, d := range m.Distances {
		name := map[string]string{difficulty.DistanceW1: "Wasserstein-1 (mean shift of the axis)", difficulty.DistanceKS: "Kolmogorov–Smirnov (largest CDF gap)", difficulty.DistanceTV: "total variation over the bins"}[d.Name]
		if name == "" {
			name = d.Name
		}
		v.Distances = append(v.Distances, []string{name, dist3(d.Value), "[" + dist3(d.CI.Lo) + ", " + dist3(d.CI.Hi) + "]", units.Count(d.Replicates), units.PValueCell(d.P)})
	}
	if g := m.LargestGap; g.Work > 0 {
		v.Coverage = append(v.Coverage, fmt.Sprintf("largest gap: [%s, %s] (width %s) holds %s (%s of the workload) and no benchmark case",
			axisNum(g.Lo), axisNum(g.Hi), axisNum(g.Width), plural(g.Work, "workload case"), units.Pct(g.WorkShare)))
	} else {
		v.Coverage = append(v.Coverage, "no gap: every stretch of the workload's range holds benchmark cases")
	}
	v.Coverage = append(v.Coverage, fmt.Sprintf("%s of the workload's mix falls in bins with no benchmark case (unmeasurable)", units.Pct(m.UncoveredShare)))
	gaps := map[string]bool{}
	for _, b := range m.Bins {
		if b.Gap {
			gaps[b.Label] = true
		}
	}
	// The covered-only columns appear when a gap (or a target's missing
	// bin) stops the whole-mix comparison.
	showCovered := !m.Comparable && len(m.RankingCovered) > 0
	coveredWhat := "covered (" + units.Pct(m.CoveredShare) + " of the mix)"
	v.ScoresHead = []string{"target", "raw", v.Level + " CI", "re-weighted", v.Level + " CI", "SE (pts)", "df", "n_eff"}
	if showCovered {
		v.ScoresHead = append(v.ScoresHead, coveredWhat, v.Level+" CI")
	}
	whyNot := func(why string, missing []string) {
		if why == "" {
			return
		}
		if allGaps(missing, gaps) {
			share := 0.0
			var labels []string
			for _, b := range m.Bins {
				if b.Gap {
					share += b.WorkShare
					labels = append(labels, b.Label)
				}
			}
			why = fmt.Sprintf("Re-weighted scores and comparisons cannot be computed: the workload puts %s of its mix in %s %s, where the benchmark has no case (%s; never extrapolated)",
				units.Pct(share), pluralWord(len(labels), "bin"), strings.Join(labels, ", "), unmeasurable)
			if showCovered {
				why += fmt.Sprintf("; the covered columns weigh the workload's mix over the other %s, renormalised", units.Pct(m.CoveredShare))
			}
		} else {
			why = sentence(why)
		}
		if !slices.Contains(v.WhyNot, why) {
			v.WhyNot = append(v.WhyNot, why)
		}
	}
	for _, s := range m.Scores {
		raw, rawCI := estimateCells(s.Raw, gaps)
		rw, rwCI := estimateCells(s.Reweighted, gaps)
		se, df, kish := units.Missing, units.Missing, units.Missing
		if e := s.Reweighted; e.Computable {
			se, kish = strings.TrimPrefix(units.Delta(e.SE), "+"), units.Num(math.Round(e.Kish))
			df = dfCell(e.DF)
		}
		row := []string{s.Target, raw, rawCI, rw, rwCI, se, df, kish}
		if showCovered {
			cov, covCI := estimateCells(s.Covered, gaps)
			row = append(row, cov, covCI)
		}
		for _, e := range []difficulty.Estimate{s.Raw, s.Reweighted, s.Covered} {
			if !e.Computable {
				whyNot(e.Why, e.Missing)
			}
		}
		v.Scores = append(v.Scores, row)
	}
	if len(m.Scores) == 0 {
		v.ScoresNote = "The benchmark side has no results (a dataset file): distances and gaps only, no scores to re-weight."
	}
	if len(m.Scores) > 0 {
		for _, b := range m.Bins {
			v.PerBinHead = append(v.PerBinHead, binLabel(b))
		}
		for _, s := range m.Scores {
			row := []string{s.Target}
			for i := range m.Bins {
				cell := units.Missing
				if i < len(s.PerBin) && s.PerBin[i].N > 0 {
					r := s.PerBin[i]
					cell = units.Pct(r.Rate) + " " + units.PctCI([2]float64{r.CI.Lo, r.CI.Hi})
				}
				row = append(row, cell)
			}
			v.PerBin = append(v.PerBin, row)
		}
	}
	v.PairsHead = []string{"pair", "raw Δ", "CI", "p", "verdict", "re-weighted Δ", "CI", "p", "verdict"}
	if showCovered {
		v.PairsHead = append(v.PairsHead, "covered Δ", "CI", "p", "verdict")
	}
	v.PairsHead = append(v.PairsHead, "")
	for _, p := range m.Pairs {
		row := append([]string{p.A + " vs " + p.B}, comparisonCells(p.Raw, gaps)...)
		row = append(row, comparisonCells(p.Reweighted, gaps)...)
		for _, c := range []difficulty.Comparison{p.Raw, p.Reweighted, p.Covered} {
			if !c.Computable {
				whyNot(c.Why, c.Missing)
			}
		}
		mark := ""
		if p.Changed {
			mark = "verdict changes"
		}
		if showCovered {
			row = append(row, comparisonCells(p.Covered, gaps)...)
			if p.CoveredChanged {
				mark = "covered verdict changes"
			}
		}
		v.Pairs = append(v.Pairs, append(row, mark))
		v.PairChange = append(v.PairChange, p.Changed || (showCovered && p.CoveredChanged))
	}
	if len(m.RankingRaw) > 0 {
		v.Ranking = append(v.Ranking, "raw: "+strings.Join(m.RankingRaw, " > "))
		if m.Comparable {
			v.Ranking = append(v.Ranking, "re-weighted: "+strings.Join(m.RankingReweighted, " > "))
			changed := "the ranking does not change"
			if m.RankingChanged {
				changed = "THE RANKING CHANGES under the workload's mix"
			}
			v.Ranking = append(v.Ranking, fmt.Sprintf("%s; %s", changed, verdictChanges(m.VerdictsChanged)))
		} else {
			v.Ranking = append(v.Ranking, fmt.Sprintf("re-weighted: cannot be compared on the whole mix (%s of it falls in bins with no benchmark case)", units.Pct(m.UncoveredShare)))
			if len(m.RankingCovered) > 0 {
				cover := "on the covered " + units.Pct(m.CoveredShare) + " of the workload's mix"
				v.Ranking = append(v.Ranking, cover+": "+strings.Join(m.RankingCovered, " > "))
				changed := "the ranking does not change"
				if m.RankingCoveredChanged {
					changed = "THE RANKING CHANGES"
				}
				v.Ranking = append(v.Ranking, fmt.Sprintf("%s: %s against raw; %s", cover, changed, verdictChanges(m.VerdictsChangedCovered)))
			}
		}
	}
	if r := m.Rubric; r != nil {
		rv := &rubricView{Rule: r.Rule, Kind: r.Verdict}
		switch r.Verdict {
		case "shortlist_only":
			rv.Verdict = "shortlist only: the benchmark may shortlist but not select"
		case "may_select":
			rv.Verdict = "may select: no axis rated high"
		case "not_established":
			rv.Verdict = "not established: no axis rated high, but some are unrated"
		default:
			rv.Verdict = r.Verdict
		}
		for _, a := range r.Axes {
			rv.Axes = append(rv.Axes, rubricAxisView{Axis: difficulty.AxisTitle(a.Axis), Rating: a.Rating, Reasons: a.Reasons})
		}
		v.Rubric = rv
	}
	v.Method = fmt.Sprintf("Re-weighted: Σ W_h p̂_h, W_h the workload's share of bin h and p̂_h the target's rate on the benchmark's cases in it (case means over epochs), "+
		"SE from the stratified variance, a %s t interval on Satterthwaite's degrees of freedom (df), n_eff Kish's on the per-case weights. A bin the workload needs and the benchmark lacks is %s: the re-weighted score cannot be computed there (never extrapolated); "+
		"covered: the same over the measurable bins only, renormalised. Pairs: A − B on the cases both have (paired differences of case means, post-stratified the same way, a t test on Satterthwaite's df), Holm-adjusted over the pairs, raw, under the workload's weights and over the covered bins; "+
		"verdicts at α %s. Distances: %s bootstrap replicates, each side resampled, percentile intervals (seed %d); p: a permutation test of both sets drawn from one distribution. docs/difficulty.md explains every number",
		v.Level, unmeasurable, units.Plain(units.RoundSig(m.Alpha)), units.Count(m.Replicates), m.Seed)
	return v
}

// MismatchText renders the comparison as plain text.
func MismatchText(w io.Writer, m *difficulty.Mismatch) error {
	v := newMismatchView(m)
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n%s\n", oneLine(v.Title), oneLine(v.Scale))
	for _, wn := range v.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", oneLine(wn))
	}
	table := func(title string, head []string, rows [][]string) {
		if len(rows) == 0 {
			return
		}
		if title != "" {
			fmt.Fprintf(&b, "\n%s\n", title)
		}
		textTable(&b, head, rows)
	}
	table("", nil, v.Sides)
	table("Both sets on one axis", []string{"bin", "benchmark", "share", "workload", "share", ""}, v.Bins)
	b.WriteString("\nCoverage\n")
	for _, c := range v.Coverage {
		fmt.Fprintf(&b, "  %s\n", c)
	}
	table("Distances ("+v.Level+" bootstrap intervals, permutation p)", distanceHead, v.Distances)
	table("Scores: raw (the benchmark's mix) and re-weighted (the workload's mix)", v.ScoresHead, v.Scores)
	for _, why := range v.WhyNot {
		fmt.Fprintf(&b, "%s.\n", oneLine(why))
	}
	if v.ScoresNote != "" {
		fmt.Fprintf(&b, "\n%s\n", v.ScoresNote)
	}
	table("Pass rate per bin on the benchmark ("+v.Level+" intervals)", append([]string{"target"}, v.PerBinHead...), v.PerBin)
	table("Pairs: A − B, raw and re-weighted (Holm-adjusted p)", v.PairsHead, v.Pairs)
	if len(v.Ranking) > 0 {
		b.WriteString("\nRanking\n")
		for _, r := range v.Ranking {
			fmt.Fprintf(&b, "  %s\n", oneLine(r))
		}
	}
	if r := v.Rubric; r != nil {
		b.WriteString("\nDivergence rubric\n")
		for _, a := range r.Axes {
			fmt.Fprintf(&b, "  %s: %s\n", a.Axis, a.Rating)
			for _, why := range a.Reasons {
				fmt.Fprintf(&b, "    - %s\n", oneLine(why))
			}
		}
		fmt.Fprintf(&b, "verdict: %s\nrule: %s\n", oneLine(r.Verdict), oneLine(r.Rule))
	}
	fmt.Fprintf(&b, "\n%s.\n", v.Method)
	_, err := io.WriteString(w, trimLines(b.String()))
	return err
}

// distanceHead heads the distances' table.
var distanceHead = []string{"distance", "value", "interval", "replicates", "p"}

// trimLines drops the spaces a table's padding leaves at the ends of lines.
func trimLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}

// mdCell is a table cell for Markdown: a number, a percentage or an
// interval assay wrote as is; anything else escaped by mdText.
func mdCell(s string) string {
	if s != "" && !strings.ContainsFunc(s, func(r rune) bool { return !strings.ContainsRune("0123456789.,%−+[] —()", r) }) {
		return s // inside a table cell a leading sign opens no list
	}
	return mdText(s)
}

// MismatchMarkdown renders the comparison as Markdown.
func MismatchMarkdown(w io.Writer, m *difficulty.Mismatch) error {
	v := newMismatchView(m)
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n%s.\n\n", mdText(v.Title), mdText(sentence(v.Scale)))
	for _, wn := range v.Warnings {
		fmt.Fprintf(&b, "> warning: %s\n\n", mdText(wn))
	}
	table := func(title string, head []string, rows [][]string) {
		if len(rows) == 0 {
			return
		}
		if title != "" {
			fmt.Fprintf(&b, "## %s\n\n", mdText(title))
		}
		mdTable(&b, head, rows, mdCell)
	}
	table("", v.Sides[0], v.Sides[1:])
	table("Both sets on one axis", []string{"bin", "benchmark", "share", "workload", "share", ""}, v.Bins)
	b.WriteString("## Coverage\n\n")
	for _, c := range v.Coverage {
		fmt.Fprintf(&b, "- %s\n", mdText(c))
	}
	b.WriteString("\n")
	table("Distances ("+v.Level+" bootstrap intervals, permutation p)", distanceHead, v.Distances)
	table("Scores: raw and re-weighted to the workload's mix", v.ScoresHead, v.Scores)
	for _, why := range v.WhyNot {
		fmt.Fprintf(&b, "%s.\n\n", mdText(why))
	}
	if v.ScoresNote != "" {
		fmt.Fprintf(&b, "%s\n\n", mdText(v.ScoresNote))
	}
	table("Pass rate per bin on the benchmark ("+v.Level+" intervals)", append([]string{"target"}, v.PerBinHead...), v.PerBin)
	table("Pairs: A − B, raw and re-weighted (Holm-adjusted p)", v.PairsHead, v.Pairs)
	if len(v.Ranking) > 0 {
		b.WriteString("## Ranking\n\n")
		for _, r := range v.Ranking {
			fmt.Fprintf(&b, "- %s\n", mdText(r))
		}
		b.WriteString("\n")
	}
	if r := v.Rubric; r != nil {
		b.WriteString("## Divergence rubric\n\n")
		for _, a := range r.Axes {
			fmt.Fprintf(&b, "- **%s: %s**\n", mdText(a.Axis), mdText(a.Rating))
			for _, why := range a.Reasons {
				fmt.Fprintf(&b, "  - %s\n", mdText(why))
			}
		}
		fmt.Fprintf(&b, "\n**Verdict: %s.** %s\n\n", mdText(r.Verdict), mdText(r.Rule))
	}
	fmt.Fprintf(&b, "%s.\n", mdText(v.Method))
	_, err := io.WriteString(w, b.String())
	return err
}

// MismatchPage renders the comparison as a self-contained HTML page (no
// scripts; a CSP forbids them): both histograms on one axis with the gaps
// shaded, the benchmark's per-bin rates per target with intervals, the
// re-weighted scores beside the raw ones, then the tables and the rubric.
// Every name and reason is escaped by html/template.
func MismatchPage(w io.Writer, m *difficulty.Mismatch) error {
	v := newMismatchView(m)
	for _, r := range v.Pairs {
		v.PairCells = append(v.PairCells, spanCells(r))
	}
	if len(m.Bins) > 0 {
		v.Charts = append(v.Charts, mixChart(m))
	}
	if len(m.Scores) > 0 {
		cats := make([]string, len(m.Bins))
		ns := make([]int, len(m.Bins))
		gaps := make([]bool, len(m.Bins))
		for i, b := range m.Bins {
			cats[i], ns[i], gaps[i] = binLabel(b), b.Bench, b.Gap
		}
		names := make([]string, len(m.Scores))
		for i, s := range m.Scores {
			names[i] = s.Target
		}
		v.Charts = append(v.Charts, ratesChart("bin-rates", "Benchmark pass rate per bin, with "+v.Level+" intervals", scaleKey(m.Scale), cats, ns, gaps, names,
			func(i int, name string) (difficulty.Rate, bool) {
				for _, s := range m.Scores {
					if s.Target == name && i < len(s.PerBin) && s.PerBin[i].N > 0 {
						return s.PerBin[i], true
					}
				}
				return difficulty.Rate{}, false
			}))
		v.Charts = append(v.Charts, scoresChart(m, v.Level))
	}
	for i := range v.Charts {
		v.Charts[i] = visibleChart(v.Charts[i])
	}
	return renderWhole(w, pageTemplates(), "mismatch-page", v, "the mismatch page")
}

// mixChart draws both sides' shares per bin on one axis, side by side,
// the bins the workload needs and the benchmark lacks shaded and marked.
func mixChart(m *difficulty.Mismatch) chart {
	nb := len(m.Bins)
	band := math.Max(40, math.Min(90, 640/math.Max(1, float64(nb))))
	left, right := 58.0, 16.0
	plotW := band * float64(nb)
	c := chart{ID: "mix", Class: "chart chart-mix", Title: "Both sets on one difficulty axis: each side's share of its cases per bin",
		Caption: "Blue: the benchmark; orange: the workload. Shaded: a bin the workload needs and the benchmark has no case in (" + unmeasurable + ").",
		W:       math.Max(420, left+plotW+right)}
	y := 16.0
	c.rect("hist bench", left, y-9, 10, 10, "")
	c.text("legend", left+14, y, "start", "benchmark "+clip(m.Benchmark.Name, 40))
	x2 := left + 24 + textWidth("benchmark "+clip(m.Benchmark.Name, 40))
	c.rect("hist work", x2, y-9, 10, 10, "")
	c.text("legend", x2+14, y, "start", "workload "+clip(m.Workload.Name, 40))
	a := plotArea{X0: left, Y0: y + 12, X1: left + plotW, Y1: y + 12 + 200}
	c.H = a.Y1 + 56
	top := 0.0
	for _, b := range m.Bins {
		top = math.Max(top, math.Max(b.BenchShare, b.WorkShare))
	}
	_, ytop, yt := niceDomain(0, math.Max(top, 0.01), 5)
	ys := scale{D0: 0, D1: ytop, R0: a.Y1, R1: a.Y0}
	for i, b := range m.Bins {
		x := a.X0 + band*float64(i)
		if b.Gap {
			c.rect("gap-shade", x, a.Y0, band, a.Y1-a.Y0, binLabel(b)+": "+unmeasurable+", the workload has cases here and the benchmark none")
			c.text("gap-label", x+band/2, a.Y0+12, "middle", "gap")
		}
	}
	c.yAxis(a, ys, yt, units.PctTick, "share of the side's cases")
	barW := (band - 10) / 2
	maxChars := fitChars(band - 4)
	for i, b := range m.Bins {
		x := a.X0 + band*float64(i) + 5
		label := binLabel(b)
		if b.Bench > 0 {
			c.rect("hist bench", x, ys.at(b.BenchShare), barW, a.Y1-ys.at(b.BenchShare), fmt.Sprintf("benchmark, %s: %s (%s)", label, plural(b.Bench, "case"), units.Pct(b.BenchShare)))
		}
		if b.Work > 0 {
			c.rect("hist work", x+barW, ys.at(b.WorkShare), barW, a.Y1-ys.at(b.WorkShare), fmt.Sprintf("workload, %s: %s (%s)", label, plural(b.Work, "case"), units.Pct(b.WorkShare)))
		}
		c.label("cat-label", a.X0+band*(float64(i)+0.5), a.Y1+16, "middle", label, maxChars)
	}
	c.line("axis", a.X0, a.Y1, a.X1, a.Y1, "")
	c.text("axis-title", (a.X0+a.X1)/2, a.Y1+36, "middle", scaleKey(m.Scale))
	return c
}

// scaleKey names the difficulty axis on a chart: the tag, else
// "difficulty".
func scaleKey(s difficulty.Scale) string {
	if s.Tag != "" {
		return s.Tag
	}
	return "difficulty"
}

// scoresChart draws each target's raw score (hollow) and re-weighted score
// (filled) with their intervals, one row per target; a re-weighted score
// that cannot be computed is said in its row.
func scoresChart(m *difficulty.Mismatch, level string) chart {
	left := 58.0
	for _, s := range m.Scores {
		left = math.Max(left, math.Min(textWidth(s.Target), 28*charWidth)+16)
	}
	title := "Scores: raw (hollow, the benchmark's mix) beside re-weighted (filled, the workload's mix), with " + level + " intervals"
	if !m.Comparable {
		title = "Scores: raw (hollow, the benchmark's mix) beside covered (filled: the workload's mix over the " + units.Pct(m.CoveredShare) +
			" the benchmark measures; the whole mix cannot be computed), with " + level + " intervals"
	}
	c := chart{ID: "scores", Class: "chart chart-scores", Title: title, W: left + 560}
	rowH := 30.0
	a := plotArea{X0: left, Y0: 12, X1: c.W - 20, Y1: 12 + rowH*float64(len(m.Scores))}
	c.H = a.Y1 + 46
	xs := scale{D0: 0, D1: 1, R0: a.X0, R1: a.X1}
	c.xAxis(a, xs, []float64{0, 0.2, 0.4, 0.6, 0.8, 1}, units.PctTick, "pass rate")
	for i, s := range m.Scores {
		y := a.Y0 + rowH*(float64(i)+0.5)
		c.label("row-label", a.X0-8, y+4, "end", s.Target, 28)
		if e := s.Raw; e.Computable {
			tip := fmt.Sprintf("%s raw: %s %s", s.Target, units.Pct(e.Rate), units.PctCI([2]float64{e.CI.Lo, e.CI.Hi}))
			c.line(seriesClass(i)+" whisker", xs.at(e.CI.Lo), y-5, xs.at(e.CI.Hi), y-5, tip)
			c.marker(i, "hollow", xs.at(e.Rate), y-5, 4, tip)
		}
		if e := s.Reweighted; e.Computable {
			tip := fmt.Sprintf("%s re-weighted: %s %s, n_eff %s", s.Target, units.Pct(e.Rate), units.PctCI([2]float64{e.CI.Lo, e.CI.Hi}), units.Num(math.Round(e.Kish)))
			c.line(seriesClass(i)+" whisker", xs.at(e.CI.Lo), y+5, xs.at(e.CI.Hi), y+5, tip)
			c.marker(i, "", xs.at(e.Rate), y+5, 4, tip)
		} else if e := s.Covered; e.Computable {
			// The covered-only score stands in, labelled so, beside its
			// interval on the side with room.
			tip := fmt.Sprintf("%s covered (re-weighted over the %s of the workload's mix the benchmark measures; the whole mix cannot be computed): %s %s",
				s.Target, units.Pct(s.CoveredShare), units.Pct(e.Rate), units.PctCI([2]float64{e.CI.Lo, e.CI.Hi}))
			c.line(seriesClass(i)+" whisker", xs.at(e.CI.Lo), y+5, xs.at(e.CI.Hi), y+5, tip)
			c.marker(i, "", xs.at(e.Rate), y+5, 4, tip)
			if hi := xs.at(e.CI.Hi); hi+60 < a.X1 {
				c.Marks = append(c.Marks, mark{Kind: "text", Class: "gap-label", X: hi + 5, Y: y + 9, Anchor: "start", Text: "covered", Tip: tip})
			} else {
				c.Marks = append(c.Marks, mark{Kind: "text", Class: "gap-label", X: xs.at(e.CI.Lo) - 5, Y: y + 9, Anchor: "end", Text: "covered", Tip: tip})
			}
		} else {
			c.Marks = append(c.Marks, mark{Kind: "text", Class: "gap-label", X: a.X1, Y: y + 9, Anchor: "end", Text: "cannot be computed", Tip: e.Why})
		}
	}
	return c
}

// mismatchTemplates are the mismatch page; it shares the difficulty
// page's head and charts (pageTemplates parses both).
const mismatchTemplates = `
{{define "mismatch-page"}}{{template "head" .Title}}
<h1>{{vis .Title}}</h1>
<p class="lede">{{vis .Scale}}.</p>
{{- if .Warnings}}
<div class="warnings"><h2>Warnings</h2><ul>{{range .Warnings}}<li>{{vis .}}</li>{{end}}</ul></div>
{{- end}}
{{template "rows" .Sides}}
{{- with .Rubric}}
<h2>Divergence rubric</h2>
<p class="verdict {{.Kind}}" data-verdict="{{.Kind}}">{{vis .Verdict}}</p>
<p class="rule">{{vis .Rule}}</p>
<ul class="axes">{{range .Axes}}<li><strong>{{vis .Axis}}: {{vis .Rating}}</strong><ul>{{range .Reasons}}<li>{{vis .}}</li>{{end}}</ul></li>{{end}}</ul>
{{- end}}
{{- range .Charts}}{{template "chart" .}}{{end}}
<h2>Both sets on one axis</h2>
<table class="bins"><thead><tr><th>bin</th><th class="num">benchmark</th><th class="num">share</th><th class="num">workload</th><th class="num">share</th><th></th></tr></thead>
<tbody>{{range $i, $r := .Bins}}<tr{{if index $.BinGap $i}} class="gap"{{end}}>{{range $j, $c := $r}}<td{{if and $j (lt $j 5)}} class="num"{{end}}{{if eq $j 5}} class="gap"{{end}}>{{vis $c}}</td>{{end}}</tr>
{{end}}</tbody></table>
<h2>Coverage</h2>
<ul class="coverage">{{range .Coverage}}<li>{{.}}</li>{{end}}</ul>
<h2>Distances ({{.Level}} bootstrap intervals, permutation p)</h2>
<table class="distances"><thead><tr><th>distance</th><th class="num">value</th><th class="num">interval</th><th class="num">replicates</th><th class="num">p</th></tr></thead>
<tbody>{{range .Distances}}<tr>{{range $j, $c := .}}<td{{if $j}} class="num"{{end}}>{{$c}}</td>{{end}}</tr>
{{end}}</tbody></table>
{{- if .Scores}}
<h2>Scores: raw and re-weighted to the workload's mix</h2>
<div class="scroll"><table class="scores"><thead><tr>{{range $j, $h := .ScoresHead}}<th{{if $j}} class="num"{{end}}>{{vis $h}}</th>{{end}}</tr></thead>
<tbody>{{range .Scores}}<tr>{{range $j, $c := .}}<td{{if $j}} class="num"{{end}}>{{vis $c}}</td>{{end}}</tr>
{{end}}</tbody></table></div>
{{- range .WhyNot}}<p class="note why-not">{{vis .}}.</p>{{end}}
{{- end}}
{{- if .ScoresNote}}<p class="note">{{.ScoresNote}}</p>{{end}}
{{- if .PerBin}}
<h2>Pass rate per bin on the benchmark ({{.Level}} intervals)</h2>
<div class="scroll"><table class="per-bin"><thead><tr><th>target</th>{{range .PerBinHead}}<th class="num">{{vis .}}</th>{{end}}</tr></thead>
<tbody>{{range .PerBin}}<tr>{{range $j, $c := .}}<td{{if $j}} class="num"{{end}}>{{vis $c}}</td>{{end}}</tr>
{{end}}</tbody></table></div>
{{- end}}
{{- if .Pairs}}
<h2>Pairs: A − B, raw and re-weighted (Holm-adjusted p)</h2>
<div class="scroll"><table class="pairs"><thead><tr>{{range .PairsHead}}<th>{{vis .}}</th>{{end}}</tr></thead>
<tbody>{{range $i, $r := .PairCells}}<tr{{if index $.PairChange $i}} class="changed"{{end}}>{{range $r}}<td{{if gt .Span 1}} colspan="{{.Span}}"{{end}}>{{vis .Text}}</td>{{end}}</tr>
{{end}}</tbody></table></div>
{{- end}}
{{- if .Ranking}}
<h2>Ranking</h2>
<ul class="ranking">{{range .Ranking}}<li>{{vis .}}</li>{{end}}</ul>
{{- end}}
<p class="note method">{{.Method}}.</p>
{{template "foot"}}{{end}}
{{define "rows"}}<table class="sides"><thead><tr>{{range index . 0}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>{{range $i, $r := .}}{{if $i}}<tr>{{range $j, $c := $r}}<td{{if gt $j 1}} class="num"{{end}}>{{vis $c}}</td>{{end}}</tr>
{{end}}{{end}}</tbody></table>{{end}}
`
