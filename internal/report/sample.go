package report

import (
	"fmt"
	"html/template"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/sample"
	"github.com/assay-eval/assay/internal/units"
)

// SampleFormats are `assay sample`'s formats.
func SampleFormats() []Format[*record.Sample] {
	return []Format[*record.Sample]{
		{Name: "text", Aliases: []string{""}, Render: SampleText},
		JSONFormat[*record.Sample](),
	}
}

// TraceScoresFormats are `assay score-traces`' formats.
func TraceScoresFormats() []Format[*sample.ScoreReport] {
	return []Format[*sample.ScoreReport]{
		{Name: "text", Aliases: []string{""}, Render: TraceScoresText},
		{Name: "markdown", Aliases: []string{"md"}, Render: TraceScoresMarkdown},
		JSONFormat[*sample.ScoreReport](),
		{Name: "html", Render: TraceScoresPage},
	}
}

// sampleWindow says a sample's time window.
func sampleWindow(since, until time.Time) string {
	f := func(t time.Time, open string) string {
		if t.IsZero() {
			return open
		}
		return t.UTC().Format(time.RFC3339)
	}
	return "[" + f(since, "the first trace") + ", " + f(until, "now") + ")"
}

// SampleText renders a sample: how it was drawn, then each stratum's
// population, draws and weight.
func SampleText(w io.Writer, s *record.Sample) error {
	var b strings.Builder
	drawn, pop := 0, 0
	for _, st := range s.Strata {
		drawn += st.Drawn
		pop += st.Population
	}
	fmt.Fprintf(&b, "assay sample %s (seed %d)\n", oneLine(s.ID), s.Seed)
	fmt.Fprintf(&b, "window %s", sampleWindow(s.Since, s.Until))
	if s.Filter != "" {
		fmt.Fprintf(&b, ", where %s", oneLine(s.Filter))
	}
	b.WriteString("\n")
	if len(s.By) > 0 {
		fmt.Fprintf(&b, "stratified by %s, %s per stratum: %s drawn from %s in %s\n",
			oneLine(strings.Join(s.By, ", ")), units.Count(s.Per), units.Count(drawn), plural(pop, "trace"), strata(len(s.Strata)))
	} else {
		fmt.Fprintf(&b, "simple sample of %s: %s drawn from %s\n", units.Count(s.Per), units.Count(drawn), plural(pop, "trace"))
	}
	if len(s.Strata) == 0 {
		b.WriteString("no trace in the window: nothing was drawn\n")
		_, err := io.WriteString(w, b.String())
		return err
	}
	b.WriteString("\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "stratum\tpopulation\tdrawn\tweight\t")
	for _, st := range s.Strata {
		key := st.Key
		if key == "" {
			key = "(all)"
		}
		weight := units.Missing
		if st.Drawn > 0 {
			weight = units.Num(float64(st.Population) / float64(st.Drawn))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\n", oneLine(key), units.Count(st.Population), units.Count(st.Drawn), weight)
	}
	tw.Flush()
	fmt.Fprintf(&b, "\nscore it: assay score-traces SPEC --sample %s\n", oneLine(s.ID))
	_, err := io.WriteString(w, b.String())
	return err
}

// strata is "1 stratum", "3 strata".
func strata(n int) string {
	if n == 1 {
		return "1 stratum"
	}
	return units.Count(n) + " strata"
}

// traceScoresView is a score-traces report with every number formatted and
// every outside text as given: each format escapes it where it lands.
type traceScoresView struct {
	Title, Window, Status, Level, Scorers string
	// Privacy says how much the redaction replaced in the scored traces
	// ("" when nothing).
	Privacy string
	Skipped []string
	Rows    [][7]string // model, scorer, weighted, interval, unweighted, n, population
}

func newTraceScoresView(r *sample.ScoreReport) traceScoresView {
	v := traceScoresView{
		Title:   fmt.Sprintf("sample %s scored as run %s", r.SampleID, r.RunID),
		Window:  sampleWindow(r.Since, r.Until) + ", " + plural(r.Traces, "trace") + " scored",
		Status:  r.Status,
		Level:   units.Plain(100*r.Level) + "%",
		Skipped: r.Skipped,
	}
	if r.Redactions > 0 {
		v.Privacy = fmt.Sprintf("privacy: %s replaced by [REDACTED:<name>] in %s of the %s scored before they were stored (traces.redact)",
			plural(r.Redactions, "value"), units.Count(r.Redacted), plural(r.Traces, "trace"))
	}
	v.Scorers = strings.Join(r.Scorers, ", ")
	if r.Primary != "" {
		v.Scorers += " (headline: " + r.Primary + ")"
	}
	for _, e := range r.Rates {
		v.Rows = append(v.Rows, [7]string{e.Model, e.Scorer, units.Pct(e.Rate), units.PctCI([2]float64{e.Lo, e.Hi}),
			units.Pct(e.Unweighted), units.Count(e.N), units.Num(e.Population)})
	}
	return v
}

const traceScoresHead = "weighted pass rate: the population's, estimated with each trace weighted by its stratum's population over its draws; unweighted: the share of sampled traces that passed"

// TraceScoresText renders the weighted rates as plain text.
func TraceScoresText(w io.Writer, r *sample.ScoreReport) error {
	v := newTraceScoresView(r)
	var b strings.Builder
	fmt.Fprintf(&b, "assay score-traces: %s\n", oneLine(v.Title))
	fmt.Fprintf(&b, "window %s\n", v.Window)
	if v.Status != "complete" {
		fmt.Fprintf(&b, "status: %s (the rates are of the traces scored)\n", oneLine(v.Status))
	}
	fmt.Fprintf(&b, "scorers: %s\n", oneLine(v.Scorers))
	for _, s := range v.Skipped {
		fmt.Fprintf(&b, "skipped %s\n", oneLine(s))
	}
	if v.Privacy != "" {
		fmt.Fprintf(&b, "%s\n", v.Privacy)
	}
	fmt.Fprintf(&b, "\n%s; %s intervals\n\n", traceScoresHead, v.Level)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "model\tscorer\tweighted\tinterval\tunweighted\tn\tpopulation\t")
	for _, row := range v.Rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", oneLine(row[0]), oneLine(row[1]), row[2], row[3], row[4], row[5], row[6])
	}
	tw.Flush()
	fmt.Fprintf(&b, "\nthe run: assay report %s\n", oneLine(r.RunID))
	_, err := io.WriteString(w, b.String())
	return err
}

