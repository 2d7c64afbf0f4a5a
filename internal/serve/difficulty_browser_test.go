package serve_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/assay-eval/assay/internal/browsertest"
	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/spec"
)

// serveOnLoopback runs fx's server on a loopback port until the test
// ends (a close error fails it) and returns its base URL.
func serveOnLoopback(t *testing.T, fx *labelFixture) string {
	t.Helper()
	srvCtx, stopSrv := context.WithCancel(context.Background())
	addrc := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- fx.srv.ListenAndServe(srvCtx, func(a string) { addrc <- a }) }()
	var base string
	select {
	case a := <-addrc:
		base = "http://" + a
	case err := <-done:
		stopSrv()
		t.Fatalf("the server did not start: %v", err)
	}
	t.Cleanup(func() {
		stopSrv()
		if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("server: %v", err)
		}
	})
	return base
}

// openTab starts headless Chromium (exe) with its profile in profile and
// returns a tab's context, which times out after limit, and the tab's
// watch. The browser stops when the test ends.
func openTab(t *testing.T, exe, profile string, limit time.Duration) (context.Context, *browsertest.Watch) {
	t.Helper()
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(exe), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.UserDataDir(profile),
		chromedp.WindowSize(1280, 900))
	t.Cleanup(cancelAlloc)
	w := &browsertest.Watch{}
	tabCtx, cancelTab := chromedp.NewContext(allocCtx, chromedp.WithListener(w.Listen))
	t.Cleanup(cancelTab)
	if err := chromedp.Do(tabCtx); err != nil {
		t.Fatalf("starting %s: %v", exe, err)
	}
	ctx, cancel := context.WithTimeout(tabCtx, limit)
	t.Cleanup(cancel)
	return ctx, w
}

