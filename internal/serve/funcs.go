package serve

import (
	"html/template"
	"net/url"

	"github.com/assay-eval/assay/internal/report"
)

// funcs are the template functions every page may use. None returns
// template.HTML built from data: everything is escaped by html/template.
var funcs = template.FuncMap{
	"query": func(kv ...string) template.URL {
		v := url.Values{}
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i+1] != "" {
				v.Set(kv[i], kv[i+1])
			}
		}
		return template.URL("?" + v.Encode())
	},
	"pathEscape": url.PathEscape,
	// visible shows control and bidirectional-override characters of
	// outside text (an ANSI escape, a NUL) as escapes, lines kept, as the
	// HTML report does; html/template escapes the rest.
	"visible": func(s string) string { return report.Visible(s, true) },
	// addForm is the data of the "addcase" block (_addcase.tmpl): the
	// "add to dataset" form for one output.
	"addForm": func(csrf, runID, caseID, target string, epoch int) AddForm {
		return AddForm{CSRF: csrf, RunID: runID, CaseID: caseID, Target: target, Epoch: epoch}
	},
}
