package scorer

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/spec"
)

func TestJudgePlaceholderFailsLoudly(t *testing.T) {
	runCases(t, spec.Output{}, spec.Scorer{Type: "judge", Target: "grader", Rubric: "polite?"}, []scoreCase{
		{"never passes", call{raw: "a perfect answer"}, loudKind(KindJudgeError), "judge not implemented"},
	})
}

func TestJudgeOption(t *testing.T) {
	sp := newSpec(spec.Output{}, spec.Scorer{Name: "j", Type: "judge", Target: "grader"})
	set, probs := CompileWith(sp, Options{Judge: func(sp *spec.Spec, i int) (Scorer, error) {
		return liar{Verdict{Pass: true, Value: 1, Shape: ShapePass}}, nil
	}})
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	passes.check(t, call{raw: "x"}.one(t, set))
	// The Set's gates still apply to a judge.
	loudKind(KindEmpty).check(t, call{raw: ""}.one(t, set))

	_, probs = CompileWith(sp, Options{Judge: func(*spec.Spec, int) (Scorer, error) { return nil, errors.New("no rubric") }})
	if len(probs) != 1 || !strings.Contains(probs[0].Msg, "judge scorer: no rubric") {
		t.Fatalf("problems %v", probs)
	}
	_ = context.Background
}
