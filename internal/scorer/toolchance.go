package scorer

import (
	"context"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/spec"
)

// CallChance returns, for a scorer of tool calls, what a correct grader of
// it says of calls on a case whose expected value is expected: selftest's
// chance rate for its null models. A correct grader compares the arguments
// as the scorer does (its fields:, normalize and tolerance), but without
// expected arguments no arguments are known to be right, so it passes no
// call then: a tool_call or tool_calls scorer that checks only the tool
// accepts any arguments, and selftest flags it when null arguments pass. It
// returns nil for other scorers, and for a scorer that does not compile.
func CallChance(sc *spec.Scorer) func(calls []record.ToolCall, expected any) bool {
	b := &builder{sp: &spec.Spec{}}
	switch sc.Type {
	case "no_tool_call":
		return func(calls []record.ToolCall, _ any) bool { return len(calls) == 0 }
	case "tool_call":
		s := &toolCall{tool: sc.Tool}
		args, ok := buildArgCheck(b, 0, sc, false)
		if !ok || len(b.probs) > 0 {
			return nil
		}
		s.args = args
		return func(calls []record.ToolCall, expected any) bool {
			in := callInput(calls, expected)
			want, _, ok := s.expected(in)
			if !ok || want.args == nil {
				return false
			}
			return s.Score(context.Background(), in).Pass
		}
	case "tool_calls":
		s := &toolCalls{match: sc.Match}
		args, ok := buildArgCheck(b, 0, sc, false)
		if !ok || len(b.probs) > 0 {
			return nil
		}
		s.args = args
		return func(calls []record.ToolCall, expected any) bool {
			want, err := expectedCalls(expected)
			if err != nil {
				return false
			}
			for _, e := range want {
				if e.args == nil {
					return false
				}
			}
			return s.Score(context.Background(), callInput(calls, expected)).Pass
		}
	}
	return nil
}

func callInput(calls []record.ToolCall, expected any) *Input {
	return &Input{Expected: expected, Case: &dataset.Case{}, Result: &record.Result{ToolCalls: calls}}
}

// ExpectedTools names the tools a scorer of tool calls expects on a case
// whose expected value is expected, in order (the tool: of a tool_call,
// else the expected call's or calls' names); nil when it expects none or
// the expected value does not read.
func ExpectedTools(sc *spec.Scorer, expected any) []string {
	switch sc.Type {
	case "tool_call":
		if sc.Tool != "" {
			return []string{sc.Tool}
		}
		if expected == nil {
			return nil
		}
		e, err := readExpectedCall(expected)
		if err != nil {
			return nil
		}
		return []string{e.name}
	case "tool_calls":
		want, err := expectedCalls(expected)
		if err != nil {
			return nil
		}
		names := make([]string, len(want))
		for i, e := range want {
			names[i] = e.name
		}
		return names
	}
	return nil
}
