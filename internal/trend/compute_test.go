package trend

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// series makes n traces of model a week for each rate given, from the
// ISO week of monday on: the first round(rate·n) pass. Every trace weighs 1
// in one stratum.
func series(model string, monday time.Time, n int, rates ...float64) []Observation {
	var obs []Observation
	for w, r := range rates {
		pass := int(r*float64(n) + 0.5)
		for i := range n {
			obs = append(obs, Observation{
				TraceID: model, Model: model, Sample: "S", Stratum: "all", Weight: 1,
				Time: monday.AddDate(0, 0, 7*w).Add(time.Duration(i) * time.Hour),
				Pass: i < pass,
			})
		}
	}
	return obs
}

var monday = time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC) // 2026-W45

// A stable series raises no flag, however many weeks and models; the
// same series with one week 25 points down is flagged in that week only.
func TestStableSeriesIsNotFlagged(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	var obs []Observation
	for _, m := range []string{"a", "b", "c"} {
		for w := range 10 {
			for i := range 80 {
				obs = append(obs, Observation{Model: m, Sample: "S", Stratum: "all", Weight: 1,
					Time: monday.AddDate(0, 0, 7*w).Add(time.Duration(i) * time.Minute), Pass: rng.Float64() < 0.8})
			}
		}
	}
	rep, err := Compute(obs, Options{Level: 0.95}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Tests != 27 || rep.Drops != 0 {
		t.Errorf("stable series: %d drops in %d tests, want 0 in 27", rep.Drops, rep.Tests)
	}

	planted := series("a", monday, 80, 0.8, 0.8, 0.8, 0.55, 0.55)
	rep, err = Compute(planted, Options{Level: 0.95}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range rep.Models[0].Points {
		flagged := p.Change != nil && p.Change.Drop
		if flagged != (i == 3) {
			t.Errorf("week %s: flagged %v (%+v), want only the fourth week flagged", p.Window, flagged, p.Change)
		}
	}
	if rep.Drops != 1 {
		t.Errorf("%d drops, want 1", rep.Drops)
	}
}

// A week's baseline is the latest earlier window with enough traces; a
// window with too few is shown, untested and not a baseline; the first
// window and a window whose baseline had no variance are untested, each
// saying why.
func TestBaselinesAndUntestedWindows(t *testing.T) {
	t.Parallel()
	obs := series("m", monday, 40, 0.9, 0.9)                          // W45, W46
	obs = append(obs, series("m", monday.AddDate(0, 0, 14), 5, 0)...) // W47: 5 traces
	// W48 empty; W49 against W46.
	obs = append(obs, series("m", monday.AddDate(0, 0, 28), 40, 0.6)...)
	// Another model whose two weeks all passed.
	obs = append(obs, series("n", monday, 20, 1, 1)...)
	rep, err := Compute(obs, Options{Level: 0.95}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, w := range rep.Windows {
		labels = append(labels, w.Label)
	}
	if got := strings.Join(labels, " "); got != "2026-W45 2026-W46 2026-W47 2026-W48 2026-W49" {
		t.Fatalf("windows %s", got)
	}
	m := rep.Models[0].Points
	if m[0].Change != nil || m[0].Untested != "" {
		t.Errorf("first window: %+v, want neither a change nor a reason", m[0])
	}
	if m[1].Change == nil || m[1].Change.Against != "2026-W45" || m[1].Change.Drop {
		t.Errorf("W46: %+v, want tested against W45, no drop", m[1].Change)
	}
	if m[2].N != 5 || m[2].Change != nil || !strings.Contains(m[2].Untested, "5 traces, fewer than the 10") {
		t.Errorf("W47: %+v, want 5 traces shown and untested", m[2])
	}
	if m[3].N != 0 || m[3].Change != nil {
		t.Errorf("W48: %+v, want empty", m[3])
	}
	if m[4].Change == nil || m[4].Change.Against != "2026-W46" || !m[4].Change.Drop {
		t.Errorf("W49: %+v, want a drop flagged against W46", m[4].Change)
	}
	n := rep.Models[1].Points
	if n[1].Change != nil || !strings.Contains(n[1].Untested, "no variance to test") {
		t.Errorf("model n, W46: %+v, want untested for no variance", n[1])
	}
	if rep.Tests != 2 || rep.Drops != 1 {
		t.Errorf("%d drops in %d tests, want 1 in 2", rep.Drops, rep.Tests)
	}
}

// --weeks keeps the newest windows (ending at the newest trace's), --since
// drops what came before it, and --window N lays N-day windows on a grid
// from a Monday: 7 is the ISO week.
func TestWindowsWeeksAndSince(t *testing.T) {
	t.Parallel()
	obs := series("m", monday, 20, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9)
	rep, err := Compute(obs, Options{Level: 0.9, Weeks: 3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Windows) != 3 || rep.Windows[0].Label != "2026-W48" || rep.Earlier != 60 || rep.Traces != 60 || rep.Tests != 2 {
		t.Errorf("weeks 3: windows %v, %d earlier, %d traces, %d tests; want W48–W50, 60, 60, 2", rep.Windows, rep.Earlier, rep.Traces, rep.Tests)
	}
	// Since falls at 10:00 on the Monday of W49: that week's first ten
	// traces (one an hour from midnight) are dropped.
	rep, err = Compute(obs, Options{Level: 0.9, Since: monday.AddDate(0, 0, 28).Add(10 * time.Hour)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Windows) != 2 || rep.Windows[0].Label != "2026-W49" || rep.Models[0].Points[0].N != 10 || rep.Earlier != 90 {
		t.Errorf("since: windows %v, first n %d, %d earlier; want W49 (10 traces) and W50, 90 earlier", rep.Windows, rep.Models[0].Points[0].N, rep.Earlier)
	}
	rep, err = Compute(obs, Options{Level: 0.9, Window: 14}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range rep.Windows {
		if w.Start.Weekday() != time.Monday || w.End.Sub(w.Start) != 14*24*time.Hour || w.Label != w.Start.Format(time.DateOnly) {
			t.Errorf("14-day window %+v: want a Monday start, 14 days, labelled by its start date", w)
		}
	}
	if n := len(rep.Windows); n != 3 && n != 4 {
		t.Errorf("6 weeks in 14-day windows: %d windows", n)
	}
	if rep.ISOWeeks || rep.WindowDays != 14 {
		t.Errorf("iso %v, days %d", rep.ISOWeeks, rep.WindowDays)
	}
}

func TestComputeRefusesBadOptions(t *testing.T) {
	t.Parallel()
	obs := series("m", monday, 20, 0.9)
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{Level: 1}, "level 1: must be strictly between 0 and 1"},
		{Options{Level: 0.95, Window: -1}, "window -1 days: must be at least 1"},
		{Options{Level: 0.95, Weeks: -2}, "weeks -2: must be 0"},
		{Options{Level: 0.95, MinN: 1}, "minimum traces per window 1: must be at least 2"},
	} {
		if _, err := Compute(obs, c.o, nil); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.o, err, c.want)
		}
	}
}

// Windows compared whose verdicts were made with different scorer
// definitions are marked, and the report says what that means.
func TestScorersChangedIsNoted(t *testing.T) {
	t.Parallel()
	obs := series("m", monday, 30, 0.8, 0.8)
	for i := range obs {
		obs[i].ScorersHash = "sha256:old"
		if i >= 30 {
			obs[i].ScorersHash = "sha256:new"
		}
	}
	rep, err := Compute(obs, Options{Level: 0.95}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c := rep.Models[0].Points[1].Change; c == nil || !c.ScorersChanged || len(rep.Notes) != 1 {
		t.Errorf("change %+v, notes %q: want the scorers' change marked and noted", c, rep.Notes)
	}
}
