package analysis

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/scorer"
	"github.com/assay-eval/assay/internal/spec"
	"github.com/assay-eval/assay/internal/store"
	"github.com/assay-eval/assay/internal/store/sqlite"
)

// callTools are the fixture's tools: a support agent's three.
var callTools = []spec.Tool{
	{Name: "lookup_order", Parameters: json.RawMessage(`{"type":"object","properties":{"id":{"type":"integer"}},"required":["id"]}`)},
	{Name: "refund", Parameters: json.RawMessage(`{"type":"object","properties":{"id":{"type":"integer"},"amount":{"type":"number"}},"required":["id"]}`)},
	{Name: "escalate", Parameters: json.RawMessage(`{"type":"object","properties":{"reason":{"type":"string"}},"required":["reason"]}`)},
}

// callCase is one fixture case: the expected call.
type callCase struct {
	id   string
	tool string
	args map[string]any
}

func callCases(n int) []callCase {
	var out []callCase
	for c := range n {
		cc := callCase{id: fmt.Sprintf("c%02d", c)}
		switch c % 3 {
		case 0:
			cc.tool, cc.args = "lookup_order", map[string]any{"id": 100 + c}
		case 1:
			cc.tool, cc.args = "refund", map[string]any{"id": 100 + c, "amount": 5}
		default:
			cc.tool, cc.args = "escalate", map[string]any{"reason": "angry"}
		}
		out = append(out, cc)
	}
	return out
}

// reply is one fixture result: what the target said and called, and its
// agent turns.
type reply struct {
	text  string
	calls []record.ToolCall
	turns int
}

// fixtureReply is target tg's reply to case c in an epoch: the small
// target calls nothing, the wrong tool, the right one with a wrong
// argument or the right call, by case; the large one mostly the right
// call, sometimes twice, over more turns.
func fixtureReply(tg string, cc callCase, c, epoch int) reply {
	argsOf := func(m map[string]any) string { b, _ := json.Marshal(m); return string(b) }
	right := record.ToolCall{ID: "call_" + cc.id, Name: cc.tool, Arguments: argsOf(cc.args)}
	wrongTool := "escalate"
	if cc.tool == "escalate" {
		wrongTool = "lookup_order"
	}
	switch tg {
	case "small":
		switch (c + epoch) % 4 {
		case 0:
			return reply{text: "Sorry, I cannot help with that.", turns: 1}
		case 1:
			return reply{calls: []record.ToolCall{{Name: wrongTool, Arguments: `{"reason":"x","id":1}`}}, turns: 2}
		case 2:
			bad := map[string]any{}
			for k := range cc.args {
				bad[k] = "zzz"
			}
			return reply{text: "Let me check.", calls: []record.ToolCall{{Name: cc.tool, Arguments: argsOf(bad)}}, turns: 2}
		}
		return reply{calls: []record.ToolCall{right}, turns: 2}
	default:
		switch {
		case c%5 == 0:
			return reply{calls: []record.ToolCall{right, right}, turns: 3}
		case c%7 == 3:
			return reply{calls: []record.ToolCall{{Name: wrongTool, Arguments: `{"reason":"x","id":1}`}}, turns: 1}
		}
		return reply{calls: []record.ToolCall{right}, turns: 1 + c%2}
	}
}

