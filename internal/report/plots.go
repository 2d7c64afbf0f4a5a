package report

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"

	"github.com/assay-eval/assay/internal/analysis"
	"github.com/assay-eval/assay/internal/stats"
	"github.com/assay-eval/assay/internal/units"
)

// The four charts of the HTML report. Each returns a chart whose ID the
// page and its tests rely on: slices-N, forest-N, cost-quality, latency.

const (
	chartMaxCategories = 40 // slice values per panel
	chartMaxForestRows = 80 // rows per forest plot
)

func targetNames(rep *analysis.Report) []string {
	names := make([]string, len(rep.Targets))
	for i, t := range rep.Targets {
		names[i] = t.Name
	}
	return names
}

// sliceChart draws one tag key's per-value pass rates, a point with its
// 95% interval for each target, values in analysis.SortValues order after the
// overall rate.
func sliceChart(idx int, key string, values []string, rep *analysis.Report) chart {
	nt := len(rep.Targets)
	cats := append([]string{"all"}, values...)
	omitted := 0
	if len(cats) > chartMaxCategories+1 {
		omitted = len(cats) - chartMaxCategories - 1
		cats = cats[:chartMaxCategories+1]
	}
	// A band fits the points of every target and, up to a point, the
	// longest value's label.
	need := math.Max(34, float64(nt)*11+18)
	for _, v := range cats {
		need = math.Max(need, math.Min(textWidth(v), 16*charWidth)+10)
	}
	plotW := math.Max(420, need*float64(len(cats)))
	band := plotW / float64(len(cats))
	left, right := 58.0, 16.0
	c := chart{ID: "slices-" + strconv.Itoa(idx), Class: "chart chart-slices",
		Title: "Pass rate by " + key + ", with 95% intervals", W: left + plotW + right}
	y := c.legend(targetNames(rep), left, 16, c.W-right)
	a := plotArea{X0: left, Y0: y + 6, X1: left + plotW, Y1: y + 6 + 220}
	c.H = a.Y1 + 56
	ys := scale{D0: 0, D1: 1, R0: a.Y1, R1: a.Y0}
	c.yAxis(a, ys, []float64{0, 0.2, 0.4, 0.6, 0.8, 1}, units.PctTick, "pass rate")
	step := math.Min(11, (band-14)/math.Max(1, float64(nt)))
	maxChars := fitChars(band - 6)
	for i, v := range cats {
		cx := a.X0 + band*(float64(i)+0.5)
		if i == 1 {
			c.line("separator", a.X0+band, a.Y0, a.X0+band, a.Y1, "")
		}
		c.label("cat-label", cx, a.Y1+16, "middle", v, maxChars)
		if n := casesIn(rep, key, v, i == 0); n > 0 {
			c.text("cat-n", cx, a.Y1+29, "middle", "n "+units.Count(n))
		}
		for j, t := range rep.Targets {
			r := t.Primary
			ok := true
			if i > 0 {
				r, ok = t.Slices[key][v]
			}
			if !ok || r.N == 0 {
				continue
			}
			x := cx + (float64(j)-float64(nt-1)/2)*step
			where := key + " = " + v
			if i == 0 {
				where = "all cases"
			}
			tip := fmt.Sprintf("%s · %s: %s %s, %s/%s", t.Name, where, units.Pct(r.Rate), units.PctCI(r.CI), units.Count(r.Passed), units.Count(r.N))
			whisker(&c, j, x, ys.at(r.CI[0]), ys.at(r.CI[1]), true)
			c.marker(j, "", x, ys.at(r.Rate), 3.6, tip)
		}
	}
	c.text("axis-title", (a.X0+a.X1)/2, a.Y1+46, "middle", key)
	c.H += 10
	c.Caption = "Pass rate of the primary scorer by " + key + " (leftmost: all cases; n: cases per value); whiskers are " + sliceRateWord(rep, key) + " 95% intervals — wide ones mean few cases."
	if omitted > 0 {
		c.Caption += fmt.Sprintf(" %d more values are in the table below.", omitted)
	}
	return c
}

