package traces_test

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/traces"
)

var received = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

func newSpan(build func(s ptrace.Span)) (ptrace.Traces, ptrace.Span) {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	s := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	s.SetTraceID(pcommon.TraceID{0xab, 1})
	s.SetSpanID(pcommon.SpanID{0xcd, 2})
	build(s)
	return td, s
}

// textPart appends {type: text, content} to a structured parts list.
func textPart(parts pcommon.Slice, content string) {
	p := parts.AppendEmpty().SetEmptyMap()
	p.PutStr("type", "text")
	p.PutStr("content", content)
}

// The conversation in each form the conventions have had, structured or
// as JSON, maps to the same messages.
func TestConversationForms(t *testing.T) {
	for _, c := range []struct {
		name  string
		build func(s ptrace.Span)
		want  record.Trace // only the conversation fields are compared
	}{
		{"current form, structured values", func(s ptrace.Span) {
			a := s.Attributes()
			sys := a.PutEmptySlice("gen_ai.system_instructions")
			textPart(sys, "Be brief.")
			in := a.PutEmptySlice("gen_ai.input.messages")
			m := in.AppendEmpty().SetEmptyMap()
			m.PutStr("role", "user")
			parts := m.PutEmptySlice("parts")
			textPart(parts, "line one")
			textPart(parts, "line two")
			m = in.AppendEmpty().SetEmptyMap()
			m.PutStr("role", "assistant")
			tc := m.PutEmptySlice("parts").AppendEmpty().SetEmptyMap()
			tc.PutStr("type", "tool_call")
			tc.PutStr("id", "c1")
			tc.PutStr("name", "lookup")
			args := tc.PutEmptyMap("arguments")
			args.PutStr("q", "x")
			args.PutInt("n", 3)
			m = in.AppendEmpty().SetEmptyMap()
			m.PutStr("role", "tool")
			// two answers in one message: each a tool message
			rp := m.PutEmptySlice("parts")
			r := rp.AppendEmpty().SetEmptyMap()
			r.PutStr("type", "tool_call_response")
			r.PutStr("id", "c1")
			r.PutEmptyMap("response").PutBool("ok", true)
			r = rp.AppendEmpty().SetEmptyMap()
			r.PutStr("type", "tool_call_response")
			r.PutStr("id", "c2")
			r.PutStr("result", "older key") // semantic conventions before 1.38
			out := a.PutEmptySlice("gen_ai.output.messages")
			m = out.AppendEmpty().SetEmptyMap()
			m.PutStr("role", "assistant")
			m.PutStr("finish_reason", "stop")
			op := m.PutEmptySlice("parts")
			rs := op.AppendEmpty().SetEmptyMap()
			rs.PutStr("type", "reasoning")
			rs.PutStr("content", "thinking, not said")
			textPart(op, "done")
		}, record.Trace{System: "Be brief.",
			Input: []record.Message{
				{Role: "user", Content: "line one\nline two"},
				{Role: "assistant", ToolCalls: []record.ToolCall{{ID: "c1", Name: "lookup", Arguments: `{"q":"x","n":3}`}}},
				{Role: "tool", ToolCallID: "c1", Content: `{"ok":true}`},
				{Role: "tool", ToolCallID: "c2", Content: "older key"},
			},
			Output:       []record.Message{{Role: "assistant", Content: "done"}},
			FinishReason: "stop"}},

		{"current form on the inference details event", func(s ptrace.Span) {
			s.Attributes().PutStr("gen_ai.operation.name", "chat")
			e := s.Events().AppendEmpty()
			e.SetName("gen_ai.client.inference.operation.details")
			e.Attributes().PutStr("gen_ai.input.messages", `[{"role":"system","parts":[{"type":"text","content":"S"}]},{"role":"user","parts":[{"type":"text","content":"U"}]}]`)
			e.Attributes().PutStr("gen_ai.output.messages", `[{"role":"assistant","parts":[{"type":"text","content":"A"}],"finish_reason":"length"}]`)
		}, record.Trace{System: "S", Input: []record.Message{{Role: "user", Content: "U"}},
			Output: []record.Message{{Role: "assistant", Content: "A"}}, FinishReason: "length"}},

		{"events with their body in gen_ai.event.content", func(s ptrace.Span) {
			s.Attributes().PutStr("gen_ai.system", "az.ai.inference")
			for _, ev := range []struct{ name, body string }{
				{"gen_ai.user.message", `{"content":[{"type":"text","text":"part A"},{"type":"text","text":"part B"}]}`},
				{"gen_ai.assistant.message", `{"tool_calls":[{"id":"k1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]}`},
				{"gen_ai.tool.message", `{"id":"k1","content":"r1"}`},
				{"gen_ai.choice", `{"index":1,"finish_reason":"stop","message":{"content":"second"}}`},
				{"gen_ai.choice", `{"index":0,"finish_reason":"length","message":{"role":"assistant","content":"first"}}`},
			} {
				e := s.Events().AppendEmpty()
				e.SetName(ev.name)
				e.Attributes().PutStr("gen_ai.event.content", ev.body)
			}
		}, record.Trace{
			Input: []record.Message{
				{Role: "user", Content: "part A\npart B"},
				{Role: "assistant", ToolCalls: []record.ToolCall{{ID: "k1", Name: "f", Arguments: `{"a":1}`}}},
				{Role: "tool", ToolCallID: "k1", Content: "r1"},
			},
			Output:       []record.Message{{Role: "assistant", Content: "first"}, {Role: "assistant", Content: "second"}},
			FinishReason: "length"}},

		{"events with structured tool calls", func(s ptrace.Span) {
			s.Attributes().PutStr("gen_ai.system", "openai")
			e := s.Events().AppendEmpty()
			e.SetName("gen_ai.choice")
			e.Attributes().PutInt("index", 0)
			msg := e.Attributes().PutEmptyMap("message")
			tc := msg.PutEmptySlice("tool_calls").AppendEmpty().SetEmptyMap()
			tc.PutStr("id", "z")
			fn := tc.PutEmptyMap("function")
			fn.PutStr("name", "g")
			fn.PutStr("arguments", `{"b": 2}`)
		}, record.Trace{Input: []record.Message{}, Output: []record.Message{{Role: "assistant", ToolCalls: []record.ToolCall{{ID: "z", Name: "g", Arguments: `{"b": 2}`}}}}}},

		{"the oldest form: gen_ai.prompt and gen_ai.completion as JSON", func(s ptrace.Span) {
			s.Attributes().PutStr("gen_ai.system", "openai")
			e := s.Events().AppendEmpty()
			e.SetName("gen_ai.content.prompt")
			e.Attributes().PutStr("gen_ai.prompt", `[{"role":"system","content":"sys"},{"role":"user","content":"What is 2+2?"}]`)
			e = s.Events().AppendEmpty()
			e.SetName("gen_ai.content.completion")
			e.Attributes().PutStr("gen_ai.completion", `[{"role":"assistant","content":"4","finish_reason":"stop"}]`)
		}, record.Trace{System: "sys", Input: []record.Message{{Role: "user", Content: "What is 2+2?"}},
			Output: []record.Message{{Role: "assistant", Content: "4"}}, FinishReason: "stop"}},

		{"indexed form with a function call and multi-part content", func(s ptrace.Span) {
			a := s.Attributes()
			a.PutStr("gen_ai.prompt.0.content", `[{"type":"text","text":"look at this"},{"type":"image_url","image_url":{"url":"x"}}]`)
			a.PutStr("gen_ai.prompt.10.role", "user") // ordered by number, not text
			a.PutStr("gen_ai.prompt.10.content", "tenth")
			a.PutStr("gen_ai.prompt.2.content", "second")
			a.PutStr("gen_ai.completion.0.function_call.name", "legacy")
			a.PutStr("gen_ai.completion.0.function_call.arguments", `{"x":1}`)
			a.PutStr("gen_ai.prompt.x.content", "not an index")
		}, record.Trace{Input: []record.Message{{Role: "user", Content: "look at this"}, {Role: "user", Content: "second"}, {Role: "user", Content: "tenth"}},
			Output: []record.Message{{Role: "assistant", ToolCalls: []record.ToolCall{{Name: "legacy", Arguments: `{"x":1}`}}}}}},

		{"an execute_tool span", func(s ptrace.Span) {
			a := s.Attributes()
			a.PutStr("gen_ai.operation.name", "execute_tool")
			a.PutStr("gen_ai.tool.name", "get_weather")
			a.PutStr("gen_ai.tool.call.id", "t9")
			a.PutStr("gen_ai.tool.call.arguments", `{"city": "Oslo"}`)
			a.PutStr("gen_ai.tool.call.result", "cold")
		}, record.Trace{Input: []record.Message{{Role: "assistant", ToolCalls: []record.ToolCall{{ID: "t9", Name: "get_weather", Arguments: `{"city": "Oslo"}`}}}},
			Output: []record.Message{{Role: "tool", ToolCallID: "t9", Name: "get_weather", Content: "cold"}}}},

		{"messages that are not JSON: none read, the attribute kept", func(s ptrace.Span) {
			s.Attributes().PutStr("gen_ai.input.messages", `[{"role":"user",`)
		}, record.Trace{Input: []record.Message{}, Output: []record.Message{}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			td, _ := newSpan(c.build)
			ts, n, err := traces.FromOTLP(td, received)
			if err != nil || len(ts) != 1 || n.GenAI != 1 {
				t.Fatalf("FromOTLP: %d traces, %+v, %v", len(ts), n, err)
			}
			got := ts[0]
			if got.Input == nil {
				got.Input = []record.Message{}
			}
			want := c.want
			if want.Input == nil {
				want.Input = []record.Message{}
			}
			if want.Output == nil {
				want.Output = []record.Message{}
			}
			if got.System != want.System || !reflect.DeepEqual(got.Input, want.Input) || !reflect.DeepEqual(got.Output, want.Output) || got.FinishReason != want.FinishReason {
				gj, _ := json.MarshalIndent(struct {
					S    string
					I, O []record.Message
					F    string
				}{got.System, got.Input, got.Output, got.FinishReason}, "", " ")
				t.Errorf("got %s\nwant system %q input %+v output %+v finish %q", gj, want.System, want.Input, want.Output, want.FinishReason)
			}
			var attrs map[string]any
			if err := json.Unmarshal(got.Attributes, &attrs); err != nil {
				t.Errorf("attributes: %v", err)
			}
		})
	}
}

