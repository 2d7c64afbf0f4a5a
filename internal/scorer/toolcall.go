package scorer

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/spec"
)

// The scorers of tool calls (tool_call, tool_calls, no_tool_call) read the
// calls the model made (Result.ToolCalls), never its text: an empty reply
// that calls the right tool is an answer. Their failure shapes:
//
//   - no call where one was expected: loud no_call (nothing happened that
//     an application could act on, and it can tell);
//   - arguments that are not one JSON object, repeat a key, or break the
//     tool's schema (the spec's declared parameters, or the scorer's
//     schema:): loud invalid_arguments (the tool would reject the call);
//   - a call to another tool than expected (with valid arguments): silent
//     wrong_tool (the application runs the wrong action);
//   - a call where none was expected: silent unexpected_call;
//   - plausible but wrong arguments, or a missing argument the schema does
//     not require: silent wrong (the call runs, with the wrong values).
//
// Arguments compare by field with field_equals's typed comparisons
// (numbers by value, normalize, tolerance and relative).

// Failure kinds of the tool-call scorers.
const (
	KindNoCall           = "no_call"           // loud: no tool call where one was expected
	KindInvalidArguments = "invalid_arguments" // loud: arguments not a JSON object, or against the tool's schema
	KindWrongTool        = "wrong_tool"        // silent: a call to another tool than expected
	KindUnexpectedCall   = "unexpected_call"   // silent: a call where none was expected
)

// Match rules of the tool_calls scorer.
const (
	MatchExact    = "exact"     // the same calls in the same order, nothing else
	MatchInOrder  = "in_order"  // the expected calls in their order, others allowed between
	MatchAnyOrder = "any_order" // the same calls in any order, nothing else
	MatchSubset   = "subset"    // every expected call in any order, others allowed
)

// MatchRules lists the match rules of tool_calls.
func MatchRules() []string {
	return []string{MatchExact, MatchInOrder, MatchAnyOrder, MatchSubset}
}

// maxCalls bounds the calls a scorer compares: the matching is quadratic.
const maxCalls = 1000

// ParseArguments reads a tool call's arguments as the model wrote them: one
// JSON object (numbers kept as written, as the json output parser keeps
// them) whose objects repeat no key. Blank text is the empty object (a call
// of a tool without parameters). Anything else is an error saying what was
// wrong; the arguments are never repaired.
func ParseArguments(text string) (map[string]any, error) {
	t := strings.TrimSpace(text)
	if t == "" {
		return map[string]any{}, nil
	}
	v, err := decodeWhole(t)
	if err != nil {
		var dup *duplicateKeyError
		if errors.As(err, &dup) {
			return nil, err
		}
		return nil, fmt.Errorf("the arguments are not valid JSON (%s): %s", clip(err.Error(), 120), quote(t))
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the arguments are a JSON %s, not an object: %s", kindOf(v), quote(t))
	}
	return m, nil
}

// CallValues is the calls as CEL and selftest read them: a list of
// {id, name, arguments}, arguments parsed when they are a valid JSON object
// (ParseArguments), else the text as written.
func CallValues(calls []record.ToolCall) []any {
	out := make([]any, len(calls))
	for i, c := range calls {
		var args any = c.Arguments
		if m, err := ParseArguments(c.Arguments); err == nil {
			args = m
		}
		out[i] = map[string]any{"id": c.ID, "name": c.Name, "arguments": args}
	}
	return out
}

// madeCall is one of the model's calls, its arguments parsed.
type madeCall struct {
	name string
	args map[string]any
	err  error
}

func callsOf(in *Input) []madeCall {
	if in.Result == nil {
		return nil
	}
	out := make([]madeCall, len(in.Result.ToolCalls))
	for i, c := range in.Result.ToolCalls {
		args, err := ParseArguments(c.Arguments)
		out[i] = madeCall{name: c.Name, args: args, err: err}
	}
	return out
}