// An expert rates two cases through the real pages: the run page's link
// to the rating queue, a sampled case, a level's button, the next case of
// the sample, another button, back to the queue. The file holds exactly
// the two ratings pressed (every other line unchanged); the queue counts
// them; no payload in the case IDs, inputs or levels runs.
func TestRatingDifficultyInChromium(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a browser")
	}
	exe := browsertest.Chromium(t)
	fx := newLabelFixture(t)
	levels := []string{"easy", `<img src=x onerror="window.__pwned=7">`, "hard"}
	var data strings.Builder
	var ids []string
	for i := range fixtureCases {
		ids = append(ids, caseID(i))
		b, _ := json.Marshal(map[string]any{"id": caseID(i), "question": fmt.Sprintf("question %d: %s", i, payload(i))})
		data.Write(b)
		data.WriteByte('\n')
	}
	run, path := ratedRun(t, fx, "run-rate-kb", "rate.jsonl", data.String(), &spec.Difficulty{Tag: "tier", Levels: levels}, nil, ids)

	base := serveOnLoopback(t, fx)
	ctx, w := openTab(t, exe, filepath.Join(fx.dir, "profile-rate"), 2*time.Minute)
	do := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	text := func(sel string) string {
		t.Helper()
		s, err := evalIn[string](ctx, `(document.querySelector(`+mustQuote(sel)+`) || {}).textContent || ''`)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	checkPage := func(where string) {
		t.Helper()
		pwned, err := evalIn[string](ctx, `typeof window.__pwned`)
		if err != nil {
			t.Fatal(err)
		}
		n, err := evalIn[int](ctx, `document.querySelectorAll('img, svg, a[href^="javascript:"]').length + document.querySelectorAll('script').length - 1`)
		if err != nil {
			t.Fatal(err)
		}
		if pwned != "undefined" || n != 0 {
			t.Errorf("%s: a payload ran (window.__pwned %s) or became markup (%d elements)", where, pwned, n)
		}
	}
	// screenshot saves the page when ASSAY_SCREENSHOT_DIR is set.
	screenshot := func(name string) {
		t.Helper()
		dir := os.Getenv("ASSAY_SCREENSHOT_DIR")
		if dir == "" {
			return
		}
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatalf("screenshot: %v", err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// pressLevel clicks the rating button whose value is level.
	pressLevel := func(level string) {
		t.Helper()
		if _, err := evalIn[bool](ctx, `(() => { const b = [...document.querySelectorAll('#rate-difficulty button.level')].find(b => b.value === `+mustQuote(level)+`); b.click(); return true })()`); err != nil {
			t.Fatalf("pressing %q: %v", level, err)
		}
	}

	do("the run page", chromedp.Navigate(base+"/runs/"+run.ID), chromedp.WaitVisible(chromedp.CSS(`#rate-difficulty-link`)))
	do("the rating queue", chromedp.Click(chromedp.CSS(`#rate-difficulty-link`)), chromedp.WaitVisible(chromedp.CSS(`#sample`)))
	checkPage("the rating queue")
	if got := text("#counts"); !strings.HasPrefix(got, "0 of 20 cases rated · 20 unrated") {
		t.Errorf("counts before: %q", got)
	}
	first := text("#sample li a")
	do("a sampled case", chromedp.Click(chromedp.CSS(`#sample li a`)), chromedp.WaitVisible(chromedp.CSS(`#rate-difficulty`)))
	checkPage("a sampled case")
	screenshot("rate-case")
	nButtons, err := evalIn[int](ctx, `document.querySelectorAll('#rate-difficulty button.level').length`)
	if err != nil || nButtons != 3 {
		t.Fatalf("%d level buttons (%v), want 3", nButtons, err)
	}
	pressLevel(levels[1])
	do("the rated page", chromedp.WaitVisible(chromedp.CSS(`#difficulty-set`)))
	checkPage("the rated page")
	screenshot("rate-done")
	second := strings.TrimPrefix(text("#next-case"), "Rate the next case of the sample: ")
	do("the next case", chromedp.Click(chromedp.CSS(`#next-case`)), chromedp.WaitVisible(chromedp.CSS(`#rate-difficulty`)))
	pressLevel("hard")
	do("the rated page", chromedp.WaitVisible(chromedp.CSS(`#difficulty-set`)))
	do("back to the queue", chromedp.Click(chromedp.CSS(`#next a[href*="/difficulty"]`)), chromedp.WaitVisible(chromedp.CSS(`#distribution`)))
	checkPage("the queue after two ratings")
	screenshot("rate-queue")
	if got := text("#counts"); !strings.HasPrefix(got, "2 of 20 cases rated · 18 unrated") {
		t.Errorf("counts after: %q", got)
	}
	dist, err := evalIn[[]string](ctx, `[...document.querySelectorAll('#distribution tbody tr')].map(r => r.cells[0].textContent + '=' + r.cells[1].textContent)`)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"easy=0", levels[1] + "=1", "hard=1"}; strings.Join(dist, "|") != strings.Join(want, "|") {
		t.Errorf("distribution %q, want %q", dist, want)
	}

	fv, err := dataset.FieldValuesOf(path, "id", "tier")
	if err != nil {
		t.Fatal(err)
	}
	if len(fv.Values) != 2 || fv.Values[first] != levels[1] || fv.Values[second] != "hard" {
		t.Errorf("the file's ratings %q; pressed %q on %q and hard on %q", fv.Values, levels[1], first, second)
	}
	after, _ := os.ReadFile(path)
	before := strings.Split(data.String(), "\n")
	for i, l := range strings.Split(string(after), "\n") {
		var rec map[string]any
		if l == "" {
			continue
		}
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatalf("line %d does not read: %v", i+1, err)
		}
		if rec["id"] != first && rec["id"] != second && l != before[i] {
			t.Errorf("line %d changed: %q", i+1, l)
		}
	}
	seen := w.Seen()
	for _, u := range seen.Requests {
		if !strings.HasPrefix(u, base+"/") && !strings.HasPrefix(u, "data:") {
			t.Errorf("the page fetched %s", u)
		}
	}
	if len(seen.Dialogs)+len(seen.Exceptions) > 0 {
		t.Errorf("dialogs %q, exceptions %q", seen.Dialogs, seen.Exceptions)
	}
	for _, l := range seen.Logs {
		if strings.Contains(l, "Content Security Policy") || strings.Contains(l, "Refused") {
			t.Errorf("the policy had to block something: %s", l)
		}
	}
}
