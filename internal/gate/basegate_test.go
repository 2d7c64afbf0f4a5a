package gate

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/runview"
	"github.com/assay-eval/assay/internal/spec"
)

func gateOf(alpha float64, rules ...spec.GateRule) *spec.Gate {
	return &spec.Gate{Alpha: alpha, Rules: rules}
}

// A candidate's spec is compared with the baseline's limit by limit: what
// lets through a regression the baseline's would fail is relaxed.
func TestCompareGates(t *testing.T) {
	drop := func(metric, v string) spec.GateRule { return spec.GateRule{Metric: metric, MaxDrop: v} }
	cases := []struct {
		name       string
		base, cand *spec.Gate
		want       []string // RuleChange.String()s
		relaxed    int
	}{
		{"same", gateOf(0, drop("primary", "5%")), gateOf(0, drop("primary", "5%")), nil, 0},
		{"the issue's attack: max_drop 5% → 50%", gateOf(0, drop("primary", "5%")), gateOf(0, drop("primary", "50%")),
			[]string{"primary max_drop 5% → 50% (loosened): relaxed"}, 1},
		{"a smaller max_drop is tighter", gateOf(0, drop("primary", "2pt")), gateOf(0, drop("primary", "1pt")),
			[]string{"primary max_drop 2pt → 1pt (tightened)"}, 0},
		{"relative to points cannot be compared: treated as relaxed", gateOf(0, drop("primary", "5%")), gateOf(0, drop("primary", "5pt")),
			[]string{"primary max_drop 5% → 5pt (changed): relaxed"}, 1},
		{"a lower min", gateOf(0, spec.GateRule{Metric: "correct", Slice: map[string]string{"tier": "hard"}, Min: "80%"}),
			gateOf(0, spec.GateRule{Metric: "correct", Slice: map[string]string{"tier": "hard"}, Min: "0.6"}),
			[]string{"correct[tier=hard] min 80% → 0.6 (loosened): relaxed"}, 1},
		{"a higher min", gateOf(0, spec.GateRule{Metric: "correct", Min: "80%"}), gateOf(0, spec.GateRule{Metric: "correct", Min: "90%"}),
			[]string{"correct min 80% → 90% (tightened)"}, 0},
		{"a higher cost ceiling", gateOf(0, spec.GateRule{Metric: "cost_per_case", Max: "0.01"}), gateOf(0, spec.GateRule{Metric: "cost_per_case", Max: "0.02"}),
			[]string{"cost_per_case max 0.01 → 0.02 (loosened): relaxed"}, 1},
		{"a lower latency ceiling", gateOf(0, spec.GateRule{Metric: "latency_p95", Max: "2s"}), gateOf(0, spec.GateRule{Metric: "latency_p95", Max: "1500ms"}),
			[]string{"latency_p95 max 2s → 1500ms (tightened)"}, 0},
		{"a larger max_rise", gateOf(0, spec.GateRule{Metric: "cost_per_case", MaxRise: "10%"}), gateOf(0, spec.GateRule{Metric: "cost_per_case", MaxRise: "20%"}),
			[]string{"cost_per_case max_rise 10% → 20% (loosened): relaxed"}, 1},
		{"a removed rule, and its limits apart", gateOf(0, drop("primary", "5%"), spec.GateRule{Metric: "correct", MaxDrop: "3pt", Min: "60%"}), gateOf(0, drop("primary", "5%"), drop("correct", "3pt")),
			[]string{"correct min=60% removed: relaxed"}, 1},
		{"an added rule", gateOf(0, drop("primary", "5%")), gateOf(0, drop("primary", "5%"), spec.GateRule{Metric: "loud_rate", Max: "5%"}),
			[]string{"loud_rate max=5% added"}, 0},
		{"no rules is the default, primary max_drop=5%", gateOf(0), gateOf(0, drop("primary", "5%")), nil, 0},
		{"removing every rule falls back to the default", gateOf(0, drop("primary", "2%")), gateOf(0),
			[]string{"primary max_drop 2% → 5% (loosened): relaxed"}, 1},
		{"primary is the primary scorer", gateOf(0, drop("correct", "5%")), gateOf(0, drop("primary", "5%")), nil, 0},
		{"a lower alpha asks more before failing", gateOf(0.05), gateOf(0.001),
			[]string{"gate.alpha 0.05 → 0.001 (loosened): relaxed"}, 1},
		{"a higher alpha", gateOf(0), gateOf(0.1),
			[]string{"gate.alpha 0.05 → 0.1 (tightened)"}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			changes := CompareGates(c.base, c.cand, "correct")
			var got []string
			for _, ch := range changes {
				got = append(got, ch.String())
			}
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("changes:\n got %q\nwant %q", got, c.want)
			}
			if n := len(Relaxed(changes)); n != c.relaxed {
				t.Errorf("relaxed: got %d, want %d", n, c.relaxed)
			}
		})
	}
	if CompareGates(nil, gateOf(0), "x") != nil || CompareGates(gateOf(0), nil, "x") != nil {
		t.Errorf("rules unknown on a side: no comparison")
	}
}

