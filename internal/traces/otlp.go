package traces

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/assay-eval/assay/internal/record"
)

// The OpenTelemetry GenAI semantic conventions' names assay reads. The
// current form (semantic conventions 1.37 on) carries the conversation in
// gen_ai.input.messages, gen_ai.output.messages and
// gen_ai.system_instructions (structured, or a JSON string); the older
// forms carry it in indexed attributes (gen_ai.prompt.N.*,
// gen_ai.completion.N.*, as OpenLLMetry writes them) or in span events
// (gen_ai.user.message, gen_ai.choice, ...).
const (
	AttrOperation          = "gen_ai.operation.name"
	AttrProvider           = "gen_ai.provider.name"
	AttrSystem             = "gen_ai.system" // older: the provider
	AttrRequestModel       = "gen_ai.request.model"
	AttrResponseModel      = "gen_ai.response.model"
	AttrInputTokens        = "gen_ai.usage.input_tokens"
	AttrOutputTokens       = "gen_ai.usage.output_tokens"
	AttrPromptTokens       = "gen_ai.usage.prompt_tokens"     // older input tokens
	AttrCompletionTokens   = "gen_ai.usage.completion_tokens" // older output tokens
	AttrInputMessages      = "gen_ai.input.messages"
	AttrOutputMessages     = "gen_ai.output.messages"
	AttrSystemInstructions = "gen_ai.system_instructions"
	AttrFinishReasons      = "gen_ai.response.finish_reasons"
	AttrErrorType          = "error.type"
	AttrToolName           = "gen_ai.tool.name"
	AttrToolCallID         = "gen_ai.tool.call.id"
	AttrToolCallArguments  = "gen_ai.tool.call.arguments"
	AttrToolCallResult     = "gen_ai.tool.call.result"
	// The deprecated whole-conversation attributes (a JSON list of
	// messages), also carried by the gen_ai.content.prompt and
	// gen_ai.content.completion events.
	AttrPrompt     = "gen_ai.prompt"
	AttrCompletion = "gen_ai.completion"

	// EventInferenceDetails carries the current form's attributes on an
	// event instead of the span.
	EventInferenceDetails = "gen_ai.client.inference.operation.details"
	EventChoice           = "gen_ai.choice"
	EventContentPrompt    = "gen_ai.content.prompt"
	EventContentComplete  = "gen_ai.content.completion"
	// eventBody is where some instrumentations put an event's body (a
	// JSON object) on a span event, which has no body of its own.
	eventBody = "gen_ai.event.content"
)

// messageEvents are the event-based form's input events and their roles.
var messageEvents = map[string]string{
	"gen_ai.system.message":    "system",
	"gen_ai.user.message":      "user",
	"gen_ai.assistant.message": "assistant",
	"gen_ai.tool.message":      "tool",
}

// OTLPError is a span that cannot be stored, located in its request.
type OTLPError struct {
	// Where is the span's place in the request:
	// resource_spans[i].scope_spans[j].spans[k].
	Where  string
	Reason string
}

func (e *OTLPError) Error() string { return e.Where + ": " + e.Reason }

// OTLPCount is what a request held.
type OTLPCount struct {
	// Spans is every span of the request; GenAI those mapped to traces;
	// Ignored the others (a span with no gen_ai.* attribute or event).
	Spans, GenAI, Ignored int
}

// IsGenAI reports whether a span is a GenAI span: one with a gen_ai.*
// attribute or a gen_ai.* event.
func IsGenAI(s ptrace.Span) bool {
	for k := range s.Attributes().All() {
		if strings.HasPrefix(k, "gen_ai.") {
			return true
		}
	}
	for _, e := range s.Events().All() {
		if strings.HasPrefix(e.Name(), "gen_ai.") {
			return true
		}
	}
	return false
}

// FromOTLP maps the GenAI spans of td into traces, received at received
// (their Source "otlp"); other spans are counted as ignored. A GenAI span
// without a trace or span ID fails the whole request: nothing of it should
// be stored.
func FromOTLP(td ptrace.Traces, received time.Time) ([]record.Trace, OTLPCount, error) {
	var n OTLPCount
	var ts []record.Trace
	received = received.UTC()
	for i, rs := range td.ResourceSpans().All() {
		var resource []byte
		for j, ss := range rs.ScopeSpans().All() {
			for k, s := range ss.Spans().All() {
				n.Spans++
				if !IsGenAI(s) {
					n.Ignored++
					continue
				}
				where := func() string {
					return fmt.Sprintf("resource_spans[%d].scope_spans[%d].spans[%d]", i, j, k)
				}
				if s.TraceID().IsEmpty() {
					return nil, n, &OTLPError{where(), "the span has no trace_id (16 zero bytes); every span needs one"}
				}
				if s.SpanID().IsEmpty() {
					return nil, n, &OTLPError{where(), "the span has no span_id (8 zero bytes); every span needs one"}
				}
				if resource == nil {
					resource = mapJSON(rs.Resource().Attributes())
				}
				t := Span(s, received)
				t.Resource = resource
				ts = append(ts, t)
				n.GenAI++
			}
		}
	}
	return ts, n, nil
}

