package report

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"unicode"
	"unicode/utf8"

	"github.com/assay-eval/assay/internal/difficulty"
	"github.com/assay-eval/assay/internal/units"
)

// DifficultyFormats are `assay difficulty`'s formats.
func DifficultyFormats() []Format[*difficulty.Fitted] {
	return []Format[*difficulty.Fitted]{
		{Name: "text", Aliases: []string{""}, Render: DifficultyText},
		{Name: "markdown", Aliases: []string{"md"}, Render: DifficultyMarkdown},
		JSONFormat[*difficulty.Fitted](),
		{Name: "html", Render: DifficultyPage},
	}
}

// difficultyCasesShown is how many of the hardest and of the easiest cases
// the text, Markdown and HTML reports list (JSON holds every case).
const difficultyCasesShown = 10

// axisNum formats a position on the difficulty or ability axis: two
// decimals, a true minus.
func axisNum(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return units.Missing
	}
	s := strconv.FormatFloat(x, 'f', 2, 64)
	switch {
	case s == "-0.00":
		return "0.00"
	case strings.HasPrefix(s, "-"):
		return "−" + s[1:]
	}
	return s
}

// signed3 formats x with three decimals and a true minus.
func signed3(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return units.Missing
	}
	return strings.Replace(strconv.FormatFloat(x, 'f', 3, 64), "-", "−", 1)
}

// visibleChart makes every outside text of a chart (names in labels,
// tips, titles) visible: a control character or a direction override is
// shown escaped, never drawn (and XML could not carry it).
func visibleChart(c chart) chart {
	c.Title, c.Caption = oneLine(c.Title), oneLine(c.Caption)
	for i := range c.Marks {
		c.Marks[i].Text, c.Marks[i].Tip = oneLine(c.Marks[i].Text), oneLine(c.Marks[i].Tip)
	}
	return c
}

// axisCI formats an interval on the axis: "[−1.13, −0.97]".
func axisCI(lo, hi float64) string { return "[" + axisNum(lo) + ", " + axisNum(hi) + "]" }

// difficultyView is the fit with every number formatted and every outside
// text (run IDs, file paths, target names, case IDs, tag values) as given:
// each format escapes it where it lands.
type difficultyView struct {
	Title    string
	Sources  string
	Scale    string
	Fitted   bool
	Fit      []string // the convergence report, one line each
	Level    string
	Targets  []difficultyTarget
	Separate string
	Curve    []difficultyCurveRow
	TagName  string
	Tiers    []difficultyTier
	TierHead []string // the targets, in the tiers' columns
	Leads    *difficultyLeads
	Hardest  []difficultyCase
	Easiest  []difficultyCase
	NCases   int
	Extreme  string // extremeNote when a case shown is extreme, else ""
	Warnings []string
	Method   string
	Charts   []chart
}

type difficultyTarget struct{ Name, Theta, SE, CI, Right, Rate string }

type difficultyCurveRow struct{ Theta, Info, SE string }

type difficultyTier struct {
	Label, Cases, MeanB string
	Rates               []string // per TierHead target: "75.0% [69.1, 80.9]"
	Leader              string
}

type difficultyCase struct{ ID, B, SE, A, Right, Tag string }

// difficultyLeads says where each target's lead over the next in the
// ranking comes from: per tier, the difference of their pass rates and its
// contribution to the overall difference (the tier's share of the cases ×
// the difference), which add up to the overall difference over the tagged
// cases.
type difficultyLeads struct {
	Pairs   []string   // "A − B", best first
	Rows    [][]string // per tier: label, share, then per pair "+12.9 (+3.5)"
	Overall []string   // per pair: the overall difference over the tagged cases
	Note    string     // leadsNote as a sentence
}

