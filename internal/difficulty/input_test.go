package difficulty

import (
	"math"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/runview"
)

// TestCompareBadInput: every refusal says what is wrong and what would do.
func TestCompareBadInput(t *testing.T) {
	ok := func() *Set {
		return &Set{Name: "ok", Cases: []string{"a", "b"}, Values: []float64{1, 2}}
	}
	nan := math.NaN()
	cases := []struct {
		name        string
		bench, work *Set
		o           MismatchOptions
		want        string
	}{
		{"nil", nil, ok(), MismatchOptions{}, "mismatch needs a benchmark and a workload"},
		{"empty benchmark", &Set{Name: "e"}, ok(), MismatchOptions{}, "the benchmark e has no cases"},
		{"empty workload", ok(), &Set{Name: "w"}, MismatchOptions{}, "the workload w has no cases"},
		{"NaN-only difficulties", &Set{Name: "n", Cases: []string{"a", "b"}, Values: []float64{nan, nan}, Scale: Scale{Tag: "tier"}}, ok(),
			MismatchOptions{}, `the benchmark n: none of its 2 cases has a difficulty (tag "tier")`},
		{"both sides at once", &Set{Name: "e"}, &Set{Name: "w"}, MismatchOptions{}, "the benchmark e has no cases\nthe workload w has no cases"},
		{"values short", &Set{Name: "s", Cases: []string{"a", "b"}, Values: []float64{1}}, ok(), MismatchOptions{}, "the benchmark s: 2 cases but 1 difficulties"},
		{"infinite", &Set{Name: "i", Cases: []string{"a"}, Values: []float64{math.Inf(1)}}, ok(), MismatchOptions{}, `the benchmark i: case "a" has an infinite difficulty`},
		{"negative weight", ok(), &Set{Name: "w", Cases: []string{"a"}, Values: []float64{1}, Weights: []float64{-1}}, MismatchOptions{},
			`the workload w: case "a" has weight -1; weights are finite and not negative`},
		{"zero weights", ok(), &Set{Name: "w", Cases: []string{"a"}, Values: []float64{1}, Weights: []float64{0}}, MismatchOptions{},
			"the workload w: the weights of its cases with a difficulty sum to 0"},
		{"results short", &Set{Name: "r", Cases: []string{"a", "b"}, Values: []float64{1, 2},
			Targets: []TargetResults{{Name: "x", Right: []int32{1}, Trials: []int32{1}}}}, ok(), MismatchOptions{},
			`the benchmark r: target "x" has results for 1 cases of 2`},
		{"right above trials", &Set{Name: "r", Cases: []string{"a"}, Values: []float64{1},
			Targets: []TargetResults{{Name: "x", Right: []int32{2}, Trials: []int32{1}}}}, ok(), MismatchOptions{},
			`the benchmark r: target "x" has 2 right of 1 trials on case "a"`},
		{"alpha", ok(), ok(), MismatchOptions{Alpha: 1.5}, "alpha 1.5: must be strictly between 0 and 1 (0.05 for 95% intervals)"},
		{"bins", ok(), ok(), MismatchOptions{Bins: -2}, "bins -2: must be at least 1"},
		{"one edge", ok(), ok(), MismatchOptions{Edges: []float64{1}}, "edges: 1 given, need at least 2 (the bins lie between them)"},
		{"edges down", ok(), ok(), MismatchOptions{Edges: []float64{0, 2, 1}}, "edges must increase: 1 follows 2"},
		{"outside the edges", ok(), ok(), MismatchOptions{Edges: []float64{5, 6}}, "no case of the benchmark or of the workload falls inside the edges"},
		{"levels differ", &Set{Name: "b", Cases: []string{"a"}, Values: []float64{0}, Scale: Scale{Source: SourceTag, Tag: "t", Levels: []string{"easy", "hard"}}},
			&Set{Name: "w", Cases: []string{"a"}, Values: []float64{0}, Scale: Scale{Source: SourceTag, Tag: "t", Levels: []string{"hard", "easy"}}},
			MismatchOptions{}, "the benchmark's levels easy,hard and the workload's hard,easy differ: one axis needs one order"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := Compare(c.bench, c.work, c.o)
			if err == nil || err.Error() != c.want {
				t.Fatalf("got %v, %v; want the error %q", m, err, c.want)
			}
		})
	}
}

