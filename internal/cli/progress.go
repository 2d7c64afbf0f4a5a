package cli

import (
	"fmt"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/assay-eval/assay/internal/record"
)

// progress draws done/total, rate, ETA, errors and spend on stderr when it is
// a terminal, and stays quiet otherwise. add is called from the runner's
// single writer goroutine only.
type progress struct {
	bar    *progressbar.ProgressBar
	errors int
	spend  float64
	last   time.Time
}

func newProgress(g *Globals, total int) *progress {
	p := &progress{}
	if !g.StderrIsTerminal || total <= 0 {
		return p
	}
	p.bar = progressbar.NewOptions(total,
		progressbar.OptionSetWriter(g.Stderr),
		progressbar.OptionSetDescription("running"),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString("calls"),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionSetWidth(30),
	)
	return p
}

func (p *progress) add(r *record.Result) {
	if r.ErrorKind != "" {
		p.errors++
	}
	p.spend += r.CostUSD // 0 for a reply served from the cache
	if p.bar == nil {
		return
	}
	if now := time.Now(); now.Sub(p.last) > 200*time.Millisecond {
		p.last = now
		p.bar.Describe(fmt.Sprintf("errors %d · $%.4f", p.errors, p.spend))
	}
	_ = p.bar.Add(1)
}

func (p *progress) finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}