// tierLeads compares each target with the next in the order of their pass
// rates over the tagged cases, tier by tier.
func tierLeads(tiers []difficulty.Tier, names []string) *difficultyLeads {
	if len(names) < 2 || len(tiers) == 0 {
		return nil
	}
	total := 0
	for _, t := range tiers {
		total += t.Cases
	}
	// Overall rate per target: the tiers' rates weighted by their cases
	// (the contributions below then add up to the difference exactly).
	overall := map[string]float64{}
	for _, n := range names {
		for _, t := range tiers {
			r, _ := tierRate(t, n)
			overall[n] += float64(t.Cases) / float64(total) * r.Rate
		}
	}
	order := slices.Clone(names)
	slices.SortStableFunc(order, func(a, b string) int {
		switch {
		case overall[a] > overall[b]:
			return -1
		case overall[a] < overall[b]:
			return 1
		}
		return 0
	})
	l := &difficultyLeads{Note: sentence(leadsNote)}
	for i := 0; i+1 < len(order); i++ {
		l.Pairs = append(l.Pairs, order[i]+" − "+order[i+1])
		l.Overall = append(l.Overall, units.Delta(overall[order[i]]-overall[order[i+1]]))
	}
	for _, t := range tiers {
		share := float64(t.Cases) / float64(total)
		row := []string{tierLabel(t), units.Pct(share)}
		for i := 0; i+1 < len(order); i++ {
			a, okA := tierRate(t, order[i])
			b, okB := tierRate(t, order[i+1])
			if !okA || !okB {
				row = append(row, units.Missing)
				continue
			}
			d := a.Rate - b.Rate
			row = append(row, units.Delta(d)+" ("+units.Delta(share*d)+")")
		}
		l.Rows = append(l.Rows, row)
	}
	return l
}

const leadsNote = "each cell: the difference of the two pass rates on the tier, in points, and (in brackets) its contribution to the overall difference: the tier's share of the cases × the difference. The contributions add up to the overall difference"

func newDifficultyView(f *difficulty.Fitted) difficultyView {
	v := difficultyView{Sources: strings.Join(f.Sources, ", "), Warnings: f.Warnings, TagName: f.Scale.Tag}
	level := 0.95
	if f.Level > 0 {
		level = f.Level // the abilities' intervals, as --level asked
	}
	fit := f.Fit
	v.Fitted = fit != nil
	if fit != nil {
		model := "Rasch (one discrimination shared by every case)"
		if string(fit.Model) == "2pl" {
			model = "2PL (a discrimination per case)"
		}
		v.Title = fmt.Sprintf("assay difficulty: %s fit, %s × %s", string(fit.Model), plural(len(f.Cases), "case"), plural(len(f.Targets), "target"))
		v.Scale = "difficulty fitted from the targets' results: " + model
		conv := "converged"
		if !fit.Converged {
			conv = "NOT converged (read every number with care)"
		}
		prior := "no priors (plain marginal maximum likelihood)"
		if fit.PriorSD > 0 {
			prior = "weak priors, SD " + units.Plain(units.RoundSig(fit.PriorSD))
		}
		v.Fit = []string{
			fmt.Sprintf("%s after %s (largest last change %.2g)", conv, plural(fit.Iterations, "EM iteration"), fit.MaxChange),
			fmt.Sprintf("marginal log-likelihood %s over %s of the ability grid; %s", signed3(fit.LogLik), plural(fit.Points, "point"), prior),
		}
		if f.Dropped > 0 {
			v.Fit = append(v.Fit, fmt.Sprintf("%s left out of the fit (no scored result, or, without a prior, every target right or every one wrong)", plural(f.Dropped, "case")))
		}
		for _, t := range f.Targets {
			rate := units.Missing
			if t.Trials > 0 {
				rate = units.Pct(float64(t.Right) / float64(t.Trials))
			}
			v.Targets = append(v.Targets, difficultyTarget{Name: t.Target, Theta: axisNum(t.Theta), SE: axisNum(t.SE), CI: axisCI(t.Lo, t.Hi),
				Right: units.Count(t.Right) + "/" + units.Count(t.Trials), Rate: rate})
		}
		whole := len(f.Curve) > 1 && f.Separates[0] <= f.Curve[0].Theta && f.Separates[1] >= f.Curve[len(f.Curve)-1].Theta
		switch {
		case f.SeparatesFound && whole:
			v.Separate = fmt.Sprintf("This set tells targets apart across the whole range shown, θ = %s to %s: there an ability's standard error is below %s (two targets 1 SD of ability apart differ at the 5%% level).",
				axisNum(f.Separates[0]), axisNum(f.Separates[1]), axisNum(f.SeparateSE))
		case f.SeparatesFound:
			v.Separate = fmt.Sprintf("This set tells targets apart between θ = %s and %s: there an ability's standard error is below %s (two targets 1 SD of ability apart differ at the 5%% level). Outside that range it cannot: a target placed there has a wide interval.",
				axisNum(f.Separates[0]), axisNum(f.Separates[1]), axisNum(f.SeparateSE))
		default:
			v.Separate = fmt.Sprintf("Nowhere on the axis is an ability's standard error below %s: this set cannot reliably tell targets one SD of ability apart.", axisNum(f.SeparateSE))
		}
		for _, p := range f.Curve {
			if d := p.Theta - math.Round(p.Theta); math.Abs(d) < 1e-9 {
				v.Curve = append(v.Curve, difficultyCurveRow{Theta: axisNum(p.Theta), Info: units.Plain(units.RoundSig(p.Info)), SE: axisNum(p.SE)})
			}
		}
		v.NCases = len(f.Cases)
		n := min(difficultyCasesShown, len(f.Cases))
		for _, c := range f.Cases[:n] {
			v.Hardest = append(v.Hardest, newDifficultyCase(c))
			if c.Extreme {
				v.Extreme = extremeNote
			}
		}
		for i := len(f.Cases) - 1; i >= max(n, len(f.Cases)-difficultyCasesShown); i-- {
			v.Easiest = append(v.Easiest, newDifficultyCase(f.Cases[i]))
			if f.Cases[i].Extreme {
				v.Extreme = extremeNote
			}
		}
	} else {
		v.Title = fmt.Sprintf("assay difficulty: the tiers of %s (no fit)", strconv.Quote(f.Scale.Tag))
		v.Scale = "difficulty from the tag " + strconv.Quote(f.Scale.Tag)
	}
	if len(f.Tiers) > 0 {
		for _, t := range f.Tiers {
			for _, r := range t.Rates {
				if !slices.Contains(v.TierHead, r.Target) {
					v.TierHead = append(v.TierHead, r.Target)
				}
			}
		}
		for _, t := range f.Tiers {
			row := difficultyTier{Label: tierLabel(t), Cases: units.Count(t.Cases), MeanB: units.Missing}
			if v.Fitted {
				row.MeanB = axisNum(t.MeanB)
			}
			best, bestRate := "", -1.0
			for _, name := range v.TierHead {
				r, ok := tierRate(t, name)
				if !ok {
					row.Rates = append(row.Rates, units.Missing)
					continue
				}
				row.Rates = append(row.Rates, units.Pct(r.Rate)+" "+units.PctCI([2]float64{r.CI.Lo, r.CI.Hi}))
				switch {
				case r.Rate > bestRate:
					best, bestRate = name, r.Rate
				case r.Rate == bestRate:
					best += ", " + name
				}
			}
			row.Leader = best
			v.Tiers = append(v.Tiers, row)
		}
		v.Leads = tierLeads(f.Tiers, v.TierHead)
	}
	v.Level = units.Plain(units.RoundSig(100*level)) + "%"
	v.Method = "θ: a target's ability (EAP) with its posterior SD and interval; b: a case's difficulty, the ability at which a target answers it right half the time (higher is harder), with its standard error; " +
		"a: its discrimination. Per tier: each target's pass rate over the tier's scored results with its Wilson interval. docs/difficulty.md explains every number"
	if !v.Fitted {
		v.Method = "Per tier: each target's pass rate over the tier's scored results with its Wilson interval. docs/difficulty.md explains every number"
	}
	return v
}

