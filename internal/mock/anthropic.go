package mock

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// The Anthropic messages wire format.

func (e end) anthropic() string {
	switch e {
	case endLength:
		return "max_tokens"
	case endStop:
		return "stop_sequence"
	case endTool:
		return "tool_use"
	}
	return "end_turn"
}

func appendStopSequence(b []byte, a *answer) []byte {
	if a.end == endStop {
		return appendString(b, a.stop)
	}
	return append(b, "null"...)
}

// appendInputUsage appends the input side of usage: input_tokens counts only
// what was not read from the cache, as the Anthropic API reports it.
func appendInputUsage(b []byte, a *answer) []byte {
	b = append(b, `{"input_tokens":`...)
	b = appendInt(b, a.c.prompt-a.c.cached)
	b = append(b, `,"cache_creation_input_tokens":0,"cache_read_input_tokens":`...)
	b = appendInt(b, a.c.cached)
	return append(b, `,"output_tokens":`...)
}

func appendMessageHead(b []byte, a *answer) []byte {
	b = append(b, `{"id":"msg_mock_`...)
	b = strconv.AppendUint(b, a.id, 10)
	b = append(b, `","type":"message","role":"assistant","model":`...)
	return appendString(b, a.c.model)
}

// appendMessage appends a whole (non-streamed) message.
func appendMessage(b []byte, a *answer) []byte {
	b = appendMessageHead(b, a)
	b = append(b, `,"content":[`...)
	if a.text != "" || len(a.calls) == 0 {
		b = append(b, `{"type":"text","text":`...)
		b = appendString(b, a.text)
		b = append(b, '}')
		if len(a.calls) > 0 {
			b = append(b, ',')
		}
	}
	for i := range a.calls {
		if i > 0 {
			b = append(b, ',')
		}
		c := &a.calls[i]
		b = appendToolUse(b, c)
		// A whole message's input must be an object; arguments that are
		// not one (invalid JSON among them) go as a JSON string of their
		// text, which the anthropic provider takes as written (as do
		// arguments that are not valid UTF-8, their bad bytes replaced as
		// in every other string the mock writes).
		if isObject(c.args) && utf8.ValidString(c.args) {
			b = append(b, strings.TrimSpace(c.args)...)
		} else {
			b = appendString(b, c.args)
		}
		b = append(b, '}')
	}
	b = append(b, `],"stop_reason":"`...)
	b = append(b, a.end.anthropic()...)
	b = append(b, `","stop_sequence":`...)
	b = appendStopSequence(b, a)
	b = append(b, `,"usage":`...)
	b = appendInputUsage(b, a)
	b = appendInt(b, a.outputTokens())
	return append(b, `,"service_tier":"standard"}}`...)
}

func appendMessageStart(b []byte, a *answer) []byte {
	b = append(b, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":"...)
	b = appendMessageHead(b, a)
	b = append(b, `,"content":[],"stop_reason":null,"stop_sequence":null,"usage":`...)
	b = appendInputUsage(b, a)
	return append(b, "1,\"service_tier\":\"standard\"}}}\n\n"...)
}

func appendTextDelta(b []byte, piece string) []byte {
	b = append(b, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":"...)
	b = appendString(b, piece)
	return append(b, "}}\n\n"...)
}

func appendMessageDelta(b []byte, a *answer) []byte {
	b = append(b, "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\""...)
	b = append(b, a.end.anthropic()...)
	b = append(b, `","stop_sequence":`...)
	b = appendStopSequence(b, a)
	b = append(b, `},"usage":{"output_tokens":`...)
	b = appendInt(b, a.outputTokens())
	return append(b, "}}\n\n"...)
}

// appendToolUse appends a tool_use block up to its input's value.
func appendToolUse(b []byte, c *call) []byte {
	b = append(b, `{"type":"tool_use","id":`...)
	b = appendString(b, c.id)
	b = append(b, `,"name":`...)
	b = appendString(b, c.name)
	return append(b, `,"input":`...)
}

// appendToolUseStart appends the event that opens a tool_use block, its
// input empty until input_json_delta events fill it.
func appendToolUseStart(b []byte, index int, c *call) []byte {
	b = append(b, "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":"...)
	b = appendInt(b, index)
	b = append(b, `,"content_block":`...)
	b = appendToolUse(b, c)
	return append(b, "{}}}\n\n"...)
}

// appendInputJSONDelta appends a fragment of a tool_use block's input.
func appendInputJSONDelta(b []byte, index int, piece string) []byte {
	b = append(b, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":"...)
	b = appendInt(b, index)
	b = append(b, `,"delta":{"type":"input_json_delta","partial_json":`...)
	b = appendString(b, piece)
	return append(b, "}}\n\n"...)
}

func appendBlockStop(b []byte, index int) []byte {
	b = append(b, "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":"...)
	b = appendInt(b, index)
	return append(b, "}\n\n"...)
}