// casesIn is the largest number of cases any target has in a slice (or
// overall).
func casesIn(rep *analysis.Report, key, value string, overall bool) int {
	n := 0
	for _, t := range rep.Targets {
		if overall {
			n = max(n, t.Primary.N)
		} else {
			n = max(n, t.Slices[key][value].N)
		}
	}
	return n
}

// whisker draws an interval from a to b with caps, vertical (x fixed) or
// horizontal (y fixed).
func whisker(c *chart, series int, at, a, b float64, vertical bool) {
	cls := seriesClass(series) + " whisker"
	if vertical {
		c.line(cls, at, a, at, b, "")
		c.line(cls, at-3, a, at+3, a, "")
		c.line(cls, at-3, b, at+3, b, "")
		return
	}
	c.line(cls, a, at, b, at, "")
	c.line(cls, a, at-3, a, at+3, "")
	c.line(cls, b, at-3, b, at+3, "")
}

// forestChart draws one pair's paired differences with 95% intervals:
// overall first, then every slice.
func forestChart(idx int, cmp analysis.Comparison) chart {
	type row struct {
		label string
		c     analysis.Comparison
		head  bool // first row of a key
	}
	rows := []row{{label: "overall", c: cmp}}
	keys := make([]string, 0, len(cmp.Slices))
	for k := range cmp.Slices {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	total := 1
	for _, k := range keys {
		vs := make([]string, 0, len(cmp.Slices[k]))
		for v := range cmp.Slices[k] {
			vs = append(vs, v)
		}
		sort.Strings(vs)
		analysis.SortValues(vs)
		for i, v := range vs {
			total++
			if len(rows) < chartMaxForestRows {
				rows = append(rows, row{label: k + " = " + v, c: cmp.Slices[k][v], head: i == 0})
			}
		}
	}
	lo, hi := 0.0, 0.0
	for _, r := range rows {
		lo = math.Min(lo, math.Min(r.c.CI[0], r.c.Delta))
		hi = math.Max(hi, math.Max(r.c.CI[1], r.c.Delta))
	}
	lo, hi, ticks := niceDomain(100*lo, 100*hi, 6)
	labelChars := 4
	for _, r := range rows {
		labelChars = max(labelChars, len([]rune(r.label)))
	}
	labelChars = min(labelChars, 30)
	left := 16 + charWidth*float64(labelChars)
	plotW, right, rowH := 380.0, 150.0, 18.0
	c := chart{ID: "forest-" + strconv.Itoa(idx), Class: "chart chart-forest",
		Title: "Paired difference in pass rate, " + cmp.A + " − " + cmp.B + ", with 95% intervals",
		W:     left + plotW + right}
	a := plotArea{X0: left, Y0: 24, X1: left + plotW, Y1: 24 + rowH*float64(len(rows))}
	c.H = a.Y1 + 62
	xs := scale{D0: lo, D1: hi, R0: a.X0, R1: a.X1}
	c.xAxis(a, xs, ticks, units.PtsTick, "")
	c.line("zero", xs.at(0), a.Y0, xs.at(0), a.Y1, "")
	// Which way is better, at the ends of the axis.
	c.label("direction", a.X0, a.Y1+32, "start", "← "+cmp.B+" better", fitChars(plotW/2-8))
	c.label("direction", a.X1, a.Y1+32, "end", cmp.A+" better →", fitChars(plotW/2-8))
	c.text("col-head", a.X1+10, a.Y0-10, "start", "Δ points [95% CI]")
	for i, r := range rows {
		y := a.Y0 + rowH*(float64(i)+0.5)
		if r.head {
			c.line("row-rule", 4, a.Y0+rowH*float64(i), c.W-4, a.Y0+rowH*float64(i), "")
		}
		cls := "row-label"
		if i == 0 {
			cls += " overall"
		}
		c.label(cls, left-8, y+4, "end", r.label, labelChars)
		v := verdictClass(r.c.Verdict)
		tip := fmt.Sprintf("%s: %s − %s = %s points, 95%% CI [%s, %s], %s cases, %s", r.label, cmp.A, cmp.B,
			units.Delta(r.c.Delta), units.Delta(r.c.CI[0]), units.Delta(r.c.CI[1]), units.Count(r.c.N), verdictWords(r.c))
		c.line("forest-ci "+v, xs.at(100*r.c.CI[0]), y, xs.at(100*r.c.CI[1]), y, "")
		size := 3.5
		if i == 0 {
			size = 5
		}
		var p pathBuilder
		x := xs.at(100 * r.c.Delta)
		p.M(x, y-size).L(x+size, y).L(x, y+size).L(x-size, y).Z()
		c.path("forest-point "+v, p.String(), tip)
		c.text("row-value "+v, a.X1+10, y+4, "start", deltaCI(r.c))
	}
	c.text("axis-title", (a.X0+a.X1)/2, a.Y1+50, "middle", "difference in pass rate, percentage points ("+clip(cmp.A, 24)+" − "+clip(cmp.B, 24)+")")
	c.Caption = "Each row pairs the two targets on the same cases. Blue: " + cmp.A + " better; orange: " + cmp.B +
		" better; grey: no clear difference. Slice rows' p-values are Holm-adjusted over every slice comparison of their tag."
	if total > len(rows) {
		c.Caption += fmt.Sprintf(" %d more slice rows are in the tables.", total-len(rows))
	}
	return c
}

func verdictClass(v string) string {
	switch v {
	case "a_better":
		return "v-a"
	case "b_better":
		return "v-b"
	default:
		return "v-n"
	}
}

// costChart draws inference cost per case against pass rate, marking the
// targets on the Pareto frontier and joining them.
func costChart(rep *analysis.Report) chart {
	left, right := 58.0, 24.0
	c := chart{ID: "cost-quality", Class: "chart chart-cost", Title: "Cost per case against pass rate", W: 640}
	y := c.legend(targetNames(rep), left, 16, c.W-right)
	a := plotArea{X0: left, Y0: y + 8, X1: c.W - right, Y1: y + 8 + 260}
	c.H = a.Y1 + 52
	type pt struct {
		i          int
		cost, rate float64
		ci         [2]float64
	}
	var ps []pt
	maxCost, minPos := 0.0, math.Inf(1)
	for i, t := range rep.Targets {
		if t.Primary.N == 0 {
			continue
		}
		ps = append(ps, pt{i, t.CostUSD.PerCase, t.Primary.Rate, t.Primary.CI})
		maxCost = math.Max(maxCost, t.CostUSD.PerCase)
		if t.CostUSD.PerCase > 0 {
			minPos = math.Min(minPos, t.CostUSD.PerCase)
		}
	}
	if len(ps) == 0 {
		c.text("note", c.W/2, (a.Y0+a.Y1)/2, "middle", "no scored targets")
		return c
	}
	lo, hi := 1.0, 0.0
	for _, p := range ps {
		lo, hi = math.Min(lo, p.ci[0]), math.Max(hi, p.ci[1])
	}
	lo, hi, yt := niceDomain(math.Max(0, lo-0.02), math.Min(1, hi+0.02), 5)
	lo, hi = math.Max(0, lo), math.Min(1, hi)
	yt = slices.DeleteFunc(yt, func(v float64) bool { return v < lo-1e-9 || v > hi+1e-9 })
	ys := scale{D0: lo, D1: hi, R0: a.Y1, R1: a.Y0}
	c.yAxis(a, ys, yt, units.PctTick, "pass rate")
	var xs scale
	var xt []float64
	logX := minPos < math.Inf(1) && maxCost/minPos >= 20
	if logX {
		for _, p := range ps {
			if p.cost <= 0 {
				logX = false // a free target cannot sit on a log axis
			}
		}
	}
	switch {
	case maxCost == 0:
		xs, xt = scale{D0: 0, D1: 1, R0: a.X0, R1: a.X1}, nil
		c.text("note", (a.X0+a.X1)/2, a.Y0+16, "middle", "no prices in the spec: every target cost $0")
		c.line("axis", a.X0, a.Y1, a.X1, a.Y1, "")
	case logX:
		d0, d1, ticks := logDomain(minPos, maxCost)
		xs, xt = scale{D0: d0, D1: d1, R0: a.X0 + 8, R1: a.X1 - 8, Log: true}, ticks
	default:
		d0, d1, ticks := niceDomain(0, maxCost*1.08, 5)
		xs, xt = scale{D0: d0, D1: d1, R0: a.X0 + 8, R1: a.X1 - 8}, ticks
	}
	if len(xt) > 0 {
		title := "inference cost per case (USD)"
		if logX {
			title += ", log scale"
		}
		c.xAxis(a, xs, xt, units.USD, title)
	} else {
		c.text("axis-title", (a.X0+a.X1)/2, a.Y1+34, "middle", "inference cost per case (USD)")
	}
	onFrontier := map[string]bool{}
	for _, n := range rep.Pareto {
		onFrontier[n] = true
	}
	var front []pt
	for _, p := range ps {
		if onFrontier[rep.Targets[p.i].Name] {
			front = append(front, p)
		}
	}
	sort.SliceStable(front, func(i, j int) bool { return front[i].cost < front[j].cost })
	if len(front) > 1 {
		var p pathBuilder
		for i, f := range front {
			if i == 0 {
				p.M(xs.at(f.cost), ys.at(f.rate))
			} else {
				p.L(xs.at(f.cost), ys.at(f.rate))
			}
		}
		c.path("frontier", p.String(), "quality × cost × p95-latency frontier")
	}
	for _, p := range ps {
		t := rep.Targets[p.i]
		x, y := xs.at(p.cost), ys.at(p.rate)
		whisker(&c, p.i, x, ys.at(p.ci[0]), ys.at(p.ci[1]), true)
		cls, note := "hollow", ""
		if onFrontier[t.Name] {
			cls, note = "on-frontier", " · on the frontier"
		}
		tip := fmt.Sprintf("%s: %s %s at %s per case%s", t.Name, units.Pct(p.rate), units.PctCI(p.ci), units.USD(p.cost), note)
		c.marker(p.i, cls, x, y, 5, tip)
		// Labels stay clear of the frontier line, which runs from lower
		// left to upper right: frontier points are labelled below and to
		// the right, a point at the right edge above and to the left.
		switch {
		case x > a.X1-140:
			c.label("point-label", x-10, y-10, "end", t.Name, 24)
		case onFrontier[t.Name]:
			c.label("point-label", x+10, y+16, "start", t.Name, 24)
		default:
			c.label("point-label", x+10, y-8, "start", t.Name, 24)
		}
	}
	c.Caption = "Filled markers are on the quality × cost × p95-latency frontier (the dashed line joins them by cost); hollow ones are dominated: another target is at least as good on quality, cost and p95 latency, and better on one. Whiskers: 95% intervals."
	return c
}

// latencyChart draws each target's latency distribution as a box: the
// middle half, the median, whiskers to the 5th and 95th percentiles and a
// mark at the 99th. Without samples, it marks the reported percentiles.
func latencyChart(rep *analysis.Report) chart {
	type dist struct {
		p5, p25, p50, p75, p95, p99 float64
		n                           int
	}
	ds := make([]dist, len(rep.Targets))
	hiAll, loAll := 0.0, math.Inf(1)
	for i, t := range rep.Targets {
		l := t.LatencyMS
		d := dist{p5: math.NaN(), p25: math.NaN(), p75: math.NaN(), p50: l.P50, p95: l.P95, p99: l.P99}
		if len(l.Samples) > 0 {
			s := slices.Clone(l.Samples)
			s = slices.DeleteFunc(s, func(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) })
			sort.Float64s(s)
			q := stats.QuantileSorted
			d = dist{q(s, 0.05), q(s, 0.25), q(s, 0.5), q(s, 0.75), q(s, 0.95), q(s, 0.99), len(s)}
		}
		ds[i] = d
		for _, v := range []float64{d.p5, d.p50, d.p95, d.p99} {
			if v > 0 {
				hiAll, loAll = math.Max(hiAll, v), math.Min(loAll, v)
			}
		}
	}
	labelChars := 6
	for _, t := range rep.Targets {
		labelChars = max(labelChars, len([]rune(t.Name)))
	}
	labelChars = min(labelChars, 28)
	left := 16 + charWidth*float64(labelChars)
	rowH := 34.0
	c := chart{ID: "latency", Class: "chart chart-latency", Title: "Latency per call", W: left + 400 + 230}
	a := plotArea{X0: left, Y0: 16, X1: left + 400, Y1: 16 + rowH*float64(max(1, len(ds)))}
	c.H = a.Y1 + 52
	if hiAll == 0 {
		c.text("note", (a.X0+a.X1)/2, (a.Y0+a.Y1)/2, "middle", "no latencies recorded")
		return c
	}
	var xs scale
	var xt []float64
	logX := hiAll/loAll > 50
	title := "latency (ms)"
	if logX {
		d0, d1, ticks := logDomain(loAll, hiAll)
		xs, xt, title = scale{D0: d0, D1: d1, R0: a.X0, R1: a.X1, Log: true}, ticks, "latency (ms), log scale"
	} else {
		d0, d1, ticks := niceDomain(0, hiAll*1.05, 6)
		xs, xt = scale{D0: d0, D1: d1, R0: a.X0, R1: a.X1}, ticks
	}
	c.xAxis(a, xs, xt, func(v float64) string { return units.Thousands(int64(math.Round(v))) }, title)
	c.text("col-head", a.X1+12, a.Y0-4, "start", "p50 · p95 · p99")
	for i, d := range ds {
		t := rep.Targets[i]
		y := a.Y0 + rowH*(float64(i)+0.5)
		c.label("row-label", left-8, y+4, "end", t.Name, labelChars)
		cls := seriesClass(i)
		tip := fmt.Sprintf("%s: p50 %s, p95 %s, p99 %s", t.Name, units.MS(d.p50), units.MS(d.p95), units.MS(d.p99))
		if d.n > 0 {
			tip = fmt.Sprintf("%s: p5 %s, p25 %s, p50 %s, p75 %s, p95 %s, p99 %s (%s calls)", t.Name,
				units.MS(d.p5), units.MS(d.p25), units.MS(d.p50), units.MS(d.p75), units.MS(d.p95), units.MS(d.p99), units.Count(d.n))
			c.line(cls+" whisker", xs.at(d.p5), y, xs.at(d.p25), y, "")
			c.line(cls+" whisker", xs.at(d.p75), y, xs.at(d.p95), y, "")
			c.line(cls+" whisker", xs.at(d.p5), y-5, xs.at(d.p5), y+5, "")
			c.line(cls+" whisker", xs.at(d.p95), y-5, xs.at(d.p95), y+5, "")
			c.rect(cls+" box", xs.at(d.p25), y-8, math.Max(1, xs.at(d.p75)-xs.at(d.p25)), 16, tip)
			c.line(cls+" median", xs.at(d.p50), y-8, xs.at(d.p50), y+8, tip)
		} else if d.p50 > 0 {
			c.line(cls+" whisker", xs.at(d.p50), y, xs.at(d.p95), y, "")
			c.line(cls+" median", xs.at(d.p50), y-8, xs.at(d.p50), y+8, tip)
		}
		if d.p99 > 0 {
			var p pathBuilder
			x := xs.at(d.p99)
			p.M(x, y-5).L(x+5, y).L(x, y+5).L(x-5, y).Z()
			c.path(cls+" p99", p.String(), tip)
		}
		c.text("row-value", a.X1+12, y+4, "start", units.MS(d.p50)+" · "+units.MS(d.p95)+" · "+units.MS(d.p99))
	}
	c.Caption = "Successful calls only. Box: 25th–75th percentile; line: median; whiskers: 5th–95th percentile; ◆: 99th percentile."
	return c
}
