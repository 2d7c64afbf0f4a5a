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
	"time"

	"github.com/assay-eval/assay/internal/load"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/units"
)

// LoadSettings are how a load test was run (stored with its run).
type LoadSettings struct {
	Mode        string    `json:"mode"`
	Levels      []float64 `json:"levels"`
	Duration    string    `json:"duration"`
	Warmup      string    `json:"warmup,omitempty"`
	Arrivals    string    `json:"arrivals,omitempty"`
	Seed        uint64    `json:"seed"`
	Cases       int       `json:"cases"`
	MaxRequests int       `json:"max_requests"`
	MaxSpend    float64   `json:"max_spend_usd"`
	SLO         string    `json:"slo,omitempty"`
}

// LoadReport is what `assay load` and `assay report` of a load run render:
// the run, how it was run (nil for a run stored without its settings) and
// what Analyse found.
type LoadReport struct {
	Run      *record.Run
	Settings *LoadSettings
	Result   *load.Result
}

// LoadFormats are `assay load`'s formats (and `assay report`'s of a load
// run).
func LoadFormats() []Format[*LoadReport] {
	return []Format[*LoadReport]{
		{Name: "text", Aliases: []string{""}, Render: LoadText},
		{Name: "markdown", Aliases: []string{"md"}, Render: LoadMarkdown},
		{Name: "json", Render: LoadJSON},
		{Name: "html", Render: LoadPage},
	}
}

// clientSaturated marks a step where the harness was the bottleneck, in
// every format.
const clientSaturated = "client_saturated"

// loadView is the report with every number formatted and every outside
// text (run ID, spec name, target names, case IDs, reasons) as given: each
// format escapes it where it lands.
type loadView struct {
	Title    string
	Lede     []string
	Warnings []string
	KneeHead []string
	Knees    [][]string
	Targets  []loadTargetView
	Method   string
	Charts   []chart
}

type loadTargetView struct {
	Name string
	Head []string
	Rows [][]string
	// Flags are the rows' marks: saturated, skipped, meets the SLO.
	Saturated []bool
	Skipped   []bool
	Meets     []bool
	Notes     []string // why each step did not meet the SLO, or was flagged
}