// Span maps one GenAI span into a trace (without its resource).
func Span(s ptrace.Span, received time.Time) record.Trace {
	a := s.Attributes()
	tid, sid := s.TraceID().String(), s.SpanID().String()
	t := record.Trace{
		ID: tid + "-" + sid, TraceID: tid, SpanID: sid, Source: "otlp",
		Operation:     str(a, AttrOperation),
		Provider:      first(str(a, AttrProvider), str(a, AttrSystem)),
		Model:         first(str(a, AttrRequestModel), str(a, AttrResponseModel)),
		ResponseModel: str(a, AttrResponseModel),
		InputTokens:   first(count(a, AttrInputTokens), count(a, AttrPromptTokens)),
		OutputTokens:  first(count(a, AttrOutputTokens), count(a, AttrCompletionTokens)),
		ErrorType:     str(a, AttrErrorType),
		Received:      received,
	}
	start, end := s.StartTimestamp(), s.EndTimestamp()
	switch {
	case start != 0:
		t.Time = start.AsTime().UTC()
		if end >= start {
			t.LatencyMS = float64(end-start) / 1e6
		}
	case end != 0:
		t.Time = end.AsTime().UTC()
	default:
		t.Time = received
	}
	if t.ErrorType == "" && s.Status().Code() == ptrace.StatusCodeError {
		// The conventions' value when the failure has no better name.
		t.ErrorType = "_OTHER"
	}

	var c conversation
	c.fromAttributes(a, true)
	details := findEvent(s, EventInferenceDetails)
	if details.ok {
		var d conversation
		d.fromAttributes(details.e.Attributes(), false)
		c.fill(d)
	}
	c.fill(indexed(a))
	c.fill(fromEvents(s))
	c.fill(deprecated(a, s))
	if t.Operation == "execute_tool" {
		c.fill(toolSpan(a))
	}

	t.Input, t.Output, t.System = c.input, c.output, c.system
	if !c.haveSystem {
		// A leading system message is the system instructions.
		var sys []string
		for len(t.Input) > 0 && t.Input[0].Role == "system" && len(t.Input[0].ToolCalls) == 0 {
			sys = append(sys, t.Input[0].Content)
			t.Input = t.Input[1:]
		}
		t.System = strings.Join(sys, "\n")
	}
	if t.Input == nil {
		t.Input = []record.Message{}
	}
	if t.Output == nil {
		t.Output = []record.Message{}
	}
	if v, ok := a.Get(AttrFinishReasons); ok {
		t.FinishReason = strings.Join(strs(v), ",")
	}
	if t.FinishReason == "" {
		t.FinishReason = c.finish
	}
	if c.outFinish != "" && c.outFinish != t.FinishReason {
		// The output attribute's finish_reason is not the trace's: keep
		// the attribute, which says it.
		c.outKeys = nil
	}
	t.Attributes = attributesJSON(a, c)
	return t
}

// attributesJSON is the span's attributes as a JSON object, less those
// whose whole content the trace's conversation holds (c's keys): the
// conversation is stored once. An attribute the mapping read only in
// part (a part type or a field it does not map) is kept whole.
func attributesJSON(a pcommon.Map, c conversation) []byte {
	n := len(c.inKeys) + len(c.outKeys) + len(c.sysKeys)
	if n == 0 {
		return mapJSON(a)
	}
	skip := make(map[string]bool, n)
	for _, keys := range [][]string{c.inKeys, c.outKeys, c.sysKeys} {
		for _, k := range keys {
			skip[k] = true
		}
	}
	var b bytes.Buffer
	writeMapSkip(&b, a, skip)
	return b.Bytes()
}

// conversation is what one form of the conventions says of the messages.
type conversation struct {
	input, output []record.Message
	system        string
	haveSystem    bool
	finish        string
	// inKeys, outKeys and sysKeys are the span attributes whose whole
	// content is input, output and system (left out of the stored
	// attributes); outFinish the finish_reason the output attributes
	// carry, which the trace's FinishReason must equal for them to be
	// left out.
	inKeys, outKeys, sysKeys []string
	outFinish                string
}

