package scorer

import (
	"context"
	"fmt"
	"strings"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/spec"
)

// toolCall passes when the model called the expected tool, with the
// expected arguments, and no other tool (see toolcall.go for the failure
// shapes).
//
// The expected call: with tool: set, that tool, and the case's expected
// value (when there is one) is the arguments object; without it, the
// expected value is the tool's name, or {name, arguments} (arguments an
// object or its JSON text). Without expected arguments only the tool is
// checked (and the arguments against the schemas), which selftest flags: a
// scorer that accepts any arguments passes the null models' `{}` and
// schema examples.
//
// Arguments compare by field as in field_equals: the fields: paths when
// given, else every expected argument. Every verdict that saw the calls
// carries per-field outcomes (Verdict.Fields): first ToolField, the tool
// chosen, then, once the right tool was called with valid arguments, each
// compared argument (ok | wrong | missing), so reports show tool-selection
// accuracy and argument accuracy per field. The value is the fraction of
// those fields that are ok. A missing argument is silent (the call is valid
// unless the tool's schema requires it, and then the schema check fails it
// loud first). When the model called the tool more than once, the call
// with the most matching arguments is judged.
type toolCall struct {
	name string
	tool string
	args *argCheck
}

func buildToolCall(b *builder, i int, sc *spec.Scorer) Scorer {
	s := &toolCall{name: sc.Name, tool: sc.Tool}
	if sc.Tool != "" && len(b.sp.Tools) > 0 && !b.offersTool(sc.Tool) {
		b.problemf(i, "tool", "tools offered: "+strings.Join(b.toolNames(), ", "), "tool %q is not among the spec's tools", sc.Tool)
		return nil
	}
	args, ok := buildArgCheck(b, i, sc, true)
	if !ok {
		return nil
	}
	s.args = args
	return s
}

func (b *builder) offersTool(name string) bool {
	for _, t := range b.sp.Tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

func (b *builder) toolNames() []string {
	names := make([]string, len(b.sp.Tools))
	for i, t := range b.sp.Tools {
		names[i] = t.Name
	}
	return names
}

func (s *toolCall) Name() string { return s.name }

// expected reads the expected call of one case.
func (s *toolCall) expected(in *Input) (expectedCall, Verdict, bool) {
	if s.tool != "" {
		e := expectedCall{name: s.tool}
		if in.Expected != nil {
			exp, err := expectedJSON(in.Expected)
			if err != nil {
				return e, loud(KindScorerError, "%v", err), false
			}
			m, ok := asObject(exp)
			if !ok {
				return e, loud(KindScorerError, "with tool: set, the expected value is the call's arguments (an object), not %s (%s)", aKind(in.Expected), quote(in.Expected)), false
			}
			e.args = m
		}
		return e, Verdict{}, true
	}
	exp, v, ok := expectedValue(in)
	if !ok {
		return expectedCall{}, v, false
	}
	// A list of one call is that call, so tool_call and tool_calls can
	// share one expected field.
	if l, err := expectedJSON(exp); err == nil {
		if calls, isList := l.([]any); isList {
			if len(calls) != 1 {
				return expectedCall{}, loud(KindScorerError, "tool_call compares one call, and the expected value lists %d (use tool_calls for a sequence)", len(calls)), false
			}
			exp = calls[0]
		}
	}
	e, err := readExpectedCall(exp)
	if err != nil {
		return e, loud(KindScorerError, "%v", err), false
	}
	return e, Verdict{}, true
}

// ToolField is the name of tool_call's first per-field verdict, the tool
// chosen: ok when the model called the expected tool and no other, wrong
// when it called another, missing when it called none. Reports show it
// beside the arguments as tool-selection accuracy. (An argument cannot be
// confused with it: it is no JSON path a scorer reads.)
const ToolField = "(tool)"

func (s *toolCall) Score(_ context.Context, in *Input) Verdict {
	want, v, ok := s.expected(in)
	if !ok {
		return v
	}
	if len(s.args.fe.paths) > 0 && want.args == nil {
		return loud(KindScorerError, "fields: names arguments to compare, but the expected value gives no arguments for %s", quoteName(want.name))
	}
	if v, bad := s.args.unknownTool(want); bad {
		return v
	}
	// tool sets the fields of a verdict that compared no argument: the
	// tool chosen, then every argument the case expects as unscored, so
	// that an argument's rate counts this result against it (and only
	// the arguments this case expects).
	tool := func(status string, v Verdict) Verdict {
		v.Fields = []record.FieldVerdict{{Field: ToolField, Status: status}}
		if want.args != nil {
			for _, p := range s.args.paths(want.args) {
				v.Fields = append(v.Fields, record.FieldVerdict{Field: p.String(), Status: "unscored"})
			}
		}
		return v
	}
	calls := callsOf(in)
	if len(calls) == 0 {
		return tool("missing", loud(KindNoCall, "no tool call; expected a call to %s", quoteName(want.name)))
	}
	if len(calls) > maxCalls {
		return loud(KindScorerError, "%d tool calls; a scorer compares at most %d", len(calls), maxCalls)
	}
	var mine, others []madeCall
	for _, c := range calls {
		if c.name == want.name {
			mine = append(mine, c)
		} else {
			others = append(others, c)
		}
	}
	status := "ok"
	if len(mine) == 0 || len(others) > 0 {
		status = "wrong"
	}
	if v, bad := s.args.firstInvalid(calls); bad {
		return tool(status, v)
	}
	if len(mine) == 0 {
		return tool(status, Verdict{Shape: ShapeSilent, Kind: KindWrongTool, Reason: fmt.Sprintf("called %s; expected %s", callList(others), quoteName(want.name))})
	}
	if len(others) > 0 {
		return tool(status, Verdict{Shape: ShapeSilent, Kind: KindWrongTool, Reason: fmt.Sprintf("called %s as expected, and also %s", quoteName(want.name), callList(others))})
	}
	note := ""
	if len(mine) > 1 {
		note = fmt.Sprintf(" (called %d times; the best call judged)", len(mine))
	}
	if want.args == nil {
		return tool(status, pass("called "+quoteName(want.name)+note+"; arguments not compared (the expected value gives none)"))
	}
	var best []fieldResult
	bestOK := -1
	for _, c := range mine {
		res, err := s.args.compare(c.args, want.args)
		if err != nil {
			return loud(KindScorerError, "%v", err)
		}
		n := 0
		for _, r := range res {
			if r.Status == "ok" {
				n++
			}
		}
		if n > bestOK {
			best, bestOK = res, n
		}
	}
	if len(best) == 0 {
		return tool(status, pass("called "+quoteName(want.name)+note+" (no arguments expected)"))
	}
	parts, okN, fields := argReason(best, s.args.fe.norm)
	reason := "called " + quoteName(want.name) + note + "; " + strings.Join(parts, "; ")
	if okN == len(best) {
		v = pass(reason)
	} else {
		v = wrong("%s", reason)
		v.Value = float64(okN+1) / float64(len(best)+1)
	}
	v.Fields = append([]record.FieldVerdict{{Field: ToolField, Status: status}}, fields...)
	return v
}
