package report

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/assay-eval/assay/internal/analysis"
	"github.com/assay-eval/assay/internal/units"
)

//go:embed templates/*.tmpl
var htmlTemplates embed.FS

// HTML writes the report as one self-contained HTML page: no scripts, no
// fetches (a Content-Security-Policy forbids them besides), inline CSS,
// charts drawn as inline SVG. It is rendered with html/template from
// embedded templates, so every value from a spec, a dataset or a model is
// escaped for the context it lands in, SVG text included.
func HTML(w io.Writer, rep *analysis.Report) error {
	return renderHTML(w, rep, htmlOptions{csp: true})
}

type htmlOptions struct {
	// csp adds the Content-Security-Policy meta tag. Tests turn it off to
	// prove escaping holds on its own.
	csp bool
}

// HTMLBody writes the report's sections — everything HTML's page holds
// inside <main>, the SVG charts included — as a fragment for a page that
// brings its own head and chrome (assay serve). It is HTML's renderer: the
// page is this fragment wrapped. The fragment's classes are styled by
// HTMLStyle.
func HTMLBody(w io.Writer, rep *analysis.Report) error {
	return executeHTML(w, "body", newHTMLPage(rep, htmlOptions{}))
}

// HTMLStyle is the stylesheet HTML's page carries inline, for a page that
// links it instead (a Content-Security-Policy without inline styles).
func HTMLStyle() (string, error) {
	var b strings.Builder
	if err := executeHTML(&b, "style", nil); err != nil {
		return "", err
	}
	return b.String(), nil
}

func renderHTML(w io.Writer, rep *analysis.Report, o htmlOptions) error {
	return executeHTML(w, "report.html.tmpl", newHTMLPage(rep, o))
}

// executeHTML renders the named template of the report's templates into a
// buffer first, so a failure writes nothing.
func executeHTML(w io.Writer, name string, data any) error {
	t, err := template.New("report.html.tmpl").Funcs(template.FuncMap{
		"num": num,
	}).ParseFS(htmlTemplates, "templates/*.tmpl")
	if err != nil {
		return fmt.Errorf("parsing the HTML report templates: %w", err)
	}
	return renderWhole(w, t, name, data, "the HTML report")
}