func TestTagValues(t *testing.T) {
	ids := []string{"a", "b", "c", "d"}
	got, err := TagValues("steps", ids, []string{"3", " 1.5", "", "7"}, []bool{true, true, true, false}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got[0] != 3 || got[1] != 1.5 || !math.IsNaN(got[2]) || !math.IsNaN(got[3]) {
		t.Errorf("numeric: %v, want 3 1.5 NaN NaN (empty and absent are unknown)", got)
	}
	got, err = TagValues("level", ids, []string{"hard", "easy", "medium", ""}, nil, []string{"easy", "medium", "hard"})
	if err != nil {
		t.Fatal(err)
	}
	if got[0] != 2 || got[1] != 0 || got[2] != 1 || !math.IsNaN(got[3]) {
		t.Errorf("levels: %v, want 2 0 1 NaN", got)
	}
	for _, c := range []struct {
		values, levels []string
		want           string
	}{
		{[]string{"hard", "1", "x", "NaN"}, nil, `tag "t": 3 cases have a value that is not a number: case "a" has "hard"; case "c" has "x"; case "d" has "NaN" ` +
			"(give the order of non-numeric values with difficulty.levels in the spec or --levels, easiest first)"},
		{[]string{"hard", "easy", "odd", "1"}, []string{"easy", "hard"}, `tag "t": 2 cases have a value outside the levels "easy", "hard": case "c" has "odd"; case "d" has "1"`},
		{[]string{"hard", "easy", "odd", "easy"}, []string{"easy", "hard"}, `tag "t": 1 case has a value outside the levels "easy", "hard": case "c" has "odd"`},
		{[]string{"a", "b", "c", "d"}, []string{"a", "a"}, `difficulty levels: "a" is listed twice (levels are distinct, easiest first)`},
	} {
		if _, err := TagValues("t", ids, c.values, nil, c.levels); err == nil || err.Error() != c.want {
			t.Errorf("%v with levels %v: %v, want %q", c.values, c.levels, err, c.want)
		}
	}
}

// view builds a run view of 3 cases × 2 epochs and two targets.
func view() *runview.View {
	v := &runview.View{Run: runview.RunInfo{ID: "run-1"}, Source: "run-1", Scorers: []string{"correct", "style"}, Primary: "correct", Epochs: 2}
	v.AddCase("c1", map[string]string{"level": "hard"})
	v.AddCase("c2", map[string]string{"level": "easy"})
	v.AddCase("c3", nil)
	// x: c1 1,1; c2 1,0; c3 not scored, failed call.
	x := runview.NewTarget("x", v.Scorers, 6)
	// y: c1 0, missing; c2 1 scored by the other scorer only; c3 0,0.
	y := runview.NewTarget("y", v.Scorers, 6)
	set := func(t *runview.Target, j int, pass int8, errored bool) {
		t.LatencyMS[j] = 10
		t.Pass["correct"][j] = pass
		t.Errored[j] = errored
	}
	set(x, 0, 1, false)
	set(x, 1, 1, false)
	set(x, 2, 1, false)
	set(x, 3, 0, false)
	set(x, 4, -1, false)
	set(x, 5, 0, true)
	set(y, 0, 0, false)
	set(y, 2, -1, false)
	y.Pass["style"][2] = 1
	set(y, 4, 0, false)
	set(y, 5, 0, false)
	v.Targets = []*runview.Target{x, y}
	return v
}

// TestFromView: right and trials over the primary scorer's epochs; a
// result not scored, missing or whose call failed is no trial.
func TestFromView(t *testing.T) {
	s, err := FromView(view(), Scale{Source: SourceTag, Tag: "level", Levels: []string{"easy", "hard"}})
	if err != nil {
		t.Fatal(err)
	}
	if s.Kind != KindRun || s.Name != "run-1" || strings.Join(s.Cases, ",") != "c1,c2,c3" {
		t.Errorf("set %s (%s) cases %v", s.Name, s.Kind, s.Cases)
	}
	if s.Values[0] != 1 || s.Values[1] != 0 || !math.IsNaN(s.Values[2]) || s.Unknown() != 1 {
		t.Errorf("values %v, want 1 0 NaN", s.Values)
	}
	want := map[string][2][]int32{
		"x": {{2, 1, 0}, {2, 2, 0}},
		"y": {{0, 0, 0}, {1, 0, 2}},
	}
	for _, tr := range s.Targets {
		w := want[tr.Name]
		for i := range 3 {
			if tr.Right[i] != w[0][i] || tr.Trials[i] != w[1][i] {
				t.Errorf("%s case %d: %d/%d, want %d/%d", tr.Name, i, tr.Right[i], tr.Trials[i], w[0][i], w[1][i])
			}
		}
	}
	// Fitted: no values from the tag, but its values kept for the tiers.
	s, err = FromView(view(), Scale{Source: SourceFitted, Tag: "level"})
	if err != nil {
		t.Fatal(err)
	}
	if !allNaN(s.Values) || s.Tags[0] != "hard" || s.Tags[2] != "" {
		t.Errorf("fitted: values %v tags %q", s.Values, s.Tags)
	}
	v := view()
	v.Source = "base.json"
	if s, _ := FromView(v, Scale{Source: SourceFitted}); s.Kind != KindBaseline || s.Name != "base.json" {
		t.Errorf("a baseline file's view: %s %s", s.Kind, s.Name)
	}
	for _, c := range []struct {
		sc   Scale
		want string
	}{
		{Scale{Source: SourceTag, Tag: "steps"}, `run-1: no case has the tag "steps" (its tags are "level")`},
		{Scale{Source: SourceTag, Tag: "level"}, `run-1: tag "level": 2 cases have a value that is not a number: case "c1" has "hard"; case "c2" has "easy" ` +
			"(give the order of non-numeric values with difficulty.levels in the spec or --levels, easiest first)"},
		{Scale{Source: SourceTag}, "a difficulty from a tag needs the tag's name"},
	} {
		if _, err := FromView(view(), c.sc); err == nil || err.Error() != c.want {
			t.Errorf("%+v: %v, want %q", c.sc, err, c.want)
		}
	}
	if _, err := FromView(&runview.View{Run: runview.RunInfo{ID: "r"}}, Scale{}); err == nil || err.Error() != "r has no cases" {
		t.Errorf("no cases: %v", err)
	}
}

func TestFromTags(t *testing.T) {
	s, err := FromTags("work.jsonl", KindDataset, []string{"a", "b", "c"}, []string{"2", "", "5"}, nil, Scale{Tag: "steps"})
	if err != nil {
		t.Fatal(err)
	}
	if s.Scale.Source != SourceTag || s.Values[0] != 2 || !math.IsNaN(s.Values[1]) || s.Values[2] != 5 || len(s.Targets) != 0 {
		t.Errorf("set %+v", s)
	}
	for _, c := range []struct {
		ids, values []string
		want        string
	}{
		{nil, nil, "work.jsonl has no cases"},
		{[]string{"a"}, []string{"", ""}, "work.jsonl: 1 case IDs but 2 tag values"},
		{[]string{"a", "b"}, []string{"", " "}, `work.jsonl: no case has a value of the tag "steps"`},
	} {
		if _, err := FromTags("work.jsonl", KindDataset, c.ids, c.values, nil, Scale{Tag: "steps"}); err == nil || err.Error() != c.want {
			t.Errorf("%v: %v, want %q", c.values, err, c.want)
		}
	}
}

// TestFromStoreView: a view as the store's Builder makes it — named by the
// run's ID, kind "run" — with the cases' weights as the set's mix (a case
// without one weighs 1).
func TestFromStoreView(t *testing.T) {
	b := runview.NewBuilder(&record.Run{ID: "r-7", Epochs: 1, Targets: []string{"x"}}, 1, runview.Options{})
	w := 2.5
	b.AddCase(&record.Case{ID: "a", Tags: map[string]string{"steps": "2"}, Weight: &w})
	b.AddCase(&record.Case{ID: "b", Tags: map[string]string{"steps": "5"}})
	for _, id := range []string{"a", "b"} {
		b.AddResult(&record.Result{CaseID: id, Target: "x", Epoch: 1, LatencyMS: 5})
		b.AddScore(&record.Score{CaseID: id, Target: "x", Epoch: 1, Scorer: "ok", Primary: true, Pass: id == "a"})
	}
	s, err := FromView(b.View(), Scale{Source: SourceTag, Tag: "steps"})
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "r-7" || s.Kind != KindRun {
		t.Errorf("name %q kind %q, want r-7 run", s.Name, s.Kind)
	}
	if len(s.Weights) != 2 || s.Weights[0] != 2.5 || s.Weights[1] != 1 {
		t.Errorf("weights %v, want 2.5 1", s.Weights)
	}
	if s.Values[0] != 2 || s.Values[1] != 5 {
		t.Errorf("values %v", s.Values)
	}
	if tr := s.Targets[0]; tr.Right[0] != 1 || tr.Trials[0] != 1 || tr.Right[1] != 0 || tr.Trials[1] != 1 {
		t.Errorf("results %+v", tr)
	}
}
