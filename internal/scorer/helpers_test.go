package scorer

import (
	"context"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/spec"
)

// newSpec returns a spec with the given output and scorers, and one target
// named "grader" for judge scorers.
func newSpec(out spec.Output, scs ...spec.Scorer) *spec.Spec {
	return &spec.Spec{
		File:    "assay.yaml",
		Dir:     ".",
		Name:    "test",
		Targets: []spec.Target{{Name: "grader", Provider: "openai", Model: "m"}},
		Output:  out,
		Scorers: scs,
	}
}

func mustCompile(t testing.TB, sp *spec.Spec) *Set {
	t.Helper()
	set, probs := Compile(sp)
	if len(probs) > 0 {
		t.Fatalf("Compile: %v", probs)
	}
	return set
}

// call describes one result to score.
type call struct {
	raw      string
	expected any
	tags     map[string]string
	vars     map[string]any
	errKind  string
	finish   string
	latency  float64 // ms
	cost     float64
	saved    float64 // a reply served from the cache: its price, not billed
	calls    []record.ToolCall
}

func (c call) score(t testing.TB, set *Set) []record.Score {
	t.Helper()
	kase := &dataset.Case{ID: "c1", Line: 1, Vars: c.vars, Expected: c.expected, Tags: c.tags}
	r := &record.Result{RunID: "run1", CaseID: "c1", Target: "t", Epoch: 1, Raw: c.raw,
		ErrorKind: c.errKind, FinishReason: c.finish, LatencyMS: c.latency, CostUSD: c.cost,
		SavedUSD: c.saved, FromCache: c.saved > 0, ToolCalls: c.calls}
	if c.errKind != "" {
		r.Error = "provider said no"
	}
	return set.Score(context.Background(), kase, r)
}

// one scores c with a one-scorer set and returns that scorer's score.
func (c call) one(t testing.TB, set *Set) record.Score {
	t.Helper()
	ss := c.score(t, set)
	if len(ss) != 1 {
		t.Fatalf("got %d scores, want 1", len(ss))
	}
	return ss[0]
}

// want is the expected outcome of one score.
type want struct {
	pass  bool
	shape string
	kind  string
}

func (w want) check(t testing.TB, s record.Score) {
	t.Helper()
	if s.Pass != w.pass || s.Shape != w.shape || s.Kind != w.kind {
		t.Errorf("score = pass %v shape %q kind %q (%s); want pass %v shape %q kind %q",
			s.Pass, s.Shape, s.Kind, s.Reason, w.pass, w.shape, w.kind)
	}
	if s.Pass && s.Value != 1 {
		t.Errorf("a pass has value %v, want 1", s.Value)
	}
	if !s.Pass && s.Value >= 1 {
		t.Errorf("a failure has value %v, want < 1", s.Value)
	}
}

var (
	passes = want{true, ShapePass, ""}
	silent = want{false, ShapeSilent, KindWrong}
)

func loudKind(kind string) want { return want{false, ShapeLoud, kind} }

// scoreCase is one row of a per-scorer table test.
type scoreCase struct {
	name      string
	c         call
	w         want
	reasonHas string // substring of the reason, when set
}

// runCases scores each row with a one-scorer set built from out and sc.
func runCases(t *testing.T, out spec.Output, sc spec.Scorer, cases []scoreCase) {
	t.Helper()
	set := mustCompile(t, newSpec(out, sc))
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.c.one(t, set)
			tc.w.check(t, s)
			if tc.reasonHas != "" && !strings.Contains(s.Reason, tc.reasonHas) {
				t.Errorf("reason %q does not contain %q", s.Reason, tc.reasonHas)
			}
		})
	}
}
