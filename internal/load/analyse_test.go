package load

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/record"
)

// stepOf makes a measured step of n answers with latencies spread evenly
// over [lo, hi] ms, and the given failures after them.
func stepOf(target string, step int, level float64, n int, lo, hi float64, failures ...string) (record.LoadStep, []record.LoadRequest) {
	st := record.LoadStep{Target: target, Step: step, Mode: ModeRate, Level: level, DurationMS: 10000, Cores: 2, Sent: n + len(failures), Done: n + len(failures)}
	var reqs []record.LoadRequest
	for i := range n {
		lat := lo + (hi-lo)*float64(i)/float64(max(1, n-1))
		reqs = append(reqs, record.LoadRequest{Target: target, Step: step, Seq: i, StartMS: float64(i), LatencyMS: lat,
			FirstTokenMS: math.NaN(), InterTokenMS: math.NaN(), OutputTokens: 10, CostUSD: 0.002})
	}
	for i, kind := range failures {
		reqs = append(reqs, record.LoadRequest{Target: target, Step: step, Seq: n + i, StartMS: float64(n + i), LatencyMS: 1,
			FirstTokenMS: math.NaN(), InterTokenMS: math.NaN(), ErrorKind: kind})
	}
	return st, reqs
}

type built struct {
	steps []record.LoadStep
	reqs  []record.LoadRequest
}

func (b *built) add(st record.LoadStep, reqs []record.LoadRequest) *built {
	b.steps = append(b.steps, st)
	b.reqs = append(b.reqs, reqs...)
	return b
}