// callRun stores a run of the fixture scored by the real tool_call
// scorer; withTools says whether its resolved spec offers the tools.
func callRun(t *testing.T, cases []callCase, targets []string, epochs int, withTools bool) (store.Store, *record.Run) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "assay.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	sp := &spec.Spec{File: "assay.yaml", Dir: ".", Name: "support", Tools: callTools,
		Targets: []spec.Target{{Name: "grader", Provider: "openai", Model: "m"}},
		Scorers: []spec.Scorer{{Name: "call", Type: "tool_call"}}}
	set, probs := scorer.Compile(sp)
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	config := `{"scorers":[{"name":"call","type":"tool_call"}]}`
	if withTools {
		config = `{"tools":[{"name":"lookup_order"},{"name":"refund"},{"name":"escalate"}],"scorers":[{"name":"call","type":"tool_call"}]}`
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	run := &record.Run{ID: "20260101-000000-calls", Spec: "support", SpecHash: "sha256:s", DatasetHash: "sha256:d",
		PromptHash: "sha256:p", Targets: targets, Cases: len(cases), Epochs: epochs, Status: "complete", Started: t0,
		Config: []byte(config)}
	if err := st.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	var rcs []record.Case
	for i, cc := range cases {
		exp, _ := json.Marshal(map[string]any{"name": cc.tool, "arguments": cc.args})
		rcs = append(rcs, record.Case{RunID: run.ID, ID: cc.id, Line: i + 1, Expected: exp})
	}
	if err := st.PutCases(ctx, rcs); err != nil {
		t.Fatal(err)
	}
	var results []record.Result
	var scores []record.Score
	for _, tg := range targets {
		for c, cc := range cases {
			for e := 1; e <= epochs; e++ {
				rp := fixtureReply(tg, cc, c, e)
				r := record.Result{RunID: run.ID, CaseID: cc.id, Target: tg, Epoch: e, Raw: rp.text, ToolCalls: rp.calls,
					CostUSD: 0.001 * float64(rp.turns), LatencyMS: 100, CreatedAt: t0}
				if tg == "large" {
					r.CostUSD *= 2
				}
				for k := range rp.turns {
					turn := record.Turn{CostUSD: r.CostUSD / float64(rp.turns)}
					if k == rp.turns-1 {
						turn.Text, turn.ToolCalls = rp.text, rp.calls
					}
					r.Turns = append(r.Turns, turn)
				}
				var exp any
				_ = json.Unmarshal(rcs[c].Expected, &exp)
				for _, s := range set.Score(ctx, &dataset.Case{ID: cc.id, Expected: exp}, &r) {
					s.RunID, s.Scoring = run.ID, 1
					scores = append(scores, s)
				}
				results = append(results, r)
			}
		}
	}
	if err := st.PutResults(ctx, results, scores); err != nil {
		t.Fatal(err)
	}
	return st, run
}

// refMean is the test's own mean and Student's t interval (n−1 df).
func refMean(xs []float64) (mean, lo, hi float64) {
	n := float64(len(xs))
	for _, x := range xs {
		mean += x
	}
	mean /= n
	ss := 0.0
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	se := math.Sqrt(ss / (n - 1) / n)
	q := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: n - 1}.Quantile(0.975)
	return mean, math.Max(0, mean-q*se), mean + q*se
}

// refPairedP is the test's own paired t-test's two-sided p-value.
func refPairedP(a, b []float64) (delta, p float64) {
	d := make([]float64, len(a))
	for i := range a {
		d[i] = a[i] - b[i]
	}
	n := float64(len(d))
	for _, x := range d {
		delta += x
	}
	delta /= n
	ss := 0.0
	for _, x := range d {
		ss += (x - delta) * (x - delta)
	}
	se := math.Sqrt(ss / (n - 1) / n)
	return delta, 2 * distuv.StudentsT{Mu: 0, Sigma: 1, Nu: n - 1}.Survival(math.Abs(delta)/se)
}

func nearRel(a, b float64) bool { return math.Abs(a-b) <= 1e-5*math.Max(1, math.Abs(b)) }

