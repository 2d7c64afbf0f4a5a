package report

import (
	"fmt"
	"html/template"
	"io"

	"github.com/assay-eval/assay/internal/calibrate"
)

// calibrationTemplates render a calibration report as HTML with
// html/template, so every name and label reason is escaped for where it
// lands. "calibration" is the fragment serve embeds; "calibration-page"
// wraps it in a self-contained page (no scripts; a CSP forbids them).
const calibrationTemplates = `
{{define "calibration"}}<section class="calibration">
<h2>Calibration: {{vis .Title}}</h2>
<p class="verdict {{.Kind}}" data-verdict="{{.Kind}}"><strong>{{.Verdict}}</strong></p>
<ul class="reasons">{{range .Reasons}}<li>{{vis .}}</li>{{end}}</ul>
<p class="labels">{{.Labels}}</p>
<table class="confusion">
<thead><tr><th>{{if .Weighted}}labels{{end}}</th><th>judge pass</th><th>judge fail</th></tr></thead>
<tbody>
<tr><th>human pass</th><td data-cell="tp">{{index .Matrix 0 0}}</td><td data-cell="fn">{{index .Matrix 0 1}}</td></tr>
<tr><th>human fail</th><td data-cell="fp">{{index .Matrix 1 0}}</td><td data-cell="tn">{{index .Matrix 1 1}}</td></tr>
</tbody>
</table>
{{- with .Weighted}}
<table class="confusion weighted">
<thead><tr><th>weighted</th><th>judge pass</th><th>judge fail</th></tr></thead>
<tbody>
<tr><th>human pass</th><td data-cell="weighted-tp">{{index . 0 0}}</td><td data-cell="weighted-fn">{{index . 0 1}}</td></tr>
<tr><th>human fail</th><td data-cell="weighted-fp">{{index . 1 0}}</td><td data-cell="weighted-tn">{{index . 1 1}}</td></tr>
</tbody>
</table>
{{- end}}
{{- if .Weighting}}
<p class="weighting">{{vis .Weighting}}</p>
{{- end}}
<table class="classes">
<thead><tr><th>class</th><th>labels</th><th>precision</th><th>recall</th><th>F1</th></tr></thead>
<tbody>{{range .Classes}}<tr><th>{{index . 0}}</th><td>{{index . 1}}</td><td>{{index . 2}}</td><td>{{index . 3}}</td><td>{{index . 4}}</td></tr>{{end}}</tbody>
</table>
<table class="measures">
<tbody>{{range .Measures}}<tr><th>{{index . 0}}</th><td class="value">{{index . 1}}</td><td class="detail">{{vis (index . 2)}}</td></tr>{{end}}</tbody>
</table>
<p class="needed"><strong>Labels needed:</strong> {{vis .Needed}}</p>
<p class="thresholds">Thresholds: {{.Threshold}}</p>
{{- if .Disagreed}}
<h3>Labeled outputs the judge got wrong</h3>
<table class="disagreed">
<thead><tr><th>output</th><th>people</th><th>judge</th><th>labeler</th><th>reason</th></tr></thead>
<tbody>{{range .Disagreed}}<tr><td>{{vis .Output}}</td><td>{{.Human}}</td><td>{{.Judge}}</td><td>{{vis .Labeler}}</td><td class="reason">{{lines .Reason}}</td></tr>{{end}}</tbody>
</table>
{{- if .More}}<p>{{.More}}</p>{{end}}
{{- end}}
{{- if .Notes}}
<ul class="notes">{{range .Notes}}<li>{{vis .}}</li>{{end}}</ul>
{{- end}}
</section>
{{end}}
{{define "calibration-page"}}<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>assay calibrate: {{vis .Title}}</title>
<style>
body { font: 15px/1.45 system-ui, sans-serif; margin: 2rem auto; max-width: 60rem; padding: 0 1rem; color: #1d1d1f; }
table { border-collapse: collapse; margin: 1rem 0; }
th, td { padding: .25rem .6rem; border-bottom: 1px solid #ddd; text-align: right; }
th:first-child, td.detail, td.reason, .disagreed td { text-align: left; }
.verdict.fit { color: #11663a; } .verdict.biased { color: #8a5a00; } .verdict.not_fit { color: #a4161a; }
.reason { white-space: pre-wrap; }
</style>
</head>
<body>
<main>
{{template "calibration" .}}
</main>
</body>
</html>
{{end}}`

// vis shows outside text as visible characters (control and
// bidirectional-override characters written out), as every format does;
// html/template then escapes it.
var calibrationTmpl = template.Must(template.New("calibration").Funcs(template.FuncMap{
	"vis":   func(s string) string { return visible(s, false) },
	"lines": func(s string) string { return visible(s, true) },
}).Parse(calibrationTemplates))

func executeCalibration(w io.Writer, name string, rep *calibrate.Report) error {
	if rep == nil {
		return fmt.Errorf("rendering the calibration: no report")
	}
	return renderWhole(w, calibrationTmpl, name, newCalibrationView(rep), "the calibration")
}

// CalibrationPage renders a calibration report as a whole HTML document:
// the fragment CalibrationHTML writes inside a self-contained page.
func CalibrationPage(w io.Writer, rep *calibrate.Report) error {
	return executeCalibration(w, "calibration-page", rep)
}

// CalibrationHTML writes a calibration report as an HTML fragment (a
// <section>, no <html> or <body>): the body of the html format, which
// serve's calibration page embeds in its own chrome. Everything from
// labels and the spec is escaped.
func CalibrationHTML(w io.Writer, rep *calibrate.Report) error {
	return executeCalibration(w, "calibration", rep)
}