func newLoadView(r *LoadReport) loadView {
	v := loadView{}
	run := r.Run
	if run == nil {
		run = &record.Run{}
	}
	v.Title = fmt.Sprintf("Load test %s of %s", run.ID, run.Spec)
	status := run.Status
	if status == "" {
		status = "unknown"
	}
	v.Lede = append(v.Lede, fmt.Sprintf("Status %s; started %s; targets %s.", status, run.Started.UTC().Format(time.RFC3339), strings.Join(run.Targets, ", ")))
	if s := r.Settings; s != nil {
		what := "An open loop at " + joinLevels(s.Levels) + " requests/s (" + s.Arrivals + " arrivals)"
		if s.Mode == load.ModeConcurrency {
			what = "A closed loop at " + joinLevels(s.Levels) + " requests in flight"
		}
		warm := ""
		if s.Warmup != "" && s.Warmup != "0s" {
			warm = " after a " + s.Warmup + " warm-up"
		}
		v.Lede = append(v.Lede, fmt.Sprintf("%s; each step measured for %s%s; %d cases sampled with seed %d; caps %d requests and $%s.",
			what, s.Duration, warm, s.Cases, s.Seed, s.MaxRequests, strconv.FormatFloat(s.MaxSpend, 'f', -1, 64)))
	}
	res := r.Result
	if res == nil {
		res = &load.Result{}
	}
	if slo := res.SLO.String(); slo != "" {
		v.Lede = append(v.Lede, "SLO: "+sloWords(res.SLO)+", each held on its measure's upper "+confidence(res.Alpha)+" bound.")
	} else {
		v.Lede = append(v.Lede, "No SLO was given: every step is measured, no knee is judged.")
	}
	switch run.Status {
	case record.StatusInterrupted:
		v.Warnings = append(v.Warnings, "The load test was interrupted (Ctrl-C): the steps measured before it are shown; the rest were not run.")
	case record.StatusRunning, record.StatusFailed:
		// Still running, or its process was killed (nothing marked it
		// ended): a knee among the steps stored may not be the knee.
		w := fmt.Sprintf("The load test did not finish (status %s: it is still running, or its process was killed or failed): only the steps stored are shown, and a knee is among them only.", run.Status)
		if r.Settings != nil {
			var missing []string
			for _, t := range res.Targets {
				var gone []float64
				for _, l := range r.Settings.Levels {
					if !slices.ContainsFunc(t.Steps, func(st load.StepResult) bool { return st.Level == l }) {
						gone = append(gone, l)
					}
				}
				if len(gone) > 0 {
					missing = append(missing, t.Target+" at "+joinLevels(gone))
				}
			}
			if len(missing) > 0 {
				w += " Never measured: " + strings.Join(missing, "; ") + "."
			}
		}
		v.Warnings = append(v.Warnings, w)
	}
	v.Warnings = append(v.Warnings, res.Warnings...)
	sat := 0
	for _, t := range res.Targets {
		for _, st := range t.Steps {
			if st.Saturated {
				sat++
			}
		}
	}
	if sat > 0 {
		v.Warnings = append(v.Warnings, fmt.Sprintf("%s marked %s: assay itself was the bottleneck there (its CPU or its lateness against the schedule), so those steps measure this machine, not the server, and never count as a knee. Run from a machine with more cores, or lower the rate.", plural(sat, "step"), clientSaturated))
	}
	level := "concurrency"
	if res.Mode == load.ModeRate {
		level = "rate (rps)"
	}
	v.KneeHead = []string{"target", "knee " + level, "throughput", "p95 upper", "cost / 1k", "cost / month", "covers volume", "evidence"}
	for _, k := range res.Knees {
		row := []string{k.Target, "none", "—", "—", "—", "—", "—", k.Why}
		if k.Found {
			covers := "—"
			if k.RequestsPerMonth > 0 {
				covers = "no"
				if k.Covers {
					covers = "yes"
				}
				covers += " (" + fmtRPS(float64(k.VolumeRPS)) + " needed)"
			}
			row = []string{k.Target, fmtLevel(k.Level), fmtRPS(float64(k.Throughput)), fmtLoadMS(float64(k.P95Hi)),
				fmtUSD(float64(k.CostPer1000)), fmtUSD(float64(k.CostPerMonth)), covers, k.Why}
		}
		v.Knees = append(v.Knees, row)
	}
	for _, t := range res.Targets {
		tv := loadTargetView{Name: t.Target,
			Head: []string{level, "sent", "ok", "rps", "out tok/s", "p50", "p95 [CI]", "p99 [CI]", "TTFT p50", "TTFT p95 [CI]", "ITL", "errors [CI]", "by kind", "cost / 1k", "client CPU", "late p95", "SLO"}}
		for _, st := range t.Steps {
			if st.Skipped != "" {
				tv.Rows = append(tv.Rows, []string{fmtLevel(st.Level), "—", "—", "—", "—", "—", "—", "—", "—", "—", "—", "—", "—", "—", "—", "—", "skipped"})
				tv.Saturated, tv.Skipped, tv.Meets = append(tv.Saturated, false), append(tv.Skipped, true), append(tv.Meets, false)
				tv.Notes = append(tv.Notes, fmtLevel(st.Level)+": "+st.Skipped)
				continue
			}
			var kinds []string
			for _, k := range st.ByKind {
				kinds = append(kinds, fmt.Sprintf("%s %d", k.Kind, k.Count))
			}
			slo := "—"
			switch {
			case st.Saturated:
				slo = clientSaturated
			case res.SLO.IsZero():
			case st.MeetsSLO:
				slo = "meets"
			default:
				slo = "misses"
			}
			cpu := "—"
			if st.Cores > 0 {
				cpu = fmt.Sprintf("%.2f of %d", float64(st.ClientCPU), st.Cores)
			}
			tv.Rows = append(tv.Rows, []string{fmtLevel(st.Level), strconv.Itoa(st.Sent), strconv.Itoa(st.OK),
				fmtRPS(float64(st.Throughput)), fmtNum(float64(st.OutputTokensPerSec)),
				fmtLoadMS(float64(st.P50.Value)), estCI(st.P95), estCI(st.P99),
				fmtLoadMS(float64(st.TTFT50.Value)), estCI(st.TTFT95), fmtLoadMS(float64(st.InterTokenMS)),
				errCI(st.Errors), strings.Join(kinds, ", "), fmtUSD(float64(st.CostPer1000)),
				cpu, fmtLoadMS(float64(st.LatenessP95MS)), slo})
			tv.Saturated, tv.Skipped, tv.Meets = append(tv.Saturated, st.Saturated), append(tv.Skipped, false), append(tv.Meets, st.MeetsSLO)
			note := ""
			switch {
			case st.Saturated && st.SaturatedWhy != "":
				note = clientSaturated + ": " + st.SaturatedWhy
			case st.Why != "":
				note = st.Why
			}
			if note != "" {
				tv.Notes = append(tv.Notes, fmtLevel(st.Level)+": "+note)
			}
		}
		v.Targets = append(v.Targets, tv)
	}
	resamples := res.Resamples
	v.Method = fmt.Sprintf("Latency percentiles are over the answered requests of a step, with %s percentile-bootstrap intervals over requests (%d resamples, seeded); error rates are over every request with Wilson intervals; throughput counts the answers completed in the measured window. The knee is the highest step whose upper bounds meet every objective of the SLO and where the harness was not the bottleneck; cost per month is the knee's cost per request × the spec's volume.",
		confidence(res.Alpha), resamples)
	return v
}