// TestCallReportCountsTheFixture checks the report's tool-call numbers
// against counts the test makes itself from the fixture's replies: which
// calls named the expected tool (and only it), how many calls, turns and
// dollars each case took, and the paired differences between the targets.
func TestCallReportCountsTheFixture(t *testing.T) {
	for _, epochs := range []int{1, 2} {
		t.Run(fmt.Sprintf("epochs=%d", epochs), func(t *testing.T) {
			cases := callCases(21)
			targets := []string{"small", "large"}
			st, run := callRun(t, cases, targets, epochs, true)
			rep, err := Analyze(context.Background(), st, run, Options{})
			if err != nil {
				t.Fatal(err)
			}
			cr := rep.Calls
			if cr == nil {
				t.Fatal("a run with tool calls has no calls section")
			}
			if !cr.Agent {
				t.Error("a run with turns is not marked as agent loops")
			}
			// The test's own per-case values (means over epochs).
			type per struct{ calls, turns, cost []float64 }
			refs := map[string]*per{}
			for ti, tg := range targets {
				p := &per{}
				okTool, n, withCalls, callOnly := 0, 0, 0, 0
				for c, cc := range cases {
					var calls, turns, cost float64
					for e := 1; e <= epochs; e++ {
						rp := fixtureReply(tg, cc, c, e)
						n++
						right := len(rp.calls) > 0
						for _, k := range rp.calls {
							right = right && k.Name == cc.tool
						}
						if right {
							okTool++
						}
						if len(rp.calls) > 0 {
							withCalls++
							if rp.text == "" {
								callOnly++
							}
						}
						price := 0.001 * float64(rp.turns)
						if tg == "large" {
							price *= 2
						}
						calls += float64(len(rp.calls))
						turns += float64(rp.turns)
						cost += price
					}
					k := float64(epochs)
					p.calls, p.turns, p.cost = append(p.calls, calls/k), append(p.turns, turns/k), append(p.cost, cost/k)
				}
				refs[tg] = p
				got := cr.Targets[ti]
				if got.Target != tg || got.Results != n || got.WithCalls != withCalls || got.CallOnly != callOnly {
					t.Errorf("%s: target %q, %d results, %d with calls, %d call-only; the test counts %d, %d, %d",
						tg, got.Target, got.Results, got.WithCalls, got.CallOnly, n, withCalls, callOnly)
				}
				if len(got.Selection) != 1 || got.Selection[0].Scorer != "call" || got.Selection[0].Field != scorer.ToolField {
					t.Fatalf("%s: tool selection %+v; want the call scorer's %s field", tg, got.Selection, scorer.ToolField)
				}
				if s := got.Selection[0]; s.Passed != okTool || s.N != n {
					t.Errorf("%s: tool choice %d/%d; the test counts %d/%d", tg, s.Passed, s.N, okTool, n)
				}
				for _, m := range []struct {
					name string
					got  *Mean
					xs   []float64
				}{{"calls", &got.Calls, p.calls}, {"turns", got.Turns, p.turns}, {"cost", &got.Cost, p.cost}} {
					if m.got == nil {
						t.Errorf("%s: no %s per case", tg, m.name)
						continue
					}
					mean, lo, hi := refMean(m.xs)
					if m.got.N != len(cases) || !nearRel(m.got.Mean, mean) || !nearRel(m.got.CI[0], lo) || !nearRel(m.got.CI[1], hi) {
						t.Errorf("%s: %s per case %+v; the test reckons %d cases, %.6f [%.6f, %.6f]", tg, m.name, *m.got, len(cases), mean, lo, hi)
					}
				}
				// The tool field is also one of the scorer's fields, beside
				// the arguments.
				if frs := rep.Targets[ti].Fields["call"]; len(frs) == 0 || frs[0].Field != scorer.ToolField || frs[0].Passed != okTool {
					t.Errorf("%s: the call scorer's fields %+v; want %s first with %d ok", tg, frs, scorer.ToolField, okTool)
				}
			}
			// Paired comparisons: one per measure (two targets), each the
			// test's own paired t.
			want := map[string][2][]float64{
				MeasureCalls: {refs["small"].calls, refs["large"].calls},
				MeasureTurns: {refs["small"].turns, refs["large"].turns},
				MeasureCost:  {refs["small"].cost, refs["large"].cost},
			}
			if len(cr.Measures) != 3 {
				t.Fatalf("%d measure comparisons, want 3: %+v", len(cr.Measures), cr.Measures)
			}
			for _, mc := range cr.Measures {
				w := want[mc.Measure]
				delta, p := refPairedP(w[0], w[1])
				if mc.A != "small" || mc.B != "large" || mc.N != len(cases) || !nearRel(mc.Delta, delta) || !nearRel(mc.PValue, p) || mc.PAdjusted != mc.PValue {
					t.Errorf("%s: %+v; the test reckons small − large over %d cases = %.6f, p %.6g (one pair: p adj = p)", mc.Measure, mc, len(cases), delta, p)
				}
			}
			// Tool choice compared as the primary rates are: the same
			// cases, the same discordant counts.
			if len(cr.Selection) != 1 {
				t.Fatalf("%d selection comparisons, want 1", len(cr.Selection))
			}
			if epochs == 1 {
				aOnly, bOnly := 0, 0
				for c, cc := range cases {
					r := func(tg string) bool {
						rp := fixtureReply(tg, cc, c, 1)
						ok := len(rp.calls) > 0
						for _, k := range rp.calls {
							ok = ok && k.Name == cc.tool
						}
						return ok
					}
					switch a, b := r("small"), r("large"); {
					case a && !b:
						aOnly++
					case b && !a:
						bOnly++
					}
				}
				if s := cr.Selection[0]; s.N != len(cases) || s.AOnly != aOnly || s.BOnly != bOnly || s.Test != "mcnemar_score" {
					t.Errorf("tool choice compared: %+v; the test counts n %d, small only %d, large only %d (McNemar score test)", s, len(cases), aOnly, bOnly)
				}
			}
		})
	}
}

