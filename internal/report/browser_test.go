package report

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/browsertest"

	"github.com/chromedp/chromedp"

	"github.com/assay-eval/assay/internal/analysis"
)

// pageLoad is what a tab saw while loading one file.
type pageLoad = browsertest.Watch

// The HTML report, loaded in a real browser: text from models, datasets and
// specs that carries <script>, an <img onerror> and a </textarea><svg
// onload> runs nothing, reads as text, and leaves the tables and charts in
// place; the page fetches nothing but itself. Run once with the
// Content-Security-Policy (as shipped) and once without it, so the proof
// does not rest on the policy.
func TestHTMLInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	exe := browsertest.Chromium(t)
	dir := t.TempDir()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(filepath.Join(dir, "profile")),
		chromedp.WindowSize(1280, 900),
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	browserCtx, cancelBrowser := chromedp.NewContext(allocCtx)
	defer cancelBrowser()
	// Start the browser (no timeout on the first run: it would stop it).
	if err := chromedp.Do(browserCtx); err != nil {
		t.Fatalf("starting %s: %v", exe, err)
	}

	hostileHTML := func(csp bool) []byte {
		var b bytes.Buffer
		if err := renderHTML(&b, hostileReport(), htmlOptions{csp: csp}); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	for _, v := range []struct {
		name string
		page []byte
	}{
		{"hostile with CSP", hostileHTML(true)},
		{"hostile without CSP", hostileHTML(false)},
	} {
		t.Run(v.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(v.name, " ", "-")+".html")
			if err := os.WriteFile(path, v.page, 0o644); err != nil {
				t.Fatal(err)
			}
			load, shot := openPage(t, browserCtx, path)
			checkHostilePage(t, load, shot.ctx, path)
			if out := os.Getenv("ASSAY_SCREENSHOT"); out != "" && v.name == "hostile without CSP" {
				shot.save(t, strings.TrimSuffix(out, ".png")+"-hostile.png")
			}
		})
	}
	// The clean report is what a person reads: its screenshot is the one
	// to look at (ASSAY_SCREENSHOT=/path/report.png).
	t.Run("clean", func(t *testing.T) {
		var b bytes.Buffer
		if err := HTML(&b, cleanReport()); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "clean.html")
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		load, shot := openPage(t, browserCtx, path)
		checkStructure(t, shot.ctx, cleanReport())
		checkNoFetches(t, load, path)
		if out := os.Getenv("ASSAY_SCREENSHOT"); out != "" {
			shot.save(t, out)
		}
	})
}

type tab struct{ ctx context.Context }

