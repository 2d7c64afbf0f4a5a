package prompt

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/provider"
)

// row decodes a JSONL row as the dataset does (numbers as json.Number).
func row(t testing.TB, s string) map[string]any {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

// A history goes after the template's leading system messages and before
// the rest, as data: template syntax in it is sent literally.
func TestRenderMessagesWithHistory(t *testing.T) {
	tm, err := CompileMessages([]Part{
		{Role: "system", Content: "You help with {{.topic}}."},
		{Role: "system", Content: "Be brief."},
		{Role: "user", Content: "{{.question}}"},
		{Role: "assistant", Content: "Thinking about {{.topic}}"},
	}, "history")
	if err != nil {
		t.Fatal(err)
	}
	if got := tm.Fields(); !reflect.DeepEqual(got, []string{"history", "question", "topic"}) {
		t.Errorf("Fields = %v", got)
	}
	if got := tm.SystemFields(); !reflect.DeepEqual(got, []string{"topic"}) {
		t.Errorf("SystemFields = %v", got)
	}
	vars := row(t, `{"topic": "maps", "question": "And Lyon?", "history": [
		{"role": "user", "content": "Weather in {{.topic}}?"},
		{"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "name": "weather", "arguments": {"city": "Paris", "days": 1.50}}]},
		{"role": "tool", "tool_call_id": "c1", "content": "sunny"},
		{"role": "assistant", "tool_calls": [{"id": "c2", "type": "function", "function": {"name": "weather", "arguments": "{\"city\": \"Par"}}]},
		{"role": "tool", "tool_call_id": "c2", "content": "error"}]}`)
	got, err := tm.Render(vars)
	if err != nil {
		t.Fatal(err)
	}
	want := []provider.Message{
		{Role: "system", Content: "You help with maps."},
		{Role: "system", Content: "Be brief."},
		{Role: "user", Content: "Weather in {{.topic}}?"},
		{Role: "assistant", ToolCalls: []provider.ToolCall{{ID: "c1", Name: "weather", Arguments: `{"city":"Paris","days":1.50}`}}},
		{Role: "tool", ToolCallID: "c1", Content: "sunny"},
		{Role: "assistant", ToolCalls: []provider.ToolCall{{ID: "c2", Name: "weather", Arguments: `{"city": "Par`}}},
		{Role: "tool", ToolCallID: "c2", Content: "error"},
		{Role: "user", Content: "And Lyon?"},
		{Role: "assistant", Content: "Thinking about maps"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}

	// Without templates the history is the whole prompt; a CSV cell holds
	// it as JSON text.
	tm, err = CompileMessages(nil, "h")
	if err != nil {
		t.Fatal(err)
	}
	got, err = tm.Render(map[string]any{"h": `[{"role": "user", "content": "hi"}]`})
	if err != nil || len(got) != 1 || got[0].Content != "hi" {
		t.Errorf("history alone: %v %v", got, err)
	}
}

func TestBadHistories(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"h": {"role": "user"}}`, `message history "h": must be a list of messages, got an object`},
		{`{"h": "[{\"role\": \"user\""}`, `message history "h": the text is not JSON: unexpected EOF`},
		{`{"h": [7]}`, `message history "h": message 1: must be an object {role, content}, got a number`},
		{`{"h": [{"role": "bot", "content": "x"}]}`, `message 1: unknown role "bot"`},
		{`{"h": [{"content": "x"}]}`, `message 1: has no role`},
		{`{"h": [{"role": "user", "content": "x"}, {"role": "user"}]}`, `message 2: has no content (only an assistant message making tool calls may omit it)`},
		{`{"h": [{"role": "user", "content": ["x"]}]}`, `message 1: content must be text, got a list`},
		{`{"h": [{"role": "user", "content": "x", "name": "bob"}]}`, `message 1: unknown key "name"`},
		{`{"h": [{"role": "tool", "content": "x"}]}`, `message 1: a tool message needs tool_call_id`},
		{`{"h": [{"role": "user", "content": "x", "tool_call_id": "c"}]}`, `message 1: a user message cannot carry tool_call_id`},
		{`{"h": [{"role": "user", "content": "x", "tool_calls": []}]}`, `message 1: a user message cannot carry tool_calls`},
		{`{"h": [{"role": "assistant", "tool_calls": [{"name": "f"}]}]}`, `message 1: tool_calls: call 1: needs an id`},
		{`{"h": [{"role": "assistant", "tool_calls": [{"id": "c", "arguments": "{}"}]}]}`, `message 1: tool_calls: call 1: needs a name`},
		{`{"h": [{"role": "assistant", "tool_calls": {"id": "c"}}]}`, `message 1: tool_calls: must be a list, got an object`},
		{`{"q": 1}`, `message history "h": the case has no such field`},
	} {
		tm, err := CompileMessages([]Part{{Role: "user", Content: "x"}}, "h")
		if err != nil {
			t.Fatal(err)
		}
		_, err = tm.Render(row(t, c.in))
		var he *HistoryError
		if !errors.As(err, &he) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s:\n got %v\nwant %s", c.in, err, c.want)
		}
	}
}

// FuzzParseHistory feeds arbitrary JSON text (a CSV cell) to the history
// reader: it never panics, and what it accepts is well formed.
func FuzzParseHistory(f *testing.F) {
	f.Add(`[{"role": "user", "content": "hi"}]`)
	f.Add(`[{"role": "assistant", "tool_calls": [{"id": "c", "name": "f", "arguments": {"a": [1, 2e400]}}]}, {"role": "tool", "tool_call_id": "c", "content": ""}]`)
	f.Add(`[{"role": "assistant", "content": null, "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{"}}]}]`)
	f.Add(`{"role": "user"}`)
	f.Add(`[[[[`)
	f.Add(`[] []`)
	f.Fuzz(func(t *testing.T, s string) {
		msgs, err := ParseHistory("h", s)
		if err != nil {
			var he *HistoryError
			if !errors.As(err, &he) || he.Msg == "" {
				t.Fatalf("error %v is not a HistoryError", err)
			}
			return
		}
		for _, m := range msgs {
			switch m.Role {
			case "system", "user", "assistant", "tool":
			default:
				t.Fatalf("accepted role %q", m.Role)
			}
			if (m.Role == "tool") != (m.ToolCallID != "") {
				t.Fatalf("tool_call_id %q on a %s message", m.ToolCallID, m.Role)
			}
			for _, c := range m.ToolCalls {
				if m.Role != "assistant" || c.ID == "" || c.Name == "" {
					t.Fatalf("bad call %+v on %s", c, m.Role)
				}
			}
		}
	})
}