// confidence is the level of an interval at alpha (95% when alpha is
// not in (0, 1)).
func confidence(alpha float64) string {
	if !(alpha > 0 && alpha < 1) {
		alpha = 0.05
	}
	return units.PlainPct(1 - alpha)
}

func sloWords(s load.SLO) string {
	var parts []string
	if s.P95 > 0 {
		parts = append(parts, "p95 ≤ "+s.P95.String())
	}
	if s.TTFT95 > 0 {
		parts = append(parts, "time to first token p95 ≤ "+s.TTFT95.String())
	}
	if s.ErrorsSet {
		parts = append(parts, "errors ≤ "+strconv.FormatFloat(s.Errors*100, 'g', -1, 64)+"%")
	}
	return strings.Join(parts, ", ")
}

func joinLevels(ls []float64) string {
	parts := make([]string, len(ls))
	for i, l := range ls {
		parts[i] = fmtLevel(l)
	}
	return strings.Join(parts, ", ")
}

func fmtLevel(l float64) string { return strconv.FormatFloat(l, 'g', -1, 64) }

func fmtRPS(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "—"
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64) + "/s"
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64) + "/s"
	}
	return strconv.FormatFloat(v, 'f', 2, 64) + "/s"
}

func fmtNum(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "—"
	}
	if v >= 100 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

func fmtLoadMS(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "—"
	case v >= 1000:
		return strconv.FormatFloat(v/1000, 'f', 2, 64) + " s"
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 0, 64) + " ms"
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + " ms"
}

func fmtUSD(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "—"
	case v == 0:
		return "$0"
	case v >= 100:
		return "$" + strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 1:
		return "$" + strconv.FormatFloat(v, 'f', 2, 64)
	}
	return "$" + strconv.FormatFloat(v, 'g', 3, 64)
}

// estCI is "812 ms [790 ms, 840 ms]", the value alone when it has no
// interval.
func estCI(e load.Estimate) string {
	v := fmtLoadMS(float64(e.Value))
	if math.IsNaN(float64(e.Lo)) || math.IsNaN(float64(e.Hi)) {
		return v
	}
	return v + " [" + fmtLoadMS(float64(e.Lo)) + ", " + fmtLoadMS(float64(e.Hi)) + "]"
}

func errCI(e load.ErrorRate) string {
	if e.N == 0 {
		return "—"
	}
	return units.Pct(float64(e.Rate)) + " [" + units.Pct(float64(e.Lo)) + ", " + units.Pct(float64(e.Hi)) + "]"
}