// The gate section hash is of the rules, not of how the file spells them.
func TestGateHash(t *testing.T) {
	a := runview.GateHash(gateOf(0, spec.GateRule{Metric: "primary", MaxDrop: "5%"}))
	b := runview.GateHash(gateOf(0, spec.GateRule{Metric: "primary", MaxDrop: "50%"}))
	if a == b || len(a) != 16 || !isHash(a) {
		t.Errorf("hashes %q %q: want 16 hex digits, different for different rules", a, b)
	}
	if runview.GateHash(nil) != "" {
		t.Errorf("no rules recorded: want no hash")
	}
	if g, err := runview.GateOfConfig([]byte(`{"name":"x"}`)); err != nil || g == nil || len(g.Rules) != 0 {
		t.Errorf("a spec without gate: is the default rules (an empty section), got %v, %v", g, err)
	}
	if g, _ := runview.GateOfConfig(nil); g != nil {
		t.Errorf("no spec recorded: want unknown rules")
	}
}

// A baseline file carries the rules of the spec it was made from and their
// hash; a file whose rules were edited after export is refused, naming the
// field, and one written before rules were recorded still reads.
func TestBaselineCarriesGateRules(t *testing.T) {
	s := testSnap("r1", "sha256:d", 1, ids(3), nil, testTarget("t", []int{1, 0, 1}, nil, nil, nil, "a"))
	s.Run.Gate = gateOf(0.01, spec.GateRule{Metric: "primary", MaxDrop: "5%"})
	s.Run.GateHash = runview.GateHash(s.Run.Gate)
	var buf bytes.Buffer
	if err := runview.WriteBaseline(&buf, s); err != nil {
		t.Fatal(err)
	}
	got, err := runview.ReadBaseline("b.json", bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if got.Run.Gate == nil || got.Run.Gate.Alpha != 0.01 || len(got.Run.Gate.Rules) != 1 || got.Run.Gate.Rules[0].MaxDrop != "5%" || got.Run.GateHash != s.Run.GateHash {
		t.Fatalf("round trip: gate %+v hash %q", got.Run.Gate, got.Run.GateHash)
	}

	edit := func(f func(run map[string]any)) error {
		var m map[string]any
		if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		f(m["run"].(map[string]any))
		b, _ := json.Marshal(m)
		_, err := runview.ReadBaseline("b.json", bytes.NewReader(b))
		return err
	}
	err = edit(func(run map[string]any) {
		run["gate"].(map[string]any)["rules"].([]any)[0].(map[string]any)["max_drop"] = "50%"
	})
	if err == nil || !strings.Contains(err.Error(), "b.json: run.gate_hash: ") || !strings.Contains(err.Error(), "changed after the baseline was exported") {
		t.Errorf("edited rules: got %v", err)
	}
	err = edit(func(run map[string]any) {
		run["gate"].(map[string]any)["rules"].([]any)[0].(map[string]any)["max_drop"] = "lots"
	})
	if err == nil || !strings.Contains(err.Error(), "b.json: run.gate.rules[0]: ") {
		t.Errorf("a rule that does not read: got %v", err)
	}
	err = edit(func(run map[string]any) { run["gate"].(map[string]any)["alpha"] = 2 })
	if err == nil || !strings.Contains(err.Error(), "run.gate.alpha: must be above 0 and at most 0.5") {
		t.Errorf("alpha out of range: got %v", err)
	}
	err = edit(func(run map[string]any) { delete(run, "gate") })
	if err == nil || !strings.Contains(err.Error(), "run.gate_hash: is set but run.gate is missing") {
		t.Errorf("hash without rules: got %v", err)
	}
	err = edit(func(run map[string]any) {
		run["gate"].(map[string]any)["rules"].([]any)[0].(map[string]any)["maxdrop"] = "5%"
	})
	if err == nil || !strings.Contains(err.Error(), `unknown field "maxdrop"`) {
		t.Errorf("an unknown field in a rule: got %v", err)
	}
	// A file from before rules were recorded reads, with the rules unknown.
	if err := edit(func(run map[string]any) { delete(run, "gate"); delete(run, "gate_hash") }); err != nil {
		t.Errorf("an older file: %v", err)
	}
}

// Comparing rule sets never panics, and is consistent both ways: a limit
// loosened from A to B is tightened from B to A, and a change that cannot
// be compared is relaxed both ways.
func FuzzCompareGates(f *testing.F) {
	f.Add("primary max_drop=5%", "primary max_drop=50%", 0.05, 0.01)
	f.Add("correct[tier=hard] min=80%", "correct[tier=hard] min=0.6 max_drop=2pt", 0.0, 0.1)
	f.Add("cost_per_case max=0.01 max_rise=10%", "cost_per_case max_rise=$0.001", 0.0, 0.0)
	f.Add("latency_p95 max=2s", "latency_p95 max=1500ms", 0.0, 0.0)
	f.Fuzz(func(t *testing.T, a, b string, alphaA, alphaB float64) {
		ra, err1 := ParseRuleFlag(a)
		rb, err2 := ParseRuleFlag(b)
		if err1 != nil || err2 != nil {
			return
		}
		ga, gb := gateOf(alphaA, ra), gateOf(alphaB, rb)
		ab, ba := CompareGates(ga, gb, "correct"), CompareGates(gb, ga, "correct")
		opposite := map[string]string{"loosened": "tightened", "tightened": "loosened", "added": "removed", "removed": "added", "changed": "changed"}
		find := func(cs []RuleChange, rule string) *RuleChange {
			for i := range cs {
				if cs[i].Rule == rule || strings.Replace(cs[i].Rule, "primary", "correct", 1) == strings.Replace(rule, "primary", "correct", 1) {
					return &cs[i]
				}
			}
			return nil
		}
		for _, c := range ab {
			r := find(ba, c.Rule)
			if r == nil {
				t.Fatalf("%v from A to B has no counterpart from B to A (%v)", c, ba)
			}
			if opposite[c.Change] != r.Change {
				t.Fatalf("A→B %v but B→A %v", c, *r)
			}
		}
		if len(ab) != len(ba) {
			t.Fatalf("A→B %v, B→A %v", ab, ba)
		}
	})
}

// Errors are not behaviour: a candidate whose provider failed 30 of 200
// calls (loud failures, as the scorers record them) is judged on the 170
// cases with an output on both sides, and its failed calls are counted
// apart; counted as failures they would fail a rule no behaviour broke.
func TestGateLeavesFailedCallsOut(t *testing.T) {
	const n = 200
	pass := func(k int) []int {
		out := make([]int, n)
		for j := range k {
			out[j] = 1
		}
		return out
	}
	base := testSnap("b", "sha256:d", 1, ids(n), nil, testTarget("t", pass(n), nil, nil, nil, "x"))
	ct := testTarget("t", pass(n-30), pass(0), nil, nil, "x")
	for j := n - 30; j < n; j++ {
		ct.Errored[j] = true
		ct.Shape[j] = runview.ShapeLoud
		ct.SetKind(j, "auth")
	}
	cand := testSnap("c", "sha256:d", 1, ids(n), nil, ct)
	rules := mustRules(t, "primary max_drop=5%", "loud_rate max_rise=2pt")
	res := evaluate(t, base, cand, rules, Options{})
	if res.Verdict != Pass || res.Failed != 0 {
		t.Errorf("verdict %s with %d failed checks; want pass: the failed calls are not behaviour", res.Verdict, res.Failed)
	}
	tr := res.Targets[0]
	if tr.Errors.Candidate != 30 || tr.Errors.Baseline != 0 {
		t.Errorf("errors %+v, want 30 in the candidate", tr.Errors)
	}
	for _, c := range tr.Checks {
		if c.N != n-30 {
			t.Errorf("%s: n = %d, want %d (the pairs with an output on both sides)", c.Rule, c.N, n-30)
		}
	}
	if !strings.Contains(strings.Join(res.Warnings, "\n"), "0 failed calls in the baseline and 30 in the candidate (provider errors)") {
		t.Errorf("warnings %q: want the failed calls counted", res.Warnings)
	}
}

// A baseline file's rules are outside input too: reading never panics, an
// error names the file, and rules that are read are the rules hashed.
func FuzzReadBaselineGate(f *testing.F) {
	s := testSnap("r1", "sha256:d", 1, ids(3), nil, testTarget("t", []int{1, 0, 1}, nil, nil, nil, "a"))
	s.Run.Gate = gateOf(0.01, spec.GateRule{Metric: "primary", MaxDrop: "5%"}, spec.GateRule{Metric: "correct", Slice: map[string]string{"tier": "hard"}, Min: "80%"})
	s.Run.GateHash = runview.GateHash(s.Run.Gate)
	var buf bytes.Buffer
	if err := runview.WriteBaseline(&buf, s); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add(bytes.Replace(buf.Bytes(), []byte(`"5%"`), []byte(`"50%"`), 1))
	f.Add(bytes.Replace(buf.Bytes(), []byte(`"max_drop"`), []byte(`"max_rise"`), 1))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := runview.ReadBaseline("f.json", bytes.NewReader(data))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.json") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if got.Run.Gate != nil && got.Run.GateHash != runview.GateHash(got.Run.Gate) {
			t.Fatalf("accepted rules that are not the ones hashed: %+v %q", got.Run.Gate, got.Run.GateHash)
		}
		if got.Run.Gate == nil && got.Run.GateHash != "" {
			t.Fatalf("accepted a hash without rules")
		}
	})
}