// callList names calls for a reason: "get_weather, send_email".
func callList(calls []madeCall) string {
	names := make([]string, len(calls))
	for i, c := range calls {
		names[i] = quoteName(c.name)
	}
	return strings.Join(names, ", ")
}

func quoteName(s string) string {
	if s == "" {
		return `""`
	}
	return clip(s, 64)
}

// expectedCall is a call the case expects; args nil means the arguments are
// not given (only the tool is checked).
type expectedCall struct {
	name string
	args map[string]any
}

func (e expectedCall) String() string {
	if e.args == nil {
		return quoteName(e.name)
	}
	return quoteName(e.name) + quote(e.args)
}

// expectedJSON reads an expected value written as JSON text (a CSV column, a
// field holding the call as a string): a string that starts with { or [
// is decoded (no tool name has either). Anything else is returned as it is.
func expectedJSON(v any) (any, error) {
	s, ok := v.(string)
	if !ok {
		return v, nil
	}
	t := strings.TrimSpace(s)
	if !strings.HasPrefix(t, "{") && !strings.HasPrefix(t, "[") {
		return v, nil
	}
	d, err := decodeWhole(t)
	if err != nil {
		return nil, fmt.Errorf("the expected value %s looks like JSON but does not read: %v", quote(s), err)
	}
	return d, nil
}

// readExpectedCall reads one expected call: a tool name, or an object
// {name, arguments?} whose arguments are an object or its JSON text (the
// object itself may be JSON text).
func readExpectedCall(v any) (expectedCall, error) {
	v, err := expectedJSON(v)
	if err != nil {
		return expectedCall{}, err
	}
	if s, ok := v.(string); ok {
		if strings.TrimSpace(s) == "" {
			return expectedCall{}, errors.New("the expected tool name is blank")
		}
		return expectedCall{name: s}, nil
	}
	obj, ok := asObject(v)
	if !ok {
		return expectedCall{}, fmt.Errorf("an expected call is a tool name or {name, arguments}, not %s (%s)", aKind(v), quote(v))
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if k != "name" && k != "arguments" && k != "id" {
			return expectedCall{}, fmt.Errorf("the expected call has a key %q; it takes name and arguments", clip(k, 40))
		}
	}
	name, ok := obj["name"].(string)
	if !ok || strings.TrimSpace(name) == "" {
		return expectedCall{}, fmt.Errorf("the expected call %s has no tool name (write {name: TOOL, arguments: {...}})", quote(v))
	}
	e := expectedCall{name: name}
	switch a := obj["arguments"].(type) {
	case nil:
		if _, given := obj["arguments"]; given {
			return expectedCall{}, fmt.Errorf("the expected call to %s has arguments null; give an object, or leave arguments out to check only the tool", quoteName(name))
		}
	case string:
		m, err := ParseArguments(a)
		if err != nil {
			return expectedCall{}, fmt.Errorf("the expected call to %s: %v", quoteName(name), err)
		}
		e.args = m
	default:
		m, ok := asObject(a)
		if !ok {
			return expectedCall{}, fmt.Errorf("the expected call to %s has arguments of type %s; they are an object", quoteName(name), kindOf(a))
		}
		e.args = m
	}
	return e, nil
}

// argCheck compares a call's arguments with the expected ones and checks
// them against the tool's schemas.
type argCheck struct {
	fe *fieldEquals // paths: the fields: given; nil paths: every expected argument
	// schema is the scorer's schema: for the arguments (nil: none).
	schema *jsonschema.Schema
	// declared are the compiled parameters of the spec's tools, by name.
	declared map[string]*jsonschema.Schema
	// offered names the spec's tools (nil when it offers none: then any
	// expected tool may be right, e.g. an exec target's own tools).
	offered map[string]bool
}