func newDifficultyCase(c difficulty.CaseDifficulty) difficultyCase {
	b := axisNum(c.B)
	if c.Extreme {
		b += "*"
	}
	return difficultyCase{ID: c.ID, B: b, SE: axisNum(c.SE), A: axisNum(c.A), Right: units.Count(c.Right) + "/" + units.Count(c.Trials), Tag: c.Tag}
}

// tierRate is name's rate on the tier; false when it has no scored
// result there.
func tierRate(t difficulty.Tier, name string) (difficulty.Rate, bool) {
	for _, r := range t.Rates {
		if r.Target == name && r.N > 0 {
			return r, true
		}
	}
	return difficulty.Rate{}, false
}

// tierLabel is a tier's name: its label, else its value.
func tierLabel(t difficulty.Tier) string {
	if t.Label != "" {
		return t.Label
	}
	return units.Plain(t.Value)
}

// sentence starts s with a capital letter.
func sentence(s string) string {
	if s == "" {
		return s
	}
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}

const extremeNote = "* every target got it right, or every one wrong: its difficulty is finite only through the prior"

// DifficultyText renders the fit as plain text.
func DifficultyText(w io.Writer, f *difficulty.Fitted) error {
	v := newDifficultyView(f)
	var b strings.Builder
	fmt.Fprintf(&b, "%s\nfrom %s\n%s\n", oneLine(v.Title), oneLine(v.Sources), oneLine(v.Scale))
	for _, l := range v.Fit {
		fmt.Fprintf(&b, "fit: %s\n", l)
	}
	for _, wn := range v.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", oneLine(wn))
	}
	if len(v.Targets) > 0 {
		b.WriteString("\nTargets on the ability axis\n")
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "target\tθ\tSE\t%s CI\tright\trate\t\n", v.Level)
		for _, t := range v.Targets {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t\n", oneLine(t.Name), t.Theta, t.SE, t.CI, t.Right, t.Rate)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintf(&b, "\n%s\n", v.Separate)
		if len(v.Curve) > 0 {
			b.WriteString("\nTest information\n")
			tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
			fmt.Fprintf(tw, "θ\tinformation\tSE of θ\t\n")
			for _, p := range v.Curve {
				fmt.Fprintf(tw, "%s\t%s\t%s\t\n", p.Theta, p.Info, p.SE)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
		}
	}
	if len(v.Tiers) > 0 {
		fmt.Fprintf(&b, "\nPass rate per tier of %s (%s intervals)\n", strconv.Quote(oneLine(v.TagName)), v.Level)
		head := append(append([]string{"tier", "cases", "mean b"}, v.TierHead...), "leads")
		var rows [][]string
		for _, t := range v.Tiers {
			rows = append(rows, append(append([]string{t.Label, t.Cases, t.MeanB}, t.Rates...), t.Leader))
		}
		textTable(&b, head, rows)
	}
	if l := v.Leads; l != nil {
		b.WriteString("\nWhere the leads come from\n")
		rows := append(slices.Clone(l.Rows), append([]string{"overall", "100%"}, l.Overall...))
		textTable(&b, append([]string{"tier", "share"}, l.Pairs...), rows)
		fmt.Fprintf(&b, "(%s)\n", leadsNote)
	}
	for _, part := range []struct {
		title string
		cases []difficultyCase
	}{{"Hardest cases", v.Hardest}, {"Easiest cases", v.Easiest}} {
		if len(part.cases) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n%s (of %s)\n", part.title, units.Count(v.NCases))
		var rows [][]string
		for _, c := range part.cases {
			rows = append(rows, []string{clip(c.ID, 40), c.B, c.SE, c.A, c.Right, clip(c.Tag, 24)})
		}
		textTable(&b, []string{"case", "b", "SE", "a", "right", "tag"}, rows)
	}
	if v.Extreme != "" {
		fmt.Fprintf(&b, "%s\n", v.Extreme)
	}
	fmt.Fprintf(&b, "\n%s.\n", v.Method)
	_, err := io.WriteString(w, trimLines(b.String()))
	return err
}

