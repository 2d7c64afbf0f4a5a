package scorer

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/ext"

	"github.com/assay-eval/assay/internal/celbound"
	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/spec"
)

// Bounds on one CEL evaluation. Model output is hostile: an expression that
// iterates over it must not run away with CPU, memory or time. The cost
// limit also bounds memory: CEL charges string and list operations by the
// size of what they build, and the environment offers no accumulator
// (cel.bind, reduce) through which a value could grow geometrically.
// Replace, join, format and split, whose result can be far larger than their
// inputs, measure it first and refuse one over celbound.MaxString (the
// cost is charged only after a result is built), and the output itself is
// refused over that size before evaluation.
// cel.MemoryLimit is not used: its size calculator saturates on any JSON
// value deeper than 5 levels or larger than 10,000 nodes, which would fail
// ordinary outputs.
const (
	celCostLimit     = 1_000_000 // cel-go cost units (≈ operations)
	celTimeout       = 2 * time.Second
	celInterruptFreq = 100 // comprehension iterations between context checks
	celMaxRange      = 10_000
)

// celScorer passes when its expression evaluates to true. Variables:
//
//	output    the parsed output (string, or a JSON value for format json)
//	raw       the raw text
//	expected  the case's expected value
//	case      the case's fields, plus id and tags (a field of the same name wins)
//	meta      latency_ms, first_token_ms, cost_usd, tokens (input + output),
//	          input_tokens, output_tokens, cached_tokens, finish_reason, model
//	tool_calls the model's tool calls in order: {id, name, arguments},
//	          arguments parsed when they are a JSON object, else the text
//	          (an agent loop's: every turn's calls)
//	trajectory an agent loop's turns in order (empty for a single call):
//	          {text, tool_calls, results [{call_id, name, content, error}],
//	          finish_reason, input_tokens, output_tokens, cost_usd,
//	          latency_ms}
//
// A reply that calls tools is judged even when it has no text or its text
// does not parse: output is then null (the Set's empty and parse gates
// apply only to a reply without calls).
//
// JSON numbers are exact: int when whole and in int64 range, uint beyond
// it up to 2^64, double otherwise, in output, expected and case alike (see
// celValue); comparisons across int, uint and double are by value, and a
// number no CEL type holds exactly fails the expression loudly rather than
// being rounded. Write double(x) to mix them in arithmetic. The
// standard CEL extensions for strings, math, lists and sets are available. The expression must be a bool (or dyn that is a bool at run
// time). Evaluation is bounded by a cost limit and a time-out, and
// lists.range is capped; exceeding a bound, or any evaluation error, is a
// loud scorer_error. False is a silent wrong.
type celScorer struct {
	name       string
	expr       string
	prg        cel.Program
	allowEmpty bool
}

// newCELEnv is the environment scorer expressions compile in.
func newCELEnv() (*cel.Env, error) {
	env, err := cel.NewEnv(
		cel.Variable("output", cel.DynType),
		cel.Variable("raw", cel.StringType),
		cel.Variable("expected", cel.DynType),
		cel.Variable("case", cel.MapType(cel.StringType, cel.DynType)),
		cel.Variable("meta", cel.MapType(cel.StringType, cel.DynType)),
		cel.Variable("tool_calls", cel.ListType(cel.DynType)),
		cel.Variable("trajectory", cel.ListType(cel.DynType)),
		cel.CrossTypeNumericComparisons(true),
		ext.Strings(),
		ext.Math(),
		ext.Lists(ext.ListsMaxRangeSize(celMaxRange)),
		ext.Sets(),
		cel.ParserExpressionSizeLimit(10_000),
	)
	if err != nil {
		return nil, err
	}
	return celbound.Strings(env, celbound.MaxString)
}

// compileCEL compiles and type-checks expr and builds its bounded program.
func compileCEL(expr string) (cel.Program, error) {
	env, err := newCELEnv()
	if err != nil {
		return nil, err
	}
	ast, iss := env.Compile(expr)
	if iss != nil && iss.Err() != nil {
		return nil, errors.New(dataset.CELMessage(iss.Errors()))
	}
	if t := ast.OutputType(); !t.IsExactType(cel.BoolType) && t.Kind() != types.DynKind {
		return nil, fmt.Errorf("the expression gives %s, but a scorer needs a bool (write a comparison, e.g. size(raw) < 200)", t)
	}
	return env.Program(ast,
		cel.CostLimit(celCostLimit),
		cel.InterruptCheckFrequency(celInterruptFreq),
	)
}

func buildCEL(b *builder, i int, sc *spec.Scorer) Scorer {
	if strings.TrimSpace(sc.Expr) == "" {
		b.problemf(i, "expr", `e.g. expr: 'output.team == expected.team'`, "cel scorer needs expr:")
		return nil
	}
	prg, err := compileCEL(sc.Expr)
	if err != nil {
		b.problemf(i, "expr", "variables: output, raw, expected, case, meta, tool_calls, trajectory", "CEL expression does not compile: %v", err)
		return nil
	}
	return &celScorer{name: sc.Name, expr: sc.Expr, prg: prg, allowEmpty: sc.AllowEmpty}
}