// Every attribute is kept, typed, in a JSON object: values JSON cannot
// hold (NaN, infinities) as strings, bytes as base64, a repeated key once
// (its first value), nesting past the bound cut.
func TestAttributesKeptTyped(t *testing.T) {
	td, _ := newSpan(func(s ptrace.Span) {
		a := s.Attributes()
		a.PutStr("gen_ai.request.model", "m")
		a.PutInt("i", -7)
		a.PutDouble("nan", math.NaN())
		a.PutDouble("inf", math.Inf(-1))
		a.PutDouble("d", 0.5)
		a.PutBool("b", false)
		a.PutEmptyBytes("raw").FromRaw([]byte("hi"))
		a.PutStr("quote", "a\"b<c>\x00\xff")
		sl := a.PutEmptySlice("list")
		sl.AppendEmpty().SetStr("x")
		sl.AppendEmpty().SetInt(1)
		sl.AppendEmpty() // empty value
		a.PutEmptyMap("m").PutStr("k", "v")
		deep := a.PutEmptySlice("deep")
		for range 200 {
			deep = deep.AppendEmpty().SetEmptySlice()
		}
	})
	ts, _, err := traces.FromOTLP(td, received)
	if err != nil {
		t.Fatal(err)
	}
	var a map[string]any
	if err := json.Unmarshal(ts[0].Attributes, &a); err != nil {
		t.Fatalf("%v: %s", err, ts[0].Attributes)
	}
	for k, want := range map[string]any{
		"gen_ai.request.model": "m", "i": -7.0, "nan": "NaN", "inf": "-Infinity", "d": 0.5, "b": false,
		"raw": "aGk=", "quote": "a\"b<c>\x00\uFFFD", "list": []any{"x", 1.0, nil}, "m": map[string]any{"k": "v"},
	} {
		if !reflect.DeepEqual(a[k], want) {
			t.Errorf("%s = %#v, want %#v", k, a[k], want)
		}
	}
	depth := 0
	for v := a["deep"]; ; depth++ {
		l, ok := v.([]any)
		if !ok {
			if v != "[nested too deep]" {
				t.Errorf("the deep value ends in %#v", v)
			}
			break
		}
		if len(l) == 0 {
			t.Fatalf("the deep value was not cut")
		}
		v = l[0]
	}
	if depth > 70 {
		t.Errorf("nesting kept to depth %d", depth)
	}
}

