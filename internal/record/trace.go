package record

import "time"

// Trace is one model call seen in production: an OpenTelemetry GenAI span
// received by `assay collect`, or a line of a JSONL log read by `assay
// ingest`. It is stored once by ID: receiving or ingesting it again stores
// nothing.
type Trace struct {
	// ID is the trace's identity in the store: "<trace id>-<span id>" (hex)
	// for an OTLP span, the mapped id field for a JSONL line (or
	// "sha256:<hex>" of the line's bytes when the mapping names none).
	ID string `json:"id"`
	// TraceID and SpanID are OTLP's (hex; SpanID "" for a JSONL line,
	// TraceID its id).
	TraceID string `json:"trace_id"`
	SpanID  string `json:"span_id,omitempty"`
	// Source is "otlp" or "jsonl:<file name>".
	Source string `json:"source"`
	// Time is when the call started (UTC); LatencyMS how long it took
	// (0 when unknown).
	Time      time.Time `json:"time"`
	LatencyMS float64   `json:"latency_ms"`
	// Operation is gen_ai.operation.name (chat, text_completion,
	// execute_tool, ...); Provider gen_ai.provider.name (or the older
	// gen_ai.system).
	Operation string `json:"operation,omitempty"`
	Provider  string `json:"provider,omitempty"`
	// Model is the requested model (gen_ai.request.model; the response
	// model when no request model was recorded); ResponseModel the model
	// that answered.
	Model         string `json:"model"`
	ResponseModel string `json:"response_model,omitempty"`
	InputTokens   int    `json:"input_tokens"`
	OutputTokens  int    `json:"output_tokens"`
	// CostUSD is priced from the spec's traces.prices for Model when it
	// has a price (Priced); 0 and Priced false otherwise.
	CostUSD float64 `json:"cost_usd"`
	Priced  bool    `json:"priced,omitempty"`
	// System is the system instructions (gen_ai.system_instructions, or a
	// leading system message); Input the conversation sent; Output the
	// reply (usually one assistant message, with its tool calls).
	System       string    `json:"system,omitempty"`
	Input        []Message `json:"input"`
	Output       []Message `json:"output"`
	FinishReason string    `json:"finish_reason,omitempty"`
	// ErrorType is error.type when the call failed ("" when it did not).
	ErrorType string `json:"error_type,omitempty"`
	// Attributes are the span's attributes (or the mapped attributes of a
	// JSONL line) as a JSON object: nothing unknown is dropped, and the
	// scalar ones mapped into fields (model, tokens, ...) are kept too.
	// The conversation is stored once: an attribute whose whole content
	// System, Input or Output holds (gen_ai.input.messages,
	// gen_ai.output.messages, gen_ai.system_instructions, the indexed
	// gen_ai.prompt.N.* / gen_ai.completion.N.* fields) is left out; one
	// read only in part (a part kind or a field a Message does not hold)
	// is kept whole. Resource is the OTLP resource's attributes as a JSON
	// object ("{}" or nil when none).
	Attributes []byte `json:"attributes,omitempty"`
	Resource   []byte `json:"resource,omitempty"`
	// Redactions counts the values the privacy redaction replaced before
	// the trace was stored.
	Redactions int `json:"redactions,omitempty"`
	// Received is when assay stored the trace.
	Received time.Time `json:"received"`
}

// Message is one message of a trace's conversation.
type Message struct {
	Role string `json:"role"` // system, user, assistant, tool
	// Content is the message's text (its text parts joined by newlines).
	Content string `json:"content"`
	// ToolCalls are an assistant message's calls; ToolCallID is a tool
	// message's answer to one.
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	Name       string     `json:"name,omitempty"`
}

// OutputText is the text of the trace's reply: its output messages'
// contents joined by newlines.
func (t *Trace) OutputText() string {
	s := ""
	for i, m := range t.Output {
		if i > 0 {
			s += "\n"
		}
		s += m.Content
	}
	return s
}

// OutputToolCalls are the tool calls of the trace's reply, in order.
func (t *Trace) OutputToolCalls() []ToolCall {
	var cs []ToolCall
	for _, m := range t.Output {
		cs = append(cs, m.ToolCalls...)
	}
	return cs
}

// Sample is a recorded, reproducible sample of stored traces (assay
// sample): which traces, drawn how, and each one's selection probability,
// so a rate over the sample estimates the rate over its population.
type Sample struct {
	// ID names the sample (given, or "s-" + a run-ID-like stamp).
	ID      string    `json:"id"`
	Created time.Time `json:"created"`
	// Since and Until bound the traces' times, [Since, Until).
	Since time.Time `json:"since"`
	Until time.Time `json:"until"`
	// Filter is the population's other conditions as given on the command
	// line (e.g. "model=gpt-4o"), "" when none.
	Filter string `json:"filter,omitempty"`
	// By are the strata keys ("model", "provider", "operation", "source",
	// or an attribute's name); none for a simple (reservoir) sample.
	By []string `json:"by,omitempty"`
	// Per is the number drawn from each stratum (Size for a simple sample).
	Per  int    `json:"per"`
	Seed uint64 `json:"seed"`
	// Strata are the population's strata with their sizes and draws.
	Strata []SampleStratum `json:"strata"`
	// Items are the drawn traces in draw order.
	Items []SampleItem `json:"items"`
}

// SampleStratum is one stratum of a sample's population.
type SampleStratum struct {
	// Key is the stratum's values joined as "k=v,k=v" ("" for a simple
	// sample).
	Key        string `json:"key"`
	Population int    `json:"population"`
	Drawn      int    `json:"drawn"`
}

// SampleItem is one drawn trace with its stratum and weight (the inverse
// of its selection probability: stratum population / drawn).
type SampleItem struct {
	TraceID string  `json:"trace_id"`
	Stratum string  `json:"stratum"`
	Weight  float64 `json:"weight"`
}