// TraceScoresMarkdown renders the weighted rates as Markdown.
func TraceScoresMarkdown(w io.Writer, r *sample.ScoreReport) error {
	v := newTraceScoresView(r)
	var b strings.Builder
	fmt.Fprintf(&b, "# assay score-traces: %s\n\n", mdText(v.Title))
	fmt.Fprintf(&b, "Window %s.", mdText(v.Window))
	if v.Status != "complete" {
		fmt.Fprintf(&b, " Status: %s (the rates are of the traces scored).", mdText(v.Status))
	}
	fmt.Fprintf(&b, " Scorers: %s.\n\n", mdText(v.Scorers))
	for _, s := range v.Skipped {
		fmt.Fprintf(&b, "- skipped %s\n", mdText(s))
	}
	if len(v.Skipped) > 0 {
		b.WriteString("\n")
	}
	if v.Privacy != "" {
		fmt.Fprintf(&b, "%s.\n\n", mdText(v.Privacy))
	}
	fmt.Fprintf(&b, "%s; %s intervals.\n\n", mdText(traceScoresHead), v.Level)
	b.WriteString("| model | scorer | weighted | interval | unweighted | n | population |\n|---|---|--:|--:|--:|--:|--:|\n")
	for _, row := range v.Rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", mdText(row[0]), mdText(row[1]), row[2], row[3], row[4], row[5], row[6])
	}
	_, err := io.WriteString(w, b.String())
	return err
}

var traceScoresTmpl = template.Must(template.New("page").Funcs(template.FuncMap{
	"vis": func(s string) string { return visible(s, false) },
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>assay score-traces: {{vis .Title}}</title>
<style>
body { font: 15px/1.45 system-ui, sans-serif; margin: 2rem auto; max-width: 60rem; padding: 0 1rem; color: #1d1d1f; }
table { border-collapse: collapse; margin: 1rem 0; }
th, td { padding: .25rem .6rem; border-bottom: 1px solid #ddd; text-align: right; }
th:nth-child(-n+2), td:nth-child(-n+2) { text-align: left; }
</style>
</head>
<body>
<main>
<h1>assay score-traces: {{vis .Title}}</h1>
<p>Window {{vis .Window}}.{{if ne .Status "complete"}} Status: {{vis .Status}} (the rates are of the traces scored).{{end}} Scorers: {{vis .Scorers}}.</p>
{{- if .Skipped}}
<ul class="skipped">{{range .Skipped}}<li>skipped {{vis .}}</li>{{end}}</ul>
{{- end}}
{{- if .Privacy}}
<p class="privacy">{{vis .Privacy}}.</p>
{{- end}}
<p>` + traceScoresHead + `; {{.Level}} intervals.</p>
<table class="rates">
<thead><tr><th>model</th><th>scorer</th><th>weighted</th><th>interval</th><th>unweighted</th><th>n</th><th>population</th></tr></thead>
<tbody>{{range .Rows}}<tr><td>{{vis (index . 0)}}</td><td>{{vis (index . 1)}}</td><td>{{index . 2}}</td><td>{{index . 3}}</td><td>{{index . 4}}</td><td>{{index . 5}}</td><td>{{index . 6}}</td></tr>{{end}}</tbody>
</table>
</main>
</body>
</html>
`))

// TraceScoresPage renders the weighted rates as a self-contained HTML page
// (no scripts); every model and scorer name is escaped.
func TraceScoresPage(w io.Writer, r *sample.ScoreReport) error {
	return renderWhole(w, traceScoresTmpl, "", newTraceScoresView(r), "the trace scores")
}