// DifficultyMarkdown renders the fit as Markdown.
func DifficultyMarkdown(w io.Writer, f *difficulty.Fitted) error {
	v := newDifficultyView(f)
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\nFrom %s. %s.\n\n", mdText(v.Title), mdText(v.Sources), mdText(v.Scale))
	for _, l := range v.Fit {
		fmt.Fprintf(&b, "- fit: %s\n", mdText(l))
	}
	if len(v.Fit) > 0 {
		b.WriteString("\n")
	}
	for _, wn := range v.Warnings {
		fmt.Fprintf(&b, "> warning: %s\n\n", mdText(wn))
	}
	if len(v.Targets) > 0 {
		fmt.Fprintf(&b, "## Targets on the ability axis\n\n| target | θ | SE | %s CI | right | rate |\n|---|--:|--:|--:|--:|--:|\n", v.Level)
		for _, t := range v.Targets {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", mdText(t.Name), t.Theta, t.SE, t.CI, t.Right, t.Rate)
		}
		fmt.Fprintf(&b, "\n%s\n\n", mdText(v.Separate))
		if len(v.Curve) > 0 {
			b.WriteString("| θ | test information | SE of θ |\n|--:|--:|--:|\n")
			for _, p := range v.Curve {
				fmt.Fprintf(&b, "| %s | %s | %s |\n", p.Theta, p.Info, p.SE)
			}
			b.WriteString("\n")
		}
	}
	if len(v.Tiers) > 0 {
		fmt.Fprintf(&b, "## Pass rate per tier of %s (%s intervals)\n\n| tier | cases | mean b |", mdText(strconv.Quote(v.TagName)), v.Level)
		for _, n := range v.TierHead {
			fmt.Fprintf(&b, " %s |", mdText(n))
		}
		b.WriteString(" leads |\n|---|--:|--:|" + strings.Repeat("--:|", len(v.TierHead)) + "---|\n")
		for _, t := range v.Tiers {
			fmt.Fprintf(&b, "| %s | %s | %s |", mdText(t.Label), t.Cases, t.MeanB)
			for _, r := range t.Rates {
				fmt.Fprintf(&b, " %s |", r)
			}
			fmt.Fprintf(&b, " %s |\n", mdText(t.Leader))
		}
		b.WriteString("\n")
	}
	if l := v.Leads; l != nil {
		b.WriteString("## Where the leads come from\n\n| tier | share |")
		for _, p := range l.Pairs {
			fmt.Fprintf(&b, " %s |", mdText(p))
		}
		b.WriteString("\n|---|--:|" + strings.Repeat("--:|", len(l.Pairs)) + "\n")
		for _, r := range l.Rows {
			cells := make([]string, len(r))
			for i, c := range r {
				cells[i] = mdCell(c)
			}
			fmt.Fprintf(&b, "| %s |\n", strings.Join(cells, " | "))
		}
		fmt.Fprintf(&b, "| overall | 100%% | %s |\n\n%s.\n\n", strings.Join(l.Overall, " | "), mdText(l.Note))
	}
	for _, part := range []struct {
		title string
		cases []difficultyCase
	}{{"Hardest cases", v.Hardest}, {"Easiest cases", v.Easiest}} {
		if len(part.cases) == 0 {
			continue
		}
		fmt.Fprintf(&b, "## %s (of %s)\n\n| case | b | SE | a | right | tag |\n|---|--:|--:|--:|--:|---|\n", part.title, units.Count(v.NCases))
		for _, c := range part.cases {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", mdText(clip(c.ID, 40)), mdText(c.B), c.SE, c.A, c.Right, mdText(clip(c.Tag, 24)))
		}
		b.WriteString("\n")
	}
	if v.Extreme != "" {
		fmt.Fprintf(&b, "%s\n\n", mdText(v.Extreme))
	}
	fmt.Fprintf(&b, "%s.\n", mdText(v.Method))
	_, err := io.WriteString(w, b.String())
	return err
}

