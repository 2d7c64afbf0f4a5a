package report

import (
	"fmt"
	"html/template"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/assay-eval/assay/internal/trend"
	"github.com/assay-eval/assay/internal/units"
)

// TrendFormats are `assay trend`'s formats.
func TrendFormats() []Format[*trend.Report] {
	return []Format[*trend.Report]{
		{Name: "text", Aliases: []string{""}, Render: TrendText},
		{Name: "markdown", Aliases: []string{"md"}, Render: TrendMarkdown},
		JSONFormat[*trend.Report](),
		{Name: "html", Render: TrendPage},
	}
}

// dropMark marks a flagged drop in every format.
const dropMark = "▼"

// trendView is a trend report with every number formatted and every
// outside text (model, spec and scorer names: they come from production
// traffic and specs) as given: each format escapes it where it lands.
type trendView struct {
	Windows string // "ISO weeks (UTC, from Monday)" or "14-day windows (UTC)"
	Span    string // "2026-W45 to 2026-W49"
	Level   string // "95%"
	Spec    string // "" every spec's
	Scorer  string // what the verdicts are
	Read    string // runs and traces read
	Left    []string
	Verdict string
	Drop    bool
	Rows    []trendRow
	Models  []trendChart
	Notes   []string
	Method  string
}

type trendRow struct {
	Model, Window, N, Rate, CI string
	// Change columns: empty when the window was not tested.
	Change, ChangeCI, Z, P string
	Drop                   bool
	Untested               string
	First                  bool // the model's first row
}

func newTrendView(r *trend.Report) trendView {
	v := trendView{Level: units.Plain(units.RoundSig(100*r.Level)) + "%", Spec: r.Spec, Notes: r.Notes}
	if r.ISOWeeks {
		v.Windows = "ISO weeks (UTC, from Monday)"
	} else {
		v.Windows = strconv.Itoa(r.WindowDays) + "-day windows (UTC, from a Monday)"
	}
	if n := len(r.Windows); n > 0 {
		v.Span = r.Windows[0].Label
		if n > 1 {
			v.Span += " to " + r.Windows[n-1].Label
		}
	}
	switch {
	case r.Scorer != "":
		v.Scorer = "scorer " + r.Scorer
	case len(r.Scorers) > 0:
		v.Scorer = "each run's primary scorer (" + strings.Join(r.Scorers, ", ") + ")"
	default:
		v.Scorer = "each run's primary scorer"
	}
	v.Read = fmt.Sprintf("%s in %s from %s", plural(r.Traces, "scored trace"), plural(len(r.Windows), "window"), plural(len(r.Runs), "score-traces run"))
	if r.Duplicates > 0 {
		v.Left = append(v.Left, fmt.Sprintf("%s scored again by a newer run (the newest verdict counts)", plural(r.Duplicates, "verdict")))
	}
	if r.NoVerdict > 0 {
		v.Left = append(v.Left, fmt.Sprintf("%s without a verdict of the scorer", plural(r.NoVerdict, "sampled trace")))
	}
	if r.Earlier > 0 {
		v.Left = append(v.Left, fmt.Sprintf("%s before the windows shown", plural(r.Earlier, "trace")))
	}
	alpha := units.Plain(units.RoundSig(100*r.Alpha)) + "%"
	switch {
	case r.Traces == 0:
		v.Verdict = "no scored trace in the windows: nothing to show"
	case r.Drops > 0:
		var where []string
		for _, s := range r.Models {
			for _, p := range s.Points {
				if p.Change != nil && p.Change.Drop {
					where = append(where, s.Model+" "+p.Window)
				}
			}
		}
		v.Drop = true
		v.Verdict = fmt.Sprintf("%s %s flagged: %s (%s Holm-adjusted, family-wise %s)", dropMark, plural(r.Drops, "drop"), strings.Join(where, "; "), plural(r.Tests, "test"), alpha)
	case r.Tests == 0:
		v.Verdict = fmt.Sprintf("nothing tested: no model has two windows of at least %d traces", r.MinN)
	default:
		v.Verdict = fmt.Sprintf("no drop flagged (%s Holm-adjusted, family-wise %s)", plural(r.Tests, "test"), alpha)
	}
	v.Method = fmt.Sprintf("rate: weighted pass rate with its %s interval; change: the rate minus the latest earlier window's with %d traces or more, with its %s interval; "+
		"p: the one-sided two-sample test of no drop (z on the pooled standard error), Holm-adjusted across every model × window tested; %s: a drop flagged (adjusted p ≤ %s)",
		v.Level, r.MinN, v.Level, dropMark, units.Plain(units.RoundSig(r.Alpha)))
	for _, s := range r.Models {
		for i, p := range s.Points {
			row := trendRow{Model: s.Model, Window: p.Window, N: units.Count(p.N), Rate: units.Missing, CI: "", Untested: p.Untested, First: i == 0}
			if p.N > 0 {
				row.Rate, row.CI = units.Pct(p.Rate), units.PctCI([2]float64{p.Lo, p.Hi})
			}
			if c := p.Change; c != nil {
				row.Change, row.ChangeCI = units.Delta(c.Delta), units.DeltaCI([2]float64{c.Lo, c.Hi})
				row.Z, row.P, row.Drop = units.Z(c.Z), units.PValueCell(c.PAdj), c.Drop
				if c.ScorersChanged {
					row.Untested = "scored with different scorers than " + c.Against
				}
			}
			v.Rows = append(v.Rows, row)
		}
		v.Models = append(v.Models, newTrendChart(s))
	}
	return v
}

