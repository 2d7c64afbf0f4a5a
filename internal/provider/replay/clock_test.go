package replay

import (
	"context"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/provider/registry"
	"github.com/assay-eval/assay/internal/spec"
)

// The latency a provider reports is read from the clock the registry gives
// it (the process's one clock), as the difference of two readings.
func TestLatencyReadsTheGivenClock(t *testing.T) {
	dir, name := writeRecords(t, `{"q": "a", "out": "b"}`)
	at := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
	tick := func() time.Time { at = at.Add(250 * time.Millisecond); return at }
	target := &spec.Target{Name: "rec", Provider: "replay", Replay: &spec.Replay{Path: name, Join: "q", Output: "out"}}
	p, err := Factory().New(target, registry.Env{SpecDir: dir, Now: tick})
	if err != nil {
		t.Fatal(err)
	}
	defer p.(*Provider).Close()
	resp, err := p.Complete(context.Background(), &provider.Request{CaseID: "c", Vars: map[string]any{"q": "a"}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Latency != 250*time.Millisecond {
		t.Errorf("latency %v, want 250ms (one tick of the given clock)", resp.Latency)
	}
}
