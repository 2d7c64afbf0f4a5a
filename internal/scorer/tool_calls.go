package scorer

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/spec"
)

// toolCalls compares the model's sequence of calls with the expected one
// (the case's expected value: a list of tool names or {name, arguments};
// [] expects no call). A call matches an expected call when it is to the
// same tool and, when the expected call gives arguments, every compared
// argument is equal (fields: paths when given, else every expected
// argument; typed comparisons as in field_equals).
//
// match: says when it passes —
//
//	exact      the calls are the expected ones, in order, nothing else
//	in_order   the expected calls appear in order; other calls may come between
//	any_order  the calls are the expected ones in any order, nothing else
//	subset     every expected call was made, in any order; others allowed
//
// Whatever the rule, the value is the case's F1 over calls: m is the
// largest number of expected calls paired with distinct matching calls
// (order ignored), precision m/calls made, recall m/calls expected (both
// 1 when nothing was expected and nothing called). The reason gives all
// three. A failure is never valued 1 (the package's rule), so right calls
// in the wrong order fail with value 0 while the reason says F1 1.
//
// Failure shapes: expected calls and none made is a loud no_call; any
// call's arguments invalid (not a JSON object, or against the tool's
// declared parameters) is a loud invalid_arguments; calls where none were
// expected is a silent unexpected_call; a tool expected but never called,
// or (exact, any_order) called but not expected, is a silent wrong_tool;
// otherwise (arguments, order or count) a silent wrong. Every verdict that
// saw the calls carries one per-field verdict, ToolsField: whether the
// tools chosen satisfy the rule, arguments aside (the value stays F1).
type toolCalls struct {
	name  string
	match string
	args  *argCheck
}

func buildToolCalls(b *builder, i int, sc *spec.Scorer) Scorer {
	s := &toolCalls{name: sc.Name, match: sc.Match}
	switch sc.Match {
	case MatchExact, MatchInOrder, MatchAnyOrder, MatchSubset:
	case "":
		b.problemf(i, "match", "match: "+strings.Join(MatchRules(), " | "), "tool_calls scorer needs match:")
		return nil
	default:
		hint := "match is one of " + strings.Join(MatchRules(), ", ")
		if n := nearest(sc.Match, MatchRules()); n != "" {
			hint = fmt.Sprintf("did you mean %s? %s", n, hint)
		}
		b.problemf(i, "match", hint, "unknown match %q", sc.Match)
		return nil
	}
	args, ok := buildArgCheck(b, i, sc, false)
	if !ok {
		return nil
	}
	s.args = args
	return s
}

func (s *toolCalls) Name() string { return s.name }

// expectedCalls reads the case's expected list of calls.
func expectedCalls(exp any) ([]expectedCall, error) {
	exp, err := expectedJSON(exp)
	if err != nil {
		return nil, err
	}
	list, ok := exp.([]any)
	if !ok {
		return nil, fmt.Errorf("the expected value of tool_calls is a list of calls (tool names or {name, arguments}; [] for none), not %s (%s)", aKind(exp), quote(exp))
	}
	out := make([]expectedCall, len(list))
	for i, v := range list {
		e, err := readExpectedCall(v)
		if err != nil {
			return nil, fmt.Errorf("expected call %d: %v", i+1, err)
		}
		out[i] = e
	}
	return out, nil
}

// callsF1 is precision, recall and F1 of m matched calls of made, against
// want expected.
func callsF1(m, made, want int) (p, r, f1 float64) {
	p, r = 1, 1
	if made > 0 {
		p = float64(m) / float64(made)
	} else if want > 0 {
		p = 0
	}
	if want > 0 {
		r = float64(m) / float64(want)
	} else if made > 0 {
		r = 0
	}
	if p+r > 0 {
		f1 = 2 * p * r / (p + r)
	}
	return p, r, f1
}