// TrendText renders the trend as plain text: one row per model × window.
func TrendText(w io.Writer, r *trend.Report) error {
	v := newTrendView(r)
	var b strings.Builder
	fmt.Fprintf(&b, "assay trend: pass rates of scored traces by %s", v.Windows)
	if v.Span != "" {
		fmt.Fprintf(&b, ", %s", v.Span)
	}
	b.WriteString("\n")
	if v.Spec != "" {
		fmt.Fprintf(&b, "spec %s; ", strconv.Quote(oneLine(v.Spec)))
	}
	fmt.Fprintf(&b, "%s; %s\n", oneLine(v.Scorer), v.Read)
	for _, l := range v.Left {
		fmt.Fprintf(&b, "left out: %s\n", l)
	}
	fmt.Fprintf(&b, "\n%s\n", oneLine(v.Verdict))
	if len(v.Rows) > 0 {
		b.WriteString("\n")
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "model\twindow\tn\trate\t%s CI\tchange\t%s CI\tz\tp (Holm)\t\t\n", v.Level, v.Level)
		for _, row := range v.Rows {
			model := ""
			if row.First {
				model = oneLine(row.Model)
			}
			mark := ""
			if row.Drop {
				mark = dropMark + " drop"
			}
			if row.Untested != "" {
				mark = strings.TrimSpace(mark + " " + oneLine(row.Untested))
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", model, row.Window, row.N, row.Rate, row.CI, row.Change, row.ChangeCI, row.Z, row.P, mark)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	fmt.Fprintf(&b, "\n%s.\n", v.Method)
	for _, n := range v.Notes {
		fmt.Fprintf(&b, "note: %s\n", oneLine(n))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// TrendMarkdown renders the trend as Markdown.
func TrendMarkdown(w io.Writer, r *trend.Report) error {
	v := newTrendView(r)
	var b strings.Builder
	fmt.Fprintf(&b, "# assay trend: pass rates by %s", v.Windows)
	if v.Span != "" {
		fmt.Fprintf(&b, ", %s", mdText(v.Span))
	}
	b.WriteString("\n\n")
	if v.Spec != "" {
		fmt.Fprintf(&b, "Spec %s. ", mdText(v.Spec))
	}
	fmt.Fprintf(&b, "Verdicts: %s. %s.\n\n", mdText(v.Scorer), mdText(v.Read))
	for _, l := range v.Left {
		fmt.Fprintf(&b, "- left out: %s\n", mdText(l))
	}
	if len(v.Left) > 0 {
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "**%s**\n\n", mdText(v.Verdict))
	if len(v.Rows) > 0 {
		fmt.Fprintf(&b, "| model | window | n | rate | %s CI | change | %s CI | z | p (Holm) | |\n|---|---|--:|--:|--:|--:|--:|--:|--:|---|\n", v.Level, v.Level)
		for _, row := range v.Rows {
			model := ""
			if row.First {
				model = mdText(row.Model)
			}
			mark := ""
			if row.Drop {
				mark = "**" + dropMark + " drop**"
			}
			if row.Untested != "" {
				mark = strings.TrimSpace(mark + " " + mdText(row.Untested))
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", model, mdText(row.Window), row.N, row.Rate, row.CI,
				row.Change, row.ChangeCI, row.Z, row.P, mark)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "%s.\n", v.Method)
	for _, n := range v.Notes {
		fmt.Fprintf(&b, "\n> note: %s\n", mdText(n))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// trendChart is one model's line chart: the rate per window with its
// interval as a band, drops marked. Coordinates are numbers assay computed;
// the model's name is escaped by html/template.
type trendChart struct {
	Model          string
	Width, Height  int
	Bands, Lines   []string // SVG path data, one per run of windows with traces
	Points         []trendPoint
	Ticks          []trendTick
	XLabels        []trendTick
	Left, Right    float64
	Top, Bottom    float64
	HasData        bool
	AxisX, AxisTop string
}

type trendPoint struct {
	X, Y string
	Tip  string
	Drop bool
}

type trendTick struct {
	Pos   string
	Label string
}

const (
	chartW, chartH                     = 640, 200
	chartL, chartR, chartT, chartB     = 52.0, 40.0, 10.0, 34.0
	chartPlotW, chartPlotH             = chartW - chartL - chartR, chartH - chartT - chartB
	chartYTicks                    int = 5
)

func newTrendChart(s trend.Series) trendChart {
	c := trendChart{Model: s.Model, Width: chartW, Height: chartH, Left: chartL, Right: chartW - chartR, Top: chartT, Bottom: chartH - chartB}
	n := len(s.Points)
	x := func(i int) float64 {
		if n == 1 {
			return chartL + chartPlotW/2
		}
		return chartL + chartPlotW*float64(i)/float64(n-1)
	}
	y := func(r float64) float64 { return chartT + chartPlotH*(1-r) }
	for i := range chartYTicks {
		r := float64(i) / float64(chartYTicks-1)
		c.Ticks = append(c.Ticks, trendTick{Pos: num(y(r)), Label: units.PctTick(r)})
	}
	step := max(1, n/8) // at most about 8 window labels
	for i, p := range s.Points {
		if i%step == 0 || i == n-1 {
			c.XLabels = append(c.XLabels, trendTick{Pos: num(x(i)), Label: p.Window})
		}
	}
	// A band and a line per run of consecutive windows with traces.
	var band, upper, line []string
	flush := func() {
		if len(line) > 0 {
			for i := len(upper) - 1; i >= 0; i-- {
				band = append(band, upper[i])
			}
			c.Bands = append(c.Bands, "M"+strings.Join(band, "L")+"Z")
			c.Lines = append(c.Lines, "M"+strings.Join(line, "L"))
		}
		band, upper, line = nil, nil, nil
	}
	for i, p := range s.Points {
		if p.N == 0 {
			flush()
			continue
		}
		c.HasData = true
		xi := num(x(i))
		band = append(band, xi+" "+num(y(p.Lo)))
		upper = append(upper, xi+" "+num(y(p.Hi)))
		line = append(line, xi+" "+num(y(p.Rate)))
		tip := fmt.Sprintf("%s %s: %s %s, n %s", s.Model, p.Window, units.Pct(p.Rate), units.PctCI([2]float64{p.Lo, p.Hi}), units.Count(p.N))
		if p.Change != nil {
			tip += fmt.Sprintf("; change %s, p (Holm) %s", units.Delta(p.Change.Delta), units.PValueCell(p.Change.PAdj))
		}
		c.Points = append(c.Points, trendPoint{X: xi, Y: num(y(p.Rate)), Tip: tip, Drop: p.Change != nil && p.Change.Drop})
	}
	flush()
	c.AxisX, c.AxisTop = num(chartH-chartB), num(chartT)
	return c
}

var trendTmpl = template.Must(template.New("page").Funcs(template.FuncMap{
	"vis": func(s string) string { return visible(s, false) },
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>assay trend</title>
<style>
body { font: 15px/1.45 system-ui, sans-serif; margin: 2rem auto; max-width: 64rem; padding: 0 1rem; color: #1d1d1f; }
table { border-collapse: collapse; margin: 1rem 0; }
th, td { padding: .2rem .55rem; border-bottom: 1px solid #ddd; text-align: right; white-space: nowrap; }
th:nth-child(-n+2), td:nth-child(-n+2), td:last-child { text-align: left; }
td:last-child { white-space: normal; color: #555; min-width: 18rem; }
tr.drop td { background: #fdecea; }
.verdict { font-weight: 600; }
.verdict.drop { color: #b3261e; }
.drop-mark { color: #b3261e; font-weight: 600; }
svg { display: block; margin: .5rem 0 1.5rem; max-width: 100%; height: auto; }
svg text { font: 11px system-ui, sans-serif; fill: #555; }
svg .grid { stroke: #e5e5e5; }
svg .band { fill: #1f6feb; fill-opacity: .15; stroke: none; }
svg .line { fill: none; stroke: #1f6feb; stroke-width: 2; }
svg .pt { fill: #1f6feb; }
svg .pt.drop { fill: #b3261e; }
.method, .notes { color: #555; font-size: 90%; }
</style>
</head>
<body>
<main>
<h1>assay trend: pass rates by {{.Windows}}{{if .Span}}, {{.Span}}{{end}}</h1>
<p>{{if .Spec}}Spec {{vis .Spec}}. {{end}}Verdicts: {{vis .Scorer}}. {{.Read}}.</p>
{{- if .Left}}
<ul class="left">{{range .Left}}<li>left out: {{.}}</li>{{end}}</ul>
{{- end}}
<p class="verdict{{if .Drop}} drop{{end}}" data-drop="{{.Drop}}">{{vis .Verdict}}</p>
{{- range .Models}}
<h2>{{vis .Model}}</h2>
{{- if .HasData}}
<svg viewBox="0 0 {{.Width}} {{.Height}}" width="{{.Width}}" height="{{.Height}}" role="img" aria-label="pass rate of {{vis .Model}} by window">
{{- $c := .}}
{{- range .Ticks}}
<line class="grid" x1="{{$c.Left}}" x2="{{$c.Right}}" y1="{{.Pos}}" y2="{{.Pos}}"/><text x="{{$c.Left}}" y="{{.Pos}}" dx="-4" dy="4" text-anchor="end">{{.Label}}</text>
{{- end}}
{{- range .XLabels}}
<text x="{{.Pos}}" y="{{$c.AxisX}}" dy="16" text-anchor="middle">{{vis .Label}}</text>
{{- end}}
{{- range .Bands}}
<path class="band" d="{{.}}"/>
{{- end}}
{{- range .Lines}}
<path class="line" d="{{.}}"/>
{{- end}}
{{- range .Points}}
{{- if .Drop}}
<path class="pt drop" d="M{{.X}} {{.Y}}m-6 -5h12l-6 10z"><title>{{vis .Tip}} (a drop flagged)</title></path>
{{- else}}
<circle class="pt" cx="{{.X}}" cy="{{.Y}}" r="3.5"><title>{{vis .Tip}}</title></circle>
{{- end}}
{{- end}}
</svg>
{{- end}}
{{- end}}
{{- if .Rows}}
<table class="trend">
<thead><tr><th>model</th><th>window</th><th>n</th><th>rate</th><th>{{.Level}} CI</th><th>change</th><th>{{.Level}} CI</th><th>z</th><th>p (Holm)</th><th></th></tr></thead>
<tbody>{{range .Rows}}<tr{{if .Drop}} class="drop"{{end}}><td>{{if .First}}{{vis .Model}}{{end}}</td><td>{{vis .Window}}</td><td>{{.N}}</td><td>{{.Rate}}</td><td>{{.CI}}</td><td>{{.Change}}</td><td>{{.ChangeCI}}</td><td>{{.Z}}</td><td>{{.P}}</td><td>{{if .Drop}}<span class="drop-mark">▼ drop</span> {{end}}{{vis .Untested}}</td></tr>
{{end}}</tbody>
</table>
{{- end}}
<p class="method">{{.Method}}.</p>
{{- if .Notes}}
<ul class="notes">{{range .Notes}}<li>{{vis .}}</li>{{end}}</ul>
{{- end}}
</main>
</body>
</html>
`))

// TrendPage renders the trend as a self-contained HTML page (no scripts; a
// CSP forbids them): a line chart per model with its interval band, drops
// marked, then the table. Every name is escaped.
func TrendPage(w io.Writer, r *trend.Report) error {
	return renderWhole(w, trendTmpl, "", newTrendView(r), "the trend")
}
