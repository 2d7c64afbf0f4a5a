package gate

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/runview"
)

// reference mirrors testdata/reference.json, made by testdata/reference.py
// with statsmodels and scipy.
type reference struct {
	Alpha float64
	Data  struct {
		Tier        []string
		BasePassJ   []int     `json:"base_pass"`
		CandPassJ   []int     `json:"cand_pass"`
		BaseLoud    []int     `json:"base_loud"`
		CandLoud    []int     `json:"cand_loud"`
		BaseCost    []float64 `json:"base_cost"`
		CandCost    []float64 `json:"cand_cost"`
		BaseLatency []float64 `json:"base_latency"`
		CandLatency []float64 `json:"cand_latency"`
	}
	Rate        refPaired `json:"rate"`
	RateFloor   refBound  `json:"rate_floor"`
	SliceHard   refPaired `json:"slice_hard"`
	Loud        refPaired `json:"loud"`
	LoudCeiling refBound  `json:"loud_ceiling"`
	Cost        refPaired `json:"cost"`
	CostCeiling refBound  `json:"cost_ceiling"`
	LatencyP95  struct {
		Baseline, Candidate float64
	} `json:"latency_p95"`
	Epochs struct {
		BasePass [][]int   `json:"base_pass"`
		CandPass [][]int   `json:"cand_pass"`
		Rate     refPaired `json:"rate"`
	}
	Clustered struct {
		Cluster  []string
		BasePass []int `json:"base_pass"`
		CandPass []int `json:"cand_pass"`
		Rate     refPaired
		Clusters int
	}
}

type refPaired struct {
	Baseline, Candidate, Delta, P float64
	CI, Bounds                    [2]float64
	PFail                         float64 `json:"p_fail"`
	PPass                         float64 `json:"p_pass"`
	N                             int
}

type refBound struct {
	Candidate  float64
	CI, Bounds [2]float64
	PFail      float64 `json:"p_fail"`
	PPass      float64 `json:"p_pass"`
	N          int
}

