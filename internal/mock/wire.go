package mock

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
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

// message is one chat message of either wire format.
type message struct {
	Role    string `json:"role"`
	Content text   `json:"content"`
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
}

// messagesRequest is the part of an Anthropic messages request the mock reads.
type messagesRequest struct {
	Model         string    `json:"model"`
	System        text      `json:"system"`
	Messages      []message `json:"messages"`
	MaxTokens     *int      `json:"max_tokens"`
	StopSequences []string  `json:"stop_sequences"`
	Stream        bool      `json:"stream"`
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
	system := true // leading system/developer messages form the cacheable prefix
	for _, m := range r.Messages {
		n := words(string(m.Content))
		c.prompt += n
		switch m.Role {
		case "system", "developer":
			if system && cacheSystem {
				c.cached += n
			}
		case "user":
			system = false
			c.lastUser = string(m.Content)
		case "assistant", "tool", "function":
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
	for _, m := range r.Messages {
		c.prompt += words(string(m.Content))
		switch m.Role {
		case "user":
			c.lastUser = string(m.Content)
		case "assistant":
		default:
			return c, &badRequest{param: "messages", msg: fmt.Sprintf("messages: Input tag %q found using 'role' does not match any of the expected tags: 'user', 'assistant'", m.Role)}
		}
	}
	c.prompt = max(c.prompt, 1)
	c.cached = min(c.cached, c.prompt)
	return c, nil
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
