package prompt

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/assay-eval/assay/internal/provider"
)

// HistoryError says what is wrong with a case's message history: Field is
// the dataset field, Index the 0-based message (-1 for the history as a
// whole).
type HistoryError struct {
	Field string
	Index int
	Msg   string
	Hint  string
}

func (e *HistoryError) Error() string {
	if e.Index < 0 {
		return fmt.Sprintf("message history %q: %s", e.Field, e.Msg)
	}
	return fmt.Sprintf("message history %q: message %d: %s", e.Field, e.Index+1, e.Msg)
}

// historyShape is the hint for a history that is not one.
const historyShape = `a JSON list of {"role": "user", "content": "…"}; an assistant message may carry "tool_calls": [{"id": "c1", "name": "f", "arguments": {…}}], a "tool" message answers one with "tool_call_id": "c1"`

// historyKeys are the keys a history message may have.
var historyKeys = []string{"role", "content", "tool_calls", "tool_call_id"}

// maxHistory bounds the messages of one history.
const maxHistory = 10000

// ParseHistory reads a case's message history from the value of field: a
// list (as a JSONL row holds it) or its JSON text (as a CSV cell does) of
// {role, content, tool_calls?, tool_call_id?}. Roles are system, user,
// assistant and tool; content is text (it may be missing or null on an
// assistant message that makes tool calls); tool_calls, on an assistant
// message only, are {id, name, arguments} (OpenAI's {id, type: function,
// function: {name, arguments}} too), arguments a JSON string kept as
// written or a JSON value kept as its compact text; tool_call_id, on a tool
// message only and required there, names the call it answers. The
// messages are data: nothing in them is rendered. Errors are
// *HistoryError.
func ParseHistory(field string, v any) ([]provider.Message, error) {
	fail := func(i int, hint, format string, args ...any) error {
		return &HistoryError{Field: field, Index: i, Msg: fmt.Sprintf(format, args...), Hint: hint}
	}
	if s, ok := v.(string); ok {
		t := strings.TrimSpace(s)
		if t == "" {
			return nil, nil // an empty cell: no history
		}
		if t[0] != '[' && t[0] != '{' {
			return nil, fail(-1, historyShape, "must be a list of messages (or its JSON text), got the string %s", quote(s))
		}
		d := json.NewDecoder(strings.NewReader(s))
		d.UseNumber()
		var parsed any
		if err := d.Decode(&parsed); err != nil {
			return nil, fail(-1, historyShape, "the text is not JSON: %v", err)
		}
		if d.More() {
			return nil, fail(-1, historyShape, "the text holds more than one JSON value")
		}
		v = parsed
	}
	if v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, fail(-1, historyShape, "must be a list of messages, got %s", kindOf(v))
	}
	if len(list) > maxHistory {
		return nil, fail(-1, "", "holds %d messages; at most %d are read", len(list), maxHistory)
	}
	out := make([]provider.Message, 0, len(list))
	for i, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			return nil, fail(i, historyShape, "must be an object {role, content}, got %s", kindOf(item))
		}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if !slices.Contains(historyKeys, k) {
				return nil, fail(i, "valid keys are: "+strings.Join(historyKeys, ", "), "unknown key %q", k)
			}
		}
		var msg provider.Message
		role, ok := m["role"].(string)
		switch {
		case m["role"] == nil:
			return nil, fail(i, "roles are system, user, assistant, tool", "has no role")
		case !ok:
			return nil, fail(i, "roles are system, user, assistant, tool", "role must be a string, got %s", kindOf(m["role"]))
		case role != "system" && role != "user" && role != "assistant" && role != "tool":
			return nil, fail(i, "roles are system, user, assistant, tool", "unknown role %s", quote(role))
		}
		msg.Role = role
		calls, hasCalls := m["tool_calls"]
		if hasCalls && calls != nil {
			if role != "assistant" {
				return nil, fail(i, "only an assistant message makes tool calls", "a %s message cannot carry tool_calls", role)
			}
			tc, err := historyCalls(calls)
			if err != "" {
				return nil, fail(i, historyShape, "tool_calls: %s", err)
			}
			msg.ToolCalls = tc
		}
		switch c := m["content"].(type) {
		case string:
			msg.Content = c
		case nil:
			if len(msg.ToolCalls) == 0 {
				return nil, fail(i, historyShape, "has no content (only an assistant message making tool calls may omit it)")
			}
		default:
			return nil, fail(i, historyShape, "content must be text, got %s", kindOf(c))
		}
		id, hasID := m["tool_call_id"]
		switch {
		case hasID && role != "tool":
			return nil, fail(i, "only a tool message answers a call", "a %s message cannot carry tool_call_id", role)
		case role == "tool" && (id == nil || id == ""):
			return nil, fail(i, "the id of the assistant's call this result answers", "a tool message needs tool_call_id")
		case role == "tool":
			s, ok := id.(string)
			if !ok {
				return nil, fail(i, "", "tool_call_id must be a string, got %s", kindOf(id))
			}
			msg.ToolCallID = s
		}
		out = append(out, msg)
	}
	return out, nil
}