// The scalar fields: IDs, models, provider, tokens in either name and
// type, latency, error, finish reasons, resource; plain spans ignored; a
// GenAI span without IDs fails the request.
func TestScalarFields(t *testing.T) {
	start := time.Date(2026, 11, 2, 3, 4, 5, 6000, time.UTC)
	td, s := newSpan(func(s ptrace.Span) {
		a := s.Attributes()
		a.PutStr("gen_ai.response.model", "resp-model") // no request model: the response's
		a.PutStr("gen_ai.system", "old-provider")
		a.PutStr("gen_ai.usage.prompt_tokens", "15") // a string of digits
		a.PutDouble("gen_ai.usage.completion_tokens", 7)
		sl := a.PutEmptySlice("gen_ai.response.finish_reasons")
		sl.AppendEmpty().SetStr("stop")
		sl.AppendEmpty().SetStr("length")
		s.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
		s.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(2500 * time.Microsecond)))
		s.Status().SetCode(ptrace.StatusCodeError)
	})
	td.ResourceSpans().At(0).Resource().Attributes().PutStr("service.name", "svc")
	plain := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().AppendEmpty()
	plain.SetTraceID(pcommon.TraceID{9})
	plain.SetSpanID(pcommon.SpanID{9})
	plain.Attributes().PutStr("http.route", "/x")
	eventsOnly := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().AppendEmpty()
	eventsOnly.SetTraceID(pcommon.TraceID{8})
	eventsOnly.SetSpanID(pcommon.SpanID{8})
	eventsOnly.Events().AppendEmpty().SetName("gen_ai.user.message")

	ts, n, err := traces.FromOTLP(td, received)
	if err != nil {
		t.Fatal(err)
	}
	if n != (traces.OTLPCount{Spans: 3, GenAI: 2, Ignored: 1}) {
		t.Errorf("count %+v", n)
	}
	got := ts[0]
	want := record.Trace{ID: s.TraceID().String() + "-" + s.SpanID().String(), TraceID: "ab010000000000000000000000000000", SpanID: "cd02000000000000",
		Source: "otlp", Time: start, LatencyMS: 2.5, Provider: "old-provider", Model: "resp-model", ResponseModel: "resp-model",
		InputTokens: 15, OutputTokens: 7, FinishReason: "stop,length", ErrorType: "_OTHER", Received: received,
		Input: []record.Message{}, Output: []record.Message{}, Resource: []byte(`{"service.name":"svc"}`)}
	got.Attributes = nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	if ts[1].Time != received || ts[1].LatencyMS != 0 {
		t.Errorf("a span without times: time %v latency %v, want the received time and 0", ts[1].Time, ts[1].LatencyMS)
	}

	eventsOnly.SetSpanID(pcommon.SpanID{})
	if _, _, err := traces.FromOTLP(td, received); err == nil || err.Error() != "resource_spans[0].scope_spans[0].spans[2]: the span has no span_id (8 zero bytes); every span needs one" {
		t.Errorf("a GenAI span without a span ID: %v", err)
	}
	plain.SetTraceID(pcommon.TraceID{}) // a plain span's IDs do not matter
	eventsOnly.SetSpanID(pcommon.SpanID{1})
	if _, _, err := traces.FromOTLP(td, received); err != nil {
		t.Errorf("a plain span without IDs: %v", err)
	}
}

