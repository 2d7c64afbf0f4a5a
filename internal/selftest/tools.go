package selftest

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/scorer"
	"github.com/assay-eval/assay/internal/spec"
)

// Null models of tool calling. They answer with calls (Output.ToolCalls)
// that carry no knowledge of the right arguments: none at all, every
// offered tool at once, the expected tool with {} arguments, or the
// expected tool with the arguments its schema shows as examples. The last
// two are told the expected tool's name on purpose: they attack whether a
// scorer checks the arguments, so a tool_call scorer that accepts any
// arguments is flagged.
const (
	NullNoCall        = "no-call"
	NullEveryTool     = "call-every-tool"
	NullEmptyArgs     = "right-tool-empty-args"
	NullSchemaExample = "schema-example"
)

// noCallText is the no-call model's reply: text, and no call.
const noCallText = "Here is what I found."

// toolBasis is how a tool null model's chance rate is reckoned.
const toolBasis = "on a scorer of tool calls, share of cases whose expected calls these are, arguments included (a case that gives no expected arguments is never right by chance); on other scorers, share of cases whose expected value is this output"

// toolStats is what the tool null models know of the spec: the tools
// offered, their example arguments, and the scorer that names each case's
// expected tools.
type toolStats struct {
	tools []spec.Tool
	// examples are each tool's example arguments as JSON text.
	examples map[string]string
	// namer is the first tool_call or tool_calls scorer: it says which
	// tools a case expects (scorer.ExpectedTools).
	namer *spec.Scorer
	// scorers: the spec has a scorer of tool calls.
	scorers bool
}

func newToolStats(sp *spec.Spec) toolStats {
	ts := toolStats{tools: sp.Tools, examples: map[string]string{}}
	for _, t := range sp.Tools {
		ts.examples[t.Name] = jsonText(schemaExampleArgs(t.Parameters))
	}
	for i := range sp.Scorers {
		sc := &sp.Scorers[i]
		if m, ok := scorer.Meta(sc.Type); ok && m.Reads == scorer.ReadsToolCalls {
			ts.scorers = true
			if ts.namer == nil && (sc.Type == "tool_call" || sc.Type == "tool_calls") {
				ts.namer = sc
			}
		}
	}
	return ts
}

// listed reports whether null model name belongs in the report: every
// null model but the tool ones, which only a spec that offers tools or
// scores tool calls lists (others' reports stay as they were).
func (ts toolStats) listed(name string) bool {
	switch name {
	case NullNoCall, NullEveryTool, NullEmptyArgs, NullSchemaExample:
		return len(ts.tools) > 0 || ts.scorers
	}
	return true
}

func (ts toolStats) applies(name string) (bool, string) {
	switch name {
	case NullNoCall:
		if len(ts.tools) == 0 && !ts.scorers {
			return false, "the spec offers no tools and has no scorer of tool calls"
		}
	case NullEveryTool:
		if len(ts.tools) == 0 {
			return false, "the spec offers no tools"
		}
	case NullEmptyArgs:
		if ts.namer == nil {
			return false, "no tool_call or tool_calls scorer names the expected tools"
		}
	case NullSchemaExample:
		if ts.namer == nil || len(ts.tools) == 0 {
			return false, "it needs the spec's tools and a tool_call or tool_calls scorer naming the expected tools"
		}
	}
	return true, ""
}

// toolOutput answers the calls alone, with no text.
func toolOutput(calls []record.ToolCall) Output {
	return Output{Raw: "", Value: "", ToolCalls: calls}
}

func nullCall(i int, name, args string) record.ToolCall {
	return record.ToolCall{ID: "null_" + strconv.Itoa(i+1), Name: name, Arguments: args}
}

func everyTool(in *nullInput) Output {
	ts := in.st.calls
	calls := make([]record.ToolCall, len(ts.tools))
	for i, t := range ts.tools {
		calls[i] = nullCall(i, t.Name, ts.examples[t.Name])
	}
	return toolOutput(calls)
}

func emptyArgs(in *nullInput) Output {
	return expectedCalls(in, func(string) string { return "{}" })
}

func schemaExample(in *nullInput) Output {
	return expectedCalls(in, func(name string) string {
		if args, ok := in.st.calls.examples[name]; ok {
			return args
		}
		return "{}"
	})
}

// expectedCalls calls the case's expected tools, each with args(name).
func expectedCalls(in *nullInput, args func(name string) string) Output {
	names := scorer.ExpectedTools(in.st.calls.namer, in.c.Expected)
	calls := make([]record.ToolCall, len(names))
	for i, n := range names {
		calls[i] = nullCall(i, n, args(n))
	}
	return toolOutput(calls)
}

// schemaExampleArgs builds the arguments a tool's parameters schema shows:
// for each property its first example, else its default, const or first
// enum value, else a placeholder of its type ("example", 1, true, nested
// objects and one-item arrays built the same way). Not an object: {}.
func schemaExampleArgs(params json.RawMessage) map[string]any {
	var sch any
	if json.Unmarshal(params, &sch) != nil {
		return map[string]any{}
	}
	if m, ok := exampleOf(sch, 0).(map[string]any); ok {
		return m
	}
	return map[string]any{}
}

// maxExampleDepth bounds the nesting exampleOf follows.
const maxExampleDepth = 8

func exampleOf(s any, depth int) any {
	m, ok := s.(map[string]any)
	if !ok || depth > maxExampleDepth {
		return nil
	}
	if ex, ok := m["examples"].([]any); ok && len(ex) > 0 {
		return ex[0]
	}
	for _, k := range []string{"example", "default", "const"} {
		if v, ok := m[k]; ok {
			return v
		}
	}
	if e, ok := m["enum"].([]any); ok && len(e) > 0 {
		return e[0]
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf"} {
		if alts, ok := m[k].([]any); ok && len(alts) > 0 {
			return exampleOf(alts[0], depth+1)
		}
	}
	typ, _ := m["type"].(string)
	if list, ok := m["type"].([]any); ok {
		for _, t := range list {
			if s, ok := t.(string); ok && s != "null" {
				typ = s
				break
			}
		}
	}
	props, hasProps := m["properties"].(map[string]any)
	switch {
	case typ == "object" || typ == "" && hasProps:
		out := map[string]any{}
		keys := make([]string, 0, len(props))
		for k := range props {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			out[k] = exampleOf(props[k], depth+1)
		}
		return out
	case typ == "array":
		if items, ok := m["items"]; ok {
			return []any{exampleOf(items, depth+1)}
		}
		return []any{}
	case typ == "string":
		return "example"
	case typ == "integer", typ == "number":
		return 1
	case typ == "boolean":
		return true
	}
	return nil
}

// ownChance reports whether the scorer's chance rate is its own (a field
// scorer's projection, or a scorer of tool calls' correct grader) rather
// than the null model's over whole answers.
func (si *scorerInfo) ownChance() bool { return si.project != nil || si.callChance != nil }

// withCalls shows an output with its tool calls, for an example: the text,
// then the calls as name(arguments).
func withCalls(raw string, calls []record.ToolCall) string {
	if len(calls) == 0 {
		return raw
	}
	parts := make([]string, len(calls))
	for i, c := range calls {
		parts[i] = c.String()
	}
	out := "tool calls: " + strings.Join(parts, ", ")
	if raw != "" {
		out = raw + "\n" + out
	}
	return out
}