// DifficultyPage renders the fit as a self-contained HTML page (no
// scripts; a CSP forbids them): the test-information curve with the
// targets' abilities on the same axis, the cases' difficulty histogram,
// the per-tier rates with intervals, then the tables. Every name is
// escaped by html/template.
func DifficultyPage(w io.Writer, f *difficulty.Fitted) error {
	v := newDifficultyView(f)
	if f.Fit != nil {
		v.Charts = append(v.Charts, infoChart(f))
		if len(f.Cases) > 0 {
			bs := make([]float64, len(f.Cases))
			for i, c := range f.Cases {
				bs[i] = c.B
			}
			v.Charts = append(v.Charts, valuesHistogram("difficulty-histogram", "Fitted difficulty of the cases", bs))
		}
	}
	if len(f.Tiers) > 0 {
		cats := make([]string, len(f.Tiers))
		ns := make([]int, len(f.Tiers))
		for i, t := range f.Tiers {
			cats[i], ns[i] = tierLabel(t), t.Cases
		}
		v.Charts = append(v.Charts, ratesChart("tier-rates", "Pass rate per tier of "+strconv.Quote(f.Scale.Tag)+", with "+v.Level+" intervals",
			f.Scale.Tag, cats, ns, nil, v.TierHead, func(i int, name string) (difficulty.Rate, bool) { return tierRate(f.Tiers[i], name) }))
	}
	for i := range v.Charts {
		v.Charts[i] = visibleChart(v.Charts[i])
	}
	return renderWhole(w, pageTemplates(), "difficulty-page", v, "the difficulty page")
}

// pageTemplates are the difficulty and mismatch pages with the report's
// chart templates and stylesheet, parsed once, when first rendered.
var pageTemplates = sync.OnceValue(func() *template.Template {
	return template.Must(template.Must(chartTemplates("pages").Parse(difficultyTemplates)).Parse(mismatchTemplates))
})

// chartTemplates are the report's chart and stylesheet templates with
// the functions they call, for a page of its own to add its templates to.
func chartTemplates(name string) *template.Template {
	return template.Must(template.New(name).Funcs(template.FuncMap{"num": num, "vis": oneLine}).
		ParseFS(htmlTemplates, "templates/chart.tmpl", "templates/style.tmpl"))
}

