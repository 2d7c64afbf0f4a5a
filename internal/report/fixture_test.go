package report

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/analysis"
	"github.com/assay-eval/assay/internal/stats"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata from the renderers' output")

// The hostile strings a report must show as text and never run.
const (
	hostScript   = `<script>window.__pwned=1</script>`
	hostImg      = `"><img src=x onerror="window.__pwned=1">`
	hostTextarea = `</textarea><svg onload="window.__pwned=1">`
	hostMarkdown = "a|b `code` [x](javascript:alert(1)) *em* _u_ # h\n- item @someone <b>&amp;"
)

var hostile = []string{hostScript, hostImg, hostTextarea}

// fixtureOptions shape the hand-built report the renderers are tested on.
type fixtureOptions struct {
	names [3]string // target names
	// inject is appended to slice values, case IDs, kinds, reasons,
	// warnings, the spec name and outputs ("" for a clean report).
	inject []string
}

var cleanNames = [3]string{"gpt-4o-mini", "claude-3-5-haiku", "llama3.1-8b-local"}

// fixtureReport builds a realistic analysis.Report by hand: three targets
// on 400 GSM8K-like cases, slices by difficulty tier 0–8 and by bucket,
// paired comparisons overall and per slice, a ranking, a Pareto set,
// warnings, worst failures with their outputs, latency samples and a spec.
// Its intervals come from stats.Wilson; its numbers are inputs to the
// renderers, not expectations.
func fixtureReport(o fixtureOptions) *analysis.Report {
	inj := func(i int) string {
		if len(o.inject) == 0 {
			return ""
		}
		return o.inject[i%len(o.inject)]
	}
	names := o.names
	tierN := []int{12, 60, 95, 88, 64, 40, 22, 12, 7} // 400 cases
	// Pass probability per tier for each target: the first is strong on
	// easy items and fades, the second holds up on hard ones, the third is
	// weaker throughout.
	prob := func(target, tier int) float64 {
		switch target {
		case 0:
			return math.Max(0.05, 0.97-0.085*float64(tier))
		case 1:
			return math.Max(0.05, 0.93-0.05*float64(tier))
		default:
			return math.Max(0.03, 0.85-0.1*float64(tier))
		}
	}
	buckets := []string{"common", "edge", "hostile", "should-refuse"}
	bucketN := []int{300, 60, 25, 15}
	bucketP := [3][]float64{{0.82, 0.6, 0.52, 0.4}, {0.8, 0.7, 0.64, 0.87}, {0.62, 0.41, 0.28, 0.2}}
	rate := func(passed, n int) analysis.Rate {
		ci := stats.Wilson(passed, n, 0.05)
		r := analysis.Rate{Passed: passed, N: n, CI: [2]float64{round4(ci.Lo), round4(ci.Hi)}}
		if n > 0 {
			r.Rate = float64(passed) / float64(n)
		}
		return r
	}
	tierKey := "tier"
	bucketKey := "bucket"
	value := func(v string, i int) string { return v + inj(i) }
	rng := rand.New(rand.NewPCG(7, 11))
	costs := []float64{0.000148, 0.00092, 0.000012}
	medLat := []float64{820, 1450, 310}
	rep := &analysis.Report{
		Run: analysis.RunInfo{
			ID: "01JD7Q3M9X5K2V8T4R6W0YBCEF", Spec: "gsm8k-steps" + inj(0),
			SpecHash:    "sha256:6f1c0e4b7d9a2f31c58e0a7b94d2c61f0e3a8b5d7c9e1f2a4b6c8d0e2f4a6b8c",
			DatasetHash: "sha256:0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b",
			PromptHash:  "sha256:c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2",
			GitCommit:   "3a7aa41e0c2b9d8f7e6a5b4c3d2e1f0a9b8c7d6e", Cases: 400, Epochs: 1,
			Status: "complete", Scoring: 1, Started: "2025-03-14T09:26:53Z", Ended: "2025-03-14T09:41:07Z",
		},
	}
	tierPassed := [3][]int{}
	for ti := range 3 {
		t := analysis.Target{Name: names[ti], N: 400, Scorers: map[string]analysis.Rate{},
			Slices: map[string]map[string]analysis.Rate{tierKey: {}, bucketKey: {}}}
		passed := 0
		for tier, n := range tierN {
			p := int(math.Round(prob(ti, tier) * float64(n)))
			tierPassed[ti] = append(tierPassed[ti], p)
			passed += p
			t.Slices[tierKey][value(fmt.Sprint(tier), tier)] = rate(p, n)
		}
		for bi, b := range buckets {
			p := int(math.Round(bucketP[ti][bi] * float64(bucketN[bi])))
			t.Slices[bucketKey][value(b, bi)] = rate(p, bucketN[bi])
		}
		t.Primary = rate(passed, 400)
		t.Primary.Scorer, t.Primary.CIMethod = "correct", "wilson"
		t.Scorers["correct"] = t.Primary
		t.Scorers["is_number"] = rate(400-3*ti-2, 400)
		loud := 6 + 5*ti
		t.Errors = ti
		t.Failures = analysis.Failures{Loud: loud, Silent: 400 - passed - loud, ByKind: map[string]int{
			"unparseable": loud - 2 - ti, "empty": 2, "wrong" + inj(1): 400 - passed - loud,
		}}
		if ti > 0 {
			t.Failures.ByKind["timeout"] = ti
		}
		samples := make([]float64, 400-t.Errors)
		for i := range samples {
			samples[i] = math.Round(medLat[ti] * math.Exp(0.45*rng.NormFloat64()))
		}
		t.LatencyMS = latencyOf(samples)
		t.Tokens = analysis.Tokens{Input: 400 * 182, Output: 400 * (95 + 40*ti)}
		perCase := costs[ti]
		month := perCase * 2_000_000
		perCorrect := perCase * 400 / float64(passed)
		errs := 0.0042 * float64(400-passed) / 400
		t.CostUSD = analysis.Cost{Total: perCase * 400, PerCase: perCase, PerMonth: &month, PerCorrect: &perCorrect,
			ErrorsPerCase: errs, TotalPerCase: perCase + errs}
		t.ErrorCost = errs * 400
		t.JudgeCostUSD = 0
		rep.Targets = append(rep.Targets, t)
	}
	// Paired comparisons: every pair overall and per slice. The numbers
	// come from a normal approximation; they only need to look like data.
	compare := func(a, b int, ra, rb analysis.Rate, n int) analysis.Comparison {
		d := ra.Rate - rb.Rate
		se := 0.8 * math.Sqrt((ra.Rate*(1-ra.Rate)+rb.Rate*(1-rb.Rate))/float64(n))
		c := analysis.Comparison{A: names[a], B: names[b], Scorer: "correct", N: n, Delta: d, SE: se,
			CI: [2]float64{d - 1.96*se, d + 1.96*se}, Test: "mcnemar_exact",
			PValue: math.Erfc(math.Abs(d/math.Max(se, 1e-9)) / math.Sqrt2)}
		switch {
		case c.CI[0] > 0:
			c.Verdict = "a_better"
		case c.CI[1] < 0:
			c.Verdict = "b_better"
		case c.CI[0] > -0.02 && c.CI[1] < 0.02:
			c.Verdict = "equivalent"
		default:
			c.Verdict = "inconclusive"
		}
		c.AOnly = int(math.Round(float64(n) * (0.08 + math.Max(d, 0))))
		c.BOnly = int(math.Round(float64(n) * (0.08 + math.Max(-d, 0))))
		return c
	}
	for _, pair := range [][2]int{{0, 1}, {0, 2}, {1, 2}} {
		a, b := pair[0], pair[1]
		ta, tb := rep.Targets[a], rep.Targets[b]
		c := compare(a, b, ta.Primary, tb.Primary, 400)
		c.PAdjusted = math.Min(1, 3*c.PValue)
		c.Slices = map[string]map[string]analysis.Comparison{}
		for _, key := range []string{tierKey, bucketKey} {
			c.Slices[key] = map[string]analysis.Comparison{}
			for v, ra := range ta.Slices[key] {
				c.Slices[key][v] = compare(a, b, ra, tb.Slices[key][v], ra.N)
			}
		}
		rep.Comparisons = append(rep.Comparisons, c)
	}
	rep.Ranking = []analysis.RankGroup{{Rank: 1, Targets: []string{names[1]}}, {Rank: 2, Targets: []string{names[0]}}, {Rank: 3, Targets: []string{names[2]}}}
	// None is at least as good as another on quality, cost and latency.
	rep.Pareto = []string{names[0], names[1], names[2]}
	rep.Warnings = []string{
		"bucket hostile" + inj(2) + " has 25 cases (under 30): its rates are loose",
		"bucket should-refuse has 15 cases (under 30)",
		"tier 8 has 7 cases: too few to separate " + names[0] + " and " + names[1] + " at the observed gap of 6 points",
	}
	rep.Worst = []analysis.FailureExample{
		{Target: names[0], CaseID: "gsm8k-0412" + inj(0), Epoch: 1, Shape: "silent", Kind: "wrong" + inj(1),
			Reason:   "expected 18, got 16" + inj(2),
			Raw:      strings.TrimSpace("Janet has 16 ducks.\nShe eats 3 and bakes 4: 16 - 3 - 4 = 9.\n```\nA: 16\n```\n" + inj(0) + "\n" + inj(1) + "\n" + inj(2)),
			Expected: "18", ErrorCost: 0.0042},
		{Target: names[2], CaseID: "gsm8k-1033" + inj(1), Epoch: 1, Shape: "loud", Kind: "unparseable",
			Reason: "no line matches A:\\s*(.+)$" + inj(1), Raw: "I think the answer is probably around forty." + inj(1) + "\x00\x1b[2J", Expected: "42"},
		{Target: names[1], CaseID: "gsm8k-0007" + inj(2), Epoch: 1, Shape: "loud", Kind: "timeout",
			Reason: "context deadline exceeded after 60s", Raw: ""},
		{Target: names[2], CaseID: "gsm8k-0880", Epoch: 1, Shape: "silent", Kind: "wrong",
			Reason: "expected 1,250, got 1250.5", Raw: "Step 1: 2500 / 2 = 1250.5\nA: 1250.5" + inj(2), Expected: "1,250"},
	}
	spec := map[string]any{
		"name":    rep.Run.Spec,
		"dataset": map[string]any{"path": "data/gsm8k-test.jsonl", "id": "line", "expected": "answer", "expected_extract": `####\s*(.+)$`, "tags": map[string]string{"tier": `string(size(case.answer.split("<<")) - 1)`}},
		"prompt":  map[string]any{"user": "Q: {{.question}}\nThink step by step, then answer on a line \"A: <number>\"." + inj(0)},
		"targets": []map[string]any{{"name": names[0], "provider": "openai"}, {"name": names[1], "provider": "anthropic"}, {"name": names[2], "provider": "replay"}},
		"scorers": []map[string]any{{"name": "correct", "type": "number", "primary": true}},
		"volume":  map[string]any{"requests_per_month": 2000000},
	}
	rep.Spec, _ = json.Marshal(spec)
	return rep
}

