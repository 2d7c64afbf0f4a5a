package report

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The HTML report's charts are described here as marks (lines, paths,
// rectangles, text) in pixel coordinates, and drawn by the HTML template.
// No SVG markup is built as a string: every label — a target name, a slice
// value — reaches the page through html/template, which escapes it in the
// SVG text or <title> it lands in. Path data is built from numbers only.

// chart is one SVG picture.
type chart struct {
	ID      string // element id; ours, never from outside
	Class   string // "chart chart-slices" …; ours
	Title   string // accessible title; may hold outside text
	Caption string // shown under the picture; may hold outside text
	W, H    float64
	Marks   []mark
}

// mark is one SVG element.
type mark struct {
	Kind   string // line, rect, path, text
	Class  string // ours: series (s0…), roles (axis, grid, whisker …)
	X, Y   float64
	X2, Y2 float64 // line end
	W, H   float64 // rect size
	D      string  // path data (numbers only)
	Text   string  // text content; may hold outside text
	Anchor string  // start, middle, end
	Rotate float64 // degrees about (X, Y), text only
	Tip    string  // hover text (<title>); may hold outside text
}

func (c *chart) line(class string, x1, y1, x2, y2 float64, tip string) {
	c.Marks = append(c.Marks, mark{Kind: "line", Class: class, X: x1, Y: y1, X2: x2, Y2: y2, Tip: tip})
}

func (c *chart) rect(class string, x, y, w, h float64, tip string) {
	c.Marks = append(c.Marks, mark{Kind: "rect", Class: class, X: x, Y: y, W: w, H: h, Tip: tip})
}

func (c *chart) path(class, d, tip string) {
	c.Marks = append(c.Marks, mark{Kind: "path", Class: class, D: d, Tip: tip})
}

func (c *chart) text(class string, x, y float64, anchor, s string) {
	c.Marks = append(c.Marks, mark{Kind: "text", Class: class, X: x, Y: y, Anchor: anchor, Text: s})
}

// label is text clipped to n characters, with the whole as its hover text.
func (c *chart) label(class string, x, y float64, anchor, s string, n int) {
	m := mark{Kind: "text", Class: class, X: x, Y: y, Anchor: anchor, Text: clip(s, n)}
	if m.Text != s {
		m.Tip = s
	}
	c.Marks = append(c.Marks, m)
}

// marker is a series' symbol at (x, y): circle, square, diamond, triangle
// in turn, so series differ in shape as well as colour.
func (c *chart) marker(series int, class string, x, y, r float64, tip string) {
	c.path(seriesClass(series)+" marker "+class, markerPath(series, x, y, r), tip)
}

func markerPath(series int, x, y, r float64) string {
	var p pathBuilder
	switch series % 4 {
	case 0: // circle
		p.M(x-r, y).raw("a" + num(r) + "," + num(r) + " 0 1,0 " + num(2*r) + ",0")
		p.raw("a" + num(r) + "," + num(r) + " 0 1,0 " + num(-2*r) + ",0Z")
	case 1: // square
		s := r * 0.9
		p.M(x-s, y-s).L(x+s, y-s).L(x+s, y+s).L(x-s, y+s).Z()
	case 2: // diamond
		s := r * 1.25
		p.M(x, y-s).L(x+s, y).L(x, y+s).L(x-s, y).Z()
	default: // triangle
		s := r * 1.2
		p.M(x, y-s).L(x+s, y+s*0.8).L(x-s, y+s*0.8).Z()
	}
	return p.String()
}

// seriesClass is the CSS class giving series i its colour (Okabe–Ito).
func seriesClass(i int) string { return "s" + strconv.Itoa(i%seriesColours) }

const seriesColours = 7

// pathBuilder writes SVG path data from numbers.
type pathBuilder struct{ b strings.Builder }

func (p *pathBuilder) M(x, y float64) *pathBuilder {
	p.b.WriteString("M" + num(x) + "," + num(y))
	return p
}

func (p *pathBuilder) L(x, y float64) *pathBuilder {
	p.b.WriteString("L" + num(x) + "," + num(y))
	return p
}

func (p *pathBuilder) Z() *pathBuilder { p.b.WriteString("Z"); return p }

func (p *pathBuilder) raw(s string) *pathBuilder { p.b.WriteString(s); return p }

func (p *pathBuilder) String() string { return p.b.String() }

// num formats a coordinate with at most two decimals.
func num(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "0"
	}
	return strconv.FormatFloat(math.Round(x*100)/100, 'f', -1, 64)
}

// clip shortens s to n characters, ending in "…" when cut.
func clip(s string, n int) string {
	if n < 2 || utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for j := range s {
		if i == n-1 {
			return s[:j] + "…"
		}
		i++
	}
	return s
}

// charWidth is a generous estimate of one character's width in pixels at
// the charts' 11px sans-serif font (generous, so labels do not collide).
const charWidth = 6.8

// textWidth estimates the width in pixels of s at the charts' font.
func textWidth(s string) float64 { return charWidth * float64(utf8.RuneCountInString(s)) }

// fitChars is how many characters fit in w pixels.
func fitChars(w float64) int { return max(2, int(w/charWidth)) }