// fill takes from o what c does not have yet: earlier forms win.
func (c *conversation) fill(o conversation) {
	if len(c.input) == 0 {
		c.input, c.inKeys = o.input, o.inKeys
	}
	if len(c.output) == 0 {
		c.output, c.outKeys, c.outFinish = o.output, o.outKeys, o.outFinish
		if c.finish == "" {
			c.finish = o.finish
		}
	}
	if !c.haveSystem && o.haveSystem {
		c.system, c.haveSystem, c.sysKeys = o.system, true, o.sysKeys
	}
}

// fromAttributes reads the current form: gen_ai.input.messages,
// gen_ai.output.messages, gen_ai.system_instructions. When span is true
// (a is the span's attributes), an attribute read exactly — every message
// field and part of a kind the trace holds — is noted as held.
func (c *conversation) fromAttributes(a pcommon.Map, span bool) {
	if v, ok := a.Get(AttrInputMessages); ok {
		var finish string
		var exact bool
		c.input, finish, exact = messageList(valueJSON(v), "user")
		if span && exact && finish == "" && len(c.input) > 0 {
			c.inKeys = []string{AttrInputMessages}
		}
	}
	if v, ok := a.Get(AttrOutputMessages); ok {
		var exact bool
		c.output, c.finish, exact = messageList(valueJSON(v), "assistant")
		if span && exact && len(c.output) > 0 {
			c.outKeys, c.outFinish = []string{AttrOutputMessages}, c.finish
		}
	}
	if v, ok := a.Get(AttrSystemInstructions); ok {
		if s, exact, ok := systemTextExact(valueJSON(v)); ok {
			c.system, c.haveSystem = s, true
			if span && exact {
				c.sysKeys = []string{AttrSystemInstructions}
			}
		}
	}
}

// decodeExact decodes raw into v, failing on a field v has no place for
// (where json.Unmarshal would drop it) or on anything after the value.
func decodeExact(raw []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return err
	}
	if _, err := d.Token(); err != io.EOF {
		return errors.New("data after the value")
	}
	return nil
}

// currentForm decodes raw as the current form's T: by the fast reader,
// else decodeExact (exact: nothing in raw that T has no place for), else
// leniently by json.Unmarshal (exact false); ok false when none reads it.
func currentForm[T any](raw []byte, fast func([]byte) (T, bool)) (v T, exact, ok bool) {
	if v, ok := fast(raw); ok {
		return v, true, true
	}
	if decodeExact(raw, &v) == nil {
		return v, true, true
	}
	var lenient T // not what the failed decodes left
	if json.Unmarshal(raw, &lenient) == nil {
		return lenient, false, true
	}
	var zero T
	return zero, false, false
}