// A repeated attribute key (a hand-made request can carry one; pcommon
// will not make one) is kept once, with its first value, as the mapping
// reads it: the attributes stay a JSON object with unique keys.
func TestRepeatedAttributeKey(t *testing.T) {
	body := `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"0102030405060708",` +
		`"attributes":[{"key":"gen_ai.request.model","value":{"stringValue":"first"}},{"key":"gen_ai.request.model","value":{"stringValue":"second"}}]}]}]}]}`
	req := ptraceotlp.NewExportRequest()
	if err := req.UnmarshalJSON([]byte(body)); err != nil {
		t.Fatal(err)
	}
	ts, _, err := traces.FromOTLP(req.Traces(), received)
	if err != nil {
		t.Fatal(err)
	}
	if ts[0].Model != "first" || string(ts[0].Attributes) != `{"gen_ai.request.model":"first"}` {
		t.Errorf("model %q, attributes %s", ts[0].Model, ts[0].Attributes)
	}
}

// An attribute's string reads back from the attributes' JSON as
// encoding/json would have written it (invalid UTF-8 as U+FFFD), whatever
// its bytes, and the attributes stay valid JSON.
func FuzzAttributeString(f *testing.F) {
	for _, s := range []string{"", "plain", "q\"b\\s\n\r\t\x00\x1f\x7f", "é中\U0001F600", "\xff\xfe", "a\xc3", "<>&\u2028"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		td, _ := newSpan(func(sp ptrace.Span) {
			sp.Attributes().PutStr("gen_ai.x", "y")
			sp.Attributes().PutStr(s, s)
		})
		ts, _, err := traces.FromOTLP(td, received)
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]string
		if err := json.Unmarshal(ts[0].Attributes, &got); err != nil {
			t.Fatalf("%q: %v: %s", s, err, ts[0].Attributes)
		}
		ref, _ := json.Marshal(s)
		var want string
		if err := json.Unmarshal(ref, &want); err != nil {
			t.Fatal(err)
		}
		if got[want] != want {
			t.Fatalf("%q read back as %q, want %q", s, got[want], want)
		}
	})
}

