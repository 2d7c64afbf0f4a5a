package mock

import "strconv"

// The Anthropic messages wire format.

func (e end) anthropic() string {
	switch e {
	case endLength:
		return "max_tokens"
	case endStop:
		return "stop_sequence"
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
	b = append(b, `,"content":[{"type":"text","text":`...)
	b = appendString(b, a.text)
	b = append(b, `}],"stop_reason":"`...)
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