func analyseBuilt(t *testing.T, b *built, o AnalyseOptions) *Result {
	t.Helper()
	res, err := Analyse(b.steps, b.reqs, o)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

var slo150 = SLO{P95: 150 * time.Millisecond}

// The SLO is judged on the upper bound: a p95 whose point is under the
// limit but whose interval reaches above it is not met.
func TestSLOOnUpperBound(t *testing.T) {
	// 57 answers, 50–100 ms, and six at 140–160 ms: p95 ≈ 148 ms, its
	// interval reaching the slowest (160 ms).
	st, reqs := stepOf("t", 0, 10, 57, 50, 100)
	for i, lat := range []float64{140, 144, 148, 152, 156, 160} {
		reqs = append(reqs, record.LoadRequest{Target: "t", Seq: 57 + i, LatencyMS: lat, FirstTokenMS: math.NaN(), InterTokenMS: math.NaN()})
	}
	res := analyseBuilt(t, (&built{}).add(st, reqs), AnalyseOptions{SLO: slo150})
	s := res.Targets[0].Steps[0]
	if float64(s.P95.Value) >= 150 || float64(s.P95.Hi) <= 150 {
		t.Fatalf("fixture: p95 %v [%v, %v]", s.P95.Value, s.P95.Lo, s.P95.Hi)
	}
	if s.MeetsSLO || !strings.HasPrefix(s.Why, "p95 ") || !strings.Contains(s.Why, "> 150ms") {
		t.Errorf("met %v: %q", s.MeetsSLO, s.Why)
	}
}

// The knee is the highest level met before the first break; a level met
// again after a break is warned of, not taken.
func TestKneeBeforeFirstBreak(t *testing.T) {
	b := &built{}
	b.add(stepOf("t", 0, 10, 100, 50, 100))
	b.add(stepOf("t", 1, 20, 100, 60, 110))
	b.add(stepOf("t", 2, 30, 100, 200, 300))
	b.add(stepOf("t", 3, 40, 100, 60, 110))
	res := analyseBuilt(t, b, AnalyseOptions{SLO: slo150, RequestsPerMonth: 1e6})
	k := res.Knees[0]
	if !k.Found || k.Level != 20 || k.Step != 1 {
		t.Fatalf("knee %+v; want 20", k)
	}
	if !strings.HasPrefix(k.Why, "at 20 rps: p95 ") || !strings.Contains(k.Why, "; at 30 rps: p95 ") {
		t.Errorf("evidence %q", k.Why)
	}
	if len(res.Warnings) != 1 || res.Warnings[0] != "target t meets the SLO again at 40 rps after breaking it at 30 rps: the knee is put below the first break" {
		t.Errorf("warnings %q", res.Warnings)
	}
	// $0.002 a request: $2 per 1,000, $2,000 a month at a million requests,
	// which is 0.386 requests/s on average: 20 rps covers it.
	if math.Abs(float64(k.CostPer1000)-2) > 1e-9 || math.Abs(float64(k.CostPerMonth)-2000) > 1e-6 || !k.Covers ||
		math.Abs(float64(k.VolumeRPS)-1e6/2592000) > 1e-12 {
		t.Errorf("cost %v per 1,000, %v a month, volume %v rps, covers %v", k.CostPer1000, k.CostPerMonth, k.VolumeRPS, k.Covers)
	}
}

// A saturated step is passed over: no evidence either way.
func TestKneeSkipsSaturatedSteps(t *testing.T) {
	b := &built{}
	b.add(stepOf("t", 0, 10, 100, 50, 100))
	st, reqs := stepOf("t", 1, 20, 100, 500, 900)
	st.Saturated, st.ClientCPU = true, 1.95
	b.add(st, reqs)
	b.add(stepOf("t", 2, 30, 100, 50, 100))
	b.add(stepOf("t", 3, 40, 100, 500, 900))
	res := analyseBuilt(t, b, AnalyseOptions{SLO: slo150})
	if k := res.Knees[0]; !k.Found || k.Level != 30 {
		t.Errorf("knee %+v; want 30 (20 was the harness's bottleneck)", k)
	}
	s := res.Targets[0].Steps[1]
	if s.MeetsSLO || s.Why != "not evidence: the harness was the bottleneck: it used 1.95 of its 2 cores" {
		t.Errorf("saturated step: %q", s.Why)
	}
}

func TestKneeNotFound(t *testing.T) {
	b := &built{}
	b.add(stepOf("t", 0, 10, 100, 200, 300))
	res := analyseBuilt(t, b, AnalyseOptions{SLO: slo150})
	if k := res.Knees[0]; k.Found || !strings.HasPrefix(k.Why, "no level met the SLO: at 10 rps, p95 ") {
		t.Errorf("knee %+v", k)
	}
	b = &built{}
	b.add(stepOf("t", 0, 10, 100, 50, 100))
	b.add(stepOf("t", 1, 20, 100, 50, 100))
	res = analyseBuilt(t, b, AnalyseOptions{SLO: slo150})
	if k := res.Knees[0]; !k.Found || k.Level != 20 || !strings.HasSuffix(k.Why, "every level tried met it: the knee is at or above the highest") {
		t.Errorf("knee %+v", k)
	}
	b = &built{}
	b.add(stepOf("t", 0, 10, 5, 50, 100))
	res = analyseBuilt(t, b, AnalyseOptions{SLO: slo150})
	if s := res.Targets[0].Steps[0]; s.MeetsSLO || s.Why != "p95 rests on 5 answers (at least 20 needed to bound it)" {
		t.Errorf("5 answers: %q", s.Why)
	}
}

// Throughput counts the answers completed within the window; errors are
// counted by kind, most first; cost per 1,000 is over every request made.
func TestStepMeasures(t *testing.T) {
	st := record.LoadStep{Target: "t", Mode: ModeRate, Level: 10, DurationMS: 1000, Cores: 2}
	var reqs []record.LoadRequest
	for i := range 10 {
		// Started every 100 ms, each 250 ms long: the last two end after
		// the window (at 1,050 and 1,150 ms).
		reqs = append(reqs, record.LoadRequest{Target: "t", Seq: i, StartMS: float64(i) * 100, LatencyMS: 250,
			FirstTokenMS: 50, InterTokenMS: 4, OutputTokens: 20, CostUSD: 0.001})
	}
	for i, k := range []string{"rate_limited", "server_error", "rate_limited"} {
		reqs = append(reqs, record.LoadRequest{Target: "t", Seq: 10 + i, StartMS: 900, LatencyMS: 3, ErrorKind: k,
			FirstTokenMS: math.NaN(), InterTokenMS: math.NaN()})
	}
	res := analyseBuilt(t, (&built{}).add(st, reqs), AnalyseOptions{})
	s := res.Targets[0].Steps[0]
	if s.OK != 10 || float64(s.Throughput) != 8 || float64(s.OutputTokensPerSec) != 160 {
		t.Errorf("ok %d, throughput %v, tokens/s %v; want 10, 8, 160", s.OK, s.Throughput, s.OutputTokensPerSec)
	}
	if s.Errors.Count != 3 || s.Errors.N != 13 || len(s.ByKind) != 2 ||
		s.ByKind[0].Kind != "rate_limited" || s.ByKind[0].Count != 2 || s.ByKind[1].Kind != "server_error" {
		t.Errorf("errors %+v by kind %+v", s.Errors, s.ByKind)
	}
	if math.Abs(float64(s.CostPer1000)-0.01/13*1000) > 1e-12 || float64(s.InterTokenMS) != 4 || float64(s.TTFT50.Value) != 50 {
		t.Errorf("cost per 1,000 %v, inter-token %v, ttft50 %v", s.CostPer1000, s.InterTokenMS, s.TTFT50.Value)
	}
}

// A TTFT objective is not held against a target that never streamed (it
// would fail every level for want of a measure); that is warned of.
func TestTTFTObjectiveWithoutStreaming(t *testing.T) {
	b := &built{}
	b.add(stepOf("plain", 0, 10, 100, 50, 100))
	res := analyseBuilt(t, b, AnalyseOptions{SLO: SLO{P95: time.Second, TTFT95: 100 * time.Millisecond}})
	if k := res.Knees[0]; !k.Found {
		t.Errorf("knee %+v", k)
	}
	if len(res.Warnings) != 1 || !strings.HasPrefix(res.Warnings[0], "target plain streamed no answer") {
		t.Errorf("warnings %q", res.Warnings)
	}
}

func TestParseSLO(t *testing.T) {
	got, err := ParseSLO("p95=2s, ttft95=500ms,errors=1%")
	if err != nil {
		t.Fatal(err)
	}
	if want := (SLO{P95: 2 * time.Second, TTFT95: 500 * time.Millisecond, Errors: 0.01, ErrorsSet: true}); got != want {
		t.Errorf("%+v", got)
	}
	if got.String() != "p95=2s,ttft95=500ms,errors=1%" {
		t.Errorf("written back as %q", got.String())
	}
	bad := map[string]string{
		"p95=2":                 `slo "p95=2": p95=2: want a positive duration such as 2s or 500ms`,
		"p99=1s,errors=2":       `slo "p99=1s,errors=2": p99=1s: unknown objective (keys: p95, ttft95, errors); errors=2: want a percentage such as 1% or 0.5%`,
		"p95":                   `slo "p95": "p95" is not KEY=VALUE (keys: p95, ttft95, errors)`,
		"errors=120%":           `slo "errors=120%": errors=120%: want a percentage between 0% and 100%`,
		"p95=1s,p95=2s":         `slo "p95=1s,p95=2s": p95 is given twice`,
		"ttft95=-1s,errors=-1%": `slo "ttft95=-1s,errors=-1%": ttft95=-1s: want a positive duration such as 2s or 500ms; errors=-1%: want a percentage between 0% and 100%`,
	}
	for in, want := range bad {
		if _, err := ParseSLO(in); err == nil || err.Error() != want {
			t.Errorf("%q: %v\nwant %s", in, err, want)
		}
	}
}

func TestRuleCheck(t *testing.T) {
	good := []Rule{{MetricP95, 10, "20%"}, {MetricP99, 10, "300ms"}, {MetricTTFT95, 2, "1s"}, {MetricErrors, 5, "1pt"}, {MetricErrors, 5, "50%"}}
	for _, r := range good {
		if err := r.Check(); err != nil {
			t.Errorf("%+v: %v", r, err)
		}
	}
	bad := map[Rule]string{
		{"p90", 10, "20%"}:         `load rule p90 at 10: metric "p90": want p95, p99, ttft95 or errors`,
		{MetricP95, 0, "20%"}:      "load rule p95 at 0: at 0: want the level of a step (above 0)",
		{MetricP95, 10, "2pt"}:     `load rule p95 at 10: max_rise "2pt": points are for the errors metric; p95 rises by a duration (300ms) or a percentage (20%)`,
		{MetricErrors, 10, "1s"}:   `load rule errors at 10: max_rise "1s": the errors metric rises by points (1pt) or a percentage of the base's rate (50%)`,
		{MetricP95, 10, "fast"}:    `load rule p95 at 10: max_rise "fast": want a duration (300ms) or a percentage of the base's value (20%)`,
		{MetricP99, 10, "-5%"}:     `load rule p99 at 10: max_rise "-5%": want a percentage of the base's value such as 20%`,
		{MetricErrors, 1, "200pt"}: `load rule errors at 1: max_rise "200pt": want percentage points such as 1pt`,
	}
	for r, want := range bad {
		if err := r.Check(); err == nil || err.Error() != want {
			t.Errorf("%+v: %v\nwant %s", r, err, want)
		}
	}
}

// Gate refuses what cannot be compared, and is inconclusive where a side
// lacks the step or the data.
func TestGateEdges(t *testing.T) {
	b := &built{}
	b.add(stepOf("t", 0, 10, 100, 50, 100))
	b.add(stepOf("t", 1, 20, 10, 50, 100))
	base := Data{Steps: b.steps, Requests: b.reqs}
	res, err := Gate(base, base, []Rule{{MetricP95, 10, "10%"}, {MetricP95, 20, "10%"}, {MetricP95, 30, "10%"}}, GateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Checks[0].Verdict != Pass || res.Verdict != Inconclusive {
		t.Errorf("self: %+v, verdict %s", res.Checks[0], res.Verdict)
	}
	if w := res.Checks[1].Why; w != "10 measurements in the base and 10 in the candidate: a p95 needs at least 30 on each side; nothing decided" {
		t.Errorf("few: %q", w)
	}
	if w := res.Checks[2].Why; w != "the base has no step of t at 30 rps; nothing decided" {
		t.Errorf("missing: %q", w)
	}
	closed := Data{Steps: []record.LoadStep{{Target: "t", Mode: ModeConcurrency, Level: 10}}}
	if _, err := Gate(base, closed, []Rule{{MetricP95, 10, "10%"}}, GateOptions{}); err == nil ||
		err.Error() != "the base is a rate test and the candidate a concurrency test: their levels do not compare" {
		t.Errorf("modes: %v", err)
	}
	other := Data{Steps: []record.LoadStep{{Target: "u", Mode: ModeRate, Level: 10}}}
	if _, err := Gate(base, other, []Rule{{MetricP95, 10, "10%"}}, GateOptions{}); err == nil || err.Error() != "the base and the candidate share no target" {
		t.Errorf("targets: %v", err)
	}
	// Errors rise by points: 0 of 100 → 30 of 130 fails a 1pt allowance.
	b2 := &built{}
	b2.add(stepOf("t", 0, 10, 100, 50, 100, strings.Split(strings.Repeat("server_error,", 30), ",")[:30]...))
	res, err = Gate(base, Data{Steps: b2.steps, Requests: b2.reqs}, []Rule{{MetricErrors, 10, "1pt"}}, GateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c := res.Checks[0]; c.Verdict != Fail || float64(c.Cand) != 30.0/130 {
		t.Errorf("errors: %+v", c)
	}
}

func FuzzParseSLO(f *testing.F) {
	for _, s := range []string{"p95=2s,ttft95=500ms,errors=1%", "errors=0%", "p95=", "=,=", "p95=1h,errors=100%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		slo, err := ParseSLO(s)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "slo ") {
				t.Fatalf("error %q does not name the flag's value", err)
			}
			return
		}
		if slo.P95 < 0 || slo.TTFT95 < 0 || slo.Errors < 0 || slo.Errors > 1 {
			t.Fatalf("%q read as %+v", s, slo)
		}
		again, err := ParseSLO(slo.String())
		if err != nil || again != slo {
			t.Fatalf("%q → %+v → %q → %+v, %v", s, slo, slo.String(), again, err)
		}
	})
}