func (s *celScorer) Name() string { return s.name }

func (s *celScorer) Score(ctx context.Context, in *Input) Verdict {
	out, v, ok := parsedAnswer(in, s.allowEmpty)
	if !ok {
		if in.Result == nil || len(in.Result.ToolCalls) == 0 {
			return v
		}
		out = nil // the calls are the answer
	}
	if len(in.Raw) > celbound.MaxString {
		return loud(KindScorerError, "the output is %d bytes; a CEL scorer reads at most %d", len(in.Raw), celbound.MaxString)
	}
	if o, isStr := out.(string); isStr && len(o) > celbound.MaxString {
		return loud(KindScorerError, "the parsed output is %d bytes; a CEL scorer reads at most %d", len(o), celbound.MaxString)
	}
	ctx, cancel := context.WithTimeout(ctx, celTimeout)
	defer cancel()
	val, _, err := s.prg.ContextEval(ctx, celVars(in, out))
	if err != nil {
		return loud(KindScorerError, "CEL evaluation failed: %s", clip(err.Error(), 300))
	}
	bv, isBool := val.(types.Bool)
	if !isBool {
		return loud(KindScorerError, "CEL expression returned %s, not a bool", celTypeName(val))
	}
	if bv {
		return pass("expression is true")
	}
	return wrong("expression is false")
}

func celTypeName(v ref.Val) string {
	if v == nil {
		return "nothing"
	}
	return v.Type().TypeName()
}

// celVars builds the activation for one evaluation.
func celVars(in *Input, out any) map[string]any {
	kase := map[string]any{}
	if c := in.Case; c != nil {
		tags := make(map[string]any, len(c.Tags))
		for k, v := range c.Tags {
			tags[k] = v
		}
		kase["id"] = c.ID
		kase["tags"] = tags
		for k, v := range c.Vars {
			kase[k] = celValue(v)
		}
	}
	meta := map[string]any{}
	calls, trajectory := []any{}, []any{}
	if r := in.Result; r != nil {
		calls = celValue(CallValues(r.ToolCalls)).([]any)
		trajectory = celTrajectory(r.Turns)
		meta["latency_ms"] = r.LatencyMS
		meta["first_token_ms"] = r.FirstTokenMS
		meta["cost_usd"] = r.Price() // paid now or served from the cache alike
		meta["tokens"] = int64(r.InputTokens + r.OutputTokens)
		meta["input_tokens"] = int64(r.InputTokens)
		meta["output_tokens"] = int64(r.OutputTokens)
		meta["cached_tokens"] = int64(r.CachedTokens)
		meta["finish_reason"] = r.FinishReason
		meta["model"] = r.Model
	}
	return map[string]any{
		"output":     celValue(out),
		"raw":        in.Raw,
		"expected":   celValue(in.Expected),
		"case":       kase,
		"meta":       meta,
		"tool_calls": calls,
		"trajectory": trajectory,
	}
}

// celTrajectory is an agent loop's turns as CEL reads them: each turn's
// text, calls (as tool_calls reads them), the tool results that answered
// them, and its tokens, price and latency.
func celTrajectory(turns []record.Turn) []any {
	out := make([]any, len(turns))
	for i, t := range turns {
		results := make([]any, len(t.Results))
		for j, res := range t.Results {
			results[j] = map[string]any{"call_id": res.CallID, "name": res.Name, "content": res.Content, "error": res.Error}
		}
		out[i] = map[string]any{
			"text":          t.Text,
			"tool_calls":    celValue(CallValues(t.ToolCalls)),
			"results":       results,
			"finish_reason": t.FinishReason,
			"input_tokens":  int64(t.InputTokens),
			"output_tokens": int64(t.OutputTokens),
			"cost_usd":      t.CostUSD,
			"latency_ms":    t.LatencyMS,
		}
	}
	return out
}

// celValue converts a decoded JSON value to what CEL's default adapter
// takes. A number becomes what holds it exactly: an int when it is a whole
// number in int64 range (12442.0 is the int 12442), else a uint when in
// uint64 range, else a double when the double's shortest form is the
// number itself (1.50 is the double 1.5). A number none of them holds
// (12345678901234567890123, or 0.30000000000000001, which a double would
// round) becomes an error value: an expression that reads it fails loudly
// instead of comparing a rounded number, while the rest of the output stays
// readable.
func celValue(v any) any {
	switch x := v.(type) {
	case nil:
		return types.NullValue
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = celValue(e)
		}
		return out
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[fmt.Sprint(k)] = celValue(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = celValue(e)
		}
		return out
	case string, bool:
		return x
	}
	d, ok := numberOf(v)
	if !ok {
		return v
	}
	if n, ok := d.int64Value(); ok {
		return n
	}
	if n, ok := d.uint64Value(); ok {
		return n
	}
	if f, ok := d.float64Value(); ok {
		return f
	}
	return types.NewErr("the number %s has no exact CEL int, uint or double; compare it with the equals scorer, or as text through raw", clip(d.String(), 40))
}