// renderWhole executes t's template name (t itself when name is "") into a
// buffer and writes it only when the whole page rendered, so a failure
// mid-page writes nothing; what names the page in the error.
func renderWhole(w io.Writer, t *template.Template, name string, data any, what string) error {
	if name == "" {
		name = t.Name()
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, name, data); err != nil {
		return fmt.Errorf("rendering %s: %w", what, err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// htmlPage is what the template shows, every number already formatted.
type htmlPage struct {
	CSP         bool
	Title       string
	Run         analysis.RunInfo
	Primary     string
	Targets     []htmlTarget
	Warnings    []string
	Comparisons []htmlComparison
	Ranking     []htmlRank
	Pareto      string
	Test        string
	// Streamed is set when a target reported a time to first token: the
	// headline table then has its column.
	Streamed bool
	// PrimaryCI and RateCI name the intervals of the primary rates and of
	// the passed/n rates of one verdict per case (slices).
	PrimaryCI, RateCI string
	SliceCharts       []chart
	Forests           []chart
	Cost              *chart
	Latency           *chart
	SliceTables       []htmlSliceTable
	Kinds             htmlKinds
	Worst             []htmlFailure
	WorstTotal        int
	Spec              string
	Noise             []htmlNoise
	NoiseNote         string
	Ledger            *htmlLedger
	// Rescored names the scoring read when it is not the run's own, with
	// its scorers hash.
	Rescored                    string
	Scorers                     []htmlScorer
	ScorerMethods, ScorerJudges bool
	Fields                      []htmlFieldTable
	FieldNote                   string
	Classes                     *htmlClasses
	// Pairwise are the pairwise judges' wins, ties and losses (nil for none).
	Pairwise     *htmlPairwise
	FailuresHint string
	// Calls is the tool-call section (nil for a run without calls).
	Calls *htmlCalls
}

type htmlNoise struct {
	Name, SE, SD, K, Rates, Share string
}

// htmlLedger is the selection ledger, formatted.
type htmlLedger struct {
	Experiment, Variants, Runs, Scorer, Summary string
	Chosen, ChosenRate                          string
	Reference, ReferenceRate, ReferenceFrom     string
	Lead, P, PAdj, Family, Survives, Class      string
	N                                           int
	Inflation, EMax, Sigma, Deflated            string
	HasVariants                                 bool
	Tried                                       []htmlLedgerRow
	TriedTotal                                  int
	Notes                                       []string
}

type htmlLedgerRow struct {
	Name, Started, Cases, Rate, Delta, P, PAdj, Verdict, Class string
	Chosen                                                     bool
}

type htmlTarget struct {
	Name, Series                     string
	N, Passed, Rate, CI              string
	Loud, Silent, Errors             string
	P50, P95, P99, FirstToken        string
	Tokens                           string
	Cost, PerCase, PerMonth          string
	PerCorrect, ErrorsPerCase, Total string
	Judge                            string
	OnFrontier                       bool
}

type htmlComparison struct {
	A, B, N, Delta, P, PAdj, Verdict, Class, Discordant string
}

type htmlRank struct {
	Rank    int
	Targets []string
	Tied    bool
}

type htmlSliceTable struct {
	Key     string
	Targets []string
	Pairs   []htmlPair
	Rows    []htmlSliceRow
}

type htmlPair struct{ A, B string }

type htmlSliceRow struct {
	Value string
	Cells []htmlCell
	Diffs []htmlCell
}

type htmlCell struct{ Text, Sub, Class, Tip string }

type htmlKinds struct {
	Targets []string
	Rows    []htmlKindRow
}

type htmlKindRow struct {
	Kind   string
	Counts []string
}

type htmlFailure struct {
	Target, CaseID, Epoch, Shape, Kind, Reason, Expected, Raw, Cost string
	// Calls are the reply's tool calls, one per line (empty for none).
	Calls string
}

func newHTMLPage(rep *analysis.Report, o htmlOptions) htmlPage {
	p := htmlPage{CSP: o.csp, Run: rep.Run, Primary: primaryScorer(rep)}
	p.Title = rep.Run.Spec
	if p.Title == "" {
		p.Title = rep.Run.ID
	}
	p.Run = visibleRun(rep.Run)
	onFrontier := map[string]bool{}
	for _, n := range rep.Pareto {
		onFrontier[n] = true
	}
	for i, t := range rep.Targets {
		h := htmlTarget{
			Name: t.Name, Series: seriesClass(i),
			N: units.Count(t.N), Passed: units.Count(t.Primary.Passed) + "/" + units.Count(t.Primary.N),
			Rate: "—", CI: "",
			Loud: units.Count(t.Failures.Loud), Silent: units.Count(t.Failures.Silent), Errors: units.Count(t.Errors),
			P50: units.MS(t.LatencyMS.P50), P95: units.MS(t.LatencyMS.P95), P99: units.MS(t.LatencyMS.P99),
			Tokens: units.Count(t.Tokens.Input) + " in / " + units.Count(t.Tokens.Output) + " out",
			Cost:   units.USD(t.CostUSD.Total), PerCase: units.USD(t.CostUSD.PerCase), PerMonth: usdPtr(t.CostUSD.PerMonth),
			PerCorrect: usdPtr(t.CostUSD.PerCorrect), ErrorsPerCase: units.USD(t.CostUSD.ErrorsPerCase),
			Total: units.USD(t.CostUSD.TotalPerCase), Judge: units.USD(t.JudgeCostUSD),
			OnFrontier: onFrontier[t.Name],
		}
		if t.Primary.N > 0 {
			h.Rate, h.CI = units.Pct(t.Primary.Rate), units.PctCI(t.Primary.CI)
		}
		if ft := t.LatencyMS.FirstToken; ft != nil {
			h.FirstToken = units.MS(ft.P50) + " / " + units.MS(ft.P95)
			p.Streamed = true
		}
		p.Targets = append(p.Targets, h)
	}
	for _, w := range rep.Warnings {
		p.Warnings = append(p.Warnings, visible(w, false))
	}
	for _, n := range targetNotes(rep, func(s string) string { return s }) {
		p.Warnings = append(p.Warnings, visible(n, false))
	}
	for _, c := range rep.Comparisons {
		p.Comparisons = append(p.Comparisons, htmlComparison{
			A: c.A, B: c.B, N: units.Count(c.N), Delta: deltaCI(c), P: units.PValue(c.PValue), PAdj: units.PValue(c.PAdjusted),
			Verdict: verdictWords(c), Class: verdictClass(c.Verdict),
			Discordant: units.Count(c.AOnly) + " / " + units.Count(c.BOnly),
		})
	}
	if len(rep.Comparisons) > 0 {
		p.Test = analysis.MethodLabel(rep.Comparisons)
	}
	p.PrimaryCI, p.RateCI = "Wilson", rateWord(rep)
	if len(rep.Targets) > 0 {
		p.PrimaryCI = intervalWord(rep.Targets[0].Primary.CIMethod)
	}
	for _, g := range rep.Ranking {
		p.Ranking = append(p.Ranking, htmlRank{Rank: g.Rank, Targets: g.Targets, Tied: len(g.Targets) > 1})
	}
	p.Pareto = strings.Join(rep.Pareto, ", ")
	for i, key := range sliceKeys(rep) {
		values := sliceValues(rep, key)
		p.SliceCharts = append(p.SliceCharts, sliceChart(i, key, values, rep))
		p.SliceTables = append(p.SliceTables, sliceTable(rep, key, values))
	}
	for i, c := range rep.Comparisons {
		p.Forests = append(p.Forests, forestChart(i, c))
	}
	if len(rep.Targets) > 0 {
		cc, lc := costChart(rep), latencyChart(rep)
		p.Cost, p.Latency = &cc, &lc
	}
	p.Kinds = kindsTable(rep)
	p.WorstTotal = failureCount(rep)
	p.FailuresHint = visible(failuresHint(rep), false)
	p.Rescored = visible(rescoredLine(rep.Run), false)
	htmlScorersAndFields(&p, rep)
	p.Classes = newHTMLClasses(rep)
	p.Pairwise = newHTMLPairwise(rep)
	p.Calls = newHTMLCalls(rep)
	for _, f := range rep.Worst {
		h := htmlFailure{Target: f.Target, CaseID: visible(f.CaseID, false), Shape: f.Shape, Kind: visible(f.Kind, false),
			Reason: visible(f.Reason, true), Expected: visible(f.Expected, true), Raw: visible(f.Raw, true),
			Calls: visible(analysis.CallsText(f.Calls), true)}
		if f.Epoch > 1 {
			h.Epoch = strconv.Itoa(f.Epoch)
		}
		if f.ErrorCost > 0 {
			h.Cost = units.USD(f.ErrorCost)
		}
		p.Worst = append(p.Worst, h)
	}
	for _, r := range noiseRows(rep) {
		p.Noise = append(p.Noise, htmlNoise{Name: r.name, SE: r.se, SD: r.sd, K: strconv.Itoa(r.k), Rates: r.rates, Share: r.share})
	}
	p.NoiseNote = noiseNote
	if rep.Ledger != nil {
		p.Ledger = newHTMLLedger(rep.Ledger)
	}
	if len(rep.Spec) > 0 {
		var b bytes.Buffer
		if json.Indent(&b, rep.Spec, "", "  ") == nil {
			p.Spec = visible(b.String(), true)
		} else {
			p.Spec = visible(string(rep.Spec), true)
		}
	}
	return p
}

func visibleRun(r analysis.RunInfo) analysis.RunInfo {
	for _, s := range []*string{&r.ID, &r.Spec, &r.SpecHash, &r.DatasetHash, &r.PromptHash, &r.GitCommit,
		&r.Status, &r.Started, &r.Ended, &r.ScorersHash, &r.ScoringScorersHash} {
		*s = visible(*s, false)
	}
	return r
}

func sliceTable(rep *analysis.Report, key string, values []string) htmlSliceTable {
	t := htmlSliceTable{Key: key, Targets: targetNames(rep)}
	var pairs []analysis.Comparison
	for _, c := range rep.Comparisons {
		if len(c.Slices[key]) > 0 {
			pairs = append(pairs, c)
			t.Pairs = append(t.Pairs, htmlPair{c.A, c.B})
		}
	}
	for _, v := range values {
		row := htmlSliceRow{Value: visible(v, false)}
		for _, tg := range rep.Targets {
			r, ok := tg.Slices[key][v]
			if !ok {
				row.Cells = append(row.Cells, htmlCell{Text: "—"})
				continue
			}
			cell := htmlCell{Text: units.Pct(r.Rate), Sub: units.PctCI(r.CI) + " · " + units.Count(r.Passed) + "/" + units.Count(r.N)}
			if r.N == 0 {
				cell = htmlCell{Text: "—", Sub: "0 cases"}
			}
			row.Cells = append(row.Cells, cell)
		}
		for _, c := range pairs {
			sc, ok := c.Slices[key][v]
			if !ok {
				row.Diffs = append(row.Diffs, htmlCell{Text: "—"})
				continue
			}
			row.Diffs = append(row.Diffs, htmlCell{Text: units.Delta(sc.Delta), Sub: "[" + units.Delta(sc.CI[0]) + ", " + units.Delta(sc.CI[1]) + "]",
				Class: verdictClass(sc.Verdict), Tip: verdictWords(sc) + ", " + units.Count(sc.N) + " cases"})
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// kindsTable counts each target's failures by kind.
func kindsTable(rep *analysis.Report) htmlKinds {
	var k htmlKinds
	kinds := map[string]bool{}
	for _, t := range rep.Targets {
		k.Targets = append(k.Targets, t.Name)
		for kind := range t.Failures.ByKind {
			kinds[kind] = true
		}
	}
	names := make([]string, 0, len(kinds))
	for n := range kinds {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		row := htmlKindRow{Kind: visible(n, false)}
		for _, t := range rep.Targets {
			row.Counts = append(row.Counts, units.Count(t.Failures.ByKind[n]))
		}
		k.Rows = append(k.Rows, row)
	}
	return k
}

func newHTMLLedger(l *analysis.Ledger) *htmlLedger {
	h := &htmlLedger{Experiment: visible(l.Experiment, false), Variants: plural(l.Variants, "variant"), Runs: plural(l.Runs, "run"),
		Scorer: visible(l.Scorer, false), Summary: visible(l.Summary, false), N: l.Variants,
		HasVariants: len(l.Tried) > 0, TriedTotal: len(l.Tried), Class: "",
		Inflation: units.Pts(l.Inflation), EMax: units.Z(l.ExpectedMaxZ), Sigma: units.Pts(l.Sigma),
		Deflated: units.Pct(l.DeflatedRate), Family: plural(l.Family, "comparison"), Survives: survivesWords(l)}
	if len(l.Tried) > 0 {
		h.Chosen, h.ChosenRate = visible(l.Chosen.Name(), false), units.Pct(l.Chosen.Rate)
		h.Reference, h.ReferenceRate, h.ReferenceFrom = visible(l.Reference.Name(), false), units.Pct(l.Reference.Rate), referenceWords(l)
	}
	if c := l.Chosen.VsReference; c != nil {
		h.Lead, h.P, h.PAdj = deltaCI(*c), units.PValue(c.PValue), units.PValue(c.PAdjusted)
		if l.Survives {
			h.Class = verdictClass(l.Verdict)
		}
	}
	if len(l.Tried) > 1 {
		for _, v := range ledgerShown(l) {
			row := htmlLedgerRow{Name: visible(v.Name(), false), Started: visible(v.Started, false), Cases: units.Count(v.Cases),
				Rate: units.Pct(v.Rate), Delta: "—", P: "—", PAdj: "—", Verdict: ledgerRole(v), Chosen: v.Chosen}
			if c := v.VsReference; c != nil {
				row.Delta, row.P, row.PAdj, row.Class = deltaCI(*c), units.PValue(c.PValue), units.PValue(c.PAdjusted), verdictClass(c.Verdict)
			}
			h.Tried = append(h.Tried, row)
		}
	}
	for _, n := range l.Notes {
		h.Notes = append(h.Notes, visible(n, false))
	}
	return h
}