const difficultyTemplates = `
{{define "head"}}<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{vis .}}</title>
<style>{{template "style"}}
svg .hist.bench { fill: var(--s0); fill-opacity: .55; stroke: none; }
svg .hist.work { fill: var(--s1); fill-opacity: .55; stroke: none; }
svg .hist.one { fill: var(--s0); fill-opacity: .6; stroke: none; }
svg .gap-shade { fill: #d55e00; fill-opacity: .13; stroke: none; }
svg .gap-label { fill: #a04400; font-weight: 600; }
svg .sep-shade { fill: #009e73; fill-opacity: .10; stroke: none; }
svg .curve { fill: none; stroke: #1d232a; stroke-width: 2; }
svg .curve.se { stroke: #7b8590; stroke-dasharray: 5 4; stroke-width: 1.4; }
td.gap, .unmeasurable { color: #a04400; font-weight: 600; }
.verdict { font-weight: 700; }
.verdict.shortlist_only { color: #a04400; }
.rule { font-weight: 600; }
tr.changed td { background: #fff3d6; }
</style>
</head>
<body>
<main>{{end}}
{{define "foot"}}</main>
</body>
</html>
{{end}}
{{define "difficulty-page"}}{{template "head" .Title}}
<h1>{{vis .Title}}</h1>
<p class="lede">From {{vis .Sources}}. {{vis .Scale}}.</p>
{{- if .Fit}}<ul class="fit">{{range .Fit}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{- if .Warnings}}
<div class="warnings"><h2>Warnings</h2><ul>{{range .Warnings}}<li>{{vis .}}</li>{{end}}</ul></div>
{{- end}}
{{- range .Charts}}{{template "chart" .}}{{end}}
{{- if .Targets}}
<h2>Targets on the ability axis</h2>
<table class="targets"><thead><tr><th>target</th><th class="num">θ</th><th class="num">SE</th><th class="num">{{.Level}} CI</th><th class="num">right</th><th class="num">rate</th></tr></thead>
<tbody>{{range .Targets}}<tr><td class="name">{{vis .Name}}</td><td class="num">{{.Theta}}</td><td class="num">{{.SE}}</td><td class="num">{{.CI}}</td><td class="num">{{.Right}}</td><td class="num">{{.Rate}}</td></tr>
{{end}}</tbody></table>
<p class="separate">{{.Separate}}</p>
{{- end}}
{{- if .Tiers}}
<h2>Pass rate per tier of {{vis .TagName}} ({{.Level}} intervals)</h2>
<div class="scroll"><table class="tiers"><thead><tr><th>tier</th><th class="num">cases</th><th class="num">mean b</th>{{range .TierHead}}<th class="num">{{vis .}}</th>{{end}}<th>leads</th></tr></thead>
<tbody>{{range .Tiers}}<tr><td>{{vis .Label}}</td><td class="num">{{.Cases}}</td><td class="num">{{.MeanB}}</td>{{range .Rates}}<td class="num">{{.}}</td>{{end}}<td>{{vis .Leader}}</td></tr>
{{end}}</tbody></table></div>
{{- end}}
{{- with .Leads}}
<h2>Where the leads come from</h2>
<div class="scroll"><table class="leads"><thead><tr><th>tier</th><th class="num">share</th>{{range .Pairs}}<th class="num">{{vis .}}</th>{{end}}</tr></thead>
<tbody>{{range .Rows}}<tr>{{range $i, $c := .}}<td{{if $i}} class="num"{{end}}>{{vis $c}}</td>{{end}}</tr>
{{end}}<tr><th>overall</th><td class="num">100%</td>{{range .Overall}}<td class="num">{{.}}</td>{{end}}</tr></tbody></table></div>
<p class="note">{{.Note}}.</p>
{{- end}}
{{- if .Hardest}}
<h2>Hardest cases (of {{.NCases}})</h2>
{{template "cases" .Hardest}}
<h2>Easiest cases</h2>
{{template "cases" .Easiest}}
{{- with .Extreme}}
<p class="note">{{.}}.</p>{{end}}
{{- end}}
<p class="note method">{{.Method}}.</p>
{{template "foot"}}{{end}}
{{define "cases"}}<table class="cases"><thead><tr><th>case</th><th class="num">b</th><th class="num">SE</th><th class="num">a</th><th class="num">right</th><th>tag</th></tr></thead>
<tbody>{{range .}}<tr><td>{{vis .ID}}</td><td class="num">{{.B}}</td><td class="num">{{.SE}}</td><td class="num">{{.A}}</td><td class="num">{{.Right}}</td><td>{{vis .Tag}}</td></tr>
{{end}}</tbody></table>{{end}}
`