// LoadText renders a load test as text.
func LoadText(w io.Writer, r *LoadReport) error {
	v := newLoadView(r)
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", oneLine(v.Title))
	for _, l := range v.Lede {
		fmt.Fprintf(&b, "%s\n", oneLine(l))
	}
	for _, wn := range v.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", oneLine(wn))
	}
	if len(v.Knees) > 0 {
		b.WriteString("\nKnees\n")
		textTable(&b, v.KneeHead[:len(v.KneeHead)-1], cutLast(v.Knees))
		for _, k := range v.Knees {
			fmt.Fprintf(&b, "  %s: %s\n", oneLine(k[0]), oneLine(k[len(k)-1]))
		}
	}
	for _, t := range v.Targets {
		fmt.Fprintf(&b, "\n%s\n", oneLine(t.Name))
		textTable(&b, t.Head, t.Rows)
		for _, n := range t.Notes {
			fmt.Fprintf(&b, "  %s\n", oneLine(n))
		}
	}
	fmt.Fprintf(&b, "\n%s\n", v.Method)
	_, err := io.WriteString(w, b.String())
	return err
}

func cutLast(rows [][]string) [][]string {
	out := make([][]string, len(rows))
	for i, r := range rows {
		out[i] = r[:len(r)-1]
	}
	return out
}

// LoadMarkdown renders a load test as Markdown.
func LoadMarkdown(w io.Writer, r *LoadReport) error {
	v := newLoadView(r)
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", mdText(v.Title))
	for _, l := range v.Lede {
		fmt.Fprintf(&b, "%s\n", mdText(l))
	}
	b.WriteString("\n")
	for _, wn := range v.Warnings {
		fmt.Fprintf(&b, "> warning: %s\n\n", mdText(wn))
	}
	table := func(head []string, rows [][]string) { mdTable(&b, head, rows, mdText) }
	if len(v.Knees) > 0 {
		b.WriteString("## Knees\n\n")
		table(v.KneeHead, v.Knees)
	}
	for _, t := range v.Targets {
		fmt.Fprintf(&b, "## %s\n\n", mdText(t.Name))
		table(t.Head, t.Rows)
		for _, n := range t.Notes {
			fmt.Fprintf(&b, "- %s\n", mdText(n))
		}
		if len(t.Notes) > 0 {
			b.WriteString("\n")
		}
	}
	fmt.Fprintf(&b, "%s\n", mdText(v.Method))
	_, err := io.WriteString(w, b.String())
	return err
}

// loadJSON is the JSON form of a load test.
type loadJSON struct {
	Run      loadRunJSON   `json:"run"`
	Settings *LoadSettings `json:"settings,omitempty"`
	*load.Result
}

type loadRunJSON struct {
	ID      string    `json:"id"`
	Kind    string    `json:"kind"`
	Spec    string    `json:"spec"`
	Status  string    `json:"status"`
	Started time.Time `json:"started"`
	Ended   time.Time `json:"ended,omitzero"`
	Targets []string  `json:"targets"`
}

// LoadJSON renders a load test as JSON: the run, its settings and every
// finding (undefined numbers as null).
func LoadJSON(w io.Writer, r *LoadReport) error {
	out := loadJSON{Settings: r.Settings, Result: r.Result}
	if out.Result == nil {
		out.Result = &load.Result{}
	}
	if run := r.Run; run != nil {
		out.Run = loadRunJSON{ID: run.ID, Kind: run.Kind, Spec: run.Spec, Status: run.Status, Started: run.Started, Ended: run.Ended, Targets: run.Targets}
	}
	return writeJSON(w, out)
}

// LoadPage renders a load test as one self-contained HTML page with its
// throughput-against-p95 chart.
func LoadPage(w io.Writer, r *LoadReport) error {
	v := newLoadView(r)
	if r.Result != nil && len(r.Result.Targets) > 0 {
		if c, ok := loadChart(r.Result); ok {
			v.Charts = append(v.Charts, visibleChart(c))
		}
	}
	return renderWhole(w, loadTemplates(), "load-page", v, "the load page")
}

