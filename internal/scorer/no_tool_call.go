package scorer

import (
	"context"

	"github.com/assay-eval/assay/internal/spec"
)

// noToolCall passes when the model called no tool. A call is a silent
// unexpected_call (the application acts when it should not). It judges the
// calls only; a reply with neither text nor a call is a loud empty unless
// allow_empty.
type noToolCall struct {
	name       string
	allowEmpty bool
}

func buildNoToolCall(_ *builder, _ int, sc *spec.Scorer) Scorer {
	return &noToolCall{name: sc.Name, allowEmpty: sc.AllowEmpty}
}

func (s *noToolCall) Name() string { return s.name }

func (s *noToolCall) Score(_ context.Context, in *Input) Verdict {
	calls := callsOf(in)
	if len(calls) > 0 {
		return Verdict{Shape: ShapeSilent, Kind: KindUnexpectedCall, Reason: "called " + callList(calls) + "; expected no tool call"}
	}
	if !s.allowEmpty && isEmptyRaw(in.Raw) {
		return loud(KindEmpty, "the output is empty and calls no tool")
	}
	return pass("no tool call")
}