// infoChart draws the test-information curve over the ability axis, the
// standard error of an ability beside it (dashed, on the right axis), the
// range where the set separates targets shaded, and each target's ability
// with its interval under the curve.
func infoChart(f *difficulty.Fitted) chart {
	c := chart{ID: "information", Class: "chart chart-information", Title: "Test information over the ability axis, and the targets' abilities",
		Caption: "Solid: the test information I(θ) (left axis); dashed: the standard error of an ability there, 1/√I (right axis). " +
			"Shaded: where this set tells targets apart. Below: each target's ability with its interval.", W: 720}
	names := make([]string, len(f.Targets))
	for i, t := range f.Targets {
		names[i] = t.Target
	}
	y0 := c.legend(names, 58, 16, c.W-60)
	rowH := 16.0
	a := plotArea{X0: 58, Y0: y0 + 6, X1: c.W - 60, Y1: y0 + 6 + 200}
	lo, hi := -4.0, 4.0
	if n := len(f.Curve); n > 1 {
		lo, hi = f.Curve[0].Theta, f.Curve[n-1].Theta
	}
	for _, t := range f.Targets {
		lo, hi = math.Min(lo, t.Lo), math.Max(hi, t.Hi)
	}
	lo, hi, xt := niceDomain(lo, hi, 8)
	xs := scale{D0: lo, D1: hi, R0: a.X0, R1: a.X1}
	maxInfo, maxSE := 0.0, 0.0
	for _, p := range f.Curve {
		maxInfo = math.Max(maxInfo, p.Info)
		if !math.IsInf(p.SE, 0) && !math.IsNaN(p.SE) {
			maxSE = math.Max(maxSE, p.SE)
		}
	}
	_, top, yt := niceDomain(0, math.Max(maxInfo, 1e-9), 5)
	ys := scale{D0: 0, D1: top, R0: a.Y1, R1: a.Y0}
	seTop := math.Min(math.Max(maxSE, 0.1), 3)
	_, seTop, _ = niceDomain(0, seTop, 4)
	ses := scale{D0: 0, D1: seTop, R0: a.Y1, R1: a.Y0}
	if f.SeparatesFound {
		x0, x1 := xs.at(f.Separates[0]), xs.at(f.Separates[1])
		c.rect("sep-shade", x0, a.Y0, x1-x0, a.Y1-a.Y0, fmt.Sprintf("separates targets between θ = %s and %s", axisNum(f.Separates[0]), axisNum(f.Separates[1])))
	}
	c.yAxis(a, ys, yt, func(v float64) string { return units.Plain(units.RoundSig(v)) }, "test information")
	for _, v := range []float64{0, seTop / 2, seTop} {
		y := ses.at(v)
		c.line("tick", a.X1, y, a.X1+4, y, "")
		c.text("tick-label", a.X1+7, y+4, "start", axisNum(v))
	}
	c.text("axis-title", a.X1+30, a.Y0-6, "middle", "SE of θ")
	var info, se pathBuilder
	started := false
	for _, p := range f.Curve {
		x := xs.at(p.Theta)
		if !started {
			info.M(x, ys.at(p.Info))
		} else {
			info.L(x, ys.at(p.Info))
		}
		s := math.Min(p.SE, seTop)
		if math.IsNaN(s) || math.IsInf(s, 0) {
			s = seTop
		}
		if !started {
			se.M(x, ses.at(s))
		} else {
			se.L(x, ses.at(s))
		}
		started = true
	}
	if started {
		c.path("curve", info.String(), "")
		c.path("curve se", se.String(), "")
	}
	// The targets' abilities, one row each under the plot.
	rows := plotArea{X0: a.X0, Y0: a.Y1 + 8, X1: a.X1, Y1: a.Y1 + 8 + rowH*float64(len(f.Targets))}
	for i, t := range f.Targets {
		y := rows.Y0 + rowH*(float64(i)+0.5)
		tip := fmt.Sprintf("%s: θ %s %s", t.Target, axisNum(t.Theta), axisCI(t.Lo, t.Hi))
		c.line(seriesClass(i)+" whisker", xs.at(t.Lo), y, xs.at(t.Hi), y, tip)
		c.marker(i, "", xs.at(t.Theta), y, 4, tip)
	}
	full := plotArea{X0: a.X0, Y0: a.Y0, X1: a.X1, Y1: rows.Y1}
	c.xAxis(full, xs, xt, axisNum, "ability θ (and difficulty b: the same axis)")
	c.H = full.Y1 + 44
	return c
}