// TestCallReportWorstShowsCalls: a failure whose reply only called a tool
// carries its calls, so a report shows them rather than an empty output.
func TestCallReportWorstShowsCalls(t *testing.T) {
	cases := callCases(9)
	st, run := callRun(t, cases, []string{"small", "large"}, 1, true)
	rep, err := Analyze(context.Background(), st, run, Options{Worst: -1})
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, f := range rep.Worst {
		var cc callCase
		c := 0
		for i, x := range cases {
			if x.id == f.CaseID {
				cc, c = x, i
			}
		}
		rp := fixtureReply(f.Target, cc, c, 1)
		if !reflect.DeepEqual(f.Calls, rp.calls) || f.Raw != rp.text {
			t.Errorf("%s %s: raw %q, calls %+v; the reply was %q with %+v", f.Target, f.CaseID, f.Raw, f.Calls, rp.text, rp.calls)
		}
		if f.Raw == "" && len(f.Calls) > 0 {
			seen++
		}
	}
	if seen == 0 {
		t.Error("no call-only failure in the fixture's worst list")
	}
	if got := ReplyText("", []record.ToolCall{{Name: "lookup_order", Arguments: `{"id": 42}`}}); got != `lookup_order({"id": 42})` {
		t.Errorf("ReplyText of a call-only reply = %q", got)
	}
}

