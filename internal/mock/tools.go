package mock

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ToolCall is one call a rule answers with: the tool's name and the text of
// its arguments, sent as written, so a rule may script invalid JSON. Empty
// arguments are sent as {} (what a model writes for a call without
// arguments). In a rules file, arguments is a JSON string (taken as the text
// itself) or any other JSON value (taken as its compact text).
type ToolCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments,omitempty"`
}

// UnmarshalJSON reads {"name": ..., "arguments": string or JSON value}.
func (c *ToolCall) UnmarshalJSON(b []byte) error {
	var raw struct {
		Name      *string         `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return fmt.Errorf("a tool call must be {\"name\": \"...\", \"arguments\": ...}: %w", err)
	}
	if raw.Name == nil || *raw.Name == "" {
		return errors.New("a tool call needs a name: a non-empty string")
	}
	args, err := argumentsText(raw.Arguments)
	if err != nil {
		return err
	}
	*c = ToolCall{Name: *raw.Name, Arguments: args}
	return nil
}

// argumentsText is the arguments' text: a JSON string is the text itself,
// any other JSON value its compact form, absent or null "".
func argumentsText(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", fmt.Errorf("arguments: %w", err)
		}
		return s, nil
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return "", fmt.Errorf("arguments must be a string (the text as written) or a JSON value: %w", err)
	}
	return b.String(), nil
}

// offered is one tool a request offers.
type offered struct {
	name   string
	schema json.RawMessage
}

// call is one tool call of a reply.
type call struct {
	id   string
	name string
	args string
}

// Tool choices as the mock keeps them (either wire format's); any other
// non-empty choice is the name of the one tool the model must call.
const (
	choiceAuto     = "auto"
	choiceNone     = "none"
	choiceRequired = "required"
)

// named reports whether the request forces one tool by name.
func (c *convo) named() bool {
	switch c.choice {
	case "", choiceAuto, choiceNone, choiceRequired:
		return false
	}
	return true
}

// tool returns the offered tool called name.
func (c *convo) tool(name string) (offered, bool) {
	for _, t := range c.tools {
		if t.name == name {
			return t, true
		}
	}
	return offered{}, false
}

// allows reports whether a request lets a model make calls: every one names
// a tool it offers, and the one tool it forces when it forces one. (So a
// response format sent as a forced tool gets no rule's calls on one wire
// format that it would not get on the other.)
func (c *convo) allows(calls []ToolCall) bool {
	for _, tc := range calls {
		if _, ok := c.tool(tc.Name); !ok || (c.named() && tc.Name != c.choice) {
			return false
		}
	}
	return true
}

// toolTurns is how many model turns of a conversation may call tools.
func (s *Server) toolTurns() int {
	if s.opts.ToolTurns > 0 {
		return s.opts.ToolTurns
	}
	return 1
}

// respond decides the reply to a request: its text and the tool calls it
// makes, the same whichever wire format asked. A rule matches when its
// model, match and turn (if set) fit the request.
//
// A request may get calls when it offers tools, its tool choice is not none
// and the conversation holds fewer rounds of tool results than ToolTurns.
// Then the first matching rule with calls that name only tools the request
// offers (only the forced one, when it forces one) answers with them; a
// matching rule without calls answers with its text, except that under a
// tool forced by name a reply that is a JSON object becomes that tool's
// arguments; with no matching rule the forced tool, or else the first
// offered one, is called with arguments derived from its schema (Default
// instead when the tool is forced and Default is a JSON object). A request
// that may not call tools gets the first matching rule without calls, else
// (with a json_schema response format and no tool result to answer)
// Default or a JSON value derived from that schema, else Default, else the
// last tool result when the conversation ends with one, else the last user
// message echoed.
func (s *Server) respond(c *convo) (string, []call) {
	canCall := len(c.tools) > 0 && c.choice != choiceNone && c.rounds < s.toolTurns()
	for i := range s.opts.Rules {
		r := &s.opts.Rules[i]
		if (r.Model != "" && r.Model != c.model) || !strings.Contains(c.lastUser, r.Match) || (r.Turn > 0 && r.Turn != c.rounds+1) {
			continue
		}
		if len(r.ToolCalls) > 0 {
			if !canCall || !c.allows(r.ToolCalls) {
				continue
			}
			calls := make([]call, len(r.ToolCalls))
			for j, tc := range r.ToolCalls {
				calls[j] = call{name: tc.Name, args: tc.Arguments}
			}
			return r.Reply, calls
		}
		if canCall && c.named() && isObject(r.Reply) {
			return "", []call{{name: c.choice, args: r.Reply}}
		}
		return r.Reply, nil
	}
	if canCall {
		t := c.tools[0]
		if c.named() {
			t, _ = c.tool(c.choice)
			if isObject(s.opts.Default) {
				return "", []call{{name: t.name, args: s.opts.Default}}
			}
		}
		return "", []call{{name: t.name, args: s.derived(t.schema)}}
	}
	switch {
	case c.format != nil && !c.endsWithTool:
		if s.opts.Default != "" {
			return s.opts.Default, nil
		}
		return s.derived(c.format), nil
	case s.opts.Default != "":
		return s.opts.Default, nil
	case c.endsWithTool:
		return c.lastTool, nil
	}
	return c.lastUser, nil
}

// isObject reports whether s is a JSON object.
func isObject(s string) bool {
	t := strings.TrimSpace(s)
	return strings.HasPrefix(t, "{") && json.Valid([]byte(t))
}

// finishCalls gives each call its ID, sends empty arguments as {}, and
// breaks the arguments of a fraction MalformedArgs of the calls. An ID is
// prefix, a hash of the conversation's model, last user message, rounds of
// calls and last tool result, and the call's place: the same request gets
// the same IDs from any server, in either wire format, and the turns of one
// conversation get different ones.
func (s *Server) finishCalls(calls []call, prefix string, c *convo) {
	h := fnv.New64a()
	for _, part := range []string{c.model, c.lastUser, strconv.Itoa(c.rounds), c.lastTool} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	base := prefix + strconv.FormatUint(h.Sum64()&0xffffffffffff, 36) + "_"
	for i := range calls {
		c := &calls[i]
		c.id = base + strconv.Itoa(i)
		if strings.TrimSpace(c.args) == "" {
			c.args = "{}"
		}
		if s.opts.MalformedArgs > 0 {
			s.mu.Lock()
			u := s.rng.Float64()
			s.mu.Unlock()
			if u < s.opts.MalformedArgs {
				c.args = malform(c.args)
				s.n.malformedArgs.Add(1)
			}
		}
	}
}

// malform returns args made invalid JSON the way a model cut short would
// write it: without its last character (or, when that is still valid JSON,
// with a stray comma after it).
func malform(args string) string {
	_, size := utf8.DecodeLastRuneInString(args)
	if cut := args[:len(args)-size]; strings.TrimSpace(cut) != "" && !json.Valid([]byte(cut)) {
		return cut
	}
	return args + ","
}

// maxDerived bounds how many schemas' derived values a server keeps.
const maxDerived = 1 << 12

// derived is deriveJSON(schema), kept per schema text for the server's life
// (the first maxDerived schemas): an agent loop sends the same tools on
// every turn, and deriving is most of the cost of a call's answer.
func (s *Server) derived(schema json.RawMessage) string {
	if v, ok := s.derivedBy.Load(string(schema)); ok {
		return v.(string)
	}
	out := deriveJSON(schema)
	if s.nDerived.Load() < maxDerived {
		if _, loaded := s.derivedBy.LoadOrStore(string(schema), out); !loaded {
			s.nDerived.Add(1)
		}
	}
	return out
}

// maxDerive bounds how deep deriveJSON follows nested schemas.
const maxDerive = 32

// deriveJSON returns a JSON value that a JSON Schema describes, the same
// every time: a schema's const, else the first of its enum, else its
// default, else the first of its examples, else by type — an object with
// its required properties (every property when none is required) in name
// order, an array of one item (or minItems), a string "mock" (or a value of
// its format: date, date-time, email, uri, uuid …; padded to minLength, cut
// to maxLength), a number at its minimum (else just above exclusiveMinimum,
// else 0, or a negative maximum), true, null — and the first of
// anyOf/oneOf/allOf, the first of a type list that is not null. A schema it
// cannot read gives {}.
func deriveJSON(schema json.RawMessage) string {
	var v any
	dec := json.NewDecoder(bytes.NewReader(schema))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return "{}"
	}
	b, err := json.Marshal(derive(v, 0))
	if err != nil {
		return "{}"
	}
	return string(b)
}

func derive(schema any, depth int) any {
	m, ok := schema.(map[string]any)
	if !ok || depth > maxDerive {
		return map[string]any{}
	}
	if v, ok := m["const"]; ok {
		return v
	}
	if e, ok := m["enum"].([]any); ok && len(e) > 0 {
		return e[0]
	}
	if v, ok := m["default"]; ok {
		return v
	}
	if e, ok := m["examples"].([]any); ok && len(e) > 0 {
		return e[0]
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf"} {
		if alts, ok := m[k].([]any); ok && len(alts) > 0 {
			return derive(alts[0], depth+1)
		}
	}
	typ, _ := m["type"].(string)
	if list, ok := m["type"].([]any); ok {
		for _, t := range list {
			if s, ok := t.(string); ok && (typ == "" || typ == "null") {
				typ = s
			}
		}
	}
	switch typ {
	case "string":
		return deriveString(m)
	case "integer", "number":
		if n, ok := m["minimum"].(json.Number); ok {
			return n
		}
		if n, ok := m["exclusiveMinimum"].(json.Number); ok {
			if i, err := n.Int64(); err == nil {
				return i + 1
			}
			if f, err := n.Float64(); err == nil && typ == "number" {
				return f + 1
			}
			return n
		}
		if n, ok := m["maximum"].(json.Number); ok {
			if f, err := n.Float64(); err == nil && f < 0 {
				return n
			}
		}
		return 0
	case "boolean":
		return true
	case "null":
		return nil
	case "array":
		n := 1
		if k, ok := m["minItems"].(json.Number); ok {
			if i, err := k.Int64(); err == nil && i > 1 {
				n = int(min(i, 64))
			}
		}
		items := make([]any, n)
		for i := range items {
			items[i] = derive(m["items"], depth+1)
		}
		return items
	}
	props, _ := m["properties"].(map[string]any)
	var names []string
	if req, ok := m["required"].([]any); ok && len(req) > 0 {
		for _, r := range req {
			if s, ok := r.(string); ok {
				names = append(names, s)
			}
		}
	} else {
		for k := range props {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	names = slices.Compact(names)
	out := make(map[string]any, len(names))
	for _, n := range names {
		out[n] = derive(props[n], depth+1)
	}
	return out
}

// stringFormats are values of the common string formats.
var stringFormats = map[string]string{
	"date":      "2025-01-01",
	"date-time": "2025-01-01T00:00:00Z",
	"time":      "00:00:00Z",
	"email":     "mock@example.com",
	"uri":       "https://example.com/mock",
	"url":       "https://example.com/mock",
	"uuid":      "00000000-0000-4000-8000-000000000000",
	"hostname":  "example.com",
	"ipv4":      "192.0.2.1",
	"ipv6":      "2001:db8::1",
}

// deriveString is "mock", or a value of the schema's format, padded to its
// minLength and cut to its maxLength.
func deriveString(m map[string]any) string {
	s := "mock"
	if f, ok := m["format"].(string); ok && stringFormats[f] != "" {
		s = stringFormats[f]
	}
	if n, ok := m["minLength"].(json.Number); ok {
		if i, err := n.Int64(); err == nil && i > int64(len(s)) {
			s += strings.Repeat("k", int(min(i, 1<<10))-len(s))
		}
	}
	if n, ok := m["maxLength"].(json.Number); ok {
		if i, err := n.Int64(); err == nil && i >= 0 && i < int64(len(s)) {
			s = s[:i]
		}
	}
	return s
}

// argPieces calls fn with the streamed fragments of a call's arguments:
// pieces of at most argPiece bytes, cut between characters. It stops early
// when fn returns false and reports whether it ran to the end.
func argPieces(s string, fn func(string) bool) bool {
	for len(s) > 0 {
		n := min(argPiece, len(s))
		for n < len(s) && !utf8.RuneStart(s[n]) {
			n++
		}
		if !fn(s[:n]) {
			return false
		}
		s = s[n:]
	}
	return true
}

// argPiece is the size of a streamed fragment of arguments.
const argPiece = 8

// countArgPieces is the number of fragments argPieces makes of s.
func countArgPieces(s string) int {
	n := 0
	argPieces(s, func(string) bool { n++; return true })
	return n
}
