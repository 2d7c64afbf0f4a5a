package report

import (
	"bytes"
	"fmt"
	"html"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/analysis"
	"github.com/assay-eval/assay/internal/units"
)

// The elements and attributes the templates write. Anything else in a
// rendered page came from data that escaped escaping.
var (
	ourElements = map[string]bool{
		"html": true, "head": true, "meta": true, "link": true, "title": true, "style": true, "body": true,
		"main": true, "header": true, "h1": true, "h2": true, "h3": true, "p": true, "span": true, "b": true,
		"dl": true, "dt": true, "dd": true, "section": true, "ul": true, "ol": true, "li": true, "div": true,
		"table": true, "thead": true, "tbody": true, "tr": true, "th": true, "td": true, "figure": true,
		"figcaption": true, "svg": true, "line": true, "rect": true, "path": true, "text": true,
		"article": true, "pre": true, "details": true, "summary": true, "footer": true,
	}
	ourAttributes = map[string]bool{
		"lang": true, "charset": true, "http-equiv": true, "content": true, "name": true, "rel": true,
		"href": true, "class": true, "id": true, "value": true, "title": true, "width": true, "height": true,
		"viewBox": true, "role": true, "aria-labelledby": true, "x": true, "y": true, "x1": true, "y1": true,
		"x2": true, "y2": true, "d": true, "text-anchor": true, "transform": true,
	}
)

type tag struct {
	name  string
	attrs map[string]string
}

