package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/analysis"
)

// The fragment assay serve shows is the report's page inside <main>, byte
// for byte, and its stylesheet is the page's inline style: one renderer.
func TestHTMLBodyIsThePageInsideMain(t *testing.T) {
	for name, rep := range map[string]func() *analysis.Report{"clean": cleanReport, "hostile": hostileReport} {
		t.Run(name, func(t *testing.T) {
			page := renderPage(t, rep(), htmlOptions{csp: true})
			_, inMain, ok := strings.Cut(page, "<main>\n")
			inMain, _, ok2 := strings.Cut(inMain, "</main>")
			if !ok || !ok2 {
				t.Fatal("the page has no <main>")
			}
			var b bytes.Buffer
			if err := HTMLBody(&b, rep()); err != nil {
				t.Fatal(err)
			}
			if b.String() != inMain {
				t.Errorf("HTMLBody differs from the page's <main>:\nbody %d bytes, page's main %d bytes", b.Len(), len(inMain))
			}
			if strings.Contains(b.String(), "<style") || strings.Contains(b.String(), "<html") {
				t.Error("the fragment carries page chrome")
			}
			style, err := HTMLStyle()
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(page, "<style>"+style+"</style>") {
				t.Error("HTMLStyle is not the page's inline stylesheet")
			}
			if !strings.Contains(style, "details > summary") {
				t.Errorf("HTMLStyle escaped its CSS: %.200q", style)
			}
		})
	}
}