// The conversation is stored once: an attribute whose whole content the
// trace's system, input or output holds is left out of the attributes;
// one the mapping read only in part (a part kind or a field a message
// does not hold, a finish_reason the trace does not keep), one that could
// not be read, and every attribute the mapping does not read are kept.
func TestMappedAttributesStoredOnce(t *testing.T) {
	const (
		sys   = `[{"type":"text","content":"Be brief."}]`
		in    = `[{"role":"user","parts":[{"type":"text","content":"hi"}]},{"role":"assistant","parts":[{"type":"tool_call","id":"c1","name":"f","arguments":{"a":1}}]},{"role":"tool","parts":[{"type":"tool_call_response","id":"c1","response":"ok"}]}]`
		out   = `[{"role":"assistant","parts":[{"type":"text","content":"done"}],"finish_reason":"stop"}]`
		blob  = `[{"role":"user","parts":[{"type":"text","content":"see"},{"type":"blob","modality":"image","content":"AAAA"}]}]`
		extra = `[{"role":"user","parts":[{"type":"text","content":"hi","lang":"en"}]}]`
	)
	for _, c := range []struct {
		name          string
		build         func(a pcommon.Map)
		absent, kept  []string
		wantInput     int
		wantFinish    string
		wantSystemSet bool
	}{
		{"current form, read exactly", func(a pcommon.Map) {
			a.PutStr("gen_ai.system_instructions", sys)
			a.PutStr("gen_ai.input.messages", in)
			a.PutStr("gen_ai.output.messages", out)
			a.PutStr("gen_ai.request.model", "m")
			a.PutInt("gen_ai.usage.input_tokens", 3)
			a.PutStr("app.route", "/x")
		}, []string{"gen_ai.system_instructions", "gen_ai.input.messages", "gen_ai.output.messages"},
			[]string{"gen_ai.request.model", "gen_ai.usage.input_tokens", "app.route"}, 3, "stop", true},
		{"current form, structured values", func(a pcommon.Map) {
			textPart(a.PutEmptySlice("gen_ai.system_instructions"), "Be brief.")
			m := a.PutEmptySlice("gen_ai.input.messages").AppendEmpty().SetEmptyMap()
			m.PutStr("role", "user")
			textPart(m.PutEmptySlice("parts"), "hi")
		}, []string{"gen_ai.system_instructions", "gen_ai.input.messages"}, nil, 1, "", true},
		{"a part kind a message does not hold", func(a pcommon.Map) {
			a.PutStr("gen_ai.input.messages", blob)
			a.PutStr("gen_ai.system_instructions", `[{"type":"text","content":"S"},{"type":"tool_call","id":"x"}]`)
		}, nil, []string{"gen_ai.input.messages", "gen_ai.system_instructions"}, 1, "", true},
		{"a field a part does not hold", func(a pcommon.Map) {
			a.PutStr("gen_ai.input.messages", extra)
		}, nil, []string{"gen_ai.input.messages"}, 1, "", false},
		{"a finish_reason on an input message", func(a pcommon.Map) {
			a.PutStr("gen_ai.input.messages", `[{"role":"user","parts":[{"type":"text","content":"hi"}],"finish_reason":"stop"}]`)
		}, nil, []string{"gen_ai.input.messages"}, 1, "", false},
		{"output finish_reason other than the trace's", func(a pcommon.Map) {
			a.PutStr("gen_ai.output.messages", out)
			a.PutEmptySlice("gen_ai.response.finish_reasons").AppendEmpty().SetStr("length")
		}, nil, []string{"gen_ai.output.messages", "gen_ai.response.finish_reasons"}, 0, "length", false},
		{"two outputs with different finish reasons", func(a pcommon.Map) {
			a.PutStr("gen_ai.output.messages", `[{"role":"assistant","parts":[{"type":"text","content":"a"}],"finish_reason":"stop"},{"role":"assistant","parts":[{"type":"text","content":"b"}],"finish_reason":"length"}]`)
		}, nil, []string{"gen_ai.output.messages"}, 0, "stop", false},
		{"messages that are not JSON", func(a pcommon.Map) {
			a.PutStr("gen_ai.input.messages", `[{"role":"user",`)
		}, nil, []string{"gen_ai.input.messages"}, 0, "", false},
		{"OpenAI's form in the current attribute", func(a pcommon.Map) {
			a.PutStr("gen_ai.input.messages", `[{"role":"user","content":"hi"}]`)
		}, nil, []string{"gen_ai.input.messages"}, 1, "", false},
		{"indexed form", func(a pcommon.Map) {
			a.PutStr("gen_ai.prompt.0.role", "user")
			a.PutStr("gen_ai.prompt.0.content", "hi")
			a.PutStr("gen_ai.prompt.1.content", `[{"type":"text","text":"look"},{"type":"image_url","image_url":{"url":"x"}}]`)
			a.PutStr("gen_ai.prompt.2.content", `[{"flight":"SK 4035"}]`) // not parts: kept as it is
			a.PutStr("gen_ai.prompt.2.tool_calls.0.id", "t")
			a.PutStr("gen_ai.prompt.2.tool_calls.0.arguments", `{}`)
			a.PutStr("gen_ai.prompt.2.tool_calls.0.kind", "function") // not read
			a.PutStr("gen_ai.prompt.2.extra", "x")                    // not read
			a.PutInt("gen_ai.prompt.3.content", 7)                    // not a string
			a.PutStr("gen_ai.prompt.x.content", "not an index")
			a.PutStr("gen_ai.completion.0.content", "ok")
			a.PutStr("gen_ai.completion.0.finish_reason", "stop")
			a.PutStr("gen_ai.completion.0.function_call.name", "g")
		}, []string{"gen_ai.prompt.0.role", "gen_ai.prompt.0.content", "gen_ai.prompt.2.content", "gen_ai.prompt.2.tool_calls.0.id",
			"gen_ai.prompt.2.tool_calls.0.arguments", "gen_ai.completion.0.content", "gen_ai.completion.0.function_call.name"},
			[]string{"gen_ai.prompt.1.content", "gen_ai.prompt.2.tool_calls.0.kind", "gen_ai.prompt.2.extra", "gen_ai.prompt.3.content",
				"gen_ai.prompt.x.content", "gen_ai.completion.0.finish_reason"}, 4, "stop", false},
		{"indexed form when the current form has the input", func(a pcommon.Map) {
			a.PutStr("gen_ai.input.messages", `[{"role":"user","parts":[{"type":"text","content":"hi"}]}]`)
			a.PutStr("gen_ai.prompt.0.content", "older copy")
			a.PutStr("gen_ai.completion.0.content", "ok")
		}, []string{"gen_ai.input.messages", "gen_ai.completion.0.content"}, []string{"gen_ai.prompt.0.content"}, 1, "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			td, _ := newSpan(func(s ptrace.Span) { c.build(s.Attributes()) })
			ts, _, err := traces.FromOTLP(td, received)
			if err != nil || len(ts) != 1 {
				t.Fatalf("FromOTLP: %d traces, %v", len(ts), err)
			}
			tr := ts[0]
			if len(tr.Input) != c.wantInput || tr.FinishReason != c.wantFinish || (tr.System != "") != c.wantSystemSet {
				t.Errorf("input %+v, finish %q, system %q", tr.Input, tr.FinishReason, tr.System)
			}
			var attrs map[string]any
			if err := json.Unmarshal(tr.Attributes, &attrs); err != nil {
				t.Fatalf("%v: %s", err, tr.Attributes)
			}
			for _, k := range c.absent {
				if _, ok := attrs[k]; ok {
					t.Errorf("%s is kept though the trace holds it: %s", k, tr.Attributes)
				}
			}
			for _, k := range c.kept {
				if _, ok := attrs[k]; !ok {
					t.Errorf("%s is left out: %s", k, tr.Attributes)
				}
			}
			if len(attrs) != len(c.kept) {
				t.Errorf("%d attributes, want %d: %s", len(attrs), len(c.kept), tr.Attributes)
			}
		})
	}
}