// scale maps a domain [D0, D1] onto a range [R0, R1] of pixels, linearly
// or on a log10 axis.
type scale struct {
	D0, D1, R0, R1 float64
	Log            bool
}

func (s scale) at(v float64) float64 {
	d0, d1 := s.D0, s.D1
	if s.Log {
		v, d0, d1 = math.Log10(math.Max(v, s.D0)), math.Log10(d0), math.Log10(d1)
	}
	if d1 == d0 {
		return (s.R0 + s.R1) / 2
	}
	t := (v - d0) / (d1 - d0)
	return s.R0 + t*(s.R1-s.R0)
}

// niceStep is a round step (1, 2 or 5 × 10^k) that splits span into about
// n intervals.
func niceStep(span float64, n int) float64 {
	if span <= 0 || n < 1 || math.IsNaN(span) || math.IsInf(span, 0) {
		return 1
	}
	raw := span / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	switch f := raw / mag; {
	case f <= 1:
		return mag
	case f <= 2:
		return 2 * mag
	case f <= 5:
		return 5 * mag
	default:
		return 10 * mag
	}
}

// niceDomain widens [lo, hi] to whole steps and returns the ticks in it.
func niceDomain(lo, hi float64, n int) (float64, float64, []float64) {
	if hi < lo {
		lo, hi = hi, lo
	}
	if hi == lo {
		if lo == 0 {
			hi = 1
		} else {
			lo, hi = lo-math.Abs(lo)/2, hi+math.Abs(hi)/2
		}
	}
	step := niceStep(hi-lo, n)
	lo = math.Floor(lo/step+1e-9) * step
	hi = math.Ceil(hi/step-1e-9) * step
	var ticks []float64
	for i := 0; ; i++ {
		v := lo + float64(i)*step
		if v > hi+step*1e-9 {
			break
		}
		// Round away float noise (0.30000000000000004).
		ticks = append(ticks, math.Round(v/step)*step)
	}
	return lo, hi, ticks
}

// logDomain widens [lo, hi] (both > 0) to whole decades and returns ticks
// at 1, 2 and 5 × 10^k (only powers of ten when there are many decades).
func logDomain(lo, hi float64) (float64, float64, []float64) {
	lo = math.Pow(10, math.Floor(math.Log10(lo)))
	hi = math.Pow(10, math.Ceil(math.Log10(hi)))
	if hi == lo {
		hi = lo * 10
	}
	decades := int(math.Round(math.Log10(hi / lo)))
	mults := []float64{1, 2, 5}
	if decades > 3 {
		mults = []float64{1}
	}
	var ticks []float64
	for d := 0; d <= decades; d++ {
		base := lo * math.Pow(10, float64(d))
		for _, m := range mults {
			if v := base * m; v <= hi*(1+1e-9) {
				ticks = append(ticks, v)
			}
		}
	}
	return lo, hi, ticks
}

// plotArea is the rectangle the data is drawn in.
type plotArea struct{ X0, Y0, X1, Y1 float64 } // left, top, right, bottom

// xAxis draws a horizontal axis at the bottom of the area with ticks,
// vertical grid lines and tick labels, and a title under it.
func (c *chart) xAxis(a plotArea, s scale, ticks []float64, format func(float64) string, title string) {
	for _, v := range ticks {
		x := s.at(v)
		c.line("grid", x, a.Y0, x, a.Y1, "")
		c.line("tick", x, a.Y1, x, a.Y1+4, "")
		c.text("tick-label", x, a.Y1+16, "middle", format(v))
	}
	c.line("axis", a.X0, a.Y1, a.X1, a.Y1, "")
	if title != "" {
		c.text("axis-title", (a.X0+a.X1)/2, a.Y1+34, "middle", title)
	}
}

// yAxis draws a vertical axis at the left of the area with ticks,
// horizontal grid lines and tick labels, and a rotated title.
func (c *chart) yAxis(a plotArea, s scale, ticks []float64, format func(float64) string, title string) {
	for _, v := range ticks {
		y := s.at(v)
		c.line("grid", a.X0, y, a.X1, y, "")
		c.line("tick", a.X0-4, y, a.X0, y, "")
		c.text("tick-label", a.X0-7, y+4, "end", format(v))
	}
	c.line("axis", a.X0, a.Y0, a.X0, a.Y1, "")
	if title != "" {
		c.Marks = append(c.Marks, mark{Kind: "text", Class: "axis-title", X: 14, Y: (a.Y0 + a.Y1) / 2,
			Anchor: "middle", Rotate: -90, Text: title})
	}
}

// legend draws a marker and a name per series from (x, y), wrapping at
// maxX; it returns the y below the last line.
func (c *chart) legend(names []string, x, y, maxX float64) float64 {
	x0 := x
	for i, n := range names {
		n = clip(n, 32)
		w := 18 + textWidth(n) + 14
		if x > x0 && x+w > maxX {
			x, y = x0, y+16
		}
		c.marker(i, "", x+5, y-4, 4, "")
		c.label("legend", x+14, y, "start", names[i], 32)
		x += w
	}
	return y + 16
}
