package mock

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// text is a message content as either wire format sends it: a JSON string,
// an array of content parts whose text parts are concatenated, or null.
type text string

func (t *text) UnmarshalJSON(b []byte) error {
	b = bytes.TrimLeft(b, " \t\r\n")
	if len(b) == 0 {
		return errors.New("content is empty")
	}
	switch b[0] {
	case '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*t = text(s)
		return nil
	case '[':
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(b, &parts); err != nil {
			return fmt.Errorf("content parts: %w", err)
		}
		var sb strings.Builder
		for _, p := range parts {
			if p.Type == "text" || (p.Type == "" && p.Text != "") {
				sb.WriteString(p.Text)
			}
		}
		*t = text(sb.String())
		return nil
	case 'n':
		if string(b) == "null" {
			*t = ""
			return nil
		}
	}
	return errors.New("content must be a string or an array of content parts")
}

// message is one chat message of the OpenAI wire format: an assistant
// message may carry tool calls, a tool message answers one.
type message struct {
	Role       string         `json:"role"`
	Content    text           `json:"content"`
	ToolCalls  []chatToolCall `json:"tool_calls"`
	ToolCallID string         `json:"tool_call_id"`
}

// chatToolCall is a call of an assistant message in the OpenAI format.
type chatToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// chatTool is a tool an OpenAI request offers.
type chatTool struct {
	Type     string `json:"type"`
	Function *struct {
		Name       string          `json:"name"`
		Parameters json.RawMessage `json:"parameters"`
	} `json:"function"`
}

// anthropicMsg is one message of the Anthropic wire format, its content
// a string or a list of blocks.
type anthropicMsg struct {
	Role    string `json:"role"`
	Content blocks `json:"content"`
}

// blocks is an Anthropic message's content: its text blocks concatenated,
// and its tool_use and tool_result blocks.
type blocks struct {
	text    string
	uses    []block
	results []block
}

// block is one content block of an Anthropic message.
type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   text            `json:"content"`
}

func (bs *blocks) UnmarshalJSON(b []byte) error {
	b = bytes.TrimLeft(b, " \t\r\n")
	if len(b) == 0 || b[0] != '[' {
		var t text
		if err := t.UnmarshalJSON(b); err != nil {
			return err
		}
		*bs = blocks{text: string(t)}
		return nil
	}
	var list []block
	if err := json.Unmarshal(b, &list); err != nil {
		return fmt.Errorf("content blocks: %w", err)
	}
	var out blocks
	var sb strings.Builder
	for i, bl := range list {
		switch bl.Type {
		case "text":
			sb.WriteString(bl.Text)
		case "tool_use":
			if bl.ID == "" || bl.Name == "" {
				return fmt.Errorf("content.%d: a tool_use block needs an id and a name", i)
			}
			if in := bytes.TrimSpace(bl.Input); len(in) == 0 || in[0] != '{' {
				return fmt.Errorf("content.%d.input: Input should be a valid dictionary", i)
			}
			out.uses = append(out.uses, bl)
		case "tool_result":
			if bl.ToolUseID == "" {
				return fmt.Errorf("content.%d.tool_use_id: Field required", i)
			}
			out.results = append(out.results, bl)
		}
	}
	out.text = sb.String()
	*bs = out
	return nil
}

// stops is the OpenAI "stop" field: a string or an array of strings.
type stops []string

func (s *stops) UnmarshalJSON(b []byte) error {
	b = bytes.TrimLeft(b, " \t\r\n")
	if len(b) > 0 && b[0] == '"' {
		var one string
		if err := json.Unmarshal(b, &one); err != nil {
			return err
		}
		*s = stops{one}
		return nil
	}
	if string(b) == "null" {
		*s = nil
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return errors.New("stop must be a string or an array of strings")
	}
	*s = many
	return nil
}