// valuesHistogram draws one histogram of values over about 20 equal bins.
func valuesHistogram(id, title string, xs []float64) chart {
	c := chart{ID: id, Class: "chart chart-histogram", Title: title, W: 720, H: 260}
	a := plotArea{X0: 58, Y0: 14, X1: c.W - 20, Y1: 214}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, x := range xs {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			lo, hi = math.Min(lo, x), math.Max(hi, x)
		}
	}
	if math.IsInf(lo, 0) {
		return c
	}
	lo, hi, xt := niceDomain(lo, hi, 8)
	const nb = 24
	counts := make([]int, nb)
	width := (hi - lo) / nb
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			continue
		}
		k := min(nb-1, max(0, int((x-lo)/width)))
		counts[k]++
	}
	top := slices.Max(counts)
	_, ytop, yt := niceDomain(0, float64(max(top, 1)), 4)
	xsc := scale{D0: lo, D1: hi, R0: a.X0, R1: a.X1}
	ysc := scale{D0: 0, D1: ytop, R0: a.Y1, R1: a.Y0}
	c.yAxis(a, ysc, yt, func(v float64) string { return units.Plain(v) }, "cases")
	for k, n := range counts {
		if n == 0 {
			continue
		}
		x0, x1 := xsc.at(lo+float64(k)*width), xsc.at(lo+float64(k+1)*width)
		c.rect("hist one", x0+0.5, ysc.at(float64(n)), x1-x0-1, a.Y1-ysc.at(float64(n)),
			fmt.Sprintf("%s to %s: %s", axisNum(lo+float64(k)*width), axisNum(lo+float64(k+1)*width), plural(n, "case")))
	}
	c.xAxis(a, xsc, xt, axisNum, "difficulty b")
	return c
}

// ratesChart draws per category (a tier, a bin) each series' pass rate as
// a point with its interval; cats are the categories, ns their cases.
// A category whose gaps entry is true (a bin the workload needs and the
// benchmark lacks) is shaded and says so.
func ratesChart(id, title, key string, cats []string, ns []int, gaps []bool, names []string, rate func(i int, name string) (difficulty.Rate, bool)) chart {
	nt := len(names)
	need := math.Max(34, float64(nt)*11+18)
	for _, v := range cats {
		need = math.Max(need, math.Min(textWidth(v), 16*charWidth)+10)
	}
	plotW := math.Max(420, need*float64(len(cats)))
	band := plotW / math.Max(1, float64(len(cats)))
	left, right := 58.0, 16.0
	c := chart{ID: id, Class: "chart chart-tiers", Title: title, W: left + plotW + right}
	y := c.legend(names, left, 16, c.W-right)
	a := plotArea{X0: left, Y0: y + 6, X1: left + plotW, Y1: y + 6 + 220}
	c.H = a.Y1 + 56
	ys := scale{D0: 0, D1: 1, R0: a.Y1, R1: a.Y0}
	for i, gap := range gaps {
		if gap {
			x := a.X0 + band*float64(i)
			c.rect("gap-shade", x, a.Y0, band, a.Y1-a.Y0, cats[i]+": "+unmeasurable+", no benchmark case to measure")
			c.text("gap-label", x+band/2, a.Y0+12, "middle", "gap")
		}
	}
	c.yAxis(a, ys, []float64{0, 0.2, 0.4, 0.6, 0.8, 1}, units.PctTick, "pass rate")
	step := math.Min(11, (band-14)/math.Max(1, float64(nt)))
	maxChars := fitChars(band - 6)
	for i, v := range cats {
		cx := a.X0 + band*(float64(i)+0.5)
		c.label("cat-label", cx, a.Y1+16, "middle", v, maxChars)
		c.text("cat-n", cx, a.Y1+29, "middle", "n "+units.Count(ns[i]))
		for j, name := range names {
			r, ok := rate(i, name)
			if !ok {
				continue
			}
			x := cx + (float64(j)-float64(nt-1)/2)*step
			tip := fmt.Sprintf("%s, %s %s: %s %s, %s/%s", name, key, v, units.Pct(r.Rate), units.PctCI([2]float64{r.CI.Lo, r.CI.Hi}), units.Count(r.Passed), units.Count(r.N))
			c.line(seriesClass(j)+" whisker", x, ys.at(r.CI.Lo), x, ys.at(r.CI.Hi), tip)
			c.marker(j, "", x, ys.at(r.Rate), 4, tip)
		}
	}
	c.line("axis", a.X0, a.Y1, a.X1, a.Y1, "")
	c.text("axis-title", (a.X0+a.X1)/2, a.Y1+46, "middle", key)
	return c
}
