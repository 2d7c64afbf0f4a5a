// Package browsertest holds what the tests that load assay's pages in a
// real browser (headless Chromium through chromedp) share: finding the
// browser, and watching a tab for what a hostile payload would cause —
// requests, dialogs, exceptions, console and policy messages. Test code
// only.
package browsertest

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
)

// Chromium finds Debian's chromium (or ASSAY_CHROMIUM). Locally the browser
// tests skip without it; under CI=true they fail, so CI cannot pass by not
// running them (.ci/run installs the chromium package).
func Chromium(t testing.TB) string {
	t.Helper()
	candidates := []string{os.Getenv("ASSAY_CHROMIUM"), "/usr/bin/chromium"}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			candidates = append(candidates, p)
		}
	}
	for _, c := range candidates {
		if c == "" {
			continue
		}
		if st, err := os.Stat(c); err == nil && !st.IsDir() {
			return c
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium is not installed (apt-get install -y chromium); the browser tests must run in CI")
	}
	t.Skip("chromium not found (install Debian's chromium or set ASSAY_CHROMIUM)")
	return ""
}

// Watch records what a tab saw; pass its Listen to chromedp.WithListener.
// It is safe for the listener's goroutine and the test's together.
type Watch struct {
	mu   sync.Mutex
	seen Seen
}

// Seen is what a tab saw, in order: every URL it requested, every dialog
// it opened, every exception thrown, and the browser's log and console
// entries ("SOURCE LEVEL: TEXT", "console TYPE").
type Seen struct {
	Requests, Dialogs, Exceptions, Logs []string
}

// Listen takes chromedp's events.
func (w *Watch) Listen(ev any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch ev := ev.(type) {
	case *network.EventRequestWillBeSent:
		w.seen.Requests = append(w.seen.Requests, ev.Request.URL)
	case *page.EventJavascriptDialogOpening:
		w.seen.Dialogs = append(w.seen.Dialogs, ev.Message)
	case *runtime.EventExceptionThrown:
		w.seen.Exceptions = append(w.seen.Exceptions, ev.ExceptionDetails.Text)
	case *log.EventEntryAdded:
		w.seen.Logs = append(w.seen.Logs, fmt.Sprintf("%s %s: %s", ev.Entry.Source, ev.Entry.Level, ev.Entry.Text))
	case *runtime.EventConsoleAPICalled:
		w.seen.Logs = append(w.seen.Logs, "console "+string(ev.Type))
	}
}

// Seen returns a copy of what the tab saw so far.
func (w *Watch) Seen() Seen {
	w.mu.Lock()
	defer w.mu.Unlock()
	return Seen{Requests: slices.Clone(w.seen.Requests), Dialogs: slices.Clone(w.seen.Dialogs),
		Exceptions: slices.Clone(w.seen.Exceptions), Logs: slices.Clone(w.seen.Logs)}
}