func FuzzRuleCheck(f *testing.F) {
	for _, s := range []string{"20%", "300ms", "1pt", "-1%", "1e400%", "NaN%", "pt"} {
		f.Add("p95", 10.0, s)
		f.Add("errors", 10.0, s)
	}
	f.Fuzz(func(t *testing.T, metric string, at float64, maxRise string) {
		r := Rule{Metric: metric, At: at, MaxRise: maxRise}
		rs, err := parseRule(r)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "load rule ") {
				t.Fatalf("error %q", err)
			}
			return
		}
		if a := rs.allowed(100); math.IsNaN(a) || a < 0 {
			t.Fatalf("%+v allows %g", r, a)
		}
	})
}

// A test cut short by a cap or an interrupt says so once, with the count.
func TestWarnsOfStepsNotRun(t *testing.T) {
	b := &built{}
	b.add(stepOf("t", 0, 10, 100, 50, 100))
	for i, target := range []string{"t", "u", "u"} {
		b.add(record.LoadStep{Target: target, Step: 1 + i, Mode: ModeRate, Level: 20, Skipped: "not run: --max-requests 40 reached"}, nil)
	}
	b.add(record.LoadStep{Target: "v", Step: 0, Mode: ModeRate, Level: 10, Skipped: "skipped: past the knee at 10 rps (errors 100.0% of 10 requests)"}, nil)
	res := analyseBuilt(t, b, AnalyseOptions{SLO: slo150})
	if len(res.Warnings) != 1 || res.Warnings[0] != "3 steps were not run: --max-requests 40 reached" {
		t.Errorf("warnings %q", res.Warnings)
	}
}