// loadChart draws each target's achieved throughput (x) against its p95
// latency (y) step by step, one line per target, each point with its
// interval; the region above the SLO's p95 shaded; a step where the client
// was the bottleneck drawn hollow; each knee ringed. ok is false when no
// step has a p95.
func loadChart(res *load.Result) (chart, bool) {
	c := chart{ID: "throughput-p95", Class: "chart chart-load", Title: "Achieved throughput against p95 latency, step by step",
		Caption: "One line per target, one point per step, with the p95's interval. Shaded: above the SLO's p95. Hollow: " + clientSaturated + " (the harness was the bottleneck; never a knee). Ringed: the knee. Crossed: errors above the SLO's (the answers' latency may look fine).",
		W:       860}
	names := make([]string, len(res.Targets))
	for i, t := range res.Targets {
		names[i] = t.Target
	}
	y0 := c.legend(names, 66, 16, c.W-20)
	a := plotArea{X0: 66, Y0: y0 + 6, X1: c.W - 20, Y1: y0 + 6 + 260}
	c.H = a.Y1 + 50
	xmax, ymin, ymax := 0.0, math.Inf(1), 0.0
	any := false
	for _, t := range res.Targets {
		for _, s := range t.Steps {
			x, p, ok := plotted(s)
			if !ok {
				continue
			}
			any = true
			xmax = math.Max(xmax, x)
			ymin, ymax = math.Min(ymin, p), math.Max(ymax, p)
			if hi := float64(s.P95.Hi); !math.IsNaN(hi) {
				ymax = math.Max(ymax, hi)
			}
			if lo := float64(s.P95.Lo); !math.IsNaN(lo) && lo > 0 {
				ymin = math.Min(ymin, lo)
			}
		}
	}
	if !any {
		return c, false
	}
	slo := float64(res.SLO.P95) / float64(time.Millisecond)
	if slo > 0 {
		ymax, ymin = math.Max(ymax, slo*1.1), math.Min(ymin, slo)
	}
	_, xhi, xt := niceDomain(0, math.Max(xmax, 1e-9), 8)
	xs := scale{D0: 0, D1: xhi, R0: a.X0, R1: a.X1}
	var ys scale
	var yt []float64
	if ymin > 0 && ymax/ymin > 20 {
		lo, hi, t := logDomain(ymin, ymax)
		ys, yt = scale{D0: lo, D1: hi, R0: a.Y1, R1: a.Y0, Log: true}, t
	} else {
		_, hi, t := niceDomain(0, ymax, 6)
		ys, yt = scale{D0: 0, D1: hi, R0: a.Y1, R1: a.Y0}, t
	}
	if slo > 0 {
		y := math.Max(a.Y0, math.Min(a.Y1, ys.at(slo)))
		c.rect("slo-shade", a.X0, a.Y0, a.X1-a.X0, y-a.Y0, "above the SLO's p95 of "+res.SLO.P95.String())
		c.line("slo-line", a.X0, y, a.X1, y, "SLO p95 "+res.SLO.P95.String())
		c.text("slo-label", a.X0+6, y-5, "start", "SLO p95 "+res.SLO.P95.String())
	}
	tick := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	c.xAxis(a, xs, xt, tick, "achieved throughput (answers/s)")
	c.yAxis(a, ys, yt, tick, "p95 latency (ms)")
	knee := map[string]int{}
	for _, k := range res.Knees {
		if k.Found {
			knee[k.Target] = k.Step
		}
	}
	for i, t := range res.Targets {
		pb := &pathBuilder{}
		first := true
		for _, s := range t.Steps {
			x, p, ok := plotted(s)
			if !ok {
				continue
			}
			if first {
				pb.M(xs.at(x), ys.at(p))
				first = false
			} else {
				pb.L(xs.at(x), ys.at(p))
			}
		}
		c.path("series-line "+seriesClass(i), pb.String(), t.Target)
		for _, s := range t.Steps {
			x, p, ok := plotted(s)
			if !ok {
				continue
			}
			px, py := xs.at(x), ys.at(p)
			if lo, hi := float64(s.P95.Lo), float64(s.P95.Hi); !math.IsNaN(lo) && !math.IsNaN(hi) {
				c.line("whisker "+seriesClass(i), px, ys.at(math.Max(lo, ys.D0)), px, ys.at(hi), "")
			}
			tip := fmt.Sprintf("%s at %s: %s, p95 %s, errors %s", t.Target, fmtLevel(s.Level), fmtRPS(x), estCI(s.P95), errCI(s.Errors))
			class := ""
			if s.Saturated {
				class = "hollow"
				tip += " — " + clientSaturated
			}
			c.marker(i, class, px, py, 4.5, tip)
			if res.SLO.ErrorsSet && float64(s.Errors.Hi) > res.SLO.Errors {
				// Its answers may be fast; its failures break the SLO.
				d := 7.0
				c.line("err-cross", px-d, py-d, px+d, py+d, fmt.Sprintf("%s at %s: errors %s, above the SLO's %s", t.Target, fmtLevel(s.Level), errCI(s.Errors), strconv.FormatFloat(res.SLO.Errors*100, 'g', -1, 64)+"%"))
				c.line("err-cross", px-d, py+d, px+d, py-d, "")
			}
			if k, ok := knee[t.Target]; ok && k == s.Step {
				// The ring is the circle marker's path, larger.
				c.path("knee-ring", markerPath(0, px, py, 9), t.Target+" knee at "+fmtLevel(s.Level))
			}
		}
	}
	return c, true
}