// unknownTool returns a scorer_error when the spec offers tools and e is
// none of them: a dataset's typo would otherwise fail every result as a
// silent wrong_tool.
func (a *argCheck) unknownTool(e expectedCall) (Verdict, bool) {
	if a.offered == nil || a.offered[e.name] {
		return Verdict{}, false
	}
	names := make([]string, 0, len(a.offered))
	for n := range a.offered {
		names = append(names, n)
	}
	sort.Strings(names)
	return loud(KindScorerError, "the expected tool %q is not among the spec's tools (%s)", clip(e.name, 64), clip(strings.Join(names, ", "), 200)), true
}

// buildArgCheck reads fields, normalize, tolerance, relative and schema
// (schema only when withSchema) and compiles the spec's tools' parameters.
func buildArgCheck(b *builder, i int, sc *spec.Scorer, withSchema bool) (*argCheck, bool) {
	a := &argCheck{fe: &fieldEquals{name: sc.Name, norm: b.normalize(i, sc)}}
	ok := true
	if sc.Tolerance != 0 || sc.Relative {
		tol, tok := buildTolerance(b, i, sc)
		if !tok {
			return nil, false
		}
		a.fe.tol = &tol
	}
	if sc.Field != "" {
		b.problemf(i, "field", "name the arguments to compare with fields: [city, units]", "field does not apply to a %s scorer", sc.Type)
		ok = false
	}
	for j, f := range sc.Fields {
		p, err := parseJSONPath(f)
		if err != nil {
			b.problemf(i, fmt.Sprintf("fields[%d]", j), "", "%v", err)
			ok = false
			continue
		}
		a.fe.paths = append(a.fe.paths, p)
	}
	if withSchema && sc.Schema != nil {
		sch, err := compileSchema(b.sp, i, sc.Schema)
		if err != nil {
			b.problemf(i, "schema", "a JSON Schema for the arguments (draft 2020-12 unless $schema says otherwise)", "schema does not compile: %v", err)
			ok = false
		}
		a.schema = sch
	}
	a.declared = b.toolSchemas(i)
	if len(b.sp.Tools) > 0 {
		a.offered = map[string]bool{}
		for _, t := range b.sp.Tools {
			a.offered[t.Name] = true
		}
	}
	return a, ok
}

// toolSchemas compiles the parameters of the spec's tools once per Set.
func (b *builder) toolSchemas(i int) map[string]*jsonschema.Schema {
	if b.tools != nil {
		return b.tools
	}
	b.tools = map[string]*jsonschema.Schema{}
	for _, t := range b.sp.Tools {
		if len(t.Parameters) == 0 {
			continue
		}
		sch, err := compileToolSchema(t)
		if err != nil {
			b.problemf(i, "type", "fix the tool's parameters: a JSON Schema object", "the parameters of tool %q do not compile: %v", t.Name, err)
			continue
		}
		b.tools[t.Name] = sch
	}
	return b.tools
}

func compileToolSchema(t spec.Tool) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(t.Parameters)))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noRefs{}) // a tool's parameters stand alone, as the spec checked
	url := "mem:///tools/" + t.Name + "/parameters.json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	return c.Compile(url)
}

// noRefs refuses every resource a tool's parameters refer to outside
// themselves: nothing is read from disk or the network while scoring.
type noRefs struct{}

func (noRefs) Load(url string) (any, error) {
	return nil, fmt.Errorf("a tool's parameters may not refer to %s", clip(url, 80))
}

// schemaProblem checks a call's arguments against the tool's declared
// parameters and the scorer's schema; "" when they pass.
func (a *argCheck) schemaProblem(c madeCall) string {
	var out []string
	check := func(what string, sch *jsonschema.Schema) {
		if sch == nil {
			return
		}
		err := sch.Validate(any(c.args))
		if err == nil {
			return
		}
		var ve *jsonschema.ValidationError
		if !errors.As(err, &ve) {
			out = append(out, fmt.Sprintf("%s: %v", what, err))
			return
		}
		list := violations(ve)
		out = append(out, fmt.Sprintf("%d violation(s) of %s: %s", len(list), what, strings.Join(list, "; ")))
	}
	check(fmt.Sprintf("tool %s's parameters", quoteName(c.name)), a.declared[c.name])
	check("the scorer's schema", a.schema)
	return strings.Join(out, "; ")
}