// An SLO is written in JSON in milliseconds and as --slo reads it, and
// read back.
func TestSLOJSON(t *testing.T) {
	slo, _ := ParseSLO("p95=1.5s,errors=0.5%")
	b, err := json.Marshal(slo)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"p95_ms":1500,"errors":0.005,"text":"p95=1.5s,errors=0.5%"}` {
		t.Errorf("%s", b)
	}
	var back SLO
	if err := json.Unmarshal(b, &back); err != nil || back != slo {
		t.Errorf("read back %+v, %v", back, err)
	}
}

// An error objective the data are too few to show says how many requests
// a step needs: the fewest whose Wilson upper bound at 0 errors is within
// it, as statsmodels' proportion_confint(0, n, alpha=0.05,
// method="wilson") first falls to 1%, 2% and 5% at n = 381, 189 and 73.
func TestErrorObjectiveNeedsRequests(t *testing.T) {
	for _, c := range []struct {
		p    float64
		want int
	}{{0.01, 381}, {0.02, 189}, {0.05, 73}} {
		if got := requestsToShow(c.p, 0.05); got != c.want {
			t.Errorf("requestsToShow(%g) = %d, want %d", c.p, got, c.want)
		}
	}
	st, reqs := stepOf("t", 0, 10, 63, 50, 60) // 63 answers, no error
	res := analyseBuilt(t, (&built{}).add(st, reqs), AnalyseOptions{SLO: SLO{Errors: 0.02, ErrorsSet: true}})
	s := res.Targets[0].Steps[0]
	if s.MeetsSLO || !strings.Contains(s.Why, "even with no error a step needs at least 189") {
		t.Errorf("met %v: %q", s.MeetsSLO, s.Why)
	}
	st, reqs = stepOf("t", 0, 10, 63, 50, 60, "server_error", "server_error", "server_error", "server_error")
	res = analyseBuilt(t, (&built{}).add(st, reqs), AnalyseOptions{SLO: SLO{Errors: 0.02, ErrorsSet: true}})
	if s := res.Targets[0].Steps[0]; strings.Contains(s.Why, "too few") {
		t.Errorf("a rate above the objective is not a matter of volume: %q", s.Why)
	}
}