// chatRequest is the part of an OpenAI chat-completions request the mock reads.
type chatRequest struct {
	Model         string    `json:"model"`
	Messages      []message `json:"messages"`
	Stream        bool      `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	MaxTokens           *int  `json:"max_tokens"`
	MaxCompletionTokens *int  `json:"max_completion_tokens"`
	Stop                stops `json:"stop"`

	Tools          []chatTool      `json:"tools"`
	ToolChoice     json.RawMessage `json:"tool_choice"`
	ResponseFormat *struct {
		Type       string `json:"type"`
		JSONSchema *struct {
			Name   string          `json:"name"`
			Schema json.RawMessage `json:"schema"`
		} `json:"json_schema"`
	} `json:"response_format"`
}

// messagesRequest is the part of an Anthropic messages request the mock reads.
type messagesRequest struct {
	Model         string         `json:"model"`
	System        text           `json:"system"`
	Messages      []anthropicMsg `json:"messages"`
	MaxTokens     *int           `json:"max_tokens"`
	StopSequences []string       `json:"stop_sequences"`
	Stream        bool           `json:"stream"`

	Tools []struct {
		Type        string          `json:"type"`
		Name        string          `json:"name"`
		InputSchema json.RawMessage `json:"input_schema"`
	} `json:"tools"`
	ToolChoice *struct {
		Type string `json:"type"`
		Name string `json:"name"`
	} `json:"tool_choice"`
}

// badRequest is a request the mock refuses with 400; param names the field.
type badRequest struct {
	param string
	msg   string
}

func (e *badRequest) Error() string { return e.msg }

// decodeJSON decodes a request body, describing what is wrong when it fails.
func decodeJSON(body []byte, v any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return &badRequest{msg: "the request body is empty; send a JSON object"}
	}
	if err := json.Unmarshal(body, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return &badRequest{param: te.Field, msg: fmt.Sprintf("%s: expected %s, got JSON %s", te.Field, te.Type, te.Value)}
		}
		return &badRequest{msg: "the request body is not valid JSON: " + err.Error()}
	}
	return nil
}

// convo is what both formats reduce to: the conversation's token count, the
// cached part of it, the last user message and how to end the reply.
type convo struct {
	model     string
	prompt    int // input tokens
	cached    int // of them, reported as cached
	lastUser  string
	maxTokens int // 0 = unbounded
	stops     []string
	stream    bool
	usage     bool // OpenAI stream_options.include_usage

	tools        []offered       // the tools offered
	choice       string          // "", auto, none, required, or the one tool's name
	format       json.RawMessage // the json_schema response format's schema (OpenAI)
	rounds       int             // assistant turns that called tools
	endsWithTool bool            // the last message holds tool results
	lastTool     string          // the last tool result's text
}

func (r *chatRequest) convo(cacheSystem bool) (convo, error) {
	c := convo{model: r.Model, stops: r.Stop, stream: r.Stream}
	if r.Model == "" {
		return c, &badRequest{param: "model", msg: "you must provide a model parameter"}
	}
	if len(r.Messages) == 0 {
		return c, &badRequest{param: "messages", msg: "messages: expected a non-empty array of messages"}
	}
	if r.StreamOptions != nil {
		c.usage = r.StreamOptions.IncludeUsage
	}
	switch {
	case r.MaxCompletionTokens != nil:
		c.maxTokens = *r.MaxCompletionTokens
	case r.MaxTokens != nil:
		c.maxTokens = *r.MaxTokens
	}
	if c.maxTokens < 0 {
		return c, &badRequest{param: "max_tokens", msg: "max_tokens: expected a positive integer"}
	}
	if err := r.readTools(&c); err != nil {
		return c, err
	}
	system := true           // leading system/developer messages form the cacheable prefix
	var calls []chatToolCall // the calls of the last assistant message
	for i, m := range r.Messages {
		n := words(string(m.Content))
		c.prompt += n
		c.endsWithTool = false
		switch m.Role {
		case "system", "developer":
			if system && cacheSystem {
				c.cached += n
			}
		case "user":
			system = false
			c.lastUser = string(m.Content)
		case "assistant":
			system = false
			calls = m.ToolCalls
			for j, tc := range calls {
				if tc.ID == "" || tc.Function.Name == "" {
					return c, &badRequest{param: "messages", msg: fmt.Sprintf("messages[%d].tool_calls[%d]: a tool call needs an id and a function name", i, j)}
				}
				c.prompt += words(tc.Function.Arguments)
			}
			if len(calls) > 0 {
				c.rounds++
			}
		case "tool":
			system = false
			if !slices.ContainsFunc(calls, func(tc chatToolCall) bool { return tc.ID == m.ToolCallID }) {
				return c, &badRequest{param: "messages", msg: fmt.Sprintf("messages[%d]: a message with role 'tool' must answer a tool call of the assistant message before it; tool_call_id %q matches none", i, m.ToolCallID)}
			}
			c.endsWithTool = true
			c.lastTool = string(m.Content)
		case "function":
			system = false
		default:
			return c, &badRequest{param: "messages", msg: fmt.Sprintf("messages: unknown role %q; valid roles are system, developer, user, assistant, tool", m.Role)}
		}
	}
	c.prompt = max(c.prompt, 1)
	c.cached = min(c.cached, c.prompt)
	return c, nil
}

func (r *messagesRequest) convo(cacheSystem bool) (convo, error) {
	c := convo{model: r.Model, stops: r.StopSequences, stream: r.Stream}
	if r.Model == "" {
		return c, &badRequest{param: "model", msg: "model: Field required"}
	}
	if r.MaxTokens == nil {
		return c, &badRequest{param: "max_tokens", msg: "max_tokens: Field required"}
	}
	if *r.MaxTokens < 1 {
		return c, &badRequest{param: "max_tokens", msg: "max_tokens: Input should be greater than or equal to 1"}
	}
	if len(r.Messages) == 0 {
		return c, &badRequest{param: "messages", msg: "messages: at least one message is required"}
	}
	c.maxTokens = *r.MaxTokens
	c.prompt = words(string(r.System))
	if cacheSystem {
		c.cached = c.prompt
	}
	if err := r.readTools(&c); err != nil {
		return c, err
	}
	var uses []block // the tool_use blocks of the last assistant message
	for i, m := range r.Messages {
		c.prompt += words(m.Content.text)
		switch m.Role {
		case "user":
			if len(m.Content.uses) > 0 {
				return c, &badRequest{param: "messages", msg: fmt.Sprintf("messages.%d: tool_use blocks belong in assistant messages", i)}
			}
			for _, res := range m.Content.results {
				if !slices.ContainsFunc(uses, func(u block) bool { return u.ID == res.ToolUseID }) {
					return c, &badRequest{param: "messages", msg: fmt.Sprintf("messages.%d: unexpected `tool_use_id` found in `tool_result` blocks: %s. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.", i, res.ToolUseID)}
				}
				c.prompt += words(string(res.Content))
				c.lastTool = string(res.Content)
			}
			c.endsWithTool = len(m.Content.results) > 0
			if m.Content.text != "" || len(m.Content.results) == 0 {
				c.lastUser = m.Content.text
			}
			uses = nil
		case "assistant":
			if len(m.Content.results) > 0 {
				return c, &badRequest{param: "messages", msg: fmt.Sprintf("messages.%d: tool_result blocks belong in user messages", i)}
			}
			uses = m.Content.uses
			for _, u := range uses {
				c.prompt += words(string(u.Input))
			}
			if len(uses) > 0 {
				c.rounds++
			}
			c.endsWithTool = false
		default:
			return c, &badRequest{param: "messages", msg: fmt.Sprintf("messages: Input tag %q found using 'role' does not match any of the expected tags: 'user', 'assistant'", m.Role)}
		}
	}
	c.prompt = max(c.prompt, 1)
	c.cached = min(c.cached, c.prompt)
	return c, nil
}

// readTools reads the tools, the tool choice and the response format of an
// OpenAI request, refusing what the API refuses: a tool without a name, a
// choice without tools or naming a tool not offered.
func (r *chatRequest) readTools(c *convo) error {
	for i, t := range r.Tools {
		if t.Type != "function" || t.Function == nil || t.Function.Name == "" {
			return &badRequest{param: fmt.Sprintf("tools[%d]", i), msg: fmt.Sprintf("tools[%d]: expected {\"type\": \"function\", \"function\": {\"name\": ..., \"parameters\": ...}}", i)}
		}
		c.tools = append(c.tools, offered{name: t.Function.Name, schema: t.Function.Parameters})
	}
	if ch := bytes.TrimSpace(r.ToolChoice); len(ch) > 0 && string(ch) != "null" {
		var s string
		var named struct {
			Type     string `json:"type"`
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		}
		switch {
		case json.Unmarshal(ch, &s) == nil && (s == choiceAuto || s == choiceNone || s == choiceRequired):
			c.choice = s
		case json.Unmarshal(ch, &named) == nil && named.Type == "function" && named.Function.Name != "":
			c.choice = named.Function.Name
		default:
			return &badRequest{param: "tool_choice", msg: `tool_choice: expected "none", "auto", "required" or {"type": "function", "function": {"name": ...}}`}
		}
		if len(c.tools) == 0 {
			return &badRequest{param: "tool_choice", msg: "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified."}
		}
		if _, ok := c.tool(c.choice); c.named() && !ok {
			return &badRequest{param: "tool_choice", msg: fmt.Sprintf("tool_choice: no tool named %q is offered", c.choice)}
		}
	}
	if f := r.ResponseFormat; f != nil {
		switch f.Type {
		case "text", "json_object":
		case "json_schema":
			if f.JSONSchema == nil || f.JSONSchema.Name == "" {
				return &badRequest{param: "response_format", msg: "response_format.json_schema: expected an object with a name and a schema"}
			}
			c.format = f.JSONSchema.Schema
			if len(c.format) == 0 {
				c.format = json.RawMessage(`{}`)
			}
		default:
			return &badRequest{param: "response_format", msg: fmt.Sprintf("response_format.type %q: expected text, json_object or json_schema", f.Type)}
		}
	}
	return nil
}

// readTools reads the tools and the tool choice of an Anthropic request.
func (r *messagesRequest) readTools(c *convo) error {
	for i, t := range r.Tools {
		if t.Name == "" {
			return &badRequest{param: "tools", msg: fmt.Sprintf("tools.%d.custom.name: Field required", i)}
		}
		if (t.Type == "" || t.Type == "custom") && len(bytes.TrimSpace(t.InputSchema)) == 0 {
			return &badRequest{param: "tools", msg: fmt.Sprintf("tools.%d.custom.input_schema: Field required", i)}
		}
		c.tools = append(c.tools, offered{name: t.Name, schema: t.InputSchema})
	}
	if ch := r.ToolChoice; ch != nil {
		switch ch.Type {
		case "auto":
			c.choice = choiceAuto
		case "none":
			c.choice = choiceNone
		case "any":
			c.choice = choiceRequired
		case "tool":
			if _, ok := c.tool(ch.Name); !ok || ch.Name == "" {
				return &badRequest{param: "tool_choice", msg: fmt.Sprintf("tool_choice: tool %q not found in the tools", ch.Name)}
			}
			c.choice = ch.Name
		default:
			return &badRequest{param: "tool_choice", msg: fmt.Sprintf("tool_choice.type: Input tag %q does not match any of the expected tags: 'auto', 'any', 'tool', 'none'", ch.Type)}
		}
		if len(c.tools) == 0 && ch.Type != "none" && ch.Type != "auto" {
			return &badRequest{param: "tool_choice", msg: "tool_choice may only be specified while providing tools"}
		}
	}
	return nil
}

// words counts whitespace-separated words: the mock's token count.
func words(s string) int {
	n := 0
	in := false
	for _, r := range s {
		if unicode.IsSpace(r) {
			in = false
		} else if !in {
			in = true
			n++
		}
	}
	return n
}

// end says why a reply ended.
type end int

const (
	endTurn   end = iota // the reply was whole
	endLength            // max_tokens cut it
	endStop              // a stop sequence cut it
	endTool              // it ends with tool calls
)

// shape cuts reply at the first stop sequence or after maxTokens words,
// whichever comes first, as a model would stop generating there.
func shape(reply string, maxTokens int, stopSeqs []string) (out string, why end, stop string) {
	out, why = reply, endTurn
	for _, s := range stopSeqs {
		if s == "" {
			continue
		}
		if i := strings.Index(reply, s); i >= 0 && (why == endTurn || i < len(out)) {
			out, why, stop = reply[:i], endStop, s
		}
	}
	if maxTokens > 0 {
		if i := wordEnd(out, maxTokens); i < len(out) {
			out, why, stop = out[:i], endLength, ""
		}
	}
	return out, why, stop
}

// wordEnd returns the index just past the n-th word of s, or len(s) when s
// has no more than n words.
func wordEnd(s string, n int) int {
	count := 0
	in := false
	for i, r := range s {
		if unicode.IsSpace(r) {
			if in && count == n {
				return i
			}
			in = false
		} else if !in {
			in = true
			count++
		}
	}
	return len(s)
}

// pieces calls fn with the streamed chunks of s: each word with the
// whitespace before it (trailing whitespace goes with the last word). The
// chunks concatenate to s. It stops early when fn returns false and reports
// whether it ran to the end.
func pieces(s string, fn func(string) bool) bool {
	start, wordEnd := 0, -1 // wordEnd: just past the previous word
	in := false
	for i, r := range s {
		if unicode.IsSpace(r) {
			if in {
				wordEnd = i
			}
			in = false
			continue
		}
		if !in {
			in = true
			if wordEnd >= 0 {
				if !fn(s[start:wordEnd]) {
					return false
				}
				start = wordEnd
			}
		}
	}
	if start < len(s) {
		return fn(s[start:])
	}
	return true
}

// appendString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD, as
// encoding/json does.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

func appendInt(b []byte, n int) []byte { return strconv.AppendInt(b, int64(n), 10) }