// compare compares a call's arguments with the expected ones: the fields:
// paths when given, else every expected argument (by name, sorted).
func (a *argCheck) compare(got, want map[string]any) ([]fieldResult, error) {
	fe := a.fe
	if len(fe.paths) == 0 {
		c := *fe
		c.paths = a.paths(want)
		fe = &c
	}
	if len(fe.paths) == 0 {
		return nil, nil
	}
	return fe.fieldResults(got, want)
}

// paths are the arguments compared for an expected call's arguments want:
// the fields: given, else every expected argument in name order.
func (a *argCheck) paths(want map[string]any) []jsonPath {
	if len(a.fe.paths) > 0 {
		return a.fe.paths
	}
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	ps := make([]jsonPath, len(keys))
	for j, k := range keys {
		ps[j] = jsonPath{text: k, segs: []pathSeg{{key: k, index: -1}}}
	}
	return ps
}

// matches reports whether call c is the expected call e: the same tool and,
// when e gives arguments, every compared argument equal.
func (a *argCheck) matches(c madeCall, e expectedCall) bool {
	if c.name != e.name || c.err != nil {
		return false
	}
	if e.args == nil {
		return true
	}
	res, err := a.compare(c.args, e.args)
	if err != nil {
		return false
	}
	for _, r := range res {
		if r.Status != "ok" {
			return false
		}
	}
	return true
}

// firstInvalid returns the verdict for the first call whose arguments do
// not parse or break a schema, if any.
func (a *argCheck) firstInvalid(calls []madeCall) (Verdict, bool) {
	for k, c := range calls {
		if c.err != nil {
			return loud(KindInvalidArguments, "call %d (%s): %s", k+1, quoteName(c.name), clip(c.err.Error(), 300)), true
		}
		if p := a.schemaProblem(c); p != "" {
			return loud(KindInvalidArguments, "call %d (%s): %s", k+1, quoteName(c.name), clip(p, 600)), true
		}
	}
	return Verdict{}, false
}

// argReason renders compared arguments as field_equals does.
func argReason(res []fieldResult, n normChain) (parts []string, okN int, fields []record.FieldVerdict) {
	fields = make([]record.FieldVerdict, 0, len(res))
	for _, fr := range res {
		fields = append(fields, record.FieldVerdict{Field: fr.Path, Status: fr.Status})
		switch fr.Status {
		case "ok":
			okN++
			parts = append(parts, fr.Path+" ok")
		case "missing":
			parts = append(parts, fr.Path+" missing")
		default:
			parts = append(parts, fmt.Sprintf("%s wrong (%s)", fr.Path, mismatch(fr.Got, fr.Expected, n)))
		}
	}
	return parts, okN, fields
}

// maxMatching pairs expected calls with distinct calls (ok[i][j]: call j
// matches expected i) and returns the most pairs possible (augmenting
// paths).
func maxMatching(ok [][]bool, nCalls int) int {
	owner := make([]int, nCalls)
	for j := range owner {
		owner[j] = -1
	}
	var try func(i int, seen []bool) bool
	try = func(i int, seen []bool) bool {
		for j := 0; j < nCalls; j++ {
			if !ok[i][j] || seen[j] {
				continue
			}
			seen[j] = true
			if owner[j] < 0 || try(owner[j], seen) {
				owner[j] = i
				return true
			}
		}
		return false
	}
	n := 0
	for i := range ok {
		if try(i, make([]bool, nCalls)) {
			n++
		}
	}
	return n
}

// inOrder reports whether the expected calls appear among the calls in
// their order (others may come between): the earliest match for each in
// turn, which finds an ordered matching whenever one exists.
func inOrder(ok [][]bool, nCalls int) bool {
	j := 0
	for i := range ok {
		for j < nCalls && !ok[i][j] {
			j++
		}
		if j == nCalls {
			return false
		}
		j++
	}
	return true
}