// plotted is a step's point on the load chart: its throughput and p95;
// false for a step skipped or without either.
func plotted(s load.StepResult) (x, p float64, ok bool) {
	x, p = float64(s.Throughput), float64(s.P95.Value)
	return x, p, s.Skipped == "" && !math.IsNaN(p) && !math.IsNaN(x)
}

// loadTemplates is the load page with the report's chart templates and
// stylesheet, parsed once, when first rendered.
var loadTemplates = sync.OnceValue(func() *template.Template {
	return template.Must(chartTemplates("load").Parse(loadPageTemplate))
})

const loadPageTemplate = `{{define "load-page"}}<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{vis .Title}}</title>
<style>{{template "style"}}
svg .slo-shade { fill: #d55e00; fill-opacity: .10; stroke: none; }
svg .slo-line { stroke: #a04400; stroke-dasharray: 6 4; stroke-width: 1.4; }
svg .slo-label { fill: #a04400; font-weight: 600; }
svg .series-line { fill: none; stroke-width: 2; }
svg .series-line.s0 { stroke: var(--s0); } svg .series-line.s1 { stroke: var(--s1); } svg .series-line.s2 { stroke: var(--s2); }
svg .series-line.s3 { stroke: var(--s3); } svg .series-line.s4 { stroke: var(--s4); } svg .series-line.s5 { stroke: var(--s5); }
svg .knee-ring { fill: none; stroke: #1d232a; stroke-width: 1.6; }
svg .err-cross { stroke: #c0392b; stroke-width: 2.2; }
tr.saturated td { background: #fff3d6; }
tr.skipped td { color: #7b8590; }
td.meets { color: #00734f; font-weight: 600; }
td.misses { color: #a04400; font-weight: 600; }
</style>
</head>
<body>
<main>
<h1>{{vis .Title}}</h1>
{{range .Lede}}<p class="lede">{{vis .}}</p>
{{end}}
{{- if .Warnings}}
<div class="warnings"><h2>Warnings</h2><ul>{{range .Warnings}}<li>{{vis .}}</li>{{end}}</ul></div>
{{- end}}
{{- if .Knees}}
<h2>Knees</h2>
<div class="scroll"><table class="knees"><thead><tr>{{range .KneeHead}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>{{range .Knees}}<tr>{{range $i, $c := .}}<td{{if $i}} class="num"{{end}}>{{vis $c}}</td>{{end}}</tr>
{{end}}</tbody></table></div>
{{- end}}
{{- range .Charts}}{{template "chart" .}}{{end}}
{{- range .Targets}}{{$t := .}}
<h2>{{vis .Name}}</h2>
<div class="scroll"><table class="steps"><thead><tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>{{range $i, $row := .Rows}}<tr class="{{if index $t.Saturated $i}}saturated{{end}}{{if index $t.Skipped $i}} skipped{{end}}">{{range $j, $c := $row}}<td class="num{{if eq $c "meets"}} meets{{else if eq $c "misses"}} misses{{end}}">{{vis $c}}</td>{{end}}</tr>
{{end}}</tbody></table></div>
{{- if .Notes}}<ul class="notes">{{range .Notes}}<li>{{vis .}}</li>{{end}}</ul>{{end}}
{{- end}}
<p class="note method">{{.Method}}</p>
</main>
</body>
</html>
{{end}}`