// A GenAI chat span as bench/collect sends it, mapped.
func BenchmarkFromOTLP(b *testing.B) {
	td, _ := newSpan(func(s ptrace.Span) {
		a := s.Attributes()
		for k, v := range map[string]string{"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-4o",
			"gen_ai.response.model": "gpt-4o-2024-08-06", "gen_ai.response.id": "chatcmpl-1", "server.address": "api.openai.com", "app.route": "/support/answer"} {
			a.PutStr(k, v)
		}
		a.PutInt("gen_ai.usage.input_tokens", 400)
		a.PutInt("gen_ai.usage.output_tokens", 80)
		a.PutDouble("gen_ai.request.temperature", 0.2)
		a.PutInt("gen_ai.request.max_tokens", 512)
		a.PutStr("gen_ai.system_instructions", `[{"type":"text","content":"You are the support assistant for an online shop. Answer in two sentences, cite the order number, and never promise refunds."}]`)
		a.PutStr("gen_ai.input.messages", `[{"role":"user","parts":[{"type":"text","content":"My order 48213 arrived with a cracked screen protector and the charger is missing. What can you do?"}]},`+
			`{"role":"assistant","parts":[{"type":"tool_call","id":"call_1","name":"lookup_order","arguments":{"order_id":"48213"}}]},`+
			`{"role":"tool","parts":[{"type":"tool_call_response","id":"call_1","response":{"status":"delivered","items":["phone case","screen protector","charger"],"carrier":"DHL"}}]}]`)
		a.PutStr("gen_ai.output.messages", `[{"role":"assistant","parts":[{"type":"text","content":"I am sorry order 48213 arrived damaged; a replacement ships today."}],"finish_reason":"stop"}]`)
		a.PutEmptySlice("gen_ai.response.finish_reasons").AppendEmpty().SetStr("stop")
	})
	b.ReportAllocs()
	for b.Loop() {
		if ts, _, err := traces.FromOTLP(td, received); err != nil || len(ts[0].Input) != 3 {
			b.Fatal(err)
		}
	}
}
