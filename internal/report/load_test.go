package report

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/load"
	"github.com/assay-eval/assay/internal/record"
)

const loadHostile = "<script>alert(1)</script>|*x*\x1b[31m\u202e"

func est(v, lo, hi float64, n int) load.Estimate {
	return load.Estimate{Value: load.Num(v), Lo: load.Num(lo), Hi: load.Num(hi), N: n}
}

// fixtureLoad is a load test of two targets: a's knee at 20 rps, its
// last step client_saturated; b (a loadHostile name) with no knee and a
// skipped step.
func fixtureLoad() *LoadReport {
	nan := math.NaN()
	step := func(i int, level, rps, p95, lo, hi float64, meets bool) load.StepResult {
		return load.StepResult{Step: i, Mode: load.ModeRate, Level: level, Sent: 100, Done: 100, OK: 99,
			Throughput: load.Num(rps), OutputTokensPerSec: load.Num(rps * 7), P50: est(p95/2, nan, nan, 99),
			P95: est(p95, lo, hi, 99), P99: est(p95*1.2, p95, p95*1.5, 99), TTFT50: est(nan, nan, nan, 0), TTFT95: est(nan, nan, nan, 0),
			InterTokenMS: load.Num(nan), Errors: load.ErrorRate{Count: 1, N: 100, Rate: 0.01, Lo: 0.002, Hi: 0.05},
			ByKind:  []load.ErrorRate{{Kind: "rate_limited", Count: 1, N: 100, Rate: 0.01}},
			CostUSD: 0.3, CostPer1000: 3, ClientCPU: 0.2, Cores: 2, LatenessP95MS: 1.5, MeetsSLO: meets,
			Why: map[bool]string{true: "", false: "p95 over " + loadHostile}[meets]}
	}
	sat := step(2, 40, 30, 300, 250, 350, false)
	sat.Saturated, sat.SaturatedWhy = true, "the harness used 1.9 of 2 cores"
	return &LoadReport{
		Run: &record.Run{ID: "20261203-210000-abcdef", Kind: record.KindLoad, Spec: "spec " + loadHostile, Status: record.StatusComplete,
			Started: time.Date(2026, 12, 3, 21, 0, 0, 0, time.UTC), Targets: []string{"a", loadHostile}},
		Settings: &LoadSettings{Mode: load.ModeRate, Levels: []float64{10, 20, 40}, Duration: "10s", Warmup: "0s", Arrivals: "poisson", Seed: 7, Cases: 50, MaxRequests: 10000, MaxSpend: 5, SLO: "p95=200ms"},
		Result: &load.Result{Mode: load.ModeRate, SLO: load.SLO{P95: 200 * time.Millisecond}, Alpha: 0.05, Resamples: 2000,
			Targets: []load.TargetResult{
				{Target: "a", Steps: []load.StepResult{step(0, 10, 10, 60, 55, 70, true), step(1, 20, 19.5, 120, 100, 150, true), sat}},
				{Target: loadHostile, Steps: []load.StepResult{step(0, 10, 9.8, 400, 380, 420, false), {Step: 1, Mode: load.ModeRate, Level: 20, Skipped: "skipped: past the knee " + loadHostile}}},
			},
			Knees: []load.Knee{
				{Target: "a", Found: true, Mode: load.ModeRate, Level: 20, Step: 1, Why: "at 20 rps …", Throughput: 19.5, P95Hi: 150, CostPer1000: 3, CostPerMonth: 3000, RequestsPerMonth: 1e6, VolumeRPS: 0.39, Covers: true},
				{Target: loadHostile, Found: false, Step: -1, Why: "no level met the SLO " + loadHostile, Throughput: load.Num(nan), P95Hi: load.Num(nan), CostPer1000: load.Num(nan), CostPerMonth: load.Num(nan), VolumeRPS: load.Num(nan)},
			},
			Warnings: []string{"warning " + loadHostile},
		},
	}
}