// historyCalls reads an assistant message's tool calls; the error is ""
// when they are well formed.
func historyCalls(v any) ([]provider.ToolCall, string) {
	list, ok := v.([]any)
	if !ok {
		return nil, "must be a list, got " + kindOf(v)
	}
	out := make([]provider.ToolCall, 0, len(list))
	for j, item := range list {
		at := "call " + strconv.Itoa(j+1) + ": "
		m, ok := item.(map[string]any)
		if !ok {
			return nil, at + "must be an object {id, name, arguments}, got " + kindOf(item)
		}
		fields := m
		if fn, ok := m["function"]; ok {
			// OpenAI's form: {id, type: function, function: {name, arguments}}.
			f, isObj := fn.(map[string]any)
			if !isObj {
				return nil, at + "function must be an object {name, arguments}, got " + kindOf(fn)
			}
			for k := range m {
				if k != "id" && k != "type" && k != "function" {
					return nil, at + "unknown key " + quote(k) + " (valid keys are: id, type, function)"
				}
			}
			if t, has := m["type"]; has && t != "function" {
				return nil, at + "type must be \"function\""
			}
			fields = map[string]any{"id": m["id"], "name": f["name"], "arguments": f["arguments"]}
		} else {
			for k := range m {
				if k != "id" && k != "name" && k != "arguments" {
					return nil, at + "unknown key " + quote(k) + " (valid keys are: id, name, arguments)"
				}
			}
		}
		var c provider.ToolCall
		id, ok := fields["id"].(string)
		if !ok || id == "" {
			return nil, at + "needs an id (a string the tool message answering it names in tool_call_id)"
		}
		c.ID = id
		name, ok := fields["name"].(string)
		if !ok || name == "" {
			return nil, at + "needs a name (the tool called)"
		}
		c.Name = name
		switch a := fields["arguments"].(type) {
		case nil:
			c.Arguments = "{}"
		case string:
			c.Arguments = a // as the model wrote them, valid JSON or not
		default:
			b, err := json.Marshal(a)
			if err != nil {
				return nil, at + "arguments cannot be written as JSON: " + err.Error()
			}
			var compact bytes.Buffer
			if json.Compact(&compact, b) == nil {
				b = compact.Bytes()
			}
			c.Arguments = string(b)
		}
		out = append(out, c)
	}
	return out, ""
}

// kindOf names a decoded JSON value's kind for messages.
func kindOf(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	case string:
		return "the string " + quote(x)
	case bool:
		return "a boolean"
	case json.Number, float64, int, int64:
		return "a number"
	}
	return fmt.Sprintf("a %T", v)
}

// quote quotes a short value; a long one is named by its length.
func quote(s string) string {
	if len(s) <= 24 && !strings.ContainsAny(s, "\n\r") {
		return strconv.Quote(s)
	}
	return "(" + strconv.Itoa(len(s)) + " characters)"
}