// LoadGateReport is `assay gate` of two load runs: the candidate held
// against the base with the load.gate rules of RulesFrom's spec. Strict
// fails an inconclusive check too.
type LoadGateReport struct {
	Base, Cand *record.Run
	RulesFrom  string
	Strict     bool
	Result     *load.GateResult
}

// Verdict is the gate's: fail when a check fails (or, strict, is
// inconclusive), inconclusive when one is, else pass.
func (r *LoadGateReport) Verdict() string {
	if r.Result == nil {
		return load.Inconclusive
	}
	v := r.Result.Verdict
	if r.Strict && v == load.Inconclusive {
		return load.Fail
	}
	return v
}

// Failed names the checks that failed the gate.
func (r *LoadGateReport) Failed() string {
	var out []string
	if r.Result != nil {
		for _, c := range r.Result.Checks {
			if c.Verdict == load.Fail || r.Strict && c.Verdict == load.Inconclusive {
				out = append(out, fmt.Sprintf("%s %s at %s (%s)", c.Target, c.Rule.Metric, fmtLevel(c.Rule.At), c.Verdict))
			}
		}
	}
	return strings.Join(out, "; ")
}

// LoadGateFormats are the formats of a gate of load tests.
func LoadGateFormats() []Format[*LoadGateReport] {
	return []Format[*LoadGateReport]{
		{Name: "text", Aliases: []string{""}, Render: LoadGateText},
		{Name: "markdown", Aliases: []string{"md"}, Render: LoadGateMarkdown},
		{Name: "json", Render: LoadGateJSON},
		{Name: "junit", Render: LoadGateJUnit},
	}
}

// LoadGateJUnit renders a gate of load tests as JUnit XML: one suite per
// target, one test case per rule; a failed check is a failure, an
// inconclusive one skipped (a failure under --strict).
func LoadGateJUnit(w io.Writer, r *LoadGateReport) error {
	skipped := 0
	doc := junitSuites{Name: "assay gate (load)", Skipped: &skipped}
	id := func(run *record.Run) string {
		if run == nil {
			return ""
		}
		return oneLine(run.ID)
	}
	props := []junitProperty{{Name: "candidate", Value: id(r.Cand)}, {Name: "baseline", Value: id(r.Base)},
		{Name: "rules_from", Value: r.RulesFrom}, {Name: "strict", Value: fmt.Sprint(r.Strict)}, {Name: "decision", Value: r.Verdict()}}
	var order []string
	byTarget := map[string]*junitSuite{}
	if r.Result != nil {
		for _, c := range r.Result.Checks {
			s, ok := byTarget[c.Target]
			if !ok {
				s = &junitSuite{Name: "gate: " + oneLine(c.Target), Properties: props}
				byTarget[c.Target] = s
				order = append(order, c.Target)
			}
			rule := fmt.Sprintf("%s at %s max_rise %s", c.Rule.Metric, fmtLevel(c.Rule.At), c.Rule.MaxRise)
			jc := junitCase{Name: rule, Classname: "assay.gate.load." + oneLine(c.Target), SystemOut: oneLine(c.Why)}
			switch {
			case c.Verdict == load.Fail || r.Strict && c.Verdict == load.Inconclusive:
				jc.Failure = &junitFailure{Message: oneLine(c.Why), Type: "regression", Body: oneLine(c.Why)}
			case c.Verdict == load.Inconclusive:
				jc.Skipped = &junitSkipped{Message: "inconclusive: " + oneLine(c.Why)}
			}
			s.Cases = append(s.Cases, jc)
			s.Tests++
			if jc.Failure != nil {
				s.Failures++
			}
			if jc.Skipped != nil {
				s.Skipped++
			}
		}
	}
	for _, t := range order {
		s := byTarget[t]
		doc.Tests += s.Tests
		doc.Failures += s.Failures
		skipped += s.Skipped
		doc.Suites = append(doc.Suites, *s)
	}
	return writeJUnit(w, doc)
}