// mappedParts reports whether every part is of a kind a message holds
// whole (text, tool_call, tool_call_response) with only the fields it
// holds of that kind, and only text when textOnly.
func mappedParts(parts []typedPart, textOnly bool) bool {
	for _, p := range parts {
		switch p.Type {
		case "text":
			if p.ID != "" || p.Name != "" || p.Arguments != nil || p.Response != nil || p.Result != nil {
				return false
			}
		case "tool_call":
			if textOnly || p.Content != "" || p.Response != nil || p.Result != nil {
				return false
			}
		case "tool_call_response":
			if textOnly || p.Content != "" || p.Name != "" || p.Arguments != nil || (p.Response != nil && p.Result != nil) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// systemText is the text of gen_ai.system_instructions: a list of parts
// (their text parts joined by newlines), or a plain string.
func systemText(raw []byte) (string, bool) {
	text, _, ok := systemTextExact(raw)
	return text, ok
}

// systemTextExact is systemText, and whether the text is all the value
// holds (exact): a string, or text parts with no other field.
func systemTextExact(raw []byte) (text string, exact, ok bool) {
	if parts, exact, ok := currentForm(raw, fastParts); ok {
		return partsMessage(parts, "system")[0].Content, exact && mappedParts(parts, true), true
	}
	var lenient []json.RawMessage
	if json.Unmarshal(raw, &lenient) == nil {
		return partsMessage(lenientParts(lenient), "system")[0].Content, false, true
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true, true
	}
	if !json.Valid(raw) {
		return string(raw), true, true // a string that only looked like JSON
	}
	return "", false, false
}

// messageList reads a JSON list of messages: the current form's
// ({role, parts, finish_reason}) or OpenAI's ({role, content, tool_calls,
// tool_call_id}). It also returns the first finish_reason given, and
// whether the messages hold all the list says (exact: the current form
// with no field, part kind or second finish_reason they do not hold).
func messageList(raw []byte, role string) (ms []record.Message, finish string, exact bool) {
	// The current form decoded at once; anything else (OpenAI's form, a
	// field of an unexpected type) read leniently, field by field.
	typed, exact, ok := currentForm(raw, fastMessages)
	if ok && !slices.ContainsFunc(typed, func(m typedMessage) bool { return m.Parts == nil }) {
		for _, m := range typed {
			exact = exact && mappedParts(m.Parts, false) && (m.FinishReason == "" || finish == "" || m.FinishReason == finish)
			r := role
			if m.Role != "" {
				r = m.Role
			}
			ms = append(ms, named(partsMessage(m.Parts, r), m.Name)...)
			if finish == "" {
				finish = m.FinishReason
			}
		}
		return ms, finish, exact
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, "", false
	}
	for _, r := range list {
		var obj map[string]json.RawMessage
		if json.Unmarshal(r, &obj) != nil {
			continue
		}
		got, f := message(obj, role)
		ms = append(ms, got...)
		if finish == "" {
			finish = f
		}
	}
	return ms, finish, false
}

// typedMessage is a current-form message.
type typedMessage struct {
	Role         string      `json:"role"`
	Name         string      `json:"name"`
	FinishReason string      `json:"finish_reason"`
	Parts        []typedPart `json:"parts"`
}

// typedPart is a part of a current-form message: text (content), a tool
// call (id, name, arguments) or a tool's answer (id, response; result
// before semantic conventions 1.38).
type typedPart struct {
	Type      string          `json:"type"`
	Content   string          `json:"content"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Response  json.RawMessage `json:"response"`
	Result    json.RawMessage `json:"result"`
}

// named gives the messages a message's name when they have none.
func named(ms []record.Message, name string) []record.Message {
	if name == "" {
		return ms
	}
	for i := range ms {
		if ms[i].Name == "" {
			ms[i].Name = name
		}
	}
	return ms
}

// message reads one message object of either form (several messages when
// it answers several tool calls: each answer is a tool message).
func message(obj map[string]json.RawMessage, role string) ([]record.Message, string) {
	if r := jsonString(obj["role"]); r != "" {
		role = r
	}
	finish := jsonString(obj["finish_reason"])
	if p, ok := obj["parts"]; ok {
		var raw []json.RawMessage
		if json.Unmarshal(p, &raw) != nil {
			return nil, finish
		}
		return named(partsMessage(lenientParts(raw), role), jsonString(obj["name"])), finish
	}
	// OpenAI's form (and the events' bodies).
	m := record.Message{Role: role, Content: contentText(obj["content"]),
		ToolCallID: first(jsonString(obj["tool_call_id"]), jsonString(obj["id"])),
		Name:       jsonString(obj["name"])}
	if role != "tool" {
		m.ToolCallID = jsonString(obj["tool_call_id"])
	}
	m.ToolCalls = toolCalls(obj["tool_calls"])
	if fc, ok := obj["function_call"]; ok {
		var f map[string]json.RawMessage
		if json.Unmarshal(fc, &f) == nil {
			m.ToolCalls = append(m.ToolCalls, record.ToolCall{Name: jsonString(f["name"]), Arguments: arguments(f["arguments"])})
		}
	}
	return []record.Message{m}, finish
}

// partsMessage turns a current-form message's parts into messages: the
// text parts joined into the content, tool_call parts into tool calls, and
// each tool_call_response part a tool message of its own.
func partsMessage(parts []typedPart, role string) []record.Message {
	m := record.Message{Role: role}
	var texts []string
	var answers []record.Message
	for _, p := range parts {
		switch p.Type {
		case "text":
			texts = append(texts, p.Content)
		case "tool_call":
			m.ToolCalls = append(m.ToolCalls, record.ToolCall{ID: p.ID, Name: p.Name, Arguments: arguments(p.Arguments)})
		case "tool_call_response":
			res := p.Response
			if res == nil {
				res = p.Result // semantic conventions before 1.38
			}
			answers = append(answers, record.Message{Role: role, ToolCallID: p.ID, Content: arguments(res)})
		}
	}
	m.Content = strings.Join(texts, "\n")
	if len(answers) > 0 && len(texts) == 0 && len(m.ToolCalls) == 0 {
		return answers
	}
	return append([]record.Message{m}, answers...)
}

// lenientParts reads parts field by field: a field of another type than
// expected reads as empty instead of failing the message.
func lenientParts(raw []json.RawMessage) []typedPart {
	var parts []typedPart
	for _, r := range raw {
		var p map[string]json.RawMessage
		if json.Unmarshal(r, &p) != nil {
			continue
		}
		parts = append(parts, typedPart{Type: jsonString(p["type"]), Content: jsonString(p["content"]), ID: jsonString(p["id"]),
			Name: jsonString(p["name"]), Arguments: p["arguments"], Response: p["response"], Result: p["result"]})
	}
	return parts
}

// contentText is a content field's text: a string as it is; a list of
// parts ({type: text, text} or {type: text, content}) their texts joined
// by newlines; anything else its JSON.
func contentText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []map[string]json.RawMessage
	if json.Unmarshal(raw, &parts) == nil {
		var texts []string
		for _, p := range parts {
			if t := jsonString(p["text"]); t != "" {
				texts = append(texts, t)
			} else if t := jsonString(p["content"]); t != "" {
				texts = append(texts, t)
			}
		}
		return strings.Join(texts, "\n")
	}
	return compact(raw)
}

// toolCalls reads OpenAI's tool_calls list ({id, type, function: {name,
// arguments}}) or a flat one ({id, name, arguments}).
func toolCalls(raw json.RawMessage) []record.ToolCall {
	if len(raw) == 0 {
		return nil
	}
	var list []map[string]json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		return nil
	}
	var cs []record.ToolCall
	for _, c := range list {
		tc := record.ToolCall{ID: jsonString(c["id"]), Name: jsonString(c["name"]), Arguments: arguments(c["arguments"])}
		var f map[string]json.RawMessage
		if json.Unmarshal(c["function"], &f) == nil {
			tc.Name = first(jsonString(f["name"]), tc.Name)
			if _, ok := f["arguments"]; ok {
				tc.Arguments = arguments(f["arguments"])
			}
		}
		cs = append(cs, tc)
	}
	return cs
}

// arguments is a tool call's arguments (or a tool's answer) as text: a
// JSON string as the string it holds (OpenAI sends arguments as a string
// of JSON), any other value as its compact JSON, nothing as "".
func arguments(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
	}
	if !bytes.ContainsAny(raw, " \t\n\r") {
		return string(raw) // nothing to compact (and, not JSON, as it is)
	}
	return compact(raw)
}

func compact(raw []byte) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// jsonString is a JSON string's value ("" for anything else).
func jsonString(raw json.RawMessage) string {
	var s string
	if len(raw) == 0 || json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// indexed reads the older indexed form: gen_ai.prompt.N.{role, content,
// tool_call_id, name, tool_calls.M.{id, name, arguments}} and
// gen_ai.completion.N.{role, content, finish_reason, tool_calls.M.*,
// function_call.{name, arguments}}.
func indexed(a pcommon.Map) conversation {
	prompts, completions := map[int]*indexedMessage{}, map[int]*indexedMessage{}
	var inKeys, outKeys []string
	for k, v := range a.All() {
		var rest string
		var into map[int]*indexedMessage
		isPrompt := false
		if r, ok := strings.CutPrefix(k, AttrPrompt+"."); ok {
			rest, into, isPrompt = r, prompts, true
		} else if r, ok := strings.CutPrefix(k, AttrCompletion+"."); ok {
			rest, into = r, completions
		} else {
			continue
		}
		idx, field, ok := strings.Cut(rest, ".")
		n, err := strconv.Atoi(idx)
		if !ok || err != nil || n < 0 || n > maxIndex {
			continue
		}
		m := into[n]
		if m == nil {
			m = &indexedMessage{calls: map[int]*record.ToolCall{}}
			into[n] = m
		}
		m.set(field, v)
		if indexedExact(field, v) {
			if isPrompt {
				inKeys = append(inKeys, k)
			} else {
				outKeys = append(outKeys, k)
			}
		}
	}
	c := conversation{inKeys: inKeys, outKeys: outKeys}
	c.input = indexedList(prompts, "user")
	c.output = indexedList(completions, "assistant")
	for _, n := range slices.Sorted(mapKeys(completions)) {
		if f := completions[n].finish; f != "" {
			c.finish = f
			break
		}
	}
	return c
}

// indexedExact reports whether an indexed attribute's field is held
// whole by the message it was read into: a string the message keeps as it
// is (not finish_reason, which the trace keeps only once, nor a content
// that is a list of parts, read as its texts).
func indexedExact(field string, v pcommon.Value) bool {
	if v.Type() != pcommon.ValueTypeStr {
		return false
	}
	switch field {
	case "role", "tool_call_id", "name", "function_call.name", "function_call.arguments":
		return true
	case "content":
		return !strings.HasPrefix(v.Str(), "[{") || indexedContent(v) == v.Str()
	}
	rest, ok := strings.CutPrefix(field, "tool_calls.")
	if !ok {
		return false
	}
	idx, f, ok := strings.Cut(rest, ".")
	n, err := strconv.Atoi(idx)
	return ok && err == nil && n >= 0 && n <= maxIndex && (f == "id" || f == "name" || f == "arguments")
}

// maxIndex bounds the indexes of the indexed form (a span never has more
// messages than this; a larger index is not a message).
const maxIndex = 1 << 20

type indexedMessage struct {
	msg    record.Message
	finish string
	calls  map[int]*record.ToolCall
}

func (m *indexedMessage) set(field string, v pcommon.Value) {
	switch field {
	case "role":
		m.msg.Role = v.AsString()
	case "content":
		m.msg.Content = indexedContent(v)
	case "tool_call_id":
		m.msg.ToolCallID = v.AsString()
	case "name":
		m.msg.Name = v.AsString()
	case "finish_reason":
		m.finish = v.AsString()
	case "function_call.name":
		m.call(-1).Name = v.AsString()
	case "function_call.arguments":
		m.call(-1).Arguments = v.AsString()
	default:
		rest, ok := strings.CutPrefix(field, "tool_calls.")
		if !ok {
			return
		}
		idx, f, ok := strings.Cut(rest, ".")
		n, err := strconv.Atoi(idx)
		if !ok || err != nil || n < 0 || n > maxIndex {
			return
		}
		switch f {
		case "id":
			m.call(n).ID = v.AsString()
		case "name":
			m.call(n).Name = v.AsString()
		case "arguments":
			m.call(n).Arguments = v.AsString()
		}
	}
}

// indexedContent is an indexed message's content: a string as it is (a
// JSON list of parts, as OpenLLMetry writes a multi-part content, as its
// texts), a structured value as its text.
func indexedContent(v pcommon.Value) string {
	if v.Type() != pcommon.ValueTypeStr {
		return contentText(valueJSON(v))
	}
	s := v.Str()
	if strings.HasPrefix(s, "[{") {
		var parts []map[string]json.RawMessage
		if json.Unmarshal([]byte(s), &parts) == nil && len(parts) > 0 && allTyped(parts) {
			return contentText(json.RawMessage(s))
		}
	}
	return s
}

func allTyped(parts []map[string]json.RawMessage) bool {
	for _, p := range parts {
		if jsonString(p["type"]) == "" {
			return false
		}
	}
	return true
}

func (m *indexedMessage) call(n int) *record.ToolCall {
	c := m.calls[n]
	if c == nil {
		c = &record.ToolCall{}
		m.calls[n] = c
	}
	return c
}

func indexedList(ms map[int]*indexedMessage, role string) []record.Message {
	var out []record.Message
	for _, n := range slices.Sorted(mapKeys(ms)) {
		m := ms[n].msg
		if m.Role == "" {
			m.Role = role
		}
		calls := ms[n].calls
		for _, i := range slices.Sorted(mapKeys(calls)) {
			m.ToolCalls = append(m.ToolCalls, *calls[i])
		}
		out = append(out, m)
	}
	return out
}

func mapKeys[V any](m map[int]V) func(func(int) bool) {
	return func(yield func(int) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// fromEvents reads the event-based form: gen_ai.{system,user,assistant,
// tool}.message events are the input, gen_ai.choice events the output, in
// the span's order (choices by their index). An event's body fields are
// its attributes (content, role, id, tool_calls; index, finish_reason,
// message for a choice), or a JSON object in gen_ai.event.content.
func fromEvents(s ptrace.Span) conversation {
	var c conversation
	type choice struct {
		index int
		ms    []record.Message
		fin   string
	}
	var choices []choice
	for i, e := range s.Events().All() {
		role, isMsg := messageEvents[e.Name()]
		if !isMsg && e.Name() != EventChoice {
			continue
		}
		body := eventFields(e.Attributes())
		if isMsg {
			ms, _ := message(body, role)
			c.input = append(c.input, ms...)
			continue
		}
		ch := choice{index: i}
		if n, err := strconv.Atoi(compact(body["index"])); err == nil {
			ch.index = n
		}
		ch.fin = jsonString(body["finish_reason"])
		msg := body
		var inner map[string]json.RawMessage
		if json.Unmarshal(body["message"], &inner) == nil {
			msg = inner
		}
		ch.ms, _ = message(msg, "assistant")
		choices = append(choices, ch)
	}
	slices.SortStableFunc(choices, func(a, b choice) int { return a.index - b.index })
	for _, ch := range choices {
		c.output = append(c.output, ch.ms...)
		if c.finish == "" {
			c.finish = ch.fin
		}
	}
	return c
}

// eventFields are an event's body fields as JSON values.
func eventFields(a pcommon.Map) map[string]json.RawMessage {
	out := map[string]json.RawMessage{}
	if v, ok := a.Get(eventBody); ok {
		if json.Unmarshal(valueJSON(v), &out) == nil {
			return out
		}
	}
	for k, v := range a.All() {
		if _, dup := out[k]; dup {
			continue
		}
		raw := valueJSON(v)
		// tool_calls and message are structured; a string holding JSON is
		// read as the JSON it holds.
		if (k == "tool_calls" || k == "message") && v.Type() == pcommon.ValueTypeStr {
			raw = []byte(v.Str())
		}
		out[k] = raw
	}
	return out
}

// deprecated reads the oldest form: a JSON list of messages in
// gen_ai.prompt / gen_ai.completion, on the span or on the
// gen_ai.content.prompt / gen_ai.content.completion events.
func deprecated(a pcommon.Map, s ptrace.Span) conversation {
	var c conversation
	read := func(m pcommon.Map, key, role string) ([]record.Message, string) {
		v, ok := m.Get(key)
		if !ok || v.Type() != pcommon.ValueTypeStr {
			return nil, ""
		}
		ms, finish, _ := messageList([]byte(v.Str()), role)
		return ms, finish
	}
	c.input, _ = read(a, AttrPrompt, "user")
	c.output, c.finish = read(a, AttrCompletion, "assistant")
	if e := findEvent(s, EventContentPrompt); e.ok && len(c.input) == 0 {
		c.input, _ = read(e.e.Attributes(), AttrPrompt, "user")
	}
	if e := findEvent(s, EventContentComplete); e.ok && len(c.output) == 0 {
		c.output, c.finish = read(e.e.Attributes(), AttrCompletion, "assistant")
	}
	return c
}

// toolSpan reads an execute_tool span: the call (gen_ai.tool.name,
// gen_ai.tool.call.id, gen_ai.tool.call.arguments) as the input, the tool's
// answer (gen_ai.tool.call.result) as the output.
func toolSpan(a pcommon.Map) conversation {
	name, id := str(a, AttrToolName), str(a, AttrToolCallID)
	if name == "" {
		return conversation{}
	}
	var c conversation
	call := record.ToolCall{ID: id, Name: name}
	if v, ok := a.Get(AttrToolCallArguments); ok {
		call.Arguments = text(v)
	}
	c.input = []record.Message{{Role: "assistant", ToolCalls: []record.ToolCall{call}}}
	if v, ok := a.Get(AttrToolCallResult); ok {
		c.output = []record.Message{{Role: "tool", ToolCallID: id, Name: name, Content: text(v)}}
	}
	return c
}

type foundEvent struct {
	e  ptrace.SpanEvent
	ok bool
}

func findEvent(s ptrace.Span, name string) foundEvent {
	for _, e := range s.Events().All() {
		if e.Name() == name {
			return foundEvent{e, true}
		}
	}
	return foundEvent{}
}

// str is a string attribute's value (any other type as its text; "" when
// absent).
func str(a pcommon.Map, key string) string {
	v, ok := a.Get(key)
	if !ok {
		return ""
	}
	return v.AsString()
}

// count is a token count attribute's value: an integer, a whole double or
// a string of digits; 0 otherwise.
func count(a pcommon.Map, key string) int {
	v, ok := a.Get(key)
	if !ok {
		return 0
	}
	switch v.Type() {
	case pcommon.ValueTypeInt:
		if n := v.Int(); n > 0 && n <= math.MaxInt32 {
			return int(n)
		}
	case pcommon.ValueTypeDouble:
		if d := v.Double(); d > 0 && d <= math.MaxInt32 && d == math.Trunc(d) {
			return int(d)
		}
	case pcommon.ValueTypeStr:
		if n, err := strconv.Atoi(strings.TrimSpace(v.Str())); err == nil && n > 0 && n <= math.MaxInt32 {
			return n
		}
	}
	return 0
}

// strs is a string-array attribute's values (a lone string as one; a JSON
// string of a list as its strings).
func strs(v pcommon.Value) []string {
	switch v.Type() {
	case pcommon.ValueTypeSlice:
		var out []string
		for _, e := range v.Slice().All() {
			out = append(out, e.AsString())
		}
		return out
	case pcommon.ValueTypeStr:
		var list []string
		if json.Unmarshal([]byte(v.Str()), &list) == nil {
			return list
		}
		if v.Str() == "" {
			return nil
		}
		return []string{v.Str()}
	}
	return []string{v.AsString()}
}

// text is a string value as it is, any other value as its JSON.
func text(v pcommon.Value) string {
	if v.Type() == pcommon.ValueTypeStr {
		return v.Str()
	}
	return arguments(valueJSON(v))
}

func first[T comparable](vs ...T) T {
	var zero T
	for _, v := range vs {
		if v != zero {
			return v
		}
	}
	return zero
}

// valueJSON is a value as JSON: a string that holds JSON (an object or a
// list, as the conventions allow a structured attribute to be sent) is
// that JSON; any other value its typed JSON.
func valueJSON(v pcommon.Value) []byte {
	if v.Type() == pcommon.ValueTypeStr {
		s := strings.TrimSpace(v.Str())
		if strings.HasPrefix(s, "[") || strings.HasPrefix(s, "{") {
			// Read as JSON by the caller; one that is not reads as nothing
			// (or, where text is wanted, as the string it is).
			return []byte(s)
		}
	}
	var b bytes.Buffer
	writeValue(&b, v, 0)
	return b.Bytes()
}

// mapJSON is a map of attributes as a JSON object of typed values (a
// repeated key keeps its first value, as pcommon.Map.Get reads it).
func mapJSON(m pcommon.Map) []byte {
	var b bytes.Buffer
	writeMap(&b, m, 0)
	return b.Bytes()
}

// maxDepth bounds how deep a nested value is written; deeper values are
// written as the string "[nested too deep]".
const maxDepth = 64

func writeMap(b *bytes.Buffer, m pcommon.Map, depth int) {
	writeMapDepth(b, m, depth, nil)
}

// writeMapSkip writes a span's attribute map less the keys in skip.
func writeMapSkip(b *bytes.Buffer, m pcommon.Map, skip map[string]bool) {
	writeMapDepth(b, m, 0, skip)
}

func writeMapDepth(b *bytes.Buffer, m pcommon.Map, depth int, skip map[string]bool) {
	b.WriteByte('{')
	seen := make(map[string]bool, m.Len())
	for k, v := range m.All() {
		if seen[k] || skip[k] {
			continue
		}
		seen[k] = true
		if len(seen) > 1 {
			b.WriteByte(',')
		}
		writeString(b, k)
		b.WriteByte(':')
		writeValue(b, v, depth+1)
	}
	b.WriteByte('}')
}

func writeValue(b *bytes.Buffer, v pcommon.Value, depth int) {
	if depth > maxDepth {
		writeString(b, "[nested too deep]")
		return
	}
	switch v.Type() {
	case pcommon.ValueTypeStr:
		writeString(b, v.Str())
	case pcommon.ValueTypeInt:
		b.WriteString(strconv.FormatInt(v.Int(), 10))
	case pcommon.ValueTypeDouble:
		d := v.Double()
		switch {
		case math.IsNaN(d):
			writeString(b, "NaN")
		case math.IsInf(d, 1):
			writeString(b, "Infinity")
		case math.IsInf(d, -1):
			writeString(b, "-Infinity")
		default:
			b.WriteString(strconv.FormatFloat(d, 'g', -1, 64))
		}
	case pcommon.ValueTypeBool:
		b.WriteString(strconv.FormatBool(v.Bool()))
	case pcommon.ValueTypeBytes:
		writeString(b, base64.StdEncoding.EncodeToString(v.Bytes().AsRaw()))
	case pcommon.ValueTypeMap:
		writeMap(b, v.Map(), depth)
	case pcommon.ValueTypeSlice:
		b.WriteByte('[')
		for i, e := range v.Slice().All() {
			if i > 0 {
				b.WriteByte(',')
			}
			writeValue(b, e, depth+1)
		}
		b.WriteByte(']')
	default:
		b.WriteString("null")
	}
}

// writeString writes s as a JSON string: quotes, backslashes and control
// characters escaped, invalid UTF-8 replaced by U+FFFD (as encoding/json
// does), everything else as it is.
func writeString(b *bytes.Buffer, s string) {
	const hexDigits = "0123456789abcdef"
	b.WriteByte('"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r != utf8.RuneError || size != 1 {
				i += size
				continue
			}
			b.WriteString(s[start:i])
			b.WriteString(`\ufffd`)
			i++
			start = i
			continue
		}
		b.WriteString(s[start:i])
		switch c {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			b.WriteString(`\u00`)
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&0xf])
		}
		i++
		start = i
	}
	b.WriteString(s[start:])
	b.WriteByte('"')
}