// scanHTML reads every tag of a page the templates made (double-quoted
// attributes, no comments) and its text, failing on markup the templates
// do not write.
func scanHTML(doc string) (tags []tag, text string, err error) {
	var txt strings.Builder
	i := 0
	if !strings.HasPrefix(doc, "<!DOCTYPE html>") {
		return nil, "", fmt.Errorf("no doctype")
	}
	i = len("<!DOCTYPE html>")
	inStyle := false
	for i < len(doc) {
		j := strings.IndexByte(doc[i:], '<')
		if j < 0 {
			txt.WriteString(doc[i:])
			break
		}
		if !inStyle {
			txt.WriteString(doc[i : i+j])
		}
		i += j + 1
		closing := false
		if i < len(doc) && doc[i] == '/' {
			closing = true
			i++
		}
		k := i
		for k < len(doc) && (isAlnum(doc[k])) {
			k++
		}
		name := doc[i:k]
		if name == "" || !ourElements[name] {
			return nil, "", fmt.Errorf("element %q at %d: %.60q", name, i, doc[i-1:])
		}
		i = k
		t := tag{name: name, attrs: map[string]string{}}
		for {
			for i < len(doc) && doc[i] == ' ' {
				i++
			}
			if i >= len(doc) {
				return nil, "", fmt.Errorf("unterminated <%s>", name)
			}
			if doc[i] == '>' {
				i++
				break
			}
			if strings.HasPrefix(doc[i:], "/>") {
				i += 2
				break
			}
			if closing {
				return nil, "", fmt.Errorf("attributes on </%s>", name)
			}
			k := i
			for k < len(doc) && (isAlnum(doc[k]) || doc[k] == '-') {
				k++
			}
			attr := doc[i:k]
			if !ourAttributes[attr] {
				return nil, "", fmt.Errorf("attribute %q on <%s> at %d: %.60q", attr, name, i, doc[i:])
			}
			if !strings.HasPrefix(doc[k:], `="`) {
				return nil, "", fmt.Errorf("attribute %s on <%s> is not double-quoted", attr, name)
			}
			end := strings.IndexByte(doc[k+2:], '"')
			if end < 0 {
				return nil, "", fmt.Errorf("unterminated attribute %s", attr)
			}
			v := doc[k+2 : k+2+end]
			if strings.ContainsAny(v, "<>") {
				return nil, "", fmt.Errorf("raw < or > in attribute %s=%q", attr, v)
			}
			t.attrs[attr] = html.UnescapeString(v)
			i = k + 2 + end + 1
		}
		if name == "style" {
			inStyle = !closing
		}
		if !closing {
			tags = append(tags, t)
		}
		// <title> is text for the reader too (tooltips); keep a separator.
		txt.WriteByte('\n')
	}
	return tags, html.UnescapeString(txt.String()), nil
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func renderPage(t *testing.T, rep *analysis.Report, o htmlOptions) string {
	t.Helper()
	var b bytes.Buffer
	if err := renderHTML(&b, rep, o); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// Text from outside cannot add elements or attributes to the page, and
// reads back as itself; the page is self-contained.
func TestHTMLEscapesHostileText(t *testing.T) {
	rep := hostileReport()
	rep.Warnings = append(rep.Warnings, hostMarkdown)
	doc := renderPage(t, rep, htmlOptions{csp: true})
	tags, text, err := scanHTML(doc)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range append(hostile, hostMarkdown) {
		if !strings.Contains(text, visible(h, false)) {
			t.Errorf("the page does not show %q as text", h)
		}
	}
	// The policy forbids scripts and fetches; the page links nothing.
	csp := ""
	for _, tg := range tags {
		if tg.attrs["http-equiv"] == "Content-Security-Policy" {
			csp = tg.attrs["content"]
		}
		if h, ok := tg.attrs["href"]; ok && h != "data:," {
			t.Errorf("<%s href=%q>: the page must not link anything", tg.name, h)
		}
	}
	if !strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "script-src") {
		t.Errorf("Content-Security-Policy %q does not forbid scripts and fetches", csp)
	}
	for _, bad := range []string{"url(", "@import", "http://", "https://"} {
		if strings.Contains(doc, bad) {
			t.Errorf("the page contains %q: it must not fetch anything", bad)
		}
	}
	if strings.Contains(renderPage(t, rep, htmlOptions{}), "Content-Security-Policy") {
		t.Errorf("htmlOptions{} still writes the policy; the browser test needs a page without it")
	}
}

func FuzzHTML(f *testing.F) {
	for _, h := range hostile {
		f.Add(h, h, h)
	}
	f.Add("a\x00b", "</title><script>", "]]><!--")
	f.Fuzz(func(t *testing.T, name, value, raw string) {
		rep := &analysis.Report{
			Run: analysis.RunInfo{ID: value, Spec: name, Status: value},
			Targets: []analysis.Target{{Name: name, N: 1,
				Primary:  analysis.Rate{Scorer: value, Passed: 1, N: 2, Rate: 0.5, CI: [2]float64{0.1, 0.9}},
				Scorers:  map[string]analysis.Rate{value: {Passed: 1, N: 2}, name: {Passed: 0, N: 2}},
				Fields:   map[string][]analysis.FieldRate{name: {{Field: raw, Rate: analysis.Rate{Passed: 1, N: 2}}}},
				Judges:   []analysis.JudgeStats{{Scorer: name, N: 2, Errors: 2, ErrorRate: 1}},
				Failures: analysis.Failures{ByKind: map[string]int{value: 1}},
				Slices:   map[string]map[string]analysis.Rate{value: {value: {Passed: 1, N: 2, Rate: 0.5}}}}},
			Comparisons: []analysis.Comparison{{A: name, B: value, Verdict: value,
				Slices: map[string]map[string]analysis.Comparison{value: {raw: {Verdict: "a_better"}}}}},
			Ranking:  []analysis.RankGroup{{Rank: 1, Targets: []string{name}}},
			Pareto:   []string{name},
			Warnings: []string{raw},
			Worst:    []analysis.FailureExample{{Target: name, CaseID: value, Raw: raw, Reason: raw, Kind: value, Shape: value}},
			Spec:     []byte(raw),
		}
		var b bytes.Buffer
		if err := renderHTML(&b, rep, htmlOptions{csp: true}); err != nil {
			t.Fatal(err)
		}
		_, text, err := scanHTML(b.String())
		if err != nil {
			t.Fatalf("name %q value %q raw %q: %v", name, value, raw, err)
		}
		if !strings.Contains(text, visible(raw, true)) {
			t.Fatalf("the output %q is not shown as text", raw)
		}
		if !strings.Contains(text, visible(raw, false)) {
			t.Fatalf("the field name %q is not shown as text", raw)
		}
	})
}

// The page has every section a reader needs, with the numbers formatted.
func TestHTMLContent(t *testing.T) {
	rep := cleanReport()
	doc := renderPage(t, rep, htmlOptions{csp: true})
	tags, text, err := scanHTML(doc)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, tg := range tags {
		if id := tg.attrs["id"]; id != "" {
			if ids[id] {
				t.Errorf("duplicate id %q", id)
			}
			ids[id] = true
		}
	}
	for _, id := range []string{"run", "warnings", "headline", "ranking", "pareto", "comparisons", "slices-0", "slices-1",
		"forest-0", "forest-1", "forest-2", "cost-quality", "latency", "slices", "failure-kinds", "worst", "spec"} {
		if !ids[id] {
			t.Errorf("no element with id %q", id)
		}
	}
	g := rep.Targets[0]
	for _, want := range []string{
		rep.Run.ID, rep.Run.SpecHash, rep.Run.DatasetHash, rep.Run.PromptHash, rep.Run.GitCommit, rep.Run.Started,
		// gpt-4o-mini: 282/400 with its Wilson interval, cost per case and month.
		"282/400", "70.5%", "[65.8, 74.8]", "$0.000148", "$296", "$0.000012",
		// Comparisons in signed points with the verdict in words.
		"−7.3 [−12.1, −2.4]", "claude-3-5-haiku better", "<0.0001",
		// The spec, pretty-printed.
		"\"requests_per_month\": 2000000",
		// Latency percentiles.
		units.MS(g.LatencyMS.P95),
		// Failures with their outputs.
		"She eats 3 and bakes 4", "I think the answer is probably around forty.\\x00\\x1b[2J", "(empty output)",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the page does not show %q", want)
		}
	}
	// Tier rows in numeric order in the tier table: 0, 2, 10.
	_, small, err := scanHTML(renderPage(t, smallReport(), htmlOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	table := small[strings.Index(small, "By tier"):]
	i0, i2, i10 := strings.Index(table, "\n0\n"), strings.Index(table, "\n2\n"), strings.Index(table, "\n10\n")
	if i0 < 0 || i2 < 0 || i10 < 0 || !(i0 < i2 && i2 < i10) {
		t.Errorf("tier rows out of order: 0 at %d, 2 at %d, 10 at %d", i0, i2, i10)
	}
}

func TestHTMLGolden(t *testing.T) {
	golden(t, "report.html.golden", []byte(renderPage(t, cleanReport(), htmlOptions{csp: true})))
}

// A report the analysis has not filled in (no targets, no scores) still
// renders, in every format.
func TestRenderEmptyReport(t *testing.T) {
	reps := []*analysis.Report{
		{},
		{Targets: []analysis.Target{{Name: "a"}}},
		{Targets: []analysis.Target{{Name: "a", N: 3, Primary: analysis.Rate{N: 3}}, {Name: "b"}},
			Comparisons: []analysis.Comparison{{A: "a", B: "b"}}},
	}
	for i, rep := range reps {
		for _, f := range []string{"text", "json", "markdown", "html"} {
			var b bytes.Buffer
			if err := Render(&b, f, rep); err != nil {
				t.Errorf("report %d as %s: %v", i, f, err)
			}
		}
		var b bytes.Buffer
		if err := JUnit(&b, rep, nil); err != nil {
			t.Errorf("report %d as junit: %v", i, err)
		}
		if _, _, err := scanHTML(renderPage(t, rep, htmlOptions{})); err != nil {
			t.Errorf("report %d: %v", i, err)
		}
	}
	if err := Render(&bytes.Buffer{}, "junit", reps[0]); err == nil {
		t.Errorf("Render junit without rows should say JUnit needs the results")
	}
	if err := Render(&bytes.Buffer{}, "pdf", reps[0]); err == nil || !strings.Contains(err.Error(), "markdown") {
		t.Errorf("an unknown format should list the formats: %v", err)
	}
}

func TestNiceDomain(t *testing.T) {
	cases := []struct {
		lo, hi   float64
		n        int
		wantLo   float64
		wantHi   float64
		wantTick []float64
	}{
		{0, 0.93, 5, 0, 1, []float64{0, 0.2, 0.4, 0.6, 0.8, 1}},
		{-12.1, 29.1, 6, -20, 30, []float64{-20, -10, 0, 10, 20, 30}},
		{0, 2140 * 1.05, 6, 0, 2500, []float64{0, 500, 1000, 1500, 2000, 2500}},
		{0.3, 0.3, 5, 0.1, 0.5, []float64{0.1, 0.2, 0.3, 0.4, 0.5}},
		{0, 0, 5, 0, 1, []float64{0, 0.2, 0.4, 0.6, 0.8, 1}},
	}
	for _, c := range cases {
		lo, hi, ticks := niceDomain(c.lo, c.hi, c.n)
		if !near(lo, c.wantLo) || !near(hi, c.wantHi) || !slices.EqualFunc(ticks, c.wantTick, near) {
			t.Errorf("niceDomain(%v, %v, %d) = %v, %v, %v; want %v, %v, %v", c.lo, c.hi, c.n, lo, hi, ticks, c.wantLo, c.wantHi, c.wantTick)
		}
	}
	lo, hi, ticks := logDomain(1.2e-5, 9.2e-4)
	want := []float64{1e-5, 2e-5, 5e-5, 1e-4, 2e-4, 5e-4, 1e-3}
	if !near(lo, 1e-5) || !near(hi, 1e-3) || !slices.EqualFunc(ticks, want, near) {
		t.Errorf("logDomain = %v, %v, %v; want 1e-5, 1e-3, %v", lo, hi, ticks, want)
	}
	if _, _, ticks := logDomain(1, 1e6); len(ticks) != 7 {
		t.Errorf("six decades should tick at powers of ten only: %v", ticks)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestScale(t *testing.T) {
	lin := scale{D0: 0, D1: 1, R0: 300, R1: 100} // y axis: up is smaller
	if lin.at(0) != 300 || lin.at(1) != 100 || lin.at(0.25) != 250 {
		t.Errorf("linear scale: %v %v %v", lin.at(0), lin.at(1), lin.at(0.25))
	}
	lg := scale{D0: 1e-5, D1: 1e-3, R0: 0, R1: 200, Log: true}
	if !near(lg.at(1e-4), 100) || !near(lg.at(1e-5), 0) || !near(lg.at(1e-3), 200) {
		t.Errorf("log scale: %v %v %v", lg.at(1e-5), lg.at(1e-4), lg.at(1e-3))
	}
	if flat := (scale{D0: 2, D1: 2, R0: 0, R1: 100}); flat.at(2) != 50 {
		t.Errorf("an empty domain maps to the middle, got %v", flat.at(2))
	}
}

func marksOf(c chart, class string) []mark {
	var out []mark
	for _, m := range c.Marks {
		if slices.Contains(strings.Fields(m.Class), class) {
			out = append(out, m)
		}
	}
	return out
}

// The tier panel puts values in numeric order after "all", and every
// point sits at its rate on the 0–100% axis.
func TestSliceChart(t *testing.T) {
	rep := smallReport()
	c := sliceChart(0, "tier", sliceValues(rep, "tier"), rep)
	var labels []string
	for _, m := range marksOf(c, "cat-label") {
		labels = append(labels, m.Text)
	}
	if want := []string{"all", "0", "2", "10"}; !slices.Equal(labels, want) {
		t.Errorf("category labels %v, want %v", labels, want)
	}
	// The y axis: 0% and 100% grid lines bound every marker.
	var ys []float64
	for _, m := range marksOf(c, "tick-label") {
		if m.Text == "0%" || m.Text == "100%" {
			ys = append(ys, m.Y-4)
		}
	}
	if len(ys) != 2 {
		t.Fatalf("no 0%%/100%% ticks: %v", marksOf(c, "tick-label"))
	}
	y0, y100 := ys[0], ys[1]
	// candidate-a, tier 2: 72.5%.
	want := y0 + 0.725*(y100-y0)
	found := false
	for _, m := range marksOf(c, "marker") {
		if strings.Contains(m.Tip, "candidate-a · tier = 2: 72.5% [61.9, 81.1], 58/80") {
			found = true
			if !strings.Contains(m.D, num(want)) {
				t.Errorf("the tier-2 point of candidate-a is not at y=%s: %s", num(want), m.D)
			}
		}
	}
	if !found {
		t.Errorf("no point for candidate-a on tier 2")
	}
}

// The frontier is marked: members filled and joined, the others hollow.
func TestCostChart(t *testing.T) {
	rep := smallReport()
	rep.Pareto = []string{"candidate-a"}
	c := costChart(rep)
	if n := len(marksOf(c, "on-frontier")); n != 1 {
		t.Errorf("%d frontier markers, want 1", n)
	}
	if h := marksOf(c, "hollow"); len(h) != 1 || !strings.HasPrefix(h[0].Tip, "candidate-b") {
		t.Errorf("hollow markers %v, want candidate-b's", h)
	}
	// Costs 0.0000753 and 0.0125 differ 166-fold: a log axis.
	if !slices.ContainsFunc(c.Marks, func(m mark) bool { return strings.Contains(m.Text, "log scale") }) {
		t.Errorf("no log cost axis for a 166-fold cost range")
	}
	rep.Pareto = []string{"candidate-a", "candidate-b"}
	if f := marksOf(costChart(rep), "frontier"); len(f) != 1 {
		t.Errorf("the two frontier members are not joined: %v", f)
	}
	for i := range rep.Targets {
		rep.Targets[i].CostUSD = analysis.Cost{}
	}
	if n := marksOf(costChart(rep), "note"); len(n) != 1 || !strings.Contains(n[0].Text, "no prices") {
		t.Errorf("free targets: notes %v", n)
	}
}

// Latency boxes come from the samples; without samples the reported
// percentiles are marked instead.
func TestLatencyChart(t *testing.T) {
	rep := smallReport()
	rep.Targets[0].LatencyMS.Samples = []float64{100, 200, 300, 400, 500}
	c := latencyChart(rep)
	boxes := marksOf(c, "box")
	if len(boxes) != 1 {
		t.Fatalf("%d boxes, want 1 (only candidate-a has samples)", len(boxes))
	}
	// The box spans the 25th to 75th percentile: 200 to 400 ms.
	if !strings.Contains(boxes[0].Tip, "p25 200 ms") || !strings.Contains(boxes[0].Tip, "p75 400 ms") {
		t.Errorf("box tip %q", boxes[0].Tip)
	}
	if n := len(marksOf(c, "p99")); n != 2 {
		t.Errorf("%d p99 marks, want 2", n)
	}
	if n := len(marksOf(c, "median")); n != 2 {
		t.Errorf("%d medians, want 2 (one from samples, one reported)", n)
	}
}

func TestVisible(t *testing.T) {
	for _, c := range []struct{ in, keep, flat string }{
		{"plain", "plain", "plain"},
		{"a\nb\r\nc\rd", "a\nb\nc\nd", "a↵b↵c↵d"},
		{"tab\there", "tab\there", "tab here"},
		{"\x00\x1b[2J\x7f\u0085", `\x00\x1b[2J\x7f\x85`, `\x00\x1b[2J\x7f\x85`},
		{"abc\u202edcba", `abc\u202edcba`, `abc\u202edcba`},
		{"bad\xffbyte", `bad\xffbyte`, `bad\xffbyte`},
		{"ok \ufffd", "ok \ufffd", "ok \ufffd"},
		{"\ufffe\uffff", `\ufffe\uffff`, `\ufffe\uffff`},
	} {
		if got := visible(c.in, true); got != c.keep {
			t.Errorf("visible(%q, true) = %q, want %q", c.in, got, c.keep)
		}
		if got := visible(c.in, false); got != c.flat {
			t.Errorf("visible(%q, false) = %q, want %q", c.in, got, c.flat)
		}
	}
}