func loadReference(t *testing.T) reference {
	t.Helper()
	b, err := os.ReadFile("testdata/reference.json")
	if err != nil {
		t.Fatal(err)
	}
	var r reference
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

func near(t *testing.T, what string, got Num, want float64) {
	t.Helper()
	if math.Abs(float64(got)-want) > 1e-9*math.Max(1, math.Abs(want)) {
		t.Errorf("%s = %.12g, reference %.12g", what, float64(got), want)
	}
}

func checkPaired(t *testing.T, name string, c Check, want refPaired, ci bool) {
	t.Helper()
	if c.N != want.N {
		t.Errorf("%s: n = %d, reference %d", name, c.N, want.N)
	}
	near(t, name+" baseline", c.Baseline, want.Baseline)
	near(t, name+" candidate", c.Candidate, want.Candidate)
	near(t, name+" delta", c.Delta, want.Delta)
	near(t, name+" p", c.PValue, want.P)
	if ci {
		near(t, name+" ci.lo", c.CI[0], want.CI[0])
		near(t, name+" ci.hi", c.CI[1], want.CI[1])
	}
	near(t, name+" one-sided lower bound", c.Bounds[0], want.Bounds[0])
	near(t, name+" one-sided upper bound", c.Bounds[1], want.Bounds[1])
	near(t, name+" p_fail", c.PFail, want.PFail)
	near(t, name+" p_pass", c.PPass, want.PPass)
}

func checkBound(t *testing.T, name string, c Check, want refBound) {
	t.Helper()
	if c.N != want.N {
		t.Errorf("%s: n = %d, reference %d", name, c.N, want.N)
	}
	near(t, name+" candidate", c.Candidate, want.Candidate)
	near(t, name+" ci.lo", c.CI[0], want.CI[0])
	near(t, name+" ci.hi", c.CI[1], want.CI[1])
	near(t, name+" one-sided lower bound", c.Bounds[0], want.Bounds[0])
	near(t, name+" one-sided upper bound", c.Bounds[1], want.Bounds[1])
	near(t, name+" p_fail", c.PFail, want.PFail)
	near(t, name+" p_pass", c.PPass, want.PPass)
}

// Every rule's numbers against statsmodels and scipy (testdata/reference.py):
// the McNemar score test, Tango's interval and the one-sided score tests at
// the limit for rates, slices and the loud rate; Wilson and the one-sided
// score test for floors and ceilings of rates; the paired t-test, t
// interval and one-sided t tests for cost; numpy's p95 for latency; and
// the paired t-test on per-case means over three epochs. The one-sided
// bounds (the interval at 2·alpha) and p-values are what decide.
func TestRulesMatchReference(t *testing.T) {
	ref := loadReference(t)
	d := ref.Data
	n := len(d.Tier)
	tags := make([]map[string]string, n)
	for i, tv := range d.Tier {
		tags[i] = map[string]string{"tier": tv}
	}
	base := testSnap("b", "sha256:d", 1, ids(n), tags, testTarget("m", d.BasePassJ, d.BaseLoud, d.BaseCost, d.BaseLatency, "b"))
	cand := testSnap("c", "sha256:d", 1, ids(n), tags, testTarget("m", d.CandPassJ, d.CandLoud, d.CandCost, d.CandLatency, "c"))
	for j := range n {
		if d.BaseLoud[j] == 1 && d.BasePassJ[j] == 1 || d.CandLoud[j] == 1 && d.CandPassJ[j] == 1 {
			t.Fatalf("reference data: case %d is loud and passed", j)
		}
	}
	rules := mustRules(t,
		"primary max_drop=5% min=70%",
		"correct[tier=hard] max_drop=2pt",
		"loud_rate max_rise=2pt max=10%",
		"cost_per_case max_rise=5% max=0.001",
		"latency_p95 max_rise=5%",
	)
	res := evaluate(t, base, cand, rules, Options{Alpha: ref.Alpha})
	checks := map[string]Check{}
	for _, c := range res.Targets[0].Checks {
		checks[c.Rule] = c
	}
	get := func(rule string) Check {
		c, ok := checks[rule]
		if !ok {
			t.Fatalf("no check %q; have %v", rule, res.Targets[0].Checks)
		}
		return c
	}
	c := get("primary max_drop=5%")
	checkPaired(t, "rate", c, ref.Rate, true)
	near(t, "rate threshold", c.Threshold, 0.05*ref.Rate.Baseline)
	if c.Test != "mcnemar_score" || c.CIMethod != "tango" || c.Verdict != Fail {
		t.Errorf("rate: test %s, ci %s, verdict %s; want mcnemar_score, tango, fail", c.Test, c.CIMethod, c.Verdict)
	}
	c = get("primary min=70%")
	checkBound(t, "floor", c, ref.RateFloor)
	if c.CIMethod != "wilson" || c.Verdict != Fail || c.Kind != "floor" {
		t.Errorf("floor: %s %s %s; want wilson floor fail (the upper bound is below 70%%)", c.CIMethod, c.Kind, c.Verdict)
	}
	c = get("correct[tier=hard] max_drop=2pt")
	checkPaired(t, "slice", c, ref.SliceHard, true)
	if c.Slice != "tier=hard" || c.Verdict != Fail {
		t.Errorf("slice %q verdict %s", c.Slice, c.Verdict)
	}
	c = get("loud_rate max_rise=2pt")
	checkPaired(t, "loud", c, ref.Loud, true)
	c = get("loud_rate max=10%")
	checkBound(t, "loud ceiling", c, ref.LoudCeiling)
	c = get("cost_per_case max_rise=5%")
	checkPaired(t, "cost", c, ref.Cost, true)
	if c.Test != "paired_t" || c.Verdict != Fail {
		t.Errorf("cost: test %s verdict %s", c.Test, c.Verdict)
	}
	c = get("cost_per_case max=0.001")
	checkBound(t, "cost ceiling", c, ref.CostCeiling)
	c = get("latency_p95 max_rise=5%")
	near(t, "p95 baseline", c.Baseline, ref.LatencyP95.Baseline)
	near(t, "p95 candidate", c.Candidate, ref.LatencyP95.Candidate)
	if !(float64(c.CI[0]) < float64(c.Delta) && float64(c.Delta) < float64(c.CI[1])) || c.Test != "paired_bootstrap" {
		t.Errorf("latency: delta %v outside its bootstrap interval %v (test %s)", c.Delta, c.CI, c.Test)
	}

	// Three epochs: per-case means, the paired t-test and its interval.
	m := len(ref.Epochs.BasePass)
	flat := func(xs [][]int) []int {
		var out []int
		for _, r := range xs {
			out = append(out, r...)
		}
		return out
	}
	base3 := testSnap("b3", "sha256:e", 3, ids(m), nil, testTarget("m", flat(ref.Epochs.BasePass), nil, nil, nil, "b"))
	cand3 := testSnap("c3", "sha256:e", 3, ids(m), nil, testTarget("m", flat(ref.Epochs.CandPass), nil, nil, nil, "c"))
	c = onlyCheck(t, evaluate(t, base3, cand3, mustRules(t, "primary max_drop=5%"), Options{}))
	checkPaired(t, "epochs", c, ref.Epochs.Rate, true)
	if c.Test != "paired_t" || c.CIMethod != "t" {
		t.Errorf("epochs: test %s ci %s; want paired_t with its t interval", c.Test, c.CIMethod)
	}
}

// The acceptance cases on the statistics alone.
func TestDefaultGateVerdicts(t *testing.T) {
	// A run against itself passes every rule, identical outputs.
	s := testSnap("a", "sha256:d", 1, ids(200), nil, testTarget("m", passes(200, 150), nil, nil, nil, "x"))
	res := evaluate(t, s, s, nil, Options{})
	if res.Verdict != Pass || !res.DefaultRules || res.Targets[0].IdenticalOutputs != 200 || res.Targets[0].Outputs != 200 {
		t.Errorf("self gate: %+v", res)
	}

	// 10 points lost on 1,000 cases: a confirmed drop beyond 5% of 80%.
	base := testSnap("b", "sha256:d", 1, ids(1000), nil, testTarget("m", passes(1000, 800), nil, nil, nil, "b"))
	cand := testSnap("c", "sha256:d", 1, ids(1000), nil, testTarget("m", passes(1000, 700), nil, nil, nil, "c"))
	res = evaluate(t, base, cand, nil, Options{})
	c := onlyCheck(t, res)
	if res.Verdict != Fail || c.Verdict != Fail || c.Rule != "primary max_drop=5%" || c.Scorer != "correct" {
		t.Errorf("10-point drop: %s / %+v", res.Verdict, c)
	}
	// Tango's one-sided 95% bounds of the change are [−11.7, −8.5] pts
	// (reference.py's tango_ci(0, 100, 1000, 0.1)): a drop of at least 8.5.
	if !strings.Contains(c.Reason, "a drop of at least 8.5 pts (one-sided 95% bound), more than the 4.0 pts allowed (5% of 80.0%)") ||
		!strings.Contains(c.Reason, "one-sided p < 0.0001") {
		t.Errorf("reason: %s", c.Reason)
	}

	// 1 point on 100 cases, beyond the allowed 0.75 points (5% of 15%):
	// the data show neither side of the limit, so it is inconclusive and
	// passes; --strict fails it.
	base = testSnap("b", "sha256:d", 1, ids(100), nil, testTarget("m", passes(100, 15), nil, nil, nil, "b"))
	cand = testSnap("c", "sha256:d", 1, ids(100), nil, testTarget("m", passes(100, 14), nil, nil, nil, "c"))
	res = evaluate(t, base, cand, nil, Options{})
	c = onlyCheck(t, res)
	if res.Verdict != Pass || c.Verdict != Inconclusive || !strings.Contains(c.Reason, "passes (--strict would fail it)") {
		t.Errorf("1-point drop: gate %s, check %s (%s); want pass, inconclusive", res.Verdict, c.Verdict, c.Reason)
	}
	res = evaluate(t, base, cand, nil, Options{Strict: true})
	if c = onlyCheck(t, res); res.Verdict != Fail || c.Verdict != Fail || !strings.Contains(c.Reason, "--strict fails it") {
		t.Errorf("1-point drop, strict: %s %+v", res.Verdict, c)
	}
	// 1 point of 80% (4 allowed): on 100 cases a single discordant case
	// cannot show the drop is within 4 points (one-sided score p = 0.063),
	// so --strict fails it; on 1,000 cases (10 discordant) it can
	// (p = 6.5e-7) and --strict passes it. Without --strict both pass.
	base = testSnap("b", "sha256:d", 1, ids(100), nil, testTarget("m", passes(100, 80), nil, nil, nil, "b"))
	cand = testSnap("c", "sha256:d", 1, ids(100), nil, testTarget("m", passes(100, 79), nil, nil, nil, "c"))
	if c = onlyCheck(t, evaluate(t, base, cand, nil, Options{})); c.Verdict != Inconclusive || math.Abs(float64(c.PPass)-0.06289321231947005) > 1e-9 {
		t.Errorf("1 point of 80%% on 100 cases: %s, p_pass %v; want inconclusive, 0.0629", c.Verdict, c.PPass)
	}
	if c = onlyCheck(t, evaluate(t, base, cand, nil, Options{Strict: true})); c.Verdict != Fail {
		t.Errorf("1 point of 80%% on 100 cases under --strict: %s, want fail (not shown within 4 points)", c.Verdict)
	}
	base = testSnap("b", "sha256:d", 1, ids(1000), nil, testTarget("m", passes(1000, 800), nil, nil, nil, "b"))
	cand = testSnap("c", "sha256:d", 1, ids(1000), nil, testTarget("m", passes(1000, 790), nil, nil, nil, "c"))
	if c = onlyCheck(t, evaluate(t, base, cand, nil, Options{Strict: true})); c.Verdict != Pass || !strings.Contains(c.Reason, "within the 4.0 pts allowed") {
		t.Errorf("1 point of 80%% on 1,000 cases under --strict: %s (%s), want pass", c.Verdict, c.Reason)
	}
	// An improvement never fails by default, however small; under --strict
	// with no drop allowed it must be shown: 20 of 100 cases fixed is
	// (one-sided score p = 3.9e-6), 1 of 100 is not (p = 0.16).
	base = testSnap("b", "sha256:d", 1, ids(100), nil, testTarget("m", passes(100, 60), nil, nil, nil, "b"))
	for _, tc := range []struct {
		k            int
		strict       bool
		want, reason string
	}{
		{61, false, Inconclusive, "passes (--strict would fail it)"},
		{61, true, Fail, "--strict fails it"},
		{80, true, Pass, "no drop (at least a rise of"},
	} {
		cand = testSnap("c", "sha256:d", 1, ids(100), nil, testTarget("m", passes(100, tc.k), nil, nil, nil, "c"))
		c = onlyCheck(t, evaluate(t, base, cand, mustRules(t, "primary max_drop=0pt"), Options{Strict: tc.strict}))
		if c.Verdict != tc.want || !strings.Contains(c.Reason, tc.reason) {
			t.Errorf("improvement 60 → %d, strict %v: %s (%s), want %s", tc.k, tc.strict, c.Verdict, c.Reason, tc.want)
		}
	}
}

// Floors and ceilings decide on the candidate's own one-sided bounds:
// shown beyond fails, shown inside passes, otherwise inconclusive (a rate
// exactly at its floor cannot be shown above it).
func TestBounds(t *testing.T) {
	base := testSnap("b", "sha256:d", 1, ids(100), nil, testTarget("m", passes(100, 80), nil, nil, nil, "b"))
	for _, tc := range []struct {
		k       int
		rule    string
		verdict string
	}{
		{60, "primary min=80%", Fail},         // score test p = 2.9e-7 of "at or above 80%"
		{78, "primary min=80%", Inconclusive}, // p = 0.31 below, 0.69 above
		{80, "primary min=80%", Inconclusive}, // at the floor: 0.5 either way
		{90, "primary min=80%", Pass},         // p = 0.0062 of "at or below 80%"
		{78, "primary min=0.5", Pass},
	} {
		cand := testSnap("c", "sha256:d", 1, ids(100), nil, testTarget("m", passes(100, tc.k), nil, nil, nil, "c"))
		c := onlyCheck(t, evaluate(t, base, cand, mustRules(t, tc.rule), Options{}))
		if c.Verdict != tc.verdict || c.Kind != "floor" {
			t.Errorf("%d/100 with %s: %s (%s), want %s", tc.k, tc.rule, c.Verdict, c.Reason, tc.verdict)
		}
	}
	// Cost ceiling: every case costs 0.002 (no spread: the interval is the point).
	cost := make([]float64, 100)
	for i := range cost {
		cost[i] = 0.002
	}
	cand := testSnap("c", "sha256:d", 1, ids(100), nil, testTarget("m", passes(100, 80), nil, cost, nil, "c"))
	c := onlyCheck(t, evaluate(t, base, cand, mustRules(t, "cost_per_case max=0.0015"), Options{}))
	if c.Verdict != Fail || c.Kind != "ceiling" {
		t.Errorf("cost ceiling: %+v", c)
	}
	// Latency ceiling: p95 of 1..100 ms is 95.05 ms.
	lat := make([]float64, 100)
	for i := range lat {
		lat[i] = float64(i + 1)
	}
	cand = testSnap("c", "sha256:d", 1, ids(100), nil, testTarget("m", passes(100, 80), nil, nil, lat, "c"))
	c = onlyCheck(t, evaluate(t, base, cand, mustRules(t, "latency_p95 max=1s"), Options{}))
	if c.Verdict != Pass || math.Abs(float64(c.Candidate)-95.05) > 1e-9 {
		t.Errorf("latency ceiling: %+v", c)
	}
	c = onlyCheck(t, evaluate(t, base, cand, mustRules(t, "latency_p95 max=50ms"), Options{}))
	if c.Verdict != Fail {
		t.Errorf("latency ceiling 50ms: %+v", c)
	}
}

// A rise in cost or latency is judged against the baseline, in the
// metric's unit or relative to the baseline.
func TestCostAndLatencyWorsening(t *testing.T) {
	n := 400
	bc, cc, bl, cl := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range n {
		bc[i] = 0.001 + 0.0001*float64(i%7)
		cc[i] = bc[i] * 1.2
		bl[i] = 100 + float64(i%50)*10
		cl[i] = bl[i] + 50
	}
	base := testSnap("b", "sha256:d", 1, ids(n), nil, testTarget("m", passes(n, 300), nil, bc, bl, "b"))
	cand := testSnap("c", "sha256:d", 1, ids(n), nil, testTarget("m", passes(n, 300), nil, cc, cl, "c"))
	for _, tc := range []struct{ rule, verdict string }{
		{"cost_per_case max_rise=10%", Fail},
		{"cost_per_case max_rise=25%", Pass},
		{"cost_per_case max_rise=$0.001", Pass},
		{"latency_p95 max_rise=20ms", Fail},
		{"latency_p95 max_rise=100", Pass},
		{"latency_p95 max_rise=1%", Fail},
		{"latency_p95 max_rise=0.5s", Pass},
	} {
		c := onlyCheck(t, evaluate(t, base, cand, mustRules(t, tc.rule), Options{}))
		if c.Verdict != tc.verdict {
			t.Errorf("%s: %s (%s), want %s", tc.rule, c.Verdict, c.Reason, tc.verdict)
		}
	}
	// p95 of the baseline: values 100..590 ms by tens, 8 of each.
	c := onlyCheck(t, evaluate(t, base, cand, mustRules(t, "latency_p95 max_rise=20ms"), Options{}))
	if math.Abs(float64(c.Delta)-50) > 1e-9 {
		t.Errorf("p95 delta %v, want 50 ms (every latency +50)", c.Delta)
	}
}

func TestDatasetVersions(t *testing.T) {
	base := testSnap("b", "sha256:aaaa", 1, ids(10), nil, testTarget("m", passes(10, 8), nil, nil, nil, "b"))
	candIDs := append(ids(9), "new-1", "new-2")
	cand := testSnap("c", "sha256:bbbb", 1, candIDs, nil, testTarget("m", passes(11, 8), nil, nil, nil, "c"))
	_, err := Evaluate(base, cand, nil, Options{})
	var dm *DatasetMismatchError
	if !errors.As(err, &dm) {
		t.Fatalf("different datasets: err %v, want a refusal", err)
	}
	msg := err.Error()
	for _, want := range []string{"sha256:aaaa", "sha256:bbbb", `2 cases added ("new-1", "new-2")`, `1 removed ("c10")`, "--shared-cases", "the 9 cases both have"} {
		if !strings.Contains(msg, want) {
			t.Errorf("refusal %q lacks %q", msg, want)
		}
	}
	res := evaluate(t, base, cand, nil, Options{SharedCases: true})
	if res.Cases != 9 || res.Added != 2 || res.Removed != 1 || res.Targets[0].Checks[0].N != 9 {
		t.Errorf("shared cases: %d compared (%d added, %d removed), check n %d", res.Cases, res.Added, res.Removed, res.Targets[0].Checks[0].N)
	}
	if !strings.Contains(strings.Join(res.Warnings, "\n"), "compared only the 9 cases both have") {
		t.Errorf("warnings %q do not say only shared cases were compared", res.Warnings)
	}
	// Same IDs, changed contents: still refused, and said so.
	cand = testSnap("c", "sha256:bbbb", 1, ids(10), nil, testTarget("m", passes(10, 8), nil, nil, nil, "c"))
	if _, err := Evaluate(base, cand, nil, Options{}); err == nil || !strings.Contains(err.Error(), "case IDs are the same but their contents changed") {
		t.Errorf("same IDs: %v", err)
	}
	// A changed scorer configuration is a warning.
	cand.Run.DatasetHash = base.Run.DatasetHash
	cand.Run.ScorersHash = "sha256:other"
	res = evaluate(t, base, cand, nil, Options{})
	if !strings.Contains(strings.Join(res.Warnings, "\n"), "two definitions of correct") {
		t.Errorf("warnings %q", res.Warnings)
	}
}

func TestTargetsAndFingerprints(t *testing.T) {
	a, b := testTarget("a", passes(50, 40), nil, nil, nil, "x"), testTarget("b", passes(50, 40), nil, nil, nil, "x")
	base := testSnap("b", "sha256:d", 1, ids(50), nil, a, b)
	ca := testTarget("a", passes(50, 40), nil, nil, nil, "x")
	ca.Fingerprints = []runview.Fingerprint{{Model: "m-2", System: "fp_9", Count: 50}}
	cand := testSnap("c", "sha256:d", 1, ids(50), nil, ca)
	res := evaluate(t, base, cand, nil, Options{})
	if res.Verdict != Fail || len(res.Targets) != 2 || !res.Targets[1].Missing || !strings.Contains(res.Targets[1].Reason, "not in the candidate") {
		t.Errorf("missing target: %+v", res.Targets)
	}
	if !res.Targets[0].FingerprintChanged || !strings.Contains(strings.Join(res.Warnings, "\n"), "m-1 (fp_1) → m-2 (fp_9)") {
		t.Errorf("fingerprint drift not flagged: %+v %q", res.Targets[0], res.Warnings)
	}
	res = evaluate(t, base, cand, nil, Options{Targets: []string{"a"}})
	if res.Verdict != Pass || len(res.Targets) != 1 {
		t.Errorf("--targets a: %s %+v", res.Verdict, res.Targets)
	}
	// The same fingerprints (in any order, any counts) are no drift.
	ca.Fingerprints = []runview.Fingerprint{{Model: "m-1", System: "fp_1", Count: 3}}
	if res = evaluate(t, base, cand, nil, Options{Targets: []string{"a"}}); res.Targets[0].FingerprintChanged {
		t.Errorf("same fingerprint flagged")
	}
	// A target with no result at all fails.
	empty := runview.NewTarget("a", []string{"correct"}, 50)
	if res = evaluate(t, base, testSnap("c", "sha256:d", 1, ids(50), nil, empty), nil, Options{Targets: []string{"a"}}); res.Verdict != Fail || !res.Targets[0].Missing {
		t.Errorf("no results: %+v", res.Targets[0])
	}
}

// With several epochs per case the rate is compared on per-case means.
func TestEpochsUsePerCaseMeans(t *testing.T) {
	// 100 cases × 2 epochs: the candidate fails the second epoch of the
	// first 30 cases that passed both before.
	bp, cp := make([]int, 200), make([]int, 200)
	for i := range 100 {
		if i < 80 {
			bp[2*i], bp[2*i+1] = 1, 1
			cp[2*i], cp[2*i+1] = 1, 1
		}
		if i < 30 {
			cp[2*i+1] = 0
		}
	}
	base := testSnap("b", "sha256:d", 2, ids(100), nil, testTarget("m", bp, nil, nil, nil, "b"))
	cand := testSnap("c", "sha256:d", 2, ids(100), nil, testTarget("m", cp, nil, nil, nil, "c"))
	c := onlyCheck(t, evaluate(t, base, cand, nil, Options{}))
	if c.N != 100 || math.Abs(float64(c.Delta)+0.15) > 1e-12 || c.Test != "paired_t" || c.Verdict != Fail {
		t.Errorf("epochs: %+v", c)
	}
}

func TestFingerprintsChanged(t *testing.T) {
	a := []runview.Fingerprint{{Model: "m-2024-05", System: "fp_1", Count: 10}}
	for _, c := range []struct {
		name       string
		base, cand []runview.Fingerprint
		want       bool
	}{
		{"same set, other counts", a, []runview.Fingerprint{{Model: "m-2024-05", System: "fp_1", Count: 3}}, false},
		{"new system fingerprint", a, []runview.Fingerprint{{Model: "m-2024-05", System: "fp_2", Count: 10}}, true},
		{"new model version", a, []runview.Fingerprint{{Model: "m-2024-08", System: "fp_1", Count: 10}}, true},
		{"a second fingerprint appears", a, append([]runview.Fingerprint{{Model: "m-2024-05", System: "fp_0", Count: 1}}, a...), true},
		{"candidate reported nothing (every call failed)", a, nil, false},
		{"baseline reported nothing", nil, a, false},
	} {
		if got := runview.FingerprintsChanged(c.base, c.cand); got != c.want {
			t.Errorf("%s: FingerprintsChanged = %v, want %v", c.name, got, c.want)
		}
	}
}

// A cost difference of float noise (the mean of equal costs subtracted from
// itself) reads as no change, never as a 20-digit amount.
func TestCostDeltaNoiseReadsAsZero(t *testing.T) {
	for _, d := range []float64{-6.19e-21, 3e-15, 0} {
		if got := FormatDelta("cost_per_case", d); got != "±$0" {
			t.Errorf("FormatDelta(cost, %g) = %q, want ±$0", d, got)
		}
	}
	if got := FormatDelta("cost_per_case", -0.000012); got != "−$0.000012" {
		t.Errorf("FormatDelta(cost, -0.000012) = %q, want −$0.000012", got)
	}
}
