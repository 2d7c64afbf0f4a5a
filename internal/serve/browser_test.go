package serve_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/browsertest"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/assay-eval/assay/internal/record"
)

// A labeler labels twenty items of a queue through the real pages with
// the keyboard alone — p, f with a reason (Enter, or a second f), s, and
// one u — over a run whose inputs, outputs, tool calls, trajectories,
// tags, target names and judge reasons are hostile. The stored labels are
// exactly those pressed; no payload runs (no flag set, no dialog, no
// request but to the server); the calibration page shows `assay
// calibrate`'s numbers.
func TestLabelingWithTheKeyboardInChromium(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a browser")
	}
	exe := browsertest.Chromium(t)
	fx := newLabelFixture(t)

	// The real server on a loopback port.
	base := serveOnLoopback(t, fx)
	ctx, w := openTab(t, exe, filepath.Join(fx.dir, "profile"), 3*time.Minute)
	run := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	// waitFor polls a boolean expression (through navigations).
	waitFor := func(what, js string) {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		for time.Now().Before(deadline) {
			if ok, err := evalIn[bool](ctx, js); err == nil && ok {
				return
			}
			time.Sleep(40 * time.Millisecond)
		}
		t.Fatalf("waiting for %s (%s)", what, js)
	}
	// checkPageWith looks for what a payload that ran or became markup
	// would leave; charts allows the report's own SVG charts (its
	// elements still may carry no handler).
	checkPageWith := func(where string, charts bool) {
		t.Helper()
		pwned, err := evalIn[string](ctx, `typeof window.__pwned`)
		if err != nil {
			t.Fatal(err)
		}
		if pwned != "undefined" {
			t.Errorf("%s: a payload ran (window.__pwned is %s)", where, pwned)
		}
		counts, err := evalIn[map[string]int](ctx, `({
			script: document.querySelectorAll('script').length,
			scriptSrc: document.querySelectorAll('script[src="/assets/keys.js"]').length,
			img: document.querySelectorAll('img').length,
			svg: document.querySelectorAll('svg').length,
			jslink: document.querySelectorAll('a[href^="javascript:"]').length,
			handlers: [...document.querySelectorAll('*')].filter(e => [...e.attributes].some(a => a.name.toLowerCase().startsWith('on'))).length,
		})`)
		if err != nil {
			t.Fatal(err)
		}
		if counts["script"] != 1 || counts["scriptSrc"] != 1 || counts["img"] != 0 || (counts["svg"] != 0 && !charts) || counts["jslink"] != 0 || counts["handlers"] != 0 {
			t.Errorf("%s: elements a payload would make: %v", where, counts)
		}
	}
	checkPage := func(where string) { checkPageWith(where, false) }

	// The queue, made through its form.
	run("the queue form", chromedp.Navigate(base+"/runs/"+fx.run.ID+"/queues"), chromedp.WaitVisible(chromedp.CSS(`#queue-form`)))
	checkPage("the queue form")
	run("making the queue",
		chromedp.SetValue(chromedp.CSS(`#queue-form input[name=name]`), "kb"),
		chromedp.SetValue(chromedp.CSS(`#queue-form input[name=size]`), "20"),
		chromedp.SetValue(chromedp.CSS(`#queue-form input[name=seed]`), "11"),
		chromedp.SetValue(chromedp.CSS(`#queue-form select[name=judge]`), "judge"),
		chromedp.Click(chromedp.CSS(`#queue-form button[type=submit]`)),
	)
	waitFor("the first item", `!!document.querySelector('#item') && document.readyState === 'complete'`)
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
	screenshot("label-item")

	type want struct{ verdict, reason, corrected string }
	expected := map[int]want{}
	var lastPos int
	undone := false
	state := func() (pos int, count string) {
		t.Helper()
		waitFor("a page", `document.readyState === 'complete' && !!document.querySelector('#count')`)
		s, err := evalIn[string](ctx, `(document.querySelector('input[name=position]') || {value: '-1'}).value + '|' + document.querySelector('#count').textContent`)
		if err != nil {
			t.Fatal(err)
		}
		p, c, _ := strings.Cut(s, "|")
		pos, _ = strconv.Atoi(p)
		return pos, c
	}
	// next waits until the page shows another item or count than before.
	next := func(pos int, count string) {
		t.Helper()
		waitFor("the next page", fmt.Sprintf(`document.readyState === 'complete' && !!document.querySelector('#count') &&
			((document.querySelector('input[name=position]') || {value: '-1'}).value !== %q || document.querySelector('#count').textContent !== %q)`, strconv.Itoa(pos), count))
	}
	for step := 0; ; step++ {
		if step > 40 {
			t.Fatal("the queue never finished")
		}
		pos, count := state()
		checkPage(fmt.Sprintf("item at position %d", pos))
		if pos < 0 {
			break
		}
		if step == 7 && !undone {
			// Undo the last label: that item comes back, unlabeled.
			undone = true
			run("u", chromedp.KeyEvent("u"))
			next(pos, count)
			back, _ := state()
			if back != lastPos {
				t.Fatalf("u showed position %d, want the undone %d", back, lastPos)
			}
			delete(expected, lastPos)
			continue
		}
		reason := fmt.Sprintf(`step %d: wrong <b>"answer"</b> & more`, step)
		switch step % 4 {
		case 0:
			if step == 4 {
				// Keys typed in a text box are text, not shortcuts; Escape
				// leaves the box and p then passes with the correction.
				corrected := "fix: p s u f"
				run("typing in the corrected box", chromedp.Focus(chromedp.CSS(`#corrected`)), chromedp.KeyEvent(corrected))
				time.Sleep(300 * time.Millisecond)
				if p, c := state(); p != pos || c != count {
					t.Fatalf("typing p, s, u and f in a text box moved on to %d (%s)", p, c)
				}
				if v, err := evalIn[string](ctx, `document.querySelector('#corrected').value`); err != nil || v != corrected {
					t.Fatalf("the corrected box holds %q, want %q (%v)", v, corrected, err)
				}
				run("Escape, p", chromedp.KeyEvent(kb.Escape), chromedp.KeyEvent("p"))
				expected[pos] = want{"pass", "", corrected}
				break
			}
			run("p", chromedp.KeyEvent("p"))
			expected[pos] = want{"pass", "", ""}
		case 1:
			// f focuses the reason box; Enter with no reason saves nothing.
			run("f", chromedp.KeyEvent("f"))
			waitFor("the reason box focused", `document.activeElement === document.querySelector('#reason')`)
			if step == 1 {
				run("Enter without a reason", chromedp.KeyEvent(kb.Enter))
				time.Sleep(300 * time.Millisecond)
				if p, c := state(); p != pos || c != count {
					t.Fatalf("Enter without a reason moved on to %d (%s)", p, c)
				}
				if hint, err := evalIn[string](ctx, `document.querySelector('#key-hint').textContent`); err != nil || !strings.Contains(hint, "needs a reason") {
					t.Errorf("no hint that a fail needs a reason: %q %v", hint, err)
				}
			}
			run("typing the reason", chromedp.KeyEvent(reason), chromedp.KeyEvent(kb.Enter))
			expected[pos] = want{"fail", reason, ""}
		case 2:
			run("s", chromedp.KeyEvent("s"))
			expected[pos] = want{"skip", "", ""}
		case 3:
			// A reason typed, Escape leaves the box, a second f saves.
			run("f, reason, Escape, f", chromedp.KeyEvent("f"))
			waitFor("the reason box focused", `document.activeElement === document.querySelector('#reason')`)
			run("typing", chromedp.KeyEvent(reason), chromedp.KeyEvent(kb.Escape))
			waitFor("the reason box left", `document.activeElement !== document.querySelector('#reason')`)
			run("second f", chromedp.KeyEvent("f"))
			expected[pos] = want{"fail", reason, ""}
		}
		lastPos = pos
		next(pos, count)
		if step == 1 {
			screenshot("label-reveal")
		}
		// The saved item's judge verdict is revealed, and only now.
		if said, err := evalIn[string](ctx, `(document.querySelector('#said') || {}).textContent || ''`); err != nil || said != expected[pos].verdict {
			t.Errorf("position %d: the reveal says %q, want %q (%v)", pos, said, expected[pos].verdict, err)
		}
		judge, err := evalIn[string](ctx, `(document.querySelector('#judge-said') || {}).textContent || ''`)
		if err != nil {
			t.Fatal(err)
		}
		if judge != "pass" && judge != "fail" {
			t.Errorf("position %d: no judge verdict revealed (%q)", pos, judge)
		}
	}
	if !undone {
		t.Fatal("the test never pressed u")
	}
	if finished, err := evalIn[bool](ctx, `!!document.querySelector('#finished')`); err != nil || !finished {
		t.Fatalf("the last page does not say the queue is finished")
	}

	// The store holds exactly the labels pressed.
	q, err := fx.st.Queue(context.Background(), fx.run.ID, "kb")
	if err != nil {
		t.Fatal(err)
	}
	if len(q.Items) != 20 || len(expected) != 20 {
		t.Fatalf("%d items, %d labels pressed; want 20 of each", len(q.Items), len(expected))
	}
	got := map[int]want{}
	if err := fx.st.Labels(context.Background(), fx.run.ID, func(l record.Label) error {
		if l.Queue != "kb" || l.Labeler != "tester" {
			t.Errorf("label in queue %q by %q", l.Queue, l.Labeler)
		}
		for _, it := range q.Items {
			if it.Key() == l.Key() {
				if l.OutputHash != it.OutputHash {
					t.Errorf("position %d: output hash %s, want the item's %s", it.Position, l.OutputHash, it.OutputHash)
				}
				got[it.Position] = want{l.Verdict, l.Reason, l.Corrected}
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for pos, w := range expected {
		if got[pos] != w {
			t.Errorf("position %d: stored %+v, pressed %+v", pos, got[pos], w)
		}
	}
	if len(got) != len(expected) {
		t.Errorf("%d labels stored, %d pressed", len(got), len(expected))
	}

	// The calibration page's numbers are `assay calibrate`'s.
	// (reached from the finished queue's link).
	run("the calibration page", chromedp.Click(chromedp.CSS(`#calibrate-link`)), chromedp.WaitVisible(chromedp.CSS(`#judge-picker`)), chromedp.WaitVisible(chromedp.CSS(`#calibration`)))
	if u, err := evalIn[string](ctx, `location.pathname + location.search`); err != nil || u != "/runs/"+fx.run.ID+"/calibrate?judge=judge&queue=kb" {
		t.Errorf("the finished queue links to %q, want its judge's calibration over its labels (%v)", u, err)
	}
	checkPage("the calibration page")
	screenshot("calibration")
	pageText, err := evalIn[string](ctx, `document.querySelector('main').innerText`)
	if err != nil {
		t.Fatal(err)
	}
	checkCalibrationNumbers(t, fx, pageText)

	// Every page that shows the hostile outputs and inputs: the run's
	// report, the explorer searching the payloads' own text, the case whose
	// ID is a payload, two runs compared, the queues.
	id := url.PathEscape(fx.run.ID)
	for _, pg := range []struct {
		name, path, wait string
		charts           bool
	}{
		{"the run's report", "/runs/" + id, ".report", true},
		{"the explorer", "/runs/" + id + "/cases?q=pwned", "main", false},
		{"a hostile case", "/runs/" + id + "/cases/" + url.PathEscape(caseID(3)), "#outputs", false},
		{"two runs compared", "/compare?a=" + id + "&b=" + id, "main", false},
		{"the queues", "/labels", "main", false},
	} {
		run(pg.name, chromedp.Navigate(base+pg.path), chromedp.WaitVisible(chromedp.CSS(pg.wait)))
		checkPageWith(pg.name, pg.charts)
	}

	// Nothing was fetched but from the server; no dialog; no exception; no
	// policy violation.
	seen := w.Seen()
	for _, u := range seen.Requests {
		if !strings.HasPrefix(u, base+"/") && !strings.HasPrefix(u, "data:") {
			t.Errorf("the page fetched %s", u)
		}
	}
	if len(seen.Requests) < 40 {
		t.Errorf("only %d requests seen: the network listener is not working", len(seen.Requests))
	}
	if len(seen.Dialogs) > 0 {
		t.Errorf("dialogs opened: %q", seen.Dialogs)
	}
	if len(seen.Exceptions) > 0 {
		t.Errorf("exceptions: %q", seen.Exceptions)
	}
	for _, l := range seen.Logs {
		if strings.Contains(l, "Content Security Policy") || strings.Contains(l, "Refused") {
			t.Errorf("the policy had to block something: %s", l)
		}
	}
}

func evalIn[T any](ctx context.Context, js string) (T, error) {
	return chromedp.Run(ctx, chromedp.Evaluate[T](js))
}