// TestCallReportWithoutToolsInSpec: a run whose spec offered no tools but
// whose results carry calls (replayed ones) gets the same section, read in
// a second pass; a run without any call gets none.
func TestCallReportWithoutToolsInSpec(t *testing.T) {
	cases := callCases(12)
	st1, run1 := callRun(t, cases, []string{"small", "large"}, 1, true)
	st2, run2 := callRun(t, cases, []string{"small", "large"}, 1, false)
	a, err := Analyze(context.Background(), st1, run1, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Analyze(context.Background(), st2, run2, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a.Calls, b.Calls) {
		t.Errorf("the calls section depends on the spec announcing tools:\n%+v\n%+v", a.Calls, b.Calls)
	}
	st3, run3 := fieldRun(t, 1, 5, []string{"a"}, func(int) map[string]string { return nil },
		func(string, int, int) []record.Score { return []record.Score{fieldScore(map[string]string{})} })
	c, err := Analyze(context.Background(), st3, run3, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Calls != nil {
		t.Errorf("a run without calls has a calls section: %+v", c.Calls)
	}
	if out, _ := json.Marshal(c); strings.Contains(string(out), `"calls"`) {
		t.Error("a run without calls writes a calls key in its JSON report")
	}
}

// TestRowsShowCalls: the per-result rows (JUnit's test cases) show a
// reply's calls after its text, so a call-only reply is not empty.
func TestRowsShowCalls(t *testing.T) {
	cases := callCases(8)
	st, run := callRun(t, cases, []string{"small"}, 1, true)
	rows, err := Rows(context.Background(), st, run, 0)
	if err != nil {
		t.Fatal(err)
	}
	callOnly := 0
	for _, r := range rows {
		c := 0
		for i, x := range cases {
			if x.id == r.CaseID {
				c = i
			}
		}
		rp := fixtureReply(r.Target, cases[c], c, 1)
		want := rp.text
		for _, k := range rp.calls {
			if want != "" {
				want += "\n"
			}
			want += k.Name + "(" + k.Arguments + ")"
		}
		if r.Raw != want {
			t.Errorf("%s: row output %q; the reply was %q", r.CaseID, r.Raw, want)
		}
		if rp.text == "" && len(rp.calls) > 0 {
			callOnly++
		}
	}
	if callOnly == 0 {
		t.Error("the fixture has no call-only reply")
	}
}

// refCR1 is the test's own cluster-robust mean: CR1 (G/(G−1) with one
// regressor) and Student's t on G−1.
func refCR1(xs []float64, clusters []string) (mean, se, lo, hi float64) {
	n := float64(len(xs))
	for _, x := range xs {
		mean += x
	}
	mean /= n
	sums := map[string]float64{}
	for i, x := range xs {
		sums[clusters[i]] += x - mean
	}
	g := float64(len(sums))
	v := 0.0
	for _, s := range sums {
		v += s * s
	}
	se = math.Sqrt(g / (g - 1) * v / (n * n))
	q := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: g - 1}.Quantile(0.975)
	return mean, se, mean - q*se, mean + q*se
}

// TestCallMeansClustered: with a cluster tag, calls per case and the
// paired differences get the CR1 t interval over clusters.
func TestCallMeansClustered(t *testing.T) {
	xs := []float64{0, 1, 2, 2, 1, 3, 0, 1, 4, 2, 2, 1}
	ys := []float64{1, 1, 1, 2, 0, 1, 1, 1, 2, 2, 1, 0}
	cl := []string{"a", "a", "a", "b", "b", "c", "c", "c", "d", "d", "e", "e"}
	mean, se, lo, hi := refCR1(xs, cl)
	m := meanOf(xs, cl, 19, 0.05)
	if m.CIMethod != "cr1_t" || !nearRel(m.Mean, mean) || !nearRel(m.SE, se) || !nearRel(m.CI[0], math.Max(0, lo)) || !nearRel(m.CI[1], hi) {
		t.Errorf("clustered mean %+v; the test reckons %.6f, SE %.6f, [%.6f, %.6f] (cr1_t)", m, mean, se, math.Max(0, lo), hi)
	}
	d := make([]float64, len(xs))
	for i := range xs {
		d[i] = xs[i] - ys[i]
	}
	dm, dse, dlo, dhi := refCR1(d, cl)
	c, ok := compareMeasure(xs, ys, cl, 0.05)
	if !ok || c.Test != "cluster_t" || c.Clusters != 5 || !nearRel(c.Delta, dm) || !nearRel(c.SE, dse) || !nearRel(c.CI[0], dlo) || !nearRel(c.CI[1], dhi) {
		t.Errorf("clustered comparison %+v; the test reckons %.6f, SE %.6f, [%.6f, %.6f] over 5 clusters", c, dm, dse, dlo, dhi)
	}
}
