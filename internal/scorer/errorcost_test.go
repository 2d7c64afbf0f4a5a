package scorer

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/spec"
)

func TestErrorCostRule(t *testing.T) {
	costs := &spec.ErrorCost{Silent: 10, Loud: 2, ByKind: map[string]float64{"timeout": 5, "refusal": 0}}
	onlyKinds := &spec.ErrorCost{ByKind: map[string]float64{"timeout": 5}}
	weighted := func(w float64) *dataset.Case { return &dataset.Case{ID: "c", Weight: w, HasWeight: true} }
	plain := &dataset.Case{ID: "c"}
	wrongV := Verdict{Shape: ShapeSilent, Kind: KindWrong}
	timeoutV := Verdict{Shape: ShapeLoud, Kind: "timeout"}
	emptyV := Verdict{Shape: ShapeLoud, Kind: KindEmpty}
	refusalV := Verdict{Shape: ShapeLoud, Kind: KindRefusal}
	tieV := Verdict{Shape: ShapeSilent, Kind: KindTie, Value: 0.5}
	passV := Verdict{Pass: true, Value: 1, Shape: ShapePass}
	cases := []struct {
		name string
		ec   *spec.ErrorCost
		c    *dataset.Case
		v    Verdict
		want float64
	}{
		{"a pass costs nothing", costs, weighted(7), passV, 0},
		{"silent by shape", costs, plain, wrongV, 10},
		{"loud by shape", costs, plain, emptyV, 2},
		{"by kind before shape", costs, plain, timeoutV, 5},
		{"an explicit 0 by kind", costs, plain, refusalV, 0},
		{"times the case weight", costs, weighted(3), wrongV, 30},
		{"by kind times the weight", costs, weighted(3), timeoutV, 15},
		{"weight 0 makes the case free", costs, weighted(0), wrongV, 0},
		{"a shape not priced costs 0", onlyKinds, plain, wrongV, 0},
		{"a weight with no section costs the weight", nil, weighted(4), wrongV, 4},
		{"loud with no section costs the weight too", nil, weighted(4), emptyV, 4},
		{"nothing priced", nil, plain, wrongV, 0},
		{"no case", costs, nil, wrongV, 10},
		{"a tie is no error", costs, weighted(3), tieV, 0},
		{"a tie with no section", nil, weighted(3), tieV, 0},
		{"a tie priced by kind", &spec.ErrorCost{ByKind: map[string]float64{"tie": 1}}, weighted(3), tieV, 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := errorCost(tc.ec, tc.c, tc.v); got != tc.want {
				t.Errorf("errorCost = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestSetScoreFillsErrorCost: every failing score Set.Score returns carries
// its price, the combined headline included; passes cost nothing.
func TestSetScoreFillsErrorCost(t *testing.T) {
	sp := newSpec(spec.Output{},
		spec.Scorer{Name: "right", Type: "equals", Normalize: []string{"trim"}, Primary: true},
		spec.Scorer{Name: "short", Type: "max_length", Max: 5, Primary: true},
	)
	sp.Errors = &spec.ErrorCost{Silent: 10, Loud: 1, ByKind: map[string]float64{KindTooLong: 2}}
	set := mustCompile(t, sp)
	score := func(raw string, weight *float64) map[string]record.Score {
		c := &dataset.Case{ID: "c1", Expected: "42"}
		if weight != nil {
			c.Weight, c.HasWeight = *weight, true
		}
		out := map[string]record.Score{}
		for _, s := range set.Score(context.Background(), c, &record.Result{CaseID: "c1", Target: "t", Raw: raw}) {
			out[s.Scorer] = s
		}
		return out
	}
	w3 := 3.0
	cases := []struct {
		name                  string
		raw                   string
		weight                *float64
		right, short, primary float64
	}{
		{"all pass", "42", &w3, 0, 0, 0},
		{"silent wrong", "41", nil, 10, 0, 10},
		{"silent wrong, weighted", "41", &w3, 30, 0, 30},
		{"too long by kind, weighted", "42     .", &w3, 30, 6, 30},
		{"empty is loud everywhere", "", &w3, 3, 3, 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ss := score(tc.raw, tc.weight)
			for name, want := range map[string]float64{"right": tc.right, "short": tc.short, CombinedName: tc.primary} {
				s := ss[name]
				if s.ErrorCost != want {
					t.Errorf("%s: ErrorCost %v, want %v (%s %s: %s)", name, s.ErrorCost, want, s.Shape, s.Kind, s.Reason)
				}
				if s.Pass && s.ErrorCost != 0 {
					t.Errorf("%s passed with ErrorCost %v", name, s.ErrorCost)
				}
			}
		})
	}
}

func TestErrorCostProblems(t *testing.T) {
	cases := []struct {
		name string
		ec   *spec.ErrorCost
		msg  string
		hint string
	}{
		{"unknown kind", &spec.ErrorCost{ByKind: map[string]float64{"timout": 1}}, `unknown failure kind "timout"`, "did you mean timeout?"},
		{"unknown kind lists kinds", &spec.ErrorCost{ByKind: map[string]float64{"vibes": 1}}, `unknown failure kind "vibes"`, "failure kinds: auth, bad_request"},
		{"negative silent", &spec.ErrorCost{Silent: -1}, "error_costs.silent is -1", "0 or more"},
		{"NaN loud", &spec.ErrorCost{Loud: math.NaN()}, "error_costs.loud is NaN", "finite"},
		{"infinite by kind", &spec.ErrorCost{ByKind: map[string]float64{"wrong": math.Inf(1)}}, "error_costs.by_kind.wrong is +Inf", ""},
		{"negative by kind", &spec.ErrorCost{ByKind: map[string]float64{"judge_error": -2}}, "error_costs.by_kind.judge_error is -2", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sp := newSpec(spec.Output{}, spec.Scorer{Type: "equals"})
			sp.Errors = tc.ec
			set, probs := Compile(sp)
			if set != nil || len(probs) != 1 {
				t.Fatalf("got %d problems, want 1: %v", len(probs), probs)
			}
			if p := probs[0]; !strings.Contains(p.Msg, tc.msg) || !strings.Contains(p.Hint, tc.hint) {
				t.Errorf("problem %q (hint %q); want %q / %q", p.Msg, p.Hint, tc.msg, tc.hint)
			}
		})
	}
	// Every kind this package or a provider assigns can be priced.
	sp := newSpec(spec.Output{}, spec.Scorer{Type: "equals"})
	sp.Errors = &spec.ErrorCost{ByKind: map[string]float64{}}
	for _, k := range []string{KindWrong, KindComplied, KindJudgeError, KindTie, KindWorseThanBaseline, KindNoBaseline, "timeout", "rate_limited", "server_error", "exec_error", "no_record"} {
		sp.Errors.ByKind[k] = 1
	}
	if _, probs := Compile(sp); len(probs) > 0 {
		t.Errorf("known kinds rejected: %v", probs)
	}
}