func (s *toolCalls) Score(_ context.Context, in *Input) Verdict {
	exp, v, ok := expectedValue(in)
	if !ok {
		return v
	}
	want, err := expectedCalls(exp)
	if err != nil {
		return loud(KindScorerError, "%v", err)
	}
	for _, e := range want {
		if v, bad := s.args.unknownTool(e); bad {
			return v
		}
	}
	if len(s.args.fe.paths) > 0 {
		for _, e := range want {
			if e.args == nil {
				return loud(KindScorerError, "fields: names arguments to compare, but the expected call to %s gives no arguments", quoteName(e.name))
			}
		}
	}
	calls := callsOf(in)
	if len(calls) > maxCalls || len(want) > maxCalls {
		return loud(KindScorerError, "%d tool calls against %d expected; a scorer compares at most %d", len(calls), len(want), maxCalls)
	}
	// The tools chosen, arguments aside: the rule over names alone.
	byName := make([][]bool, len(want))
	for i, e := range want {
		byName[i] = make([]bool, len(calls))
		for j, c := range calls {
			byName[i][j] = c.name == e.name
		}
	}
	toolStatus := "wrong"
	switch ok, _ := s.holds(byName, len(calls)); {
	case len(calls) == 0 && len(want) > 0:
		toolStatus = "missing"
	case len(want) == 0 && len(calls) > 0:
		// unexpected calls, whatever the rule
	case ok:
		toolStatus = "ok"
	}
	tools := func(v Verdict) Verdict {
		v.Fields = []record.FieldVerdict{{Field: ToolsField, Status: toolStatus}}
		return v
	}
	if len(calls) == 0 && len(want) > 0 {
		return tools(loud(KindNoCall, "no tool call; expected %d: %s", len(want), expectedList(want)))
	}
	if v, bad := s.args.firstInvalid(calls); bad {
		return tools(v)
	}
	if len(want) == 0 && len(calls) > 0 {
		return tools(Verdict{Shape: ShapeSilent, Kind: KindUnexpectedCall, Reason: "called " + callList(calls) + "; expected no tool call"})
	}
	okm := make([][]bool, len(want))
	for i, e := range want {
		okm[i] = make([]bool, len(calls))
		for j, c := range calls {
			okm[i][j] = s.args.matches(c, e)
		}
	}
	passed, m := s.holds(okm, len(calls))
	p, r, f1 := callsF1(m, len(calls), len(want))
	inAll := fmt.Sprintf("%d calls in all", len(calls))
	if len(calls) == 1 {
		inAll = "1 call in all"
	}
	reason := fmt.Sprintf("match %s: %d of %d expected calls made, %s (precision %s, recall %s, F1 %s)",
		s.match, m, len(want), inAll, ratio(p), ratio(r), ratio(f1))
	if passed {
		v = pass(reason)
		v.Value = f1
		return tools(v)
	}
	var missing []string
	made := make([]bool, len(calls))
	for i, e := range want {
		found := false
		for j := range calls {
			if okm[i][j] && !made[j] {
				made[j], found = true, true
				break
			}
		}
		if !found {
			missing = append(missing, e.String())
		}
	}
	if len(missing) > 0 {
		reason += "; not made: " + clip(strings.Join(missing, ", "), 300)
	}
	reason += "; calls made: " + clip(callList(calls), 300)
	wantNames := make([]string, len(want))
	for i, e := range want {
		wantNames[i] = e.name
	}
	gotNames := make([]string, len(calls))
	for i, c := range calls {
		gotNames[i] = c.name
	}
	kind := KindWrong
	for _, n := range wantNames {
		if !slices.Contains(gotNames, n) {
			kind = KindWrongTool
		}
	}
	if s.match == MatchExact || s.match == MatchAnyOrder {
		for _, n := range gotNames {
			if !slices.Contains(wantNames, n) {
				kind = KindWrongTool
			}
		}
	}
	return tools(Verdict{Shape: ShapeSilent, Kind: kind, Reason: reason, Value: f1})
}

// ToolsField is the name of tool_calls' per-field verdict: the tools
// chosen, by the match rule over names alone (arguments aside): ok, wrong,
// or missing when no call was made. Reports show it as tool-selection
// accuracy beside the scorer's pass rate.
const ToolsField = "(tools)"

// holds applies the match rule to ok (ok[i][j]: call j matches expected
// call i) and returns it with the size of the largest matching.
func (s *toolCalls) holds(ok [][]bool, nCalls int) (bool, int) {
	m := maxMatching(ok, nCalls)
	nWant := len(ok)
	switch s.match {
	case MatchExact:
		passed := m == nWant && nCalls == nWant
		for i := range ok {
			passed = passed && ok[i][i]
		}
		return passed, m
	case MatchInOrder:
		return inOrder(ok, nCalls), m
	case MatchAnyOrder:
		return m == nWant && nCalls == nWant, m
	}
	return m == nWant, m // subset
}

func expectedList(want []expectedCall) string {
	parts := make([]string, len(want))
	for i, e := range want {
		parts[i] = e.String()
	}
	return clip(strings.Join(parts, ", "), 300)
}

// ratio renders a fraction in [0,1] with two decimals.
func ratio(f float64) string { return fmt.Sprintf("%.2f", f) }
