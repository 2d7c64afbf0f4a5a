package mock

import "strconv"

// The OpenAI chat-completions wire format.

func (e end) openAI() string {
	switch e {
	case endLength:
		return "length"
	case endTool:
		return "tool_calls"
	}
	return "stop"
}

// appendChatHead appends the fields every completion and chunk starts with.
func appendChatHead(b []byte, a *answer, object string) []byte {
	b = append(b, `{"id":"chatcmpl-mock-`...)
	b = strconv.AppendUint(b, a.id, 10)
	b = append(b, `","object":"`...)
	b = append(b, object...)
	b = append(b, `","created":`...)
	b = strconv.AppendInt(b, a.created, 10)
	b = append(b, `,"model":`...)
	b = appendString(b, a.c.model)
	return append(b, `,"system_fingerprint":"fp_mock"`...)
}

func appendChatUsage(b []byte, a *answer) []byte {
	out := a.outputTokens()
	b = append(b, `{"prompt_tokens":`...)
	b = appendInt(b, a.c.prompt)
	b = append(b, `,"completion_tokens":`...)
	b = appendInt(b, out)
	b = append(b, `,"total_tokens":`...)
	b = appendInt(b, a.c.prompt+out)
	b = append(b, `,"prompt_tokens_details":{"cached_tokens":`...)
	b = appendInt(b, a.c.cached)
	return append(b, `,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}`...)
}

// appendChatCompletion appends a whole (non-streamed) chat completion.
func appendChatCompletion(b []byte, a *answer) []byte {
	b = appendChatHead(b, a, "chat.completion")
	b = append(b, `,"choices":[{"index":0,"message":{"role":"assistant","content":`...)
	if a.text == "" && len(a.calls) > 0 {
		b = append(b, "null"...)
	} else {
		b = appendString(b, a.text)
	}
	if len(a.calls) > 0 {
		b = append(b, `,"tool_calls":[`...)
		for i := range a.calls {
			if i > 0 {
				b = append(b, ',')
			}
			c := &a.calls[i]
			b = append(b, `{"id":`...)
			b = appendString(b, c.id)
			b = append(b, `,"type":"function","function":{"name":`...)
			b = appendString(b, c.name)
			b = append(b, `,"arguments":`...)
			b = appendString(b, c.args)
			b = append(b, "}}"...)
		}
		b = append(b, ']')
	}
	b = append(b, `,"refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"`...)
	b = append(b, a.end.openAI()...)
	b = append(b, `"}],"usage":`...)
	b = appendChatUsage(b, a)
	return append(b, `,"service_tier":"default"}`...)
}

// chatChunkTail closes a chunk: with stream_options.include_usage every
// chunk but the last carries "usage":null.
func chatChunkTail(b []byte, a *answer) []byte {
	if a.c.usage {
		b = append(b, `,"usage":null`...)
	}
	return append(b, "}\n\n"...)
}

func appendChatRole(b []byte, a *answer) []byte {
	b = append(b, "data: "...)
	b = appendChatHead(b, a, "chat.completion.chunk")
	b = append(b, `,"choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]`...)
	return chatChunkTail(b, a)
}

func appendChatDelta(b []byte, a *answer, piece string) []byte {
	b = append(b, "data: "...)
	b = appendChatHead(b, a, "chat.completion.chunk")
	b = append(b, `,"choices":[{"index":0,"delta":{"content":`...)
	b = appendString(b, piece)
	b = append(b, `},"logprobs":null,"finish_reason":null}]`...)
	return chatChunkTail(b, a)
}

func appendChatFinish(b []byte, a *answer) []byte {
	b = append(b, "data: "...)
	b = appendChatHead(b, a, "chat.completion.chunk")
	b = append(b, `,"choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"`...)
	b = append(b, a.end.openAI()...)
	b = append(b, `"}]`...)
	return chatChunkTail(b, a)
}

func appendChatUsageChunk(b []byte, a *answer) []byte {
	b = append(b, "data: "...)
	b = appendChatHead(b, a, "chat.completion.chunk")
	b = append(b, `,"choices":[],"usage":`...)
	b = appendChatUsage(b, a)
	return append(b, "}\n\n"...)
}

// appendChatToolStart appends the chunk that opens tool call i: its id, type
// and name, with empty arguments that later chunks extend.
func appendChatToolStart(b []byte, a *answer, i int, c *call) []byte {
	b = append(b, "data: "...)
	b = appendChatHead(b, a, "chat.completion.chunk")
	b = append(b, `,"choices":[{"index":0,"delta":{"tool_calls":[{"index":`...)
	b = appendInt(b, i)
	b = append(b, `,"id":`...)
	b = appendString(b, c.id)
	b = append(b, `,"type":"function","function":{"name":`...)
	b = appendString(b, c.name)
	b = append(b, `,"arguments":""}}]},"logprobs":null,"finish_reason":null}]`...)
	return chatChunkTail(b, a)
}

// appendChatToolArgs appends a chunk carrying a fragment of tool call i's
// arguments.
func appendChatToolArgs(b []byte, a *answer, i int, piece string) []byte {
	b = append(b, "data: "...)
	b = appendChatHead(b, a, "chat.completion.chunk")
	b = append(b, `,"choices":[{"index":0,"delta":{"tool_calls":[{"index":`...)
	b = appendInt(b, i)
	b = append(b, `,"function":{"arguments":`...)
	b = appendString(b, piece)
	b = append(b, `}}]},"logprobs":null,"finish_reason":null}]`...)
	return chatChunkTail(b, a)
}
