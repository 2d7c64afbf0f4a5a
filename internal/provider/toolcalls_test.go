package provider

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func TestDecodeToolCalls(t *testing.T) {
	good := []struct{ in, want string }{
		{`[{"name":"f","arguments":{ "a" : [1, 2.50] },"id":"c1"}]`, `[{c1 f {"a":[1,2.50]}}]`},
		{`[{"name":"f","arguments":"{\"a\": 1"},{"name":"g"}]`, `[{ f {"a": 1} { g }]`},
		{`[{"name":"f","arguments":null,"id":null}]`, `[{ f }]`},
		{`[{"name":"f","arguments":3}]`, `[{ f 3}]`},
		{`[]`, `[]`},
		{`null`, `[]`},
		{``, `[]`},
	}
	for _, g := range good {
		calls, err := DecodeToolCalls(json.RawMessage(g.in))
		if err != nil || fmt.Sprint(calls) != g.want {
			t.Errorf("%s: %v, %v; want %s", g.in, calls, err, g.want)
		}
	}
	bad := []struct{ in, want string }{
		{`{"name":"f"}`, "tool_calls is a JSON object; want a list"},
		{`"f"`, "tool_calls is a JSON string"},
		{`[1]`, "tool_calls[0] is a JSON number"},
		{`[null]`, "tool_calls[0] is a JSON null"},
		{`[{"arguments":{}}]`, "tool_calls[0] has no name"},
		{`[{"name":""}]`, "has no name"},
		{`[{"name":"  "}]`, "has no name"},
		{`[{"name":7}]`, "has no name"},
		{`[{"name":"f"},{"name":"g","id":5}]`, `tool_calls[1] (g): "id" is a JSON number`},
		{`[{"name":"f","arguments":"\ud8"}]`, `tool_calls is not valid JSON`},
	}
	for _, b := range bad {
		_, err := DecodeToolCalls(json.RawMessage(b.in))
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%s: err %v; want one saying %q", b.in, err, b.want)
		}
	}
}

// FuzzDecodeToolCalls: any input decodes or fails with an error, never
// panics; decoded calls have names, and arguments that were a JSON value
// are valid JSON.
func FuzzDecodeToolCalls(f *testing.F) {
	for _, s := range []string{`[{"name":"f","arguments":{"a":1}}]`, `[{"name":"f","arguments":"{"}]`, `[{"name":"f","arguments":[}]`, `[{}]`, `null`, `[{"name":"f","id":"x","arguments":"\u0000"}]`, `[{"name":"f","arguments":1e999}]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		calls, err := DecodeToolCalls(json.RawMessage(in))
		if err != nil {
			return
		}
		for _, c := range calls {
			if strings.TrimSpace(c.Name) == "" {
				t.Fatalf("%q: a call without a name: %+v", in, calls)
			}
		}
	})
}