// loadGateRows are the checks as table rows: target, rule, base, candidate,
// rise, allowed, the excess's one-sided bounds, verdict, why.
func loadGateRows(r *LoadGateReport) (head []string, rows [][]string) {
	head = []string{"target", "rule", "base", "candidate", "rise", "allowed", "excess bounds", "verdict", "why"}
	if r.Result == nil {
		return head, nil
	}
	for _, c := range r.Result.Checks {
		val := fmtLoadMS
		if c.Rule.Metric == load.MetricErrors {
			val = units.Pct
		}
		rule := fmt.Sprintf("%s at %s max_rise %s", c.Rule.Metric, fmtLevel(c.Rule.At), c.Rule.MaxRise)
		v := c.Verdict
		if r.Strict && v == load.Inconclusive {
			v += " (fails: --strict)"
		}
		rows = append(rows, []string{c.Target, rule, val(float64(c.Base)), val(float64(c.Cand)), val(float64(c.Rise)), val(float64(c.Allowed)),
			"[" + val(float64(c.Lo)) + ", " + val(float64(c.Hi)) + "]", v, c.Why})
	}
	return head, rows
}

func loadGateLede(r *LoadGateReport) string {
	id := func(run *record.Run) string {
		if run == nil {
			return "?"
		}
		return run.ID
	}
	return fmt.Sprintf("Load test %s held against %s with the load.gate rules of the %s's spec: %s.", id(r.Cand), id(r.Base), r.RulesFrom, strings.ToUpper(r.Verdict()))
}

// LoadGateText renders a gate of load tests as text.
func LoadGateText(w io.Writer, r *LoadGateReport) error {
	var b strings.Builder
	b.WriteString(oneLine(loadGateLede(r)) + "\n\n")
	head, rows := loadGateRows(r)
	textTable(&b, head[:len(head)-1], cutLast(rows))
	for _, row := range rows {
		fmt.Fprintf(&b, "  %s %s: %s\n", oneLine(row[0]), oneLine(row[1]), oneLine(row[len(row)-1]))
	}
	b.WriteString("\nThe excess is the candidate's rise minus the rise allowed, with one-sided bootstrap bounds over requests: pass when its upper bound is at most 0, fail when its lower bound is above 0, else inconclusive.\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// LoadGateMarkdown renders a gate of load tests as Markdown.
func LoadGateMarkdown(w io.Writer, r *LoadGateReport) error {
	var b strings.Builder
	b.WriteString("## " + mdText(loadGateLede(r)) + "\n\n")
	head, rows := loadGateRows(r)
	mdTable(&b, head, rows, mdText)
	_, err := io.WriteString(w, strings.TrimSuffix(b.String(), "\n"))
	return err
}

// LoadGateJSON renders a gate of load tests as JSON.
func LoadGateJSON(w io.Writer, r *LoadGateReport) error {
	out := struct {
		Base      string       `json:"base"`
		Candidate string       `json:"candidate"`
		RulesFrom string       `json:"rules_from"`
		Strict    bool         `json:"strict"`
		Verdict   string       `json:"verdict"`
		Checks    []load.Check `json:"checks"`
	}{RulesFrom: r.RulesFrom, Strict: r.Strict, Verdict: r.Verdict()}
	if r.Base != nil {
		out.Base = r.Base.ID
	}
	if r.Cand != nil {
		out.Candidate = r.Cand.ID
	}
	if r.Result != nil {
		out.Checks = r.Result.Checks
	}
	if out.Checks == nil {
		out.Checks = []load.Check{}
	}
	return writeJSON(w, out)
}
