package scorer

import (
	"context"
	"testing"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/spec"
)

// CEL reads an agent loop's trajectory turn by turn: each turn's text,
// calls (arguments parsed), the tool results that answered them and its
// numbers; tool_calls holds every turn's calls. A single call's result has
// an empty trajectory.
func TestCELTrajectory(t *testing.T) {
	r := &record.Result{CaseID: "c", Raw: `{"done": true}`,
		ToolCalls: []record.ToolCall{{ID: "c1", Name: "lookup", Arguments: `{"id": 42}`}, {ID: "c2", Name: "refund", Arguments: `{"id": 42, "amount": 9.5}`}},
		Turns: []record.Turn{
			{ToolCalls: []record.ToolCall{{ID: "c1", Name: "lookup", Arguments: `{"id": 42}`}},
				Results:     []record.ToolResult{{CallID: "c1", Name: "lookup", Content: "shipped"}},
				InputTokens: 100, OutputTokens: 7, CostUSD: 0.25, LatencyMS: 20, FinishReason: "tool_calls"},
			{Text: "refunding", ToolCalls: []record.ToolCall{{ID: "c2", Name: "refund", Arguments: `{"id": 42, "amount": 9.5}`}},
				Results:     []record.ToolResult{{CallID: "c2", Name: "refund", Content: "", Error: "tool_timeout: killed after 2s"}},
				InputTokens: 150, OutputTokens: 9, CostUSD: 0.5, LatencyMS: 30},
			{Text: `{"done": true}`, InputTokens: 200, OutputTokens: 3, FinishReason: "stop"},
		}}
	for _, expr := range []string{
		`size(trajectory) == 3 && size(tool_calls) == 2`,
		`trajectory[0].tool_calls[0].name == "lookup" && trajectory[0].tool_calls[0].arguments.id == 42`,
		`trajectory[0].results[0].content == "shipped" && trajectory[0].results[0].call_id == "c1" && trajectory[0].results[0].error == ""`,
		`trajectory[1].text == "refunding" && trajectory[1].tool_calls[0].arguments.amount == 9.5 && trajectory[1].results[0].error.startsWith("tool_timeout")`,
		`trajectory[0].input_tokens + trajectory[1].input_tokens + trajectory[2].input_tokens == 450`,
		`trajectory[0].cost_usd + trajectory[1].cost_usd == 0.75 && trajectory[1].latency_ms == 30.0 && trajectory[2].finish_reason == "stop"`,
		`trajectory.all(t, size(t.tool_calls) <= 1) && trajectory.exists(t, t.tool_calls.exists(c, c.name == "refund"))`,
		`size(trajectory[2].results) == 0 && output.done`,
	} {
		set := mustCompile(t, newSpec(spec.Output{Format: "json"}, spec.Scorer{Type: "cel", Expr: expr}))
		if s := set.Score(context.Background(), &dataset.Case{ID: "c"}, r)[0]; !s.Pass {
			t.Errorf("%s: %v %s %s", expr, s.Pass, s.Kind, s.Reason)
		}
	}
	set := mustCompile(t, newSpec(spec.Output{Format: "text"}, spec.Scorer{Type: "cel", Expr: `size(trajectory) == 0`}))
	if s := set.Score(context.Background(), &dataset.Case{ID: "c"}, &record.Result{CaseID: "c", Raw: "hi"})[0]; !s.Pass {
		t.Errorf("a single call's trajectory is empty: %s %s", s.Kind, s.Reason)
	}
}