// save writes a full-page PNG screenshot.
func (tb tab) save(t *testing.T, path string) {
	t.Helper()
	png, err := chromedp.Run(tb.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}

// openPage loads a file in a new tab, recording its requests and logs.
func openPage(t *testing.T, browserCtx context.Context, path string) (*pageLoad, tab) {
	t.Helper()
	load := &pageLoad{}
	tabCtx, cancel := chromedp.NewContext(browserCtx, chromedp.WithListener(load.Listen))
	t.Cleanup(cancel)
	if err := chromedp.Do(tabCtx); err != nil {
		t.Fatal(err)
	}
	ctx, cancelTimeout := context.WithTimeout(tabCtx, 30*time.Second)
	t.Cleanup(cancelTimeout)
	u := (&url.URL{Scheme: "file", Path: path}).String()
	if err := chromedp.Do(ctx, chromedp.Navigate(u), chromedp.WaitVisible(chromedp.CSS("#headline"))); err != nil {
		t.Fatalf("loading %s: %v", u, err)
	}
	// Let anything a payload scheduled (an image error, an onload) happen.
	if err := chromedp.Do(ctx, chromedp.Sleep(300*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	return load, tab{ctx}
}

func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("evaluating %s: %v", js, err)
	}
	return v
}

func checkHostilePage(t *testing.T, load *pageLoad, ctx context.Context, path string) {
	t.Helper()
	if got := eval[string](t, ctx, `typeof window.__pwned`); got != "undefined" {
		t.Errorf("a payload ran: window.__pwned is %s", got)
	}
	// No element the payloads would create, and no event handler attribute.
	for sel, want := range map[string]int{"script": 0, "img": 0, "textarea": 0, "iframe": 0, "object": 0, "embed": 0} {
		if n := eval[int](t, ctx, fmt.Sprintf(`document.querySelectorAll(%q).length`, sel)); n != want {
			t.Errorf("%d <%s> elements in the page, want %d", n, sel, want)
		}
	}
	if n := eval[int](t, ctx, `[...document.querySelectorAll('*')].filter(e => [...e.attributes].some(a => a.name.toLowerCase().startsWith('on'))).length`); n != 0 {
		t.Errorf("%d elements carry an on* event handler attribute", n)
	}
	// The hostile text reads as text, where a person sees it.
	text := eval[string](t, ctx, `document.body.innerText`)
	for _, h := range hostile {
		if !strings.Contains(text, h) {
			t.Errorf("the page does not show %q as text", h)
		}
	}
	for _, sel := range []string{"#headline", "#comparisons", ".slice-table", "#worst"} {
		el := eval[string](t, ctx, fmt.Sprintf(`document.querySelector(%q).innerText`, sel))
		found := 0
		for _, h := range hostile {
			if strings.Contains(el, h) {
				found++
			}
		}
		if found == 0 {
			t.Errorf("%s shows none of the hostile strings as text", sel)
		}
	}
	// Inside the charts, names and slice values are SVG text too.
	svgText := eval[string](t, ctx, `[...document.querySelectorAll('svg.chart')].map(s => s.textContent).join('\n')`)
	for _, h := range hostile {
		if !strings.Contains(svgText, h) {
			t.Errorf("the charts do not carry %q as text", h)
		}
	}
	checkStructure(t, ctx, hostileReport())
	checkNoFetches(t, load, path)
	seen := load.Seen()
	if len(seen.Exceptions) > 0 {
		t.Errorf("exceptions in the page: %q", seen.Exceptions)
	}
	for _, l := range seen.Logs {
		// A blocked inline script or handler shows up as a CSP violation.
		if strings.Contains(l, "Content Security Policy") || strings.Contains(l, "Refused") {
			t.Errorf("the policy had to block something: %s", l)
		}
	}
}

// checkStructure asserts the tables and each chart are in the DOM, drawn.
func checkStructure(t *testing.T, ctx context.Context, rep *analysis.Report) {
	t.Helper()
	count := func(sel string) int {
		return eval[int](t, ctx, fmt.Sprintf(`document.querySelectorAll(%q).length`, sel))
	}
	nt := len(rep.Targets)
	for sel, want := range map[string]int{
		"#headline tbody tr":    nt,
		"#comparisons tbody tr": len(rep.Comparisons),
		"table.slice-table":     2,
		"#failure-kinds":        1,
		"article.failure":       len(rep.Worst),
		"pre.output":            len(rep.Worst) - 1, // one failure has an empty output
		"#warnings li":          len(rep.Warnings),
		"#ranking li":           len(rep.Ranking),
		"pre.spec":              1,
		// Exactly our charts: a panel per tag key, a forest plot per pair,
		// cost vs quality and latency. A payload's <svg> would add one.
		"svg":                        2 + len(rep.Comparisons) + 2,
		"svg.chart-slices":           2,
		"svg#slices-0":               1,
		"svg#slices-1":               1,
		"svg.chart-forest":           len(rep.Comparisons),
		"svg#forest-0":               1,
		"svg#cost-quality":           1,
		"svg#latency":                1,
		"svg#cost-quality .frontier": 1,
		// Points: per slice panel, a marker per target per value plus the
		// overall; the bucket key has 4 values, the tier key 9.
		"svg#slices-0 path.marker":       nt*(1+4) + nt, // + the legend's
		"svg#slices-1 path.marker":       nt*(1+9) + nt,
		"svg#forest-0 path.forest-point": 1 + 4 + 9,
		"svg#latency rect.box":           nt,
		"svg#latency path.p99":           nt,
	} {
		if got := count(sel); got != want {
			t.Errorf("%s: %d in the DOM, want %d", sel, got, want)
		}
	}
	// The charts have size: a browser laid them out.
	if w := eval[float64](t, ctx, `document.querySelector('#slices-1').getBoundingClientRect().width`); w < 400 {
		t.Errorf("the tier chart is %v px wide", w)
	}
}

// checkNoFetches asserts the page asked for nothing but its own file (and
// the empty data: icon that stops a favicon request).
func checkNoFetches(t *testing.T, load *pageLoad, path string) {
	t.Helper()
	requests := load.Seen().Requests
	self := (&url.URL{Scheme: "file", Path: path}).String()
	sawSelf := false
	for _, u := range requests {
		switch {
		case u == self:
			sawSelf = true
		case strings.HasPrefix(u, "data:"):
		default:
			t.Errorf("the page fetched %s", u)
		}
	}
	if !sawSelf {
		t.Errorf("no request for the page itself was seen (requests: %q): the network listener is not working", requests)
	}
}