func renderLoad(t *testing.T, f func(w *bytes.Buffer) error) string {
	t.Helper()
	var b bytes.Buffer
	if err := f(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestLoadFormatsEscapeOutsideText(t *testing.T) {
	r := fixtureLoad()
	text := renderLoad(t, func(w *bytes.Buffer) error { return LoadText(w, r) })
	md := renderLoad(t, func(w *bytes.Buffer) error { return LoadMarkdown(w, r) })
	page := renderLoad(t, func(w *bytes.Buffer) error { return LoadPage(w, r) })
	for name, out := range map[string]string{"text": text, "markdown": md, "html": page} {
		if strings.Contains(out, "\x1b") || strings.Contains(out, "\u202e") {
			t.Errorf("%s carries a terminal escape or a bidi override", name)
		}
	}
	for name, out := range map[string]string{"markdown": md, "html": page} {
		if strings.Contains(out, "<script>") {
			t.Errorf("%s carries <script> unescaped", name)
		}
	}
	if !strings.Contains(md, `&lt;script&gt;alert\(1\)&lt;/script&gt;\|\*x\*`) {
		t.Errorf("markdown does not escape a target's name:\n%s", md)
	}
	if !strings.Contains(page, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Errorf("html does not show the escaped name")
	}
}

func TestLoadTextShowsKneesStepsAndSaturation(t *testing.T) {
	text := renderLoad(t, func(w *bytes.Buffer) error { return LoadText(w, fixtureLoad()) })
	for _, want := range []string{
		"SLO: p95 ≤ 200ms, each held on its measure's upper 95% bound.",
		"An open loop at 10, 20, 40 requests/s (poisson arrivals); each step measured for 10s; 50 cases sampled with seed 7; caps 10000 requests and $5.",
		"1 step marked client_saturated",
		// a's knee: level, throughput, p95's upper bound, costs, volume.
		"120 ms [100 ms, 150 ms]",
		"1.0% [0.2%, 5.0%]",
		"rate_limited 1",
		"0.20 of 2",
		"client_saturated: the harness used 1.9 of 2 cores",
		"skipped",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	// a's knee: level, throughput, p95's upper bound, costs, volume.
	knee := ""
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "a ") {
			knee = strings.Join(strings.Fields(l), " ")
			break
		}
	}
	if want := "a 20 19.5/s 150 ms $3.00 $3000 yes (0.39/s needed)"; knee != want {
		t.Errorf("a's knee row %q, want %q", knee, want)
	}
}

// The plot: one line per target, the region above the SLO shaded, the
// saturated step hollow, one ring at the knee.
func TestLoadChart(t *testing.T) {
	r := fixtureLoad()
	c, ok := loadChart(r.Result)
	if !ok {
		t.Fatal("no chart")
	}
	count := func(class string) int {
		n := 0
		for _, m := range c.Marks {
			// Legend markers have no hover text; a step's has.
			if strings.Contains(" "+m.Class+" ", " "+class+" ") && (class != "marker" || m.Tip != "") {
				n++
			}
		}
		return n
	}
	if got := count("series-line"); got != 2 {
		t.Errorf("%d series lines, want one per target (2)", got)
	}
	if got := count("slo-shade"); got != 1 {
		t.Errorf("%d SLO shades, want 1", got)
	}
	if got := count("hollow"); got != 1 {
		t.Errorf("%d hollow markers, want the one saturated step", got)
	}
	if got := count("knee-ring"); got != 1 {
		t.Errorf("%d knee rings, want 1 (b has no knee)", got)
	}
	// 3 + 1 steps drawn (the skipped one is not).
	if got := count("marker"); got != 4 {
		t.Errorf("%d step markers, want 4", got)
	}
	// The shade lies above the SLO line: from the plot's top to the line.
	var shade, line mark
	for _, m := range c.Marks {
		switch {
		case strings.Contains(m.Class, "slo-shade"):
			shade = m
		case strings.Contains(m.Class, "slo-line"):
			line = m
		}
	}
	if math.Abs(shade.Y+shade.H-line.Y) > 1e-9 || shade.H <= 0 {
		t.Errorf("shade %+v does not end at the SLO line %+v", shade, line)
	}
	// Without an SLO: no shade.
	r.Result.SLO = load.SLO{}
	c, _ = loadChart(r.Result)
	if count("slo-shade") != 0 {
		t.Errorf("a shade without an SLO")
	}
}

// JSON: undefined numbers are null, the run and settings are named.
func TestLoadJSON(t *testing.T) {
	out := renderLoad(t, func(w *bytes.Buffer) error { return LoadJSON(w, fixtureLoad()) })
	var v struct {
		Run struct {
			ID, Kind string
		} `json:"run"`
		Settings LoadSettings `json:"settings"`
		Knees    []struct {
			Target       string   `json:"target"`
			CostPerMonth *float64 `json:"cost_per_month"`
		} `json:"knees"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if v.Run.Kind != "load" || v.Settings.Seed != 7 || len(v.Knees) != 2 || v.Knees[0].CostPerMonth == nil || *v.Knees[0].CostPerMonth != 3000 || v.Knees[1].CostPerMonth != nil {
		t.Errorf("decoded %+v", v)
	}
}

func TestLoadGateVerdict(t *testing.T) {
	res := &load.GateResult{Verdict: load.Inconclusive, Checks: []load.Check{
		{Rule: load.Rule{Metric: "p95", At: 20, MaxRise: "20%"}, Target: "a", Base: 100, Cand: 118, Rise: 18, Allowed: 20, Lo: -10, Hi: 5, Verdict: load.Inconclusive, Why: "the rise may exceed 20%"},
		{Rule: load.Rule{Metric: "errors", At: 20, MaxRise: "2pt"}, Target: "a", Base: 0.01, Cand: 0.01, Rise: 0, Allowed: 0.02, Lo: -0.03, Hi: -0.01, Verdict: load.Pass},
	}}
	r := &LoadGateReport{Base: &record.Run{ID: "base"}, Cand: &record.Run{ID: "cand"}, RulesFrom: "baseline", Result: res}
	if r.Verdict() != load.Inconclusive || r.Failed() != "" {
		t.Errorf("verdict %s, failed %q", r.Verdict(), r.Failed())
	}
	r.Strict = true
	if r.Verdict() != load.Fail || r.Failed() != "a p95 at 20 (inconclusive)" {
		t.Errorf("strict: verdict %s, failed %q", r.Verdict(), r.Failed())
	}
	text := renderLoad(t, func(w *bytes.Buffer) error { return LoadGateText(w, r) })
	for _, want := range []string{"Load test cand held against base with the load.gate rules of the baseline's spec: FAIL.",
		"p95 at 20 max_rise 20%", "118 ms", "inconclusive (fails: --strict)", "[-3.0%, -1.0%]"} {
		if !strings.Contains(text, want) {
			t.Errorf("gate text lacks %q:\n%s", want, text)
		}
	}
	var j struct {
		Verdict string       `json:"verdict"`
		Checks  []load.Check `json:"checks"`
	}
	if err := json.Unmarshal([]byte(renderLoad(t, func(w *bytes.Buffer) error { return LoadGateJSON(w, r) })), &j); err != nil || j.Verdict != "fail" || len(j.Checks) != 2 {
		t.Errorf("gate json: %+v %v", j, err)
	}
}

func TestLoadGateJUnit(t *testing.T) {
	res := &load.GateResult{Verdict: load.Fail, Checks: []load.Check{
		{Rule: load.Rule{Metric: "p95", At: 20, MaxRise: "20%"}, Target: "a", Verdict: load.Fail, Why: "p95 rose 300% " + loadHostile},
		{Rule: load.Rule{Metric: "errors", At: 20, MaxRise: "2pt"}, Target: "a", Verdict: load.Inconclusive, Why: "too few"},
		{Rule: load.Rule{Metric: "p95", At: 20, MaxRise: "20%"}, Target: "b", Verdict: load.Pass},
	}}
	r := &LoadGateReport{Base: &record.Run{ID: "base"}, Cand: &record.Run{ID: "cand"}, RulesFrom: "baseline", Result: res}
	out := renderLoad(t, func(w *bytes.Buffer) error { return LoadGateJUnit(w, r) })
	for _, want := range []string{`<testsuites name="assay gate (load)" tests="3" failures="1" errors="0" skipped="1">`,
		`<testsuite name="gate: a" tests="2" failures="1" errors="0" skipped="1">`, `<testcase name="p95 at 20 max_rise 20%" classname="assay.gate.load.a">`,
		`<failure message="p95 rose 300% &lt;script&gt;`, `<skipped message="inconclusive: too few">`, `<property name="decision" value="fail">`} {
		if !strings.Contains(out, want) {
			t.Errorf("junit lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\x1b") {
		t.Errorf("junit carries a terminal escape")
	}
}

// A step whose errors break the SLO's objective is crossed on the chart
// (its answers' p95 may sit low): the fixture's steps all have 1 error in
// 100, up to 5%; under an objective of 2% every drawn step is crossed,
// under 10% none.
func TestLoadChartCrossesErrors(t *testing.T) {
	r := fixtureLoad()
	crosses := func(objective float64) int {
		r.Result.SLO = load.SLO{P95: 200 * time.Millisecond, Errors: objective, ErrorsSet: true}
		c, ok := loadChart(r.Result)
		if !ok {
			t.Fatal("no chart")
		}
		n := 0
		for _, m := range c.Marks {
			if strings.Contains(" "+m.Class+" ", " err-cross ") && m.Tip != "" {
				n++
			}
		}
		return n
	}
	if got := crosses(0.02); got != 4 {
		t.Errorf("%d crossed steps under errors ≤ 2%%, want the 4 drawn", got)
	}
	if got := crosses(0.10); got != 0 {
		t.Errorf("%d crossed steps under errors ≤ 10%%, want none", got)
	}
}

// A load test whose process was killed stays "running" in the store: its
// report says it did not finish and which levels were never measured, so a
// knee among the stored steps is not taken for the whole test's.
func TestLoadUnfinishedSaysWhatWasNeverMeasured(t *testing.T) {
	r := fixtureLoad()
	r.Run.Status = record.StatusRunning
	r.Settings.Levels = []float64{10, 20, 40, 80}
	text := renderLoad(t, func(w *bytes.Buffer) error { return LoadText(w, r) })
	for _, want := range []string{"The load test did not finish (status running", "Never measured: a at 80;"} {
		if !strings.Contains(text, want) {
			t.Errorf("the report lacks %q:\n%s", want, text)
		}
	}
	r.Run.Status = record.StatusComplete
	if text := renderLoad(t, func(w *bytes.Buffer) error { return LoadText(w, r) }); strings.Contains(text, "did not finish") {
		t.Errorf("a complete test said it did not finish:\n%s", text)
	}
}
