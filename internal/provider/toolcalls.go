package provider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// DecodeToolCalls reads the tool calls a program or a recording wrote (the
// exec protocol's and replay's "tool_calls"): a JSON list of objects
// {"name": "...", "arguments": ..., "id": "..."}. The name is required, a
// non-empty string; arguments that are a JSON string are the text as
// written (so invalid JSON arrives as it was written), any other JSON value
// is kept as its compact text, absent or null is ""; id is optional. null
// is no calls. An error says which call is wrong and what would be valid.
func DecodeToolCalls(raw json.RawMessage) ([]ToolCall, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var list []json.RawMessage
	if !json.Valid(raw) {
		return nil, fmt.Errorf("tool_calls is not valid JSON; want a list such as [{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}]")
	}
	if raw[0] != '[' || json.Unmarshal(raw, &list) != nil {
		return nil, fmt.Errorf("tool_calls is a JSON %s; want a list such as [{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}]", JSONType(raw))
	}
	if len(list) == 0 {
		return nil, nil
	}
	calls := make([]ToolCall, 0, len(list))
	for i, item := range list {
		var fields map[string]json.RawMessage
		if json.Unmarshal(item, &fields) != nil || fields == nil {
			return nil, fmt.Errorf("tool_calls[%d] is a JSON %s; want an object with a name and arguments", i, JSONType(item))
		}
		var c ToolCall
		if json.Unmarshal(fields["name"], &c.Name) != nil || strings.TrimSpace(c.Name) == "" {
			return nil, fmt.Errorf("tool_calls[%d] has no name; want \"name\": a non-empty string", i)
		}
		if id, ok := fields["id"]; ok && string(bytes.TrimSpace(id)) != "null" {
			if json.Unmarshal(id, &c.ID) != nil {
				return nil, fmt.Errorf("tool_calls[%d] (%s): \"id\" is a JSON %s; want a string", i, c.Name, JSONType(id))
			}
		}
		args := bytes.TrimSpace(fields["arguments"])
		switch {
		case len(args) == 0 || string(args) == "null":
		case args[0] == '"':
			if json.Unmarshal(args, &c.Arguments) != nil {
				return nil, fmt.Errorf("tool_calls[%d] (%s): \"arguments\" is not a valid JSON string", i, c.Name)
			}
		default:
			var b bytes.Buffer
			if json.Compact(&b, args) != nil {
				return nil, fmt.Errorf("tool_calls[%d] (%s): \"arguments\" is not valid JSON; write invalid arguments as a string", i, c.Name)
			}
			c.Arguments = b.String()
		}
		calls = append(calls, c)
	}
	return calls, nil
}