func latencyOf(samples []float64) analysis.Latency {
	s := append([]float64(nil), samples...)
	sort.Float64s(s)
	return analysis.Latency{P50: stats.QuantileSorted(s, 0.5), P95: stats.QuantileSorted(s, 0.95), P99: stats.QuantileSorted(s, 0.99), Samples: samples}
}

func round4(x float64) float64 { return math.Round(x*1e4) / 1e4 }

// hostileReport is the fixture with every outside string carrying markup
// that would run or restructure the page if it were not escaped.
func hostileReport() *analysis.Report {
	rep := fixtureReport(fixtureOptions{
		names:  [3]string{"gpt" + hostScript, "claude" + hostImg, "llama" + hostTextarea},
		inject: hostile,
	})
	// Scorer and field names come from the spec: a field scorer and a
	// judge whose names carry markup, with judge errors.
	for i := range rep.Targets {
		t := &rep.Targets[i]
		scorer, judge := "extract"+hostile[i], "judge"+hostile[(i+1)%3]
		t.Scorers[scorer] = analysis.Rate{Scorer: scorer, Passed: 30, N: 40, Rate: 0.75, CI: [2]float64{0.5981, 0.8581}}
		t.Scorers[judge] = analysis.Rate{Scorer: judge, Passed: 2, N: 40, Rate: 0.05, CI: [2]float64{0.0138, 0.1650}}
		t.Fields = map[string][]analysis.FieldRate{scorer: {
			{Field: "vendor" + hostile[(i+2)%3], Rate: analysis.Rate{Passed: 35, N: 40, Rate: 0.875, CI: [2]float64{0.7389, 0.9454}}, Wrong: 4, Unscored: 1},
			{Field: "total" + hostile[i], Rate: analysis.Rate{Passed: 31, N: 40, Rate: 0.775, CI: [2]float64{0.625, 0.8768}}, Wrong: 8, Unscored: 1},
		}}
		t.Judges = []analysis.JudgeStats{{Scorer: judge, N: 40, Errors: 37, ErrorRate: 0.925, CostUSD: 0.0185}}
	}
	return rep
}

func cleanReport() *analysis.Report { return fixtureReport(fixtureOptions{names: cleanNames}) }

// golden compares got with testdata/name, or rewrites it under -update.
// Byte equality only catches unintended changes; the semantic tests say
// what must hold.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (run go test -run %s -update to create it): %v", t.Name(), err)
	}
	if string(want) != string(got) {
		t.Errorf("%s differs from the renderer's output; look at the change, then run go test ./internal/report -run %s -update", path, t.Name())
	}
}
